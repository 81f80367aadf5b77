"""tvm_conformance.deviations: a strict xfail that only the recorded failure satisfies."""

import textwrap

import pytest

from tvm_conformance import crash_isolation, deviation_registry, deviations
from tvm_conformance.observed import FidelityLost

pytest_plugins = ["pytester"]

# Ids of the patched test registry below; held in names so tools/deviations/xfail_check.py (which
# checks literal ids against the real registry) leaves these direct calls alone.
RAISES_VALUE_ERROR = "test-raises-value-error"
SEGFAULT = "test-segfault"
NO_SUCH_ID = "no-such-id"

ENTRIES = (
    deviations.Deviation(
        id="test-raises-value-error",
        area="harness",
        expected="no error",
        actual="raises FidelityLost",
        raises="tvm_conformance.observed.FidelityLost",
        tests=("//python/tests/harness:deviations_test :: inner",),
    ),
    deviations.Deviation(
        id="test-not-here",
        area="harness",
        expected="no error",
        actual="only on another lane",
        raises="tvm_conformance.observed.FidelityLost",
        tests=("//python/tests/harness:deviations_test :: inner",),
        tvm_ffi="<0.0.1",
    ),
    deviations.Deviation(
        id="test-segfault",
        area="harness",
        expected="no crash",
        actual="the child dies of SIGSEGV",
        raises=deviation_registry.CRASH_RAISES,
        tests=("//python/tests/harness:deviations_test :: test_dies_*",),
        kind="crash",
        signal="SIGSEGV",
    ),
)

INNER = """
from tvm_conformance import deviations
from tvm_conformance.observed import FidelityLost

@deviations.xfail("test-raises-value-error")
def test_recorded_failure():
    raise FidelityLost("as recorded")

@deviations.xfail("test-raises-value-error")
def test_other_failure():
    raise KeyError("not what was recorded")

@deviations.xfail("test-raises-value-error")
def test_now_passes():
    pass

@deviations.xfail("test-not-here")
def test_not_applicable_must_pass():
    pass
"""

# A crash deviation recorded as SIGSEGV: only a child dying of SIGSEGV is the deviation.
INNER_CRASH = """
from tvm_conformance import deviations
from tvm_conformance.crash_isolation import check_isolated

@deviations.xfail("test-segfault")
def test_dies_of_the_recorded_signal():
    check_isolated("reproducing_call(); import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")

@deviations.xfail("test-segfault")
def test_dies_of_another_signal():
    check_isolated("reproducing_call(); import os; os.abort()")

@deviations.xfail("test-segfault")
def test_dies_of_the_signal_on_its_first_line():
    check_isolated("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")

@deviations.xfail("test-segfault")
def test_dies_of_the_signal_in_a_setup_step():
    check_isolated(
        "crash_step('import tvm'); crash_step('relax.build'); "
        "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
    )

@deviations.xfail("test-segfault")
def test_dies_of_an_exit_status():
    check_isolated("raise SystemExit(3)")
"""


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deviation_registry, "DEVIATIONS", ENTRIES)


@pytest.mark.usefixtures("registry")
def test_outcomes_of_recorded_other_and_fixed_failures(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=textwrap.dedent(INNER))
    result = pytester.runpytest("-rxX", "--junitxml=out.xml", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2, xfailed=1)
    result.stdout.fnmatch_lines(["*XPASS(strict)*deviation test-raises-value-error:*"])
    junit = (pytester.path / "out.xml").read_text()
    assert 'message="deviation test-raises-value-error: raises FidelityLost"' in junit


@pytest.mark.usefixtures("registry")
def test_crash_deviation_accepts_only_its_signal(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=textwrap.dedent(INNER_CRASH))
    result = pytester.runpytest("-rfxX", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=4, xfailed=1)
    for line in (
        "XFAIL *test_dies_of_the_recorded_signal - deviation test-segfault:*",
        "FAILED *test_dies_of_another_signal - *",
        "E *ProcessCrashedSIGABRT: the child process died of SIGABRT*",
        "FAILED *test_dies_of_an_exit_status - AssertionError: exit stat*",
        # A crash before the marker is not the recorded one (issue 36, point 5).
        "FAILED *test_dies_of_the_signal_on_its_first_line - *",
        "E *CrashedBeforeReproducingCall: the child process died of SIGSEGV before its first "
        "step, before the reproducing call*",
        "FAILED *test_dies_of_the_signal_in_a_setup_step - *",
        "E *CrashedBeforeReproducingCall: the child process died of SIGSEGV in step "
        "'relax.build', before the reproducing call*",
    ):
        result.stdout.fnmatch_lines([line])


# The planted child of issue 36 (point 5): it kills itself on its first line, under the real
# registry's crash deviation of a None R.Callable (held in a name for xfail_check.py).
RELAX_NONE_CALLABLE = "robust-relax-none-callable-segfault"
INNER_EARLY_CRASH = """
from tvm_conformance import deviations
from tvm_conformance.crash_isolation import check_isolated

@deviations.xfail({dev_id!r})
def test_child_dies_on_its_first_line():
    check_isolated("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
"""


def test_a_crash_before_the_reproducing_call_is_not_the_known_crash(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_inner=textwrap.dedent(INNER_EARLY_CRASH.format(dev_id=RELAX_NONE_CALLABLE))
    )
    result = pytester.runpytest("-rfx", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["E *CrashedBeforeReproducingCall: the child process died of SIGSEGV before its first*"]
    )


@pytest.mark.usefixtures("registry")
def test_crash_xfail_raises_the_signal_subclass() -> None:
    mark = deviations.xfail(SEGFAULT)
    segv = crash_isolation.crashed_by("SIGSEGV")
    assert mark.kwargs["raises"] is segv
    assert segv is crash_isolation.crashed_by("SIGSEGV")  # cached: one class per signal
    assert segv.__name__ == "ProcessCrashedSIGSEGV" and segv.signal_name == "SIGSEGV"
    assert issubclass(segv, crash_isolation.ProcessCrashed)
    abrt = crash_isolation.crashed_by("SIGABRT")
    assert not issubclass(abrt, segv) and not issubclass(segv, abrt)
    # Resolvable by its dotted name once made.
    dotted = "tvm_conformance.crash_isolation.ProcessCrashedSIGSEGV"
    assert deviations.exception_class(dotted) is segv


@pytest.mark.usefixtures("registry")
def test_reason_names_the_id_in_the_pattern_tools_read() -> None:
    mark = deviations.xfail(RAISES_VALUE_ERROR)
    assert mark.kwargs["strict"] is True and mark.kwargs["raises"] is FidelityLost
    assert deviations.REASON_PATTERN.search(mark.kwargs["reason"])["id"] == (
        "test-raises-value-error"
    )


@pytest.mark.usefixtures("registry")
def test_unknown_id_is_an_error_naming_it() -> None:
    with pytest.raises(KeyError, match="unknown deviation id 'no-such-id'"):
        deviations.xfail(NO_SUCH_ID)


@pytest.mark.usefixtures("registry")
def test_deviations_module_reads_the_registry() -> None:
    assert deviations.DEVIATIONS is ENTRIES
    assert deviations.Deviation is deviation_registry.Deviation
    assert set(deviations.by_id()) == {dev.id for dev in ENTRIES}


def test_duplicate_ids_and_bad_kinds_are_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deviation_registry, "DEVIATIONS", ENTRIES + ENTRIES[:1])
    with pytest.raises(ValueError, match="listed twice"):
        deviations.by_id()
    bad = deviations.Deviation("x-y", "a", "e", "a", "builtins.ValueError", (), kind="oops")
    monkeypatch.setattr(deviation_registry, "DEVIATIONS", (bad,))
    with pytest.raises(ValueError, match="kind must be one of"):
        deviations.by_id()


def test_registry_entries_are_well_formed() -> None:
    table = deviations.by_id()
    for dev in table.values():
        assert deviations.REASON_PATTERN.fullmatch(f"deviation {dev.id}:"), dev.id
        assert issubclass(deviations.raises_of(dev), deviations.exception_class(dev.raises))
        assert dev.tests, f"deviation {dev.id} names no test"


@pytest.mark.usefixtures("registry")
def test_target_scoped_xfail_carries_the_strict_xfail_for_those_targets() -> None:
    mark = deviations.xfail(RAISES_VALUE_ERROR, targets=("cuda",)).mark
    assert mark.name == deviations.ON_TARGETS_MARK
    assert mark.args == ("cuda",)
    inner = mark.kwargs["mark"].mark
    assert (inner.name, inner.kwargs["strict"], inner.kwargs["raises"]) == (
        "xfail",
        True,
        FidelityLost,
    )
