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


def test_a_chunk_holding_some_dtypes_of_a_name_answers_for_those_only() -> None:
    # The whole corpus deals (name, dtype) units: a chunk with add@float32 holds add's float32
    # cases, not its float16 ones (another chunk's).
    expected = {
        "op|add|float32|fx|0": "correct",
        "op|add|float32|fx|1": "correct",
        "op|add|float16|fx|0": "correct",
    }
    verdict = expectations.judge([_result("correct")], ["add@float32"], expected)
    assert verdict.same == 1
    assert verdict.stale == ["op|add|float32|fx|1: correct -> no result"]


def test_a_chunk_holding_a_part_of_a_dtype_answers_for_its_samples_only() -> None:
    # A heavy name's dtype in parts: add@float32#1of2 holds the odd sample indices.
    expected = {f"op|add|float32|fx|{i}": "correct" for i in range(4)}
    results = [Result("op", "add", "float32", "fx", 1, "c1", "correct")]
    verdict = expectations.judge(results, ["add@float32#1of2"], expected)
    assert verdict.same == 1
    assert verdict.stale == ["op|add|float32|fx|3: correct -> no result"]


def test_dumps_round_trips(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(expectations, "ROOT", tmp_path)
    cases = {"op|b|float32|fx|0": "correct", "op|a|float32|fx|0": "refused import: X"}
    (tmp_path / "lane").mkdir()
    expectations.path("lane", SUITE).write_text(expectations.dumps("lane", SUITE, "0.1", cases))
    assert expectations.load("lane", SUITE) == cases
    with pytest.raises(FileNotFoundError, match="--write"):
        expectations.load("other", SUITE)


@pytest.mark.parametrize("suite", [SUITE, "relax_op_walk", "relax_op_walk_full"])
def test_each_lane_file_is_as_written(suite: str) -> None:
    files = sorted(expectations.ROOT.glob(f"*/{suite}.json"))
    assert {f.parent.name for f in files} == {"default", "ffi_next", "tvm_prev"}, files
    for file in files:
        data = json.loads(file.read_text(encoding="utf-8"))
        lane = file.parent.name
        assert data["lane"] == lane and data["suite"] == suite
        assert file.read_text(encoding="utf-8") == expectations.dumps(
            lane, suite, data["tvm"], data["cases"]
        ), f"{file}: not as expectations.dumps writes it"
        assert "failing" not in data["cases"].values(), f"{file}: a failing case is pinned"
        bad = [v for v in data["cases"].values() if not expectations.OUTCOME_FORM.fullmatch(v)]
        assert not bad, f"{file}: outcomes of no known form: {bad[:5]}"
        assert len(data["cases"]) > 500, f"{file}: {len(data['cases'])} cases"


def test_a_deviations_figures_are_pinned_within_their_bounds() -> None:
    detail = (
        "bytecode: AssertionError: output 0: 54 of 54 elements differ ...; worst at [1, 1, 2, 2]:"
        " got np.float64(5.786102771759033), error 17.4 > allowed 7.97e-06 = 3.5 x u(float32)"
    )
    pinned = expectations.outcome_of(_result("deviating", detail, "corpus-a"))
    assert (
        pinned == "deviating corpus-a @ 0 54 54 1 1 2 2 64 5.786102771759033 17.4 7.97e-06 3.5 32"
    )

    def now(text: str) -> str:
        return expectations.outcome_of(_result("deviating", text, "corpus-a"))

    # Rounding moves an error a little: the same deviation.
    assert expectations.change(pinned, now(detail.replace("17.4", "16.9"))) == "same"
    # A thousandfold error, another count of elements, another position: another behaviour.
    for changed in ("17400.0", "54 of 55", "[1, 1, 2, 3]"):
        original = {"17400.0": "17.4", "54 of 55": "54 of 54", "[1, 1, 2, 3]": "[1, 1, 2, 2]"}
        assert expectations.change(pinned, now(detail.replace(original[changed], changed))) == (
            "regression"
        ), changed
    verdict = expectations.judge(
        [_result("deviating", detail.replace("17.4", "17400.0"), "corpus-a")],
        ["add"],
        {"op|add|float32|fx|0": pinned},
    )
    assert verdict.regressions[0].startswith(
        "op|add|float32|fx|0: deviating corpus-a: figures out of bounds (17.4 -> 17400.0)"
    )
    assert expectations.number_drift("1 2.0", "1") == ["2 figures -> 1"]


def test_a_figure_that_varied_between_runs_is_pinned_loose() -> None:
    first, second = "deviating corpus-a @ 0 15 25 10.1", "deviating corpus-a @ 0 16 25 10.3"
    merged = expectations.merge_runs(first, second)
    assert merged == "deviating corpus-a @ 0 ~15 25 10.1"
    # The loose count may move within the factor; the exact ones may not.
    assert expectations.change(merged, "deviating corpus-a @ 0 14 25 9.8") == "same"
    assert expectations.change(merged, "deviating corpus-a @ 0 15 26 10.1") == "regression"
    assert expectations.change(merged, "deviating corpus-a @ 0 200 25 10.1") == "regression"
    # An outcome without figures stays as it is.
    assert expectations.merge_runs("correct", "correct") == "correct"
    # Loose stays loose; another deviation leaves the pin as it is.
    assert expectations.merge_runs(merged, first) == merged
    assert expectations.merge_runs(first, "deviating corpus-b @ 0 16 25 10.3") == first


def test_a_suite_that_computes_its_outcomes_is_judged_point_by_point() -> None:
    """judge_outcomes (the Relax op walk): each point against its pinned outcome."""
    pinned = {
        "relax.sum(axis=0)[float32]": "correct",
        "relax.sum(axis=0)[bool]": "refused normalize: TypeError: wants a float",
        "relax.sum(axis=1)[bool]": "deviating relax-a",
        "relax.sum(axis=2)[float32]": "correct",
    }
    now = dict(pinned)
    assert expectations.judge_outcomes(now, pinned).same == 4
    now["relax.sum(axis=0)[float32]"] = "refused normalize: ValueError: axis"
    now["relax.sum(axis=0)[bool]"] = "refused normalize: TypeError: another text"
    now["relax.sum(axis=1)[bool]"] = "correct"
    del now["relax.sum(axis=2)[float32]"]
    now["relax.sum(axis=3)[float32]"] = "correct"
    verdict = expectations.judge_outcomes(now, pinned)
    assert verdict.same == 0
    assert verdict.regressions == [
        "relax.sum(axis=0)[bool]: refused normalize: TypeError: wants a float -> "
        "refused normalize: TypeError: another text",
        "relax.sum(axis=0)[float32]: correct -> refused normalize: ValueError: axis",
    ]
    assert verdict.improvements == ["relax.sum(axis=1)[bool]: deviating relax-a -> correct"]
    assert verdict.stale == [
        "relax.sum(axis=3)[float32]: not listed -> correct",
        "relax.sum(axis=2)[float32]: correct -> no result",
    ]
    # On the pinned wheels the improvement is stale too; on a user's wheel good news.
    assert len(verdict.problems(pinned_wheels=True)) == 5
    assert len(verdict.problems(pinned_wheels=False)) == 4
