"""suite_timing.py: how repeated rounds are summarised, and that its process starts are timed
as the Bazel runner starts a test process."""

import ast
from pathlib import Path

import suite_timing
from suite_timing import Row

RUNNER = Path(__file__).resolve().parents[1] / "build_defs" / "pytest_runner.py"


def _round(pytest_seconds: float, bazel_seconds: float) -> list[Row]:
    return [
        Row("pytest", "plain pytest", pytest_seconds, 10),
        Row("bazel_test", "bazel", bazel_seconds, 12, note="build cached"),
    ]


def test_one_round_is_reported_as_measured() -> None:
    rows = _round(100.0, 90.0)
    assert suite_timing.summarize([rows]) == rows


def test_rounds_give_the_median_the_range_and_the_ratio_per_round() -> None:
    rounds = [_round(100.0, 90.0), _round(120.0, 96.0), _round(110.0, 121.0)]
    pytest_row, bazel_row = suite_timing.summarize(rounds)
    assert (pytest_row.name, pytest_row.seconds, pytest_row.cases) == ("pytest", 110.0, 10)
    assert (bazel_row.name, bazel_row.seconds, bazel_row.cases) == ("bazel_test", 96.0, 12)
    assert "median of 3: 90.0, 96.0, 121.0 s (range 90.0-121.0)" in bazel_row.note
    # Each round's own pair: 90/100, 96/120, 121/110.
    assert "x pytest per round: 0.90, 0.80, 1.10" in bazel_row.note
    assert "last round: build cached" in bazel_row.note
    assert "per round" not in pytest_row.note


def test_an_even_number_of_rounds_takes_the_middle_two() -> None:
    (row,) = suite_timing.summarize([[Row("noop", "n", 1.0)], [Row("noop", "n", 2.0)]])
    assert row.seconds == 1.5


def test_differing_case_counts_are_not_reported_as_one() -> None:
    rounds = [[Row("bazel_test", "b", 90.0, 12)], [Row("bazel_test", "b", 91.0, 13)]]
    (row,) = suite_timing.summarize(rounds)
    assert row.cases is None


def test_a_row_missing_pytest_in_a_round_gets_no_ratio_per_round() -> None:
    rounds = [_round(100.0, 90.0), [Row("bazel_test", "bazel", 95.0, 12)]]
    rows = {r.name: r for r in suite_timing.summarize(rounds)}
    assert "per round" not in rows["bazel_test"].note
    assert rows["pytest"].note.startswith("median of 1:")


def test_process_starts_use_the_runners_collector_thresholds() -> None:
    tree = ast.parse(RUNNER.read_text())
    (value,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(getattr(t, "id", None) == "STARTUP_GC_THRESHOLD" for t in node.targets)
    ]
    threshold = ast.literal_eval(value)
    expected = f"gc.set_threshold({', '.join(f'{n:_}' for n in threshold)})"
    assert expected in suite_timing._RUNNER_GC
    for code in suite_timing._STARTS.values():
        assert code.startswith(suite_timing._RUNNER_GC)
