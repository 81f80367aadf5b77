"""conformance_check: rows label the run's cases (passed, listed deviation, not run); the check's
exit status is verdict.verdict_of() over every case, rows or not."""

from pathlib import Path

import conformance_check
import fake_runs
import pytest
import results
import verdict
from fake_runs import case_xml, junit

DEVIATIONS = fake_runs.Registry(
    fake_runs.deviation(
        "ffi-listed", ("//pkg:py_test_llvm :: test_known[llvm]", "//pkg:fixed_test :: test_fixed")
    ),
)

PY_CASES = [
    case_xml("test_ok[llvm]", properties={"tvm_target": "llvm"}),
    case_xml("test_bad[llvm]", "failed", properties={"tvm_target": "llvm"}),
    case_xml("test_skip[llvm]", "skipped", "no gpu", properties={"tvm_target": "llvm"}),
    case_xml(
        "test_known[llvm]",
        "xfailed",
        "deviation ffi-listed: arrives as RuntimeError",
        properties={"tvm_target": "llvm"},
    ),
]

GTEST_XML = """<?xml version="1.0"?><testsuites><testsuite name="Hello">
<testcase name="Adds" status="run" result="completed" classname="Hello"/>
</testsuite></testsuites>"""


def _run(tmp_path: Path, extra: dict[str, str] | None = None, **kwargs) -> results.Run:
    tests = {"//pkg:py_test_llvm": junit(PY_CASES), "//cpp:gtest": GTEST_XML, **(extra or {})}
    return results.read_run(fake_runs.archive(tmp_path, tests, **kwargs))


def _rows(*cells: str, behaviour: str = "behaviour", seed: str = "001") -> list:
    rows = "\n".join(f"| {seed} | {behaviour} {i} | {cell} |" for i, cell in enumerate(cells))
    return conformance_check.parse_rows("| seed | behaviour | test |\n|---|---|---|\n" + rows)


def _check(tmp_path: Path, rows: list, require_all: bool = True, **kwargs) -> int:
    return conformance_check.check(rows, _run(tmp_path, **kwargs), DEVIATIONS, require_all)


@pytest.mark.parametrize(
    "cell",
    [
        "`//pkg:py_test_llvm :: test_ok[llvm]`",
        "`//pkg:py_test_llvm :: test_known[llvm]`",
        "//cpp:gtest :: Hello.Adds",
        "`//cpp:gtest :: Hello.Adds`; `//pkg:py_test_llvm :: test_ok[llvm]`",
    ],
)
def test_passed_and_listed_deviation_cases_hold(tmp_path: Path, cell: str) -> None:
    run = _run(tmp_path)
    for row in _rows(cell):
        assert conformance_check.row_outcome(row, run, DEVIATIONS) in conformance_check.HOLDS


@pytest.mark.parametrize(
    ("case", "outcome"),
    [
        ("test_bad[llvm]", "failed"),
        ("test_skip[llvm]", "skipped"),
        ("test_absent", "missing"),
        ("test_ok", "missing"),  # test_ok lacks [llvm]
    ],
)
def test_failed_skipped_or_missing_cases_are_labelled(
    tmp_path: Path, case: str, outcome: str
) -> None:
    row = _rows(f"`//pkg:py_test_llvm :: {case}`")[0]
    assert conformance_check.row_outcome(row, _run(tmp_path), DEVIATIONS) == outcome


def test_a_missing_row_case_is_a_problem(tmp_path: Path) -> None:
    run = _run(
        tmp_path,
        extra={
            "//pkg:py_test_llvm": junit(
                [case_xml("test_ok[llvm]", properties={"tvm_target": "llvm"})]
            )
        },
    )
    assert (
        conformance_check.check(
            _rows("`//pkg:py_test_llvm :: test_ok[llvm]`"), run, DEVIATIONS, False
        )
        == 0
    )
    assert (
        conformance_check.check(
            _rows("`//pkg:py_test_llvm :: test_absent`"), run, DEVIATIONS, False
        )
        == 1
    )


def test_each_case_of_a_short_form_cell_is_its_own_row() -> None:
    # `//label :: a; b; c`: b and c belong to the label before them, as a and the label do.
    rows = _rows(
        "`//pkg:py_test_llvm :: test_ok[llvm]; test_known[llvm]`; `//cpp:gtest :: Hello.Adds`"
    )
    assert [(r.label, r.case) for r in rows] == [
        ("//pkg:py_test_llvm", "test_ok[llvm]"),
        ("//pkg:py_test_llvm", "test_known[llvm]"),
        ("//cpp:gtest", "Hello.Adds"),
    ]


def test_a_planted_typo_in_a_rows_third_case_fails_the_check(tmp_path: Path) -> None:
    passing = [
        case_xml(name, properties={"tvm_target": "llvm"})
        for name in ("test_ok[llvm]", "test_two[llvm]", "test_three[llvm]")
    ]
    run = _run(tmp_path, extra={"//pkg:py_test_llvm": junit(passing)})
    good = "`//pkg:py_test_llvm :: test_ok[llvm]; test_two[llvm]; test_three[llvm]`"
    typo = good.replace("test_three[llvm]", "test_thre[llvm]")
    assert conformance_check.check(_rows(good), run, DEVIATIONS, False) == 0
    assert conformance_check.check(_rows(typo), run, DEVIATIONS, False) == 1
    assert conformance_check.row_outcome(_rows(typo)[2], run, DEVIATIONS) == "missing"


@pytest.mark.parametrize(
    "cell",
    [
        "`test_ok[llvm]; //pkg:py_test_llvm :: test_known[llvm]`",  # a case before any label
        "`//pkg:py_test_llvm :: test_ok[llvm];; test_known[llvm]`",  # an empty piece
        "`//pkg:py_test_llvm :: test_ok[llvm]`;",  # a stray `;` at the end
        "no test named here",
    ],
)
def test_a_cell_whose_cases_cannot_all_be_read_is_an_error(cell: str) -> None:
    with pytest.raises(ValueError, match="conformance row"):
        _rows(cell)


def test_target_not_run_is_a_problem_only_when_required(tmp_path: Path) -> None:
    rows = _rows("`//pkg:other_cuda :: test_x[cuda]`")
    run = _run(tmp_path)
    assert conformance_check.row_outcome(rows[0], run, DEVIATIONS) == "not run"
    without = conformance_check.check(rows, run, DEVIATIONS, require_all=False)
    assert conformance_check.check(rows, run, DEVIATIONS, require_all=True) == without + 1


def test_stale_xml_of_a_removed_target_cannot_satisfy_a_row(tmp_path: Path) -> None:
    # An earlier invocation left a passing test.xml for //pkg:removed_test in the testlogs;
    # this run's build events do not name it, so the row is not run, not passed.
    rows = _rows("`//pkg:removed_test :: test_old`")
    stale = {"//pkg:removed_test": junit([case_xml("test_old")])}
    run = _run(tmp_path, stale=stale)
    without = conformance_check.check(rows, run, DEVIATIONS, require_all=False)
    assert conformance_check.check(rows, run, DEVIATIONS, require_all=True) == without + 1
    assert conformance_check.row_outcome(rows[0], run, DEVIATIONS) == "not run"


def test_xfail_naming_no_listed_deviation_fails_even_outside_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = {
        "//pkg:other_test_llvm": junit(
            [
                case_xml(
                    "test_plain_xfail", "xfailed", "known bug", properties={"tvm_target": "llvm"}
                ),
                case_xml(
                    "test_unlisted",
                    "xfailed",
                    "deviation not-listed: x",
                    properties={"tvm_target": "llvm"},
                ),
            ]
        )
    }
    # py_test_llvm's own failing case counts too, though no row names it.
    assert _check(tmp_path, _rows("`//pkg:py_test_llvm :: test_ok[llvm]`"), extra=extra) == 4
    out = capsys.readouterr().out
    assert (
        "UNLISTED XFAIL: //pkg:other_test_llvm :: test_plain_xfail: its reason names no deviation"
        in out
    )
    assert "names 'not-listed', not a listed deviation" in out
    assert "conformance: FAILED: //pkg:py_test_llvm :: test_bad[llvm]" in out


def test_strict_xpass_fails_and_names_the_deviation_to_remove(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = {
        "//pkg:fixed_test": junit(
            [case_xml("test_fixed", "xpass", "deviation ffi-listed: arrives as RuntimeError")]
        )
    }
    rows = _rows("`//pkg:fixed_test :: test_fixed`")
    # The XPASS (a failed case, its target FAILED) and py_test_llvm's failing case and target.
    assert _check(tmp_path, rows, extra=extra) == 5
    out = capsys.readouterr().out
    assert (
        "XPASS: //pkg:fixed_test :: test_fixed passed: deviation ffi-listed no longer occurs" in out
    )


@pytest.mark.parametrize(
    ("label", "properties"),
    [
        ("//pkg:iso_test_llvm", {"tvm_target": "cuda"}),  # another target's case
        ("//pkg:iso_test_cuda", {"tvm_target": "llvm"}),
        ("//pkg:iso_test_llvm", {}),  # a case that records no target
        ("//pkg:iso_test_independent", {"tvm_target": "llvm"}),
    ],
)
def test_variant_isolation_violations_fail(tmp_path: Path, label: str, properties: dict) -> None:
    extra = {label: junit([case_xml("test_x", properties=properties)])}
    run = _run(tmp_path, extra=extra)
    problems = verdict.isolation_problems(run)
    assert len(problems) == 1 and label in problems[0], problems


@pytest.mark.parametrize("case", ["test_x[cuda]", "test_x[cuda-compiled]", "test_x[2-cuda]"])
def test_another_targets_case_id_in_a_variant_fails(tmp_path: Path, case: str) -> None:
    # Even when the property says llvm: the id shows the case ran for cuda.
    label = "//pkg:iso_test_llvm"
    extra = {label: junit([case_xml(case, properties={"tvm_target": "llvm"})])}
    run = _run(tmp_path, extra=extra)
    problems = verdict.isolation_problems(run)
    assert len(problems) == 1 and label in problems[0], problems


def test_variant_isolation_holds_for_own_target_and_independent_cases(tmp_path: Path) -> None:
    extra = {
        "//pkg:iso_test_cuda": junit([case_xml("test_x[cuda]", properties={"tvm_target": "cuda"})]),
        "//pkg:iso_test_independent": junit([case_xml("test_y")]),
        "//cpp:g_test_cuda": GTEST_XML,  # googletest records no properties: not checked
    }
    assert verdict.isolation_problems(_run(tmp_path, extra=extra)) == []


def test_kit_rows_are_counted_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = _rows("`//pkg:py_test_llvm :: test_ok[llvm]`") + _rows(
        "`//cpp:gtest :: Hello.Adds`", behaviour="kit: fixture throws", seed="robust"
    )
    assert [r.kit for r in rows] == [False, True]
    assert rows[1].seed == "robust"
    _check(tmp_path, rows)
    out = capsys.readouterr().out
    assert "lane default: 1 row cases of TVM behaviours: 1 passed" in out
    assert "lane default: 1 row cases of kit self-tests: 1 passed" in out


def test_row_without_a_test_reference_is_an_error() -> None:
    with pytest.raises(ValueError, match="names no"):
        _rows("see the ffi tests")
