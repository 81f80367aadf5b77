"""parametrize_targets, exclude_targets, known_failing_targets and uses_gpu of
tvm_conformance.legacy: parametrization ids, exclusion, xfail strictness, marks."""

pytest_plugins = ["pytester"]


def test_explicit_targets_parametrize_target_and_dev(run_inner, without_gpu) -> None:
    result = run_inner(
        """
        from tvm_conformance.legacy import parametrize_targets

        @parametrize_targets("llvm", "cuda")
        def test_a(target, dev):
            assert dev.exist
        """,
        targets="llvm;cuda",
    )
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*test_a[[]llvm[]] PASSED*",
            "*test_a[[]cuda[]] SKIPPED*",
            f"SKIPPED [[]1[]] *: target 'cuda' cannot run here: {without_gpu}",
        ]
    )


def test_explicit_targets_outside_tvm_test_targets_skip(run_inner) -> None:
    result = run_inner(
        """
        from tvm_conformance.legacy import parametrize_targets

        @parametrize_targets("llvm", "c")
        def test_a(target):
            pass
        """,
        targets="llvm",
    )
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["SKIPPED [[]1[]] *: c tests disabled by TVM_TEST_TARGETS environment variable"]
    )


def test_bare_decorator_uses_tvm_test_targets(run_inner) -> None:
    result = run_inner(
        """
        from tvm_conformance.legacy import parametrize_targets

        @parametrize_targets
        def test_a(target, dev):
            pass
        """,
        targets="llvm;c",
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*test_a[[]llvm[]] PASSED*", "*test_a[[]c[]] PASSED*"])


def test_exclude_targets_removes_the_case(run_inner) -> None:
    result = run_inner(
        """
        from tvm_conformance.legacy import exclude_targets

        @exclude_targets("c")
        def test_a(target):
            assert target != "c"
        """,
        targets="llvm;c",
    )
    result.assert_outcomes(passed=1)
    assert "test_a[c]" not in result.stdout.str()


KNOWN_FAILING = """
from tvm_conformance.legacy import known_failing_targets

@known_failing_targets("c")
def test_fails_on_c(target):
    assert target != "c"

@known_failing_targets("c")
def test_passes_anyway(target):
    pass
"""


def test_known_failing_targets_is_not_strict_by_default(run_inner) -> None:
    # As in TVM: an xfail that passes is XPASS, not a failure, unless the ini says strict.
    result = run_inner(KNOWN_FAILING, targets="llvm;c")
    result.assert_outcomes(passed=2, xfailed=1, xpassed=1)
    result.stdout.fnmatch_lines_random(
        [
            "XFAIL test_inner.py::test_fails_on_c[[]c[]] - Known failing test (target 'c')",
            "XPASS test_inner.py::test_passes_anyway[[]c[]] - Known failing test (target 'c')",
        ]
    )


def test_known_failing_targets_follows_xfail_strict(run_inner) -> None:
    result = run_inner(KNOWN_FAILING, "-o", "xfail_strict=true", targets="llvm;c")
    result.assert_outcomes(passed=2, xfailed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_passes_anyway[[]c[]] FAILED*"])


def test_uses_gpu_marks_without_skipping(run_inner, without_gpu) -> None:
    source = """
        from tvm_conformance.legacy import uses_gpu

        @uses_gpu
        def test_a():
            pass

        def test_b():
            pass
        """
    result = run_inner(source, "-m", "gpu")
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(["*test_a PASSED*"])
    result = run_inner(source, "-m", "not gpu")
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(["*test_b PASSED*"])


def test_own_target_fixture_is_left_alone(run_inner) -> None:
    # The plugin is active wherever the package is installed; a suite's own `target` fixture
    # must keep its meaning (no parametrization, no TVM ids).
    result = run_inner(
        """
        import pytest

        @pytest.fixture
        def target():
            return "deploy-server"

        def test_a(target):
            assert target == "deploy-server"
        """,
        targets="llvm;c",
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_inner.py::test_a PASSED*"])
