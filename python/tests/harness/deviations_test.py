"""tvm_conformance.deviations: a strict xfail that only the recorded failure satisfies."""

import textwrap

import pytest

from tvm_conformance import deviations

pytest_plugins = ["pytester"]

ENTRIES = (
    deviations.Deviation(
        id="test-raises-value-error",
        area="harness",
        expected="no error",
        actual="raises ValueError",
        raises="builtins.ValueError",
        tests=("//python/tests/harness:deviations_test :: inner",),
    ),
    deviations.Deviation(
        id="test-not-here",
        area="harness",
        expected="no error",
        actual="only on another lane",
        raises="builtins.ValueError",
        tests=(),
        applies=lambda versions: False,
    ),
)

INNER = """
from tvm_conformance import deviations

@deviations.xfail("test-raises-value-error")
def test_recorded_failure():
    raise ValueError("as recorded")

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


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deviations, "DEVIATIONS", ENTRIES)


@pytest.mark.usefixtures("registry")
def test_outcomes_of_recorded_other_and_fixed_failures(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=textwrap.dedent(INNER))
    result = pytester.runpytest("-rxX", "--junitxml=out.xml", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2, xfailed=1)
    result.stdout.fnmatch_lines(["*XPASS(strict)*deviation test-raises-value-error:*"])
    junit = (pytester.path / "out.xml").read_text()
    assert 'message="deviation test-raises-value-error: raises ValueError"' in junit


@pytest.mark.usefixtures("registry")
def test_reason_names_the_id_in_the_pattern_tools_read() -> None:
    mark = deviations.xfail("test-raises-value-error")
    assert mark.kwargs["strict"] is True and mark.kwargs["raises"] is ValueError
    assert deviations.REASON_PATTERN.search(mark.kwargs["reason"])["id"] == (
        "test-raises-value-error"
    )


@pytest.mark.usefixtures("registry")
def test_unknown_id_is_an_error_naming_it() -> None:
    with pytest.raises(KeyError, match="unknown deviation id 'no-such-id'"):
        deviations.xfail("no-such-id")


def test_duplicate_ids_and_bad_kinds_are_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deviations, "DEVIATIONS", ENTRIES + ENTRIES[:1])
    with pytest.raises(ValueError, match="listed twice"):
        deviations.by_id()
    bad = deviations.Deviation("x-y", "a", "e", "a", "builtins.ValueError", (), kind="oops")
    monkeypatch.setattr(deviations, "DEVIATIONS", (bad,))
    with pytest.raises(ValueError, match="kind must be one of"):
        deviations.by_id()


def test_registry_entries_are_well_formed() -> None:
    table = deviations.by_id()
    for dev in table.values():
        assert deviations.REASON_PATTERN.fullmatch(f"deviation {dev.id}:"), dev.id
        deviations.exception_class(dev.raises)  # names an exception class
        assert dev.tests, f"deviation {dev.id} names no test"
