"""op_corpus_cells.py: which corpus cells the tier covers, and why it leaves out the others."""

import json
import random
from pathlib import Path

import op_corpus_cells as cells
import pytest


def _result(kind: str, name: str, dtype: str, frontend: str, index: int = 0) -> dict:
    return {"kind": kind, "name": name, "dtype": dtype, "frontend": frontend, "index": index}


def _tier(*keys: str) -> dict:
    return {"suite": "op_corpus_tier", "cases": {k: "correct" for k in keys}}


WHOLE = [
    _result("op", "abs", "float32", "fx"),
    _result("op", "abs", "float32", "fx", 1),
    _result("op", "abs", "float32", "exported_program"),
    _result("op", "abs", "int32", "fx"),
    _result("op", "gcd", "int64", "fx"),
    _result("op", "cos", "float32", "exported_program_undecomposed"),
    _result("op", "nothing", "*", "*", -1),  # a name without a sample: no cell
]
TIER = _tier("op|abs|float32|fx|0", "op|cos|float16|exported_program_undecomposed|0")


def test_each_left_out_cell_gets_the_first_reason_that_applies() -> None:
    corpus = cells.corpus_cells(WHOLE)
    tier = cells.tier_cells(TIER)
    gone = cells.left_out(corpus, tier)
    assert ("op", "abs", "float32", "fx", "bytecode") not in gone  # covered
    assert gone[("op", "abs", "float32", "fx", "compiled")] == "exec mode not in the tier"
    assert gone[("op", "abs", "float32", "exported_program", "bytecode")] == (
        "frontend not in the tier"
    )
    assert gone[("op", "gcd", "int64", "fx", "bytecode")] == "name without a tier case"
    assert gone[("op", "abs", "int32", "fx", "bytecode")] == "dtype without a tier case"
    # cos has a tier case in float16 only, and float32 in that frontend: its dtype.
    assert gone[("op", "cos", "float32", "exported_program_undecomposed", "bytecode")] == (
        "dtype without a tier case"
    )
    assert not any(c[1] == "nothing" for c in corpus)


def test_a_tier_runs_built_modes_add_cells() -> None:
    # The tier's compiled share: a case built in both modes covers its compiled cell; a tier
    # case built in bytecode only leaves its compiled cell outside the share; a case never
    # built (refused at import: no modes) adds no cell.
    tier = cells.tier_cells(_tier("op|abs|float32|fx|0", "op|abs|int32|fx|0"))
    tier |= cells.built_cells([
        dict(_result("op", "abs", "float32", "fx"), modes="bytecode,compiled"),
        dict(_result("op", "abs", "int32", "fx"), modes="bytecode"),
        dict(_result("op", "gcd", "int64", "fx"), modes=""),
    ])  # fmt: skip
    gone = cells.left_out(cells.corpus_cells(WHOLE), tier)
    assert ("op", "abs", "float32", "fx", "compiled") not in gone
    assert gone[("op", "abs", "int32", "fx", "compiled")] == cells.REASONS[5]
    assert gone[("op", "gcd", "int64", "fx", "compiled")] == "name without a tier case"
    with pytest.raises(ValueError, match="not a result"):
        cells.built_cells([{"modes": "bytecode"}])


def test_a_name_and_dtype_in_the_tier_on_another_frontend_only_is_named_as_such() -> None:
    corpus = cells.corpus_cells(
        [
            _result("op", "abs", "float32", "fx"),
            _result("op", "abs", "float32", "exported_program_undecomposed"),
        ]
    )
    tier = cells.tier_cells(
        _tier("op|abs|float32|fx|0", "op|sin|float32|exported_program_undecomposed|0")
    )
    gone = cells.left_out(corpus, tier)
    assert gone[("op", "abs", "float32", "exported_program_undecomposed", "bytecode")] == (
        "no tier case in this frontend"
    )


def test_covered_and_left_out_add_up_to_the_corpus() -> None:
    rng = random.Random(0)
    for _ in range(50):
        whole = [
            _result(
                rng.choice(["op", "module"]),
                rng.choice("abcdef"),
                rng.choice(["float32", "int32", "bool"]),
                rng.choice(["fx", "exported_program", "exported_program_undecomposed"]),
            )
            for _ in range(rng.randint(1, 30))
        ]
        keys = [f"{r['kind']}|{r['name']}|{r['dtype']}|{r['frontend']}|0" for r in whole]
        tier = _tier(*rng.sample(keys, rng.randint(0, len(keys))))
        corpus = cells.corpus_cells(whole)
        board = cells.summary(corpus, cells.tier_cells(tier))
        for kind, row in board.items():
            mine = [c for c in corpus if c[0] == kind]
            assert row["corpus_cells"] == len(mine)
            assert row["tier_cells_covered"] + sum(row["left_out"].values()) == len(mine)
            assert row["tier_cells_not_in_corpus"] == 0  # the tier was drawn from the corpus
            pairs = row["by_frontend_and_mode"].values()
            assert sum(c for c, _ in pairs) == row["tier_cells_covered"]
            assert sum(t for _, t in pairs) == len(mine)


def test_a_tier_cell_no_whole_run_has_is_counted() -> None:
    corpus = cells.corpus_cells([_result("op", "abs", "float32", "fx")])
    board = cells.summary(
        corpus, cells.tier_cells(_tier("op|abs|float32|fx|0", "op|sin|float32|fx|0"))
    )
    assert board["op"]["tier_cells_not_in_corpus"] == 1


@pytest.mark.parametrize(
    ("tier", "message"),
    [
        ({"cases": {"op|abs|float32|fx": "correct"}}, "malformed case key"),
        ({"suite": "x"}, "no 'cases'"),
    ],
)
def test_a_bad_expectations_file_is_named(tier: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cells.tier_cells(tier)


def test_a_file_that_is_no_result_list_is_named() -> None:
    with pytest.raises(ValueError, match="not a result of the op corpus"):
        cells.corpus_cells([{"kind": "op"}])


def test_main_writes_the_summary_and_the_list(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    whole = tmp_path / "whole.json"
    whole.write_text(json.dumps(WHOLE))
    tier = tmp_path / "tier.json"
    tier.write_text(json.dumps(TIER))
    out, listed = tmp_path / "cells.json", tmp_path / "cells.md"
    assert (
        cells.main(
            ["--tier", str(tier), "--whole", str(whole), "--json", str(out), "--list", str(listed)]
        )
        == 0
    )
    board = json.loads(out.read_text())
    assert board == json.loads(capsys.readouterr().out)
    assert board["op"]["tier_cells_covered"] == 1
    text = listed.read_text()
    assert "| op | gcd | name without a tier case: int64 |" in text
    assert "| op | abs | dtype without a tier case: int32 |" in text
    assert "**exec mode not in the tier**" in text


def test_main_refuses_an_unreadable_or_empty_run(tmp_path: Path) -> None:
    tier = tmp_path / "tier.json"
    tier.write_text(json.dumps(TIER))
    with pytest.raises(SystemExit, match="cannot read"):
        cells.main(["--tier", str(tier), "--whole", str(tmp_path / "missing.json")])
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    with pytest.raises(SystemExit):
        cells.main(["--tier", str(tier), "--whole", str(empty)])
