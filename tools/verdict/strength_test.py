"""The report's strength section: counts per area from the catalogue and recorded results."""

from __future__ import annotations

import json
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


def test_counts_per_area_survivors_and_kills() -> None:
    section = strength.build(CATALOGUE, RESULTS)
    ffi, relax = section["areas"]
    assert ffi == {
        "area": "ffi", "mutants": 3, "run": 3, "killed": 2, "survived": 1, "inconclusive": 0,
        "equivalent": 0, "median_kill_s": 50,
    }  # fmt: skip
    assert (relax["mutants"], relax["run"], relax["inconclusive"], relax["median_kill_s"]) == (
        2, 1, 1, None,
    )  # fmt: skip
    assert (section["killed"], section["scored"], section["catalogue_size"]) == (2, 3, 5)
    assert [(s["id"], s["open"]) for s in section["survivors"]] == [("c", True), ("b", False)]
    assert section["survivors"][1]["closed_by"] == "//x:t :: test_b"
    assert [(k["id"], k["test"]) for k in section["kills"]] == [
        ("a", "//x:t :: test_a"),
        ("b", "//x:t :: test_b"),
    ]


def test_markdown_and_html_show_the_table_and_survivors() -> None:
    section = strength.build(CATALOGUE, RESULTS)
    text = "\n".join(strength.markdown_lines(section))
    assert "2 of 3 mutants run killed (catalogue: 5; lane default, scope area)" in text
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
