"""requires_* and requires_package of tvm_conformance.legacy: skips, reasons and marks."""

import pytest

from tvm_conformance import legacy

pytest_plugins = ["pytester"]

BARE_AND_CALLED = """
from tvm_conformance.legacy import requires_cuda, requires_llvm

@requires_cuda
def test_bare():
    pass

@requires_cuda()
def test_called():
    pass

@requires_llvm
def test_llvm():
    pass
"""


def test_requires_cuda_skips_without_cuda_with_reason(run_inner, without_gpu) -> None:
    result = run_inner(BARE_AND_CALLED, targets="llvm;cuda")
    result.assert_outcomes(passed=1, skipped=2)
    line = f"SKIPPED [[]1[]] *: requires cuda: {without_gpu}"
    result.stdout.fnmatch_lines([line, line])


def test_requires_cuda_carries_gpu_and_cuda_marks(run_inner, without_gpu) -> None:
    result = run_inner(BARE_AND_CALLED, "-m", "cuda", targets="llvm;cuda")
    result.assert_outcomes(skipped=2, deselected=1)
    result = run_inner(BARE_AND_CALLED, "-m", "gpu", targets="llvm;cuda")
    result.assert_outcomes(skipped=2, deselected=1)
    result = run_inner(BARE_AND_CALLED, "-m", "not gpu", targets="llvm;cuda")
    result.assert_outcomes(passed=1, deselected=2)
    result.stdout.fnmatch_lines(["*test_llvm PASSED*"])


def test_requires_llvm_carries_the_llvm_mark(run_inner) -> None:
    result = run_inner(BARE_AND_CALLED, "-m", "llvm", targets="llvm")
    result.assert_outcomes(passed=1, deselected=2)


def test_requires_cuda_skips_when_targets_leave_cuda_out(run_inner, with_gpu) -> None:
    # Even where CUDA can run (faked here), the session's targets decide, as
    # TVM_TEST_TARGETS did in TVM.
    result = run_inner(BARE_AND_CALLED, targets="llvm")
    result.assert_outcomes(passed=1, skipped=2)
    line = "SKIPPED [[]1[]] *: requires cuda: cuda is not among the session's targets (llvm)"
    result.stdout.fnmatch_lines([line, line])


def test_requires_marks_in_pytest_param(run_inner, without_gpu) -> None:
    result = run_inner(
        """
        import pytest
        from tvm_conformance.legacy import requires_cuda, requires_llvm

        @pytest.mark.parametrize(
            "backend",
            [
                pytest.param("llvm", marks=requires_llvm.marks()),
                pytest.param("cuda", marks=requires_cuda.marks()),
            ],
        )
        def test_a(backend):
            pass
        """,
        targets="llvm;cuda",
    )
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["*test_a[[]llvm[]] PASSED*", "*test_a[[]cuda[]] SKIPPED (requires cuda: *"]
    )


def test_support_required_levels(run_inner, without_gpu) -> None:
    source = """
        from tvm_conformance.legacy import requires_cuda

        @requires_cuda(support_required="optional")
        def test_optional():
            pass

        @requires_cuda(support_required="compile-only")
        def test_compile_only():
            pass
        """
    # Without a device: optional and compile-only both run (cuda is among the targets).
    result = run_inner(source, "-m", "gpu", targets="llvm;cuda")
    result.assert_outcomes(passed=2)
    # compile-only still needs cuda among the targets.
    result = run_inner(source, targets="llvm")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["SKIPPED [[]1[]] *: requires cuda: cuda is not among the session's targets (llvm)"]
    )


def test_unknown_support_level_is_an_error() -> None:
    with pytest.raises(ValueError, match="support_required must be one of"):
        legacy.requires_cuda(support_required="compile-and-dream")


def test_requires_gpu_metal_rocm_skip_without_gpu(run_inner, without_gpu) -> None:
    result = run_inner(
        """
        from tvm_conformance.legacy import requires_gpu, requires_metal, requires_rocm

        @requires_gpu
        def test_gpu():
            pass

        @requires_metal
        def test_metal():
            pass

        @requires_rocm
        def test_rocm():
            pass
        """,
        targets="llvm;metal;rocm",
    )
    result.assert_outcomes(skipped=3)
    result.stdout.fnmatch_lines_random(
        [
            "*test_gpu SKIPPED (requires a GPU: no GPU device present)*",
            "*test_metal SKIPPED (requires metal: *",
            "*test_rocm SKIPPED (requires rocm: *",
        ]
    )
    result = run_inner("", "--markers")
    result.stdout.fnmatch_lines_random(["@pytest.mark.metal: *", "@pytest.mark.rocm: *"])


def test_requires_package(run_inner) -> None:
    result = run_inner(
        """
        import pytest
        from tvm_conformance.legacy import requires_package

        @requires_package("json")
        def test_present():
            pass

        @requires_package("json", "no_such_package_for_legacy_test")
        def test_one_missing():
            raise AssertionError("must not run")

        @pytest.mark.parametrize(
            "x", [pytest.param(1, marks=requires_package("no_such_package_either").marks())]
        )
        def test_param(x):
            raise AssertionError("must not run")
        """
    )
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines_random(
        [
            "SKIPPED [[]1[]] test_inner.py:*: Cannot import 'no_such_package_for_legacy_test'",
            "SKIPPED [[]1[]] test_inner.py:*: Cannot import 'no_such_package_either'",
        ]
    )


def test_requires_package_needs_a_name() -> None:
    with pytest.raises(TypeError, match="one or more package names"):
        legacy.requires_package()
