"""The GPU lane (--tvm-require-gpu, --config=cuda_gpu) cannot pass by skipping."""

# The inner sessions run through pytest's own pytester plugin (off by default).
pytest_plugins = ["pytester"]

INNER = """
import pytest
from tvm_conformance.testing import requires_cuda

def test_runs(target):
    pass

@requires_cuda
def test_needs_cuda():
    pass

@pytest.mark.xfail(reason="an expected failure stays one", strict=True)
def test_expected_failure(target):
    raise AssertionError("expected")

def test_cpu_only_skip():
    pytest.skip("not a GPU case")
"""


def test_gpu_cases_that_cannot_run_fail_and_are_counted(run_inner) -> None:
    result = run_inner(INNER, "--tvm-require-gpu", "--tvm-target-fallback=none", targets="cuda")
    result.assert_outcomes(errors=3, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*GPU lane (--tvm-require-gpu): this GPU case could not run here: "
            "target 'cuda' cannot run here*",
            "GPU lane: 3 GPU case(s) could not run here and fail*",
            "*2  target 'cuda' cannot run here: the cuda runtime is not enabled*",
            "*1  requires cuda: the cuda runtime is not enabled*",
        ]
    )


def test_without_the_gpu_requirement_the_same_cases_skip(run_inner) -> None:
    result = run_inner(INNER, "--tvm-target-fallback=none", targets="cuda")
    result.assert_outcomes(skipped=4)
    assert "GPU lane" not in result.stdout.str()
