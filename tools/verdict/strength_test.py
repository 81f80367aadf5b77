"""The report's strength section: counts per area from the catalogue and recorded results."""

from __future__ import annotations

import json
import os
from pathlib import Path

import strength

CATALOGUE = {
    "areas": {"ffi": {}, "relax": {}},
    "mutants": [
        {"id": "a", "area": "ffi", "breaks": "a breaks"},
        {"id": "b", "area": "ffi", "breaks": "b breaks"},
        {"id": "c", "area": "ffi", "breaks": "c | breaks"},
        {"id": "d", "area": "relax", "breaks": "d breaks"},
        {"id": "e", "area": "relax", "breaks": "e breaks"},
    ],
}
RESULTS = {
    "lane": "default",
    "scope": "area",
    "results": {
        "a": {"outcome": "killed", "seconds": 40.0, "killed_by": ["//x:t :: test_a", "//x:t :: z"]},
        "b": {"outcome": "killed", "seconds": 60.0, "killed_by": ["//x:t :: test_b"],
              "was_survivor": True},
        "c": {"outcome": "survived", "seconds": 100.0},
        "d": {"outcome": "inconclusive", "seconds": 5.0},
        "gone": {"outcome": "killed", "seconds": 1.0},  # no longer in the catalogue: ignored
    },
}  # fmt: skip


COMMIT = "c0ffee" * 6 + "abcd"
CURRENT = {"kit_commit": COMMIT, "baseline": {"verdict": "PASS"}}
for _id, _result in RESULTS["results"].items():
    _entry = next((m for m in CATALOGUE["mutants"] if m["id"] == _id), {})
    _result.update(CURRENT, entry_digest=strength.entry_digest(_entry))


def test_counts_per_area_survivors_and_kills() -> None:
    section = strength.build(CATALOGUE, RESULTS, COMMIT)
    ffi, relax = section["areas"]
    assert ffi == {
        "area": "ffi", "mutants": 3, "run": 3, "killed": 2, "survived": 1, "inconclusive": 0,
        "equivalent": 0, "median_kill_s": 50,
    }  # fmt: skip
    assert (relax["mutants"], relax["run"], relax["inconclusive"], relax["median_kill_s"]) == (
        2, 1, 1, None,
    )  # fmt: skip
    # The inconclusive mutant counts among those run: it is not a kill.
    assert (section["killed"], section["scored"], section["catalogue_size"]) == (2, 4, 5)
    assert [(s["id"], s["open"]) for s in section["survivors"]] == [("c", True), ("b", False)]
    assert section["survivors"][1]["closed_by"] == "//x:t :: test_b"
    assert [(k["id"], k["test"]) for k in section["kills"]] == [
        ("a", "//x:t :: test_a"),
        ("b", "//x:t :: test_b"),
    ]


def test_markdown_and_html_show_the_table_and_survivors() -> None:
    section = strength.build(CATALOGUE, RESULTS, COMMIT)
    text = "\n".join(strength.markdown_lines(section))
    assert (
        "2 of 4 mutants run killed (1 inconclusive; catalogue: 5; lane default, scope area" in text
    )
    assert "| ffi | 3 | 3 | 2 | 1 | 0 | 0 | 50 |" in text
    assert "| `c` | ffi | c \\| breaks | open |" in text
    assert "| `b` | ffi | b breaks | closed by //x:t :: test_b |" in text
    page = strength.html_section(section)
    assert "<td><code>c</code></td>" in page and "c | breaks" in page


def test_no_results_no_section(tmp_path: Path) -> None:
    assert strength.load(str(tmp_path)) is None
    assert strength.markdown_lines(None) == [] and strength.html_section(None) == ""
    (tmp_path / "tools" / "mutants").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "tools" / "mutants" / "catalogue.json").write_text(json.dumps(CATALOGUE))
    (tmp_path / "docs" / "mutation_results.json").write_text(json.dumps(RESULTS))
    loaded = strength.load(str(tmp_path))
    assert loaded is not None and loaded["killed"] == 2


def _with(mutant_id: str, **fields: object) -> dict:
    changed = json.loads(json.dumps(RESULTS))
    changed["results"][mutant_id].update(fields)
    return changed


def test_a_score_cannot_flatter() -> None:
    """The issue's case: 3 run, 1 killed, 2 inconclusive reads 1 of 3, never 1 of 1."""
    recorded = {
        "results": {
            "a": {"outcome": "killed", "seconds": 1.0, "killed_by": ["//x:t :: test_a"]},
            "b": {"outcome": "inconclusive"},
            "c": {"outcome": "inconclusive"},
        }
    }
    for mutant_id, result in recorded["results"].items():
        entry = next(m for m in CATALOGUE["mutants"] if m["id"] == mutant_id)
        result.update(CURRENT, entry_digest=strength.entry_digest(entry))
    line = strength.headline(strength.build(CATALOGUE, recorded, COMMIT))
    assert line.startswith("1 of 3 mutants run killed (2 inconclusive;"), line


def test_the_score_is_refused_without_a_passing_baseline() -> None:
    for baseline in (None, {"verdict": "not run"}, {"verdict": "FAIL"}):
        section = strength.build(CATALOGUE, _with("a", baseline=baseline), COMMIT)
        assert section["unbaselined"] == ["a"]
        assert strength.headline(section).startswith("score refused: 1 result(s) without")
    assert not strength.build(CATALOGUE, RESULTS, COMMIT)["unbaselined"]


def test_results_of_another_commit_or_an_edited_entry_are_stale() -> None:
    assert strength.build(CATALOGUE, RESULTS, COMMIT)["stale"] == {}
    other = strength.build(CATALOGUE, RESULTS, "f" * 40)["stale"]
    assert sorted(other) == ["a", "b", "c", "d"] and other["a"].startswith("kit c0ffeec0ffee")
    edited = json.loads(json.dumps(CATALOGUE))
    edited["mutants"][0]["breaks"] = "a breaks differently"
    section = strength.build(edited, RESULTS, COMMIT)
    assert section["stale"] == {"a": "catalogue entry edited since"}
    assert "| `a` | catalogue entry edited since |" in "\n".join(strength.markdown_lines(section))
    edited_tree = strength.build(CATALOGUE, _with("b", kit_commit=COMMIT + "+edits"), COMMIT)
    assert list(edited_tree["stale"]) == ["b"]
    # A later commit of the same kit (only the results file differs) keeps them current.
    later = "e" * 40
    assert strength.build(CATALOGUE, RESULTS, later, {COMMIT})["stale"] == {}
    assert sorted(strength.build(CATALOGUE, RESULTS, later, {"d" * 40})["stale"]) == [
        "a", "b", "c", "d"
    ]  # fmt: skip


def _git(repo: Path, *args: str) -> str:
    import subprocess

    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_only_a_commit_that_changed_nothing_but_the_results_is_the_same_kit(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "docs").mkdir()
    (tmp_path / "kit.py").write_text("kit = 1\n")
    (tmp_path / strength.RESULTS).write_text("{}\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "kit")
    ran = _git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / strength.RESULTS).write_text('{"results": {}}\n')
    _git(tmp_path, "commit", "-qam", "results recorded")
    recorded = _git(tmp_path, "rev-parse", "HEAD")
    assert strength.same_kit(os.fspath(tmp_path), {ran, "0" * 40, ran + "+edits"}, recorded) == {
        ran
    }
    (tmp_path / "kit.py").write_text("kit = 2\n")
    _git(tmp_path, "commit", "-qam", "the kit changed")
    changed = _git(tmp_path, "rev-parse", "HEAD")
    assert strength.same_kit(os.fspath(tmp_path), {ran, recorded}, changed) == set()


def test_the_digest_is_the_catalogues() -> None:
    import sys

    sys.path.insert(0, str(Path(strength.__file__).resolve().parents[1] / "mutants"))
    import catalogue

    entry = {"id": "x", "area": "ffi", "rows": ["//a:b :: c"], "breaks": "y"}
    assert strength.entry_digest(entry) == catalogue.entry_digest(entry)
