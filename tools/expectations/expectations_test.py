"""The pinned expectations' rules (tvm_conformance.expectations) on stand-in results, and
each lane's file as written (stable, sorted, no failing case)."""

from __future__ import annotations

import json

import pytest

from tvm_conformance import expectations
from tvm_conformance.op_corpus_outcomes import OUTCOMES, Result

SUITE = "op_corpus_tier"


def _result(outcome: str, detail: str = "", deviation: str = "", name: str = "add") -> Result:
    return Result("op", name, "float32", "fx", 0, "c1", outcome, detail, deviation)


@pytest.mark.parametrize(
    ("result", "pinned_as"),
    [
        (_result("correct"), "correct"),
        (
            _result("refused", "import: AssertionError: Unsupported function types ['x']"),
            "refused import: AssertionError",
        ),
        (_result("deviating", "bytecode: AssertionError: ...", "corpus-a"), "deviating corpus-a"),
        (_result("excluded", "untraceable: TraceError: control flow"), "excluded untraceable"),
        (_result("excluded", "random"), "excluded random"),
        (_result("failing", "build: TVMError: boom"), "failing"),
    ],
    ids=lambda v: v if isinstance(v, str) else v.outcome,
)
def test_outcome_of_keeps_the_kind_and_drops_the_text(result: Result, pinned_as: str) -> None:
    assert expectations.outcome_of(result) == pinned_as


@pytest.mark.parametrize(
    ("expected", "actual", "how"),
    [
        ("correct", "correct", "same"),
        ("correct", "refused import: AssertionError", "regression"),
        ("correct", "deviating corpus-a", "regression"),
        ("correct", "failing", "regression"),
        ("refused import: AssertionError", "deviating corpus-a", "regression"),
        ("refused import: AssertionError", "refused import: TypeError", "regression"),
        ("deviating corpus-a", "deviating corpus-b", "regression"),
        ("deviating corpus-a", "failing", "regression"),
        ("correct", "excluded random", "regression"),
        ("deviating corpus-a", "correct", "improvement"),
        ("deviating corpus-a", "refused import: AssertionError", "improvement"),
        ("refused import: AssertionError", "correct", "improvement"),
        ("excluded untraceable", "correct", "improvement"),
        ("excluded untraceable", "refused import: AssertionError", "regression"),
    ],
)
def test_change_orders_outcomes(expected: str, actual: str, how: str) -> None:
    assert expectations.change(expected, actual) == how


def test_every_outcome_has_a_rank() -> None:
    for outcome in OUTCOMES + ("failing",):
        assert expectations.change(outcome, outcome) == "same"


def test_judge_names_each_case_once() -> None:
    results = [
        _result("refused", "import: AssertionError: Unsupported", name="add"),
        _result("correct", name="sub"),
        _result("deviating", "x", "corpus-a", name="mul"),
        _result("failing", "bytecode: AssertionError: wrong", name="new"),
    ]
    expected = {
        "op|add|float32|fx|0": "correct",
        "op|sub|float32|fx|0": "correct",
        "op|mul|float32|fx|0": "correct",
        "op|sub|float32|fx|1": "correct",
        "op|gone|float32|fx|0": "correct",
    }
    verdict = expectations.judge(results, ["add", "sub", "mul", "new"], expected)
    assert verdict.same == 1
    assert verdict.regressions == [
        "op|add|float32|fx|0: correct -> refused import: AssertionError "
        "(import: AssertionError: Unsupported)",
        "op|mul|float32|fx|0: correct -> deviating corpus-a (x)",
        "op|new|float32|fx|0: not listed -> failing (bytecode: AssertionError: wrong)",
    ]
    # sub's second sample gave no result; `gone` is not a name of this run.
    assert verdict.stale == ["op|sub|float32|fx|1: correct -> no result"]
    assert verdict.improvements == []


def test_improvements_fail_only_on_the_pinned_wheels() -> None:
    verdict = expectations.judge(
        [_result("correct")], ["add"], {"op|add|float32|fx|0": "deviating corpus-a"}
    )
    assert verdict.improvements == ["op|add|float32|fx|0: deviating corpus-a -> correct"]
    assert verdict.problems(pinned_wheels=False) == []
    assert verdict.problems(pinned_wheels=True) == [
        "stale expectation (improved on the pinned wheels): "
        "op|add|float32|fx|0: deviating corpus-a -> correct"
    ]


def test_a_crashed_name_is_one_regression_not_a_stale_list() -> None:
    crash = Result("op", "add", "*", "*", -1, "*", "failing", "crash: killed by SIGSEGV")
    expected = {"op|add|float32|fx|0": "correct", "op|add|float32|fx|1": "correct"}
    verdict = expectations.judge([crash], ["add"], expected)
    crashed = "op|add|*|*|-1: not listed -> failing (crash: killed by SIGSEGV)"
    assert verdict.regressions == [crashed]
    assert verdict.stale == []


def test_dumps_round_trips(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(expectations, "ROOT", tmp_path)
    cases = {"op|b|float32|fx|0": "correct", "op|a|float32|fx|0": "refused import: X"}
    (tmp_path / "lane").mkdir()
    expectations.path("lane", SUITE).write_text(expectations.dumps("lane", SUITE, "0.1", cases))
    assert expectations.load("lane", SUITE) == cases
    with pytest.raises(FileNotFoundError, match="--write"):
        expectations.load("other", SUITE)


def test_each_lane_file_is_as_written() -> None:
    files = sorted(expectations.ROOT.glob(f"*/{SUITE}.json"))
    assert "default" in {f.parent.name for f in files}, files
    for file in files:
        data = json.loads(file.read_text(encoding="utf-8"))
        lane = file.parent.name
        assert data["lane"] == lane and data["suite"] == SUITE
        assert file.read_text(encoding="utf-8") == expectations.dumps(
            lane, SUITE, data["tvm"], data["cases"]
        ), f"{file}: not as expectations.dumps writes it"
        assert "failing" not in data["cases"].values(), f"{file}: a failing case is pinned"
        assert len(data["cases"]) > 1000, f"{file}: {len(data['cases'])} cases"
