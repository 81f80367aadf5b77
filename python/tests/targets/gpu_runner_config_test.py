"""The GPU runner config (--tvm-require-gpu, --config=cuda_gpu) cannot pass by skipping."""

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


def test_gpu_cases_that_cannot_run_fail_and_are_counted(run_inner, without_gpu: str) -> None:
    # Forced (a GPU machine takes this path too): cuda cannot run, so its cases fail.
    result = run_inner(INNER, "--tvm-require-gpu", "--tvm-target-fallback=none", targets="cuda")
    result.assert_outcomes(errors=3, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*GPU runner config (--tvm-require-gpu): this GPU case could not run here: "
            "target 'cuda' cannot run here*",
            "GPU runner config: 3 GPU case(s) could not run here and fail*",
            f"*2  target 'cuda' cannot run here: {without_gpu}*",
            f"*1  requires cuda: {without_gpu}*",
        ]
    )


def test_without_the_gpu_requirement_the_same_cases_skip(run_inner, without_gpu: str) -> None:
    result = run_inner(INNER, "--tvm-target-fallback=none", targets="cuda")
    result.assert_outcomes(skipped=4)
    assert "GPU runner config" not in result.stdout.str()


def test_gpu_lane_on_this_machine_runs_or_fails_by_its_device(run_inner, cuda_target) -> None:
    """Not faked: with a cuda device the GPU cases run and pass; without, they fail naming why."""
    result = run_inner(INNER, "--tvm-require-gpu", "--tvm-target-fallback=none", targets="cuda")
    if cuda_target.runnable:
        result.assert_outcomes(passed=2, xfailed=1, skipped=1)
        assert "GPU runner config" not in result.stdout.str()
        return
    result.assert_outcomes(errors=3, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "GPU runner config: 3 GPU case(s) could not run here and fail*",
            f"*2  target 'cuda' cannot run here: {cuda_target.reason}*",
            f"*1  requires cuda: {cuda_target.reason}*",
        ]
    )
