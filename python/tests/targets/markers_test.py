"""The gpu mark, marker registration, uses_gpu and the requires_<runtime> decorators."""

import pytest

import tvm_conformance.testing

# The inner sessions run through pytest's own pytester plugin (off by default).
pytest_plugins = ["pytester"]

GPU_AND_CPU = """
def test_a(target):
    pass
"""


def test_gpu_targets_carry_the_gpu_mark(run_inner) -> None:
    result = run_inner(GPU_AND_CPU, "-m", "gpu", targets="llvm;metal;c")
    result.assert_outcomes(skipped=1, deselected=2)
    result.stdout.fnmatch_lines(["*test_a[[]metal[]] SKIPPED*"])


def test_not_gpu_deselects_gpu_targets(run_inner) -> None:
    result = run_inner(GPU_AND_CPU, "-m", "not gpu", targets="llvm;metal;c")
    result.assert_outcomes(passed=2, deselected=1)


def test_markers_are_registered_for_strict_markers(run_inner) -> None:
    result = run_inner(
        """
        import pytest

        @pytest.mark.gpu
        @pytest.mark.tvm_targets("llvm")
        @pytest.mark.tvm_exclude_targets("c")
        @pytest.mark.tvm_known_failing_targets("metal")
        @pytest.mark.tvm_requires("llvm")
        def test_a(target):
            pass
        """,
        targets="llvm",
    )
    result.assert_outcomes(passed=1)  # under --strict-markers
    result = run_inner("", "--markers", targets="llvm")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["@pytest.mark.gpu: uses a GPU*", "@pytest.mark.tvm_targets(*targets): *"]
    )


def test_uses_gpu_only_marks(run_inner) -> None:
    result = run_inner(
        """
        from tvm_conformance.testing import uses_gpu

        @uses_gpu
        def test_a():
            pass

        def test_b():
            pass
        """,
        "-m",
        "gpu",
        targets="llvm",
    )
    result.assert_outcomes(passed=1, deselected=1)


def test_requires_runtime_skips_with_a_reason(run_inner) -> None:
    result = run_inner(
        """
        from tvm_conformance.testing import requires_llvm, requires_metal

        @requires_llvm
        def test_llvm():
            pass

        @requires_metal
        def test_metal():
            pass
        """,
        targets="llvm",
    )
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["SKIPPED * requires metal: the metal runtime is not enabled in this TVM build*"]
    )


def test_requires_runtime_skips_when_not_among_targets(run_inner) -> None:
    result = run_inner(
        """
        from tvm_conformance.testing import requires_llvm

        @requires_llvm
        def test_llvm():
            pass
        """,
        targets="c",
    )
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        ["SKIPPED * requires llvm: llvm is not among the session's targets (c)"]
    )


def test_requires_gpu_runtimes_are_gpu_marked(run_inner) -> None:
    result = run_inner(
        """
        from tvm_conformance.testing import requires_cuda, requires_gpu, requires_llvm

        @requires_gpu
        def test_gpu():
            pass

        @requires_cuda
        def test_cuda():
            pass

        @requires_llvm
        def test_llvm():
            pass
        """,
        "-m",
        "not gpu",
        targets="llvm",
    )
    result.assert_outcomes(passed=1, deselected=2)


@pytest.mark.parametrize(
    "runtime", ["gpu", "llvm", "cuda", "nvptx", "vulkan", "opencl", "metal", "rocm", "hexagon"]
)
def test_requires_decorator_exists_for_each_runtime(runtime: str) -> None:
    decorator = getattr(tvm_conformance.testing, f"requires_{runtime}")

    def probe() -> None:
        pass

    marks = {m.name: m.args for m in decorator(probe).pytestmark}
    assert marks["tvm_requires"] == (runtime,)
