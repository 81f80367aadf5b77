"""The mutant catalogue: its shape, its rows, and every edit against the installed wheels.

The edits are checked against the very files this test's venv installed: each mutant's old
text occurs exactly once in its file, and the mutated file still compiles (a mutant that does
not parse would only measure the import). The catalogue names the wheel versions it was written
for; in a lane whose wheel of that distribution differs (ffi_next's tvm-ffi, tvm_prev's both),
those mutants skip, naming both versions: a catalogue for another lane is its own file.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import importlib.util
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import catalogue
import pytest

from tvm_conformance import expectations, runfiles

CATALOGUE = catalogue.load()
TOP_LEVEL = {"apache-tvm": "tvm", "apache-tvm-ffi": "tvm_ffi"}
# The areas of the conformance map (docs/conformance.md) the issue asks the catalogue to cover.
MAP_AREAS = {"ffi", "relax", "frontend", "targets", "deploy"}


def test_catalogue_has_forty_mutants_over_every_area_of_the_map() -> None:
    assert len(CATALOGUE.mutants) >= 40
    per_area = {area: [m for m in CATALOGUE.mutants if m.area == area] for area in MAP_AREAS}
    assert set(CATALOGUE.areas) == MAP_AREAS
    assert all(len(mutants) >= 3 for mutants in per_area.values()), {
        a: len(m) for a, m in per_area.items()
    }
    # Not only crashes: most mutants are subtle (a wrong default, an off-by-one, ...).
    subtle = [m for m in CATALOGUE.mutants if m.kind == "subtle"]
    assert len(subtle) > len(CATALOGUE.mutants) // 2


def test_rows_are_rows_of_the_conformance_map() -> None:
    text = Path(runfiles.rlocation("docs/conformance.md")).read_text()
    missing = [(m.id, row) for m in CATALOGUE.mutants for row in m.rows if row not in text]
    assert not missing


def test_every_entry_names_rows() -> None:
    assert [m.id for m in CATALOGUE.mutants if not m.rows] == []


def test_an_entry_without_rows_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "catalogue.json"
    data = json.loads(Path(catalogue.CATALOGUE).read_text())
    data["mutants"][0]["rows"] = []
    data["mutants"][1]["rows"] = ["container_test test_a"]
    path.write_text(json.dumps(data))
    with pytest.raises(catalogue.CatalogueError) as info:
        catalogue.load(os.fspath(path))
    first, second = data["mutants"][0]["id"], data["mutants"][1]["id"]
    assert f"mutant {first!r}: names no rows of docs/conformance.md" in str(info.value)
    assert f"mutant {second!r}: rows not written `//package:target :: case`" in str(info.value)


def test_every_recorded_kill_names_a_target_of_its_rows() -> None:
    recorded = json.loads(Path(runfiles.rlocation("docs/mutation_results.json")).read_text())
    assert catalogue.kills_outside_rows(CATALOGUE, recorded) == []


def _kill(mutant_id: str, *killed_by: str) -> dict:
    return {"id": mutant_id, "outcome": "killed", "killed_by": list(killed_by)}


ROWS_CATALOGUE = catalogue.Catalogue(
    "default",
    {},
    {"ffi": {"targets": ["//p/..."]}},
    (
        catalogue.Mutant(
            "m", "ffi", "apache-tvm", "x.py", "a", "b", "c",
            rows=("//p:rows_test :: test_a", "//p:other_rows_test :: Suite.Case"),
        ),
    ),
)  # fmt: skip


@pytest.mark.parametrize("shape", [list, lambda rs: {r["id"]: r for r in rs}], ids=["list", "dict"])
def test_a_kill_outside_the_rows_is_a_problem(shape: Callable[[list[dict]], object]) -> None:
    planted = [
        _kill("m", "//p:incidental_test :: test_x", "//p:another_test :: test_y"),
        {"id": "gone", "outcome": "killed", "killed_by": ["//p:rows_test :: test_a"]},
    ]
    problems = catalogue.kills_outside_rows(ROWS_CATALOGUE, {"results": shape(planted)})
    assert problems == [
        "result 'm': killed by //p:another_test, //p:incidental_test, none of its rows' targets "
        "(//p:other_rows_test, //p:rows_test): correct the rows or rerun it with --scope rows",
        "result 'gone': no such mutant in the catalogue",
    ]


def test_a_kill_naming_no_test_is_a_problem() -> None:
    for killed_by in ([], ["?"]):
        recorded = {"results": [{"id": "m", "outcome": "killed", "killed_by": killed_by}]}
        assert catalogue.kills_outside_rows(ROWS_CATALOGUE, recorded) == [
            "result 'm': killed, but names no test that killed it"
        ]


def test_a_kill_by_any_target_of_the_rows_is_inside() -> None:
    for killed_by in (
        ["//p:incidental_test :: test_x", "//p:rows_test :: test_other_case[1]"],
        ["//p:other_rows_test :: Case"],
        ["crashed (reproduced alone): //p:rows_test"],
    ):
        recorded = {"results": [_kill("m", *killed_by)]}
        assert catalogue.kills_outside_rows(ROWS_CATALOGUE, recorded) == [], killed_by
    survivors = {"results": [{"id": "m", "outcome": "survived"}, {"id": "m", "outcome": "x"}]}
    assert catalogue.kills_outside_rows(ROWS_CATALOGUE, survivors) == []


def test_check_finds_duplicate_ids_and_empty_edits() -> None:
    first = CATALOGUE.mutants[0]
    broken = catalogue.Catalogue(
        CATALOGUE.lane,
        CATALOGUE.wheels,
        CATALOGUE.areas,
        (first, first, catalogue.Mutant("x", "nowhere", "numpy", "/abs.py", "a", "a", " ")),
    )
    problems = "\n".join(catalogue.check(broken))
    assert f"mutant {first.id!r}: duplicate id" in problems
    for expected in (
        "area 'nowhere'",
        "wheel 'numpy'",
        "not a relative .py path",
        "changes nothing",
    ):
        assert expected in problems


def test_apply_refuses_an_edit_that_does_not_occur_exactly_once() -> None:
    mutant = catalogue.Mutant("m", "ffi", "apache-tvm", "x.py", "a = 1\n", "a = 2\n", "b")
    assert catalogue.apply("a = 1\nb = 3\n", mutant) == "a = 2\nb = 3\n"
    for text, count in (("b = 3\n", 0), ("a = 1\na = 1\n", 2)):
        with pytest.raises(catalogue.CatalogueError, match=f"occurs {count} times in x.py"):
            catalogue.apply(text, mutant)


def _installed(mutant: catalogue.Mutant) -> Path:
    spec = importlib.util.find_spec(TOP_LEVEL[mutant.wheel])
    assert spec is not None and spec.submodule_search_locations
    site = Path(next(iter(spec.submodule_search_locations))).parent
    return site / mutant.file


def _user_wheel(dist: str) -> str | None:
    """The file of a user's wheel installed for `dist` in place of the lane's pin (the venv's
    record, tvm_conformance_venv.json), or None when the lane's pinned wheel is installed."""
    try:
        record = json.loads((Path(sys.prefix) / "tvm_conformance_venv.json").read_text())
    except (OSError, ValueError):
        return None
    canonical = dist.lower().replace("_", "-")
    for name, wheel in (record.get("user_wheels") or {}).items():
        if name.lower().replace("_", "-") == canonical and isinstance(wheel, dict):
            return str(wheel.get("file", name))
    return None


def test_a_users_wheel_is_told_from_the_pinned_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = {"user_wheels": {"apache-tvm": {"file": "apache_tvm-0.27.0.post1-x.whl"}}}
    (tmp_path / "tvm_conformance_venv.json").write_text(json.dumps(record))
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    assert _user_wheel("apache-tvm") == "apache_tvm-0.27.0.post1-x.whl"
    assert _user_wheel("apache-tvm-ffi") is None
    (tmp_path / "tvm_conformance_venv.json").write_text(json.dumps({"user_wheels": {}}))
    assert _user_wheel("apache-tvm") is None


@pytest.mark.parametrize("mutant", CATALOGUE.mutants, ids=lambda m: m.id)
def test_edit_applies_exactly_once_to_the_installed_wheel(mutant: catalogue.Mutant) -> None:
    installed = importlib.metadata.version(mutant.wheel)
    wanted = CATALOGUE.wheels[mutant.wheel]
    if installed != wanted:
        pytest.skip(f"this lane installs {mutant.wheel} {installed}; the catalogue is for {wanted}")
    # The catalogue's edits are of the lane's pinned wheels: a user's wheel of the same version
    # (check my wheel, a mutant run's own mutated wheel) is not what it describes.
    user = _user_wheel(mutant.wheel)
    if user:
        pytest.skip(
            f"{mutant.wheel} is a user's wheel ({user}); the catalogue is of the pinned one"
        )
    path = _installed(mutant)
    text = path.read_text(encoding="utf-8")
    mutated = catalogue.apply(text, mutant)
    assert mutated != text
    compile(mutated, os.fspath(path), "exec")


def test_row_targets_are_the_labels_of_the_rows() -> None:
    mutant = catalogue.Mutant(
        "m", "ffi", "apache-tvm", "x.py", "a", "b", "c",
        rows=("//p:t :: test_a[x]", "//p:t :: test_b", "//q:u :: Suite.Case"),
    )  # fmt: skip
    assert CATALOGUE.row_targets_of(mutant) == ["//p:t", "//q:u"]


def test_a_fix_says_what_it_fixes_and_improves_and_breaks_nothing() -> None:
    assert CATALOGUE.fixes, "the catalogue keeps at least one fix (issue 66)"
    good = CATALOGUE.fixes[0]
    assert good.improves and good.fixes and not good.breaks
    wrong = dataclasses.replace(good, id="wrong", improves=())
    broken = catalogue.Catalogue(CATALOGUE.lane, CATALOGUE.wheels, CATALOGUE.areas, (), (wrong,))
    assert "fix 'wrong': a fix says what it fixes" in "\n".join(catalogue.check(broken))
    mutant = dataclasses.replace(CATALOGUE.mutants[0], improves=("x",))
    broken = catalogue.Catalogue(CATALOGUE.lane, CATALOGUE.wheels, CATALOGUE.areas, (mutant,))
    assert "`improves` and `fixes` are a fix's" in "\n".join(catalogue.check(broken))


@pytest.mark.parametrize("fix", CATALOGUE.fixes, ids=lambda m: m.id)
def test_a_fixs_edit_applies_and_its_cases_are_pinned_deviating(fix: catalogue.Mutant) -> None:
    """The fix edits the installed wheel once, and each case it improves is pinned as a
    deviation in the catalogue lane's expectations (what it fixes is recorded)."""
    test_edit_applies_exactly_once_to_the_installed_wheel(fix)
    pinned = expectations.load(CATALOGUE.lane, "op_corpus_tier")
    assert all(pinned.get(case, "").startswith("deviating ") for case in fix.improves), [
        (case, pinned.get(case)) for case in fix.improves
    ]
