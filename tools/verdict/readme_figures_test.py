"""The figures the README and the docs state are the repo's records, not memories of them.

Mutants: the catalogue's size and each area's, killed of run, equivalent, survived,
inconclusive, the median and max seconds to a kill, the recorded run's kit and baseline, as
`strength.tally` counts them over tools/mutants/catalogue.json and docs/mutation_results.json;
the mutants CI keeps killed, as .ci/run names them. Any other mutant figure in the current text
(a number before `mutants`, `killed`, `equivalent`, ...) fails as unchecked, so a new claim is
either checked here or not made. Pages: the README and every page of docs/ but the generated
one; text under a `## History` heading is the record of an earlier round (it names its commit)
and is not read.

Versions: the pins the README names (the default lane's lock, .bazelversion), each lane's TVM
and tvm-ffi in the lanes tables (its lock), the CPythons of the venv rule
(third_party/python/venv.bzl) and of a GPU-runner bundle (tools/config/lanes.bzl
RUNNER_PYTHONS). The sample verdict line has no counts of its own run.
"""

from __future__ import annotations

import ast
import json
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

import pytest
import strength

from tvm_conformance.runfiles import rlocation

README = "README.md"
# docs/deviations.md is written from the registry (tools/deviations), never by hand.
GENERATED = ("deviations.md",)
CI = ".ci/run"
VENV_RULE = "third_party/python/venv.bzl"
LANES_BZL = "tools/config/lanes.bzl"
HISTORY = re.compile(r"^## History\b", re.MULTILINE)
WORDS = {
    "no": 0, "none": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
NUM = r"(\d[\d,]*|" + "|".join(WORDS) + r")"


def number(text: str) -> int:
    return WORDS[text.lower()] if text.lower() in WORDS else int(text.replace(",", ""))


@dataclass
class Record:
    """What the repo records about the mutants (strength.tally, the one count)."""

    catalogue: int
    per_area: dict[str, dict]
    median_s: int | None
    max_s: int | None
    kit: str
    baseline_s: float | None
    ci_ids: list[str]
    ci_per_area: dict[str, int]


def _read(path: str) -> str:
    return Path(rlocation(path)).read_text(encoding="utf-8")


def load_record(
    catalogue: dict | None = None, recorded: dict | None = None, ci: str | None = None
) -> Record:
    catalogue = catalogue or json.loads(_read(strength.CATALOGUE))
    recorded = recorded or json.loads(_read(strength.RESULTS))
    ci = ci if ci is not None else _read(CI)
    mutants = {m["id"]: m for m in catalogue["mutants"]}
    results = recorded.get("results", {})
    rows = strength.tally(
        list(catalogue["areas"]),
        [m["area"] for m in mutants.values()],
        ((mutants[i]["area"], r) for i, r in results.items() if i in mutants),
    )
    seconds = rows[strength.ALL_AREAS]["kill_seconds"]
    only = re.search(r"//tools/mutants\b.*?--only((?:\s+(?:\\\n)?\s*[a-z0-9-]+)+)", ci, re.DOTALL)
    ci_ids = only[1].replace("\\", " ").split() if only else []
    ci_per_area: dict[str, int] = {}
    for mutant_id in ci_ids:
        area = mutants[mutant_id]["area"]
        ci_per_area[area] = ci_per_area.get(area, 0) + 1
    return Record(
        catalogue=len(mutants),
        per_area=rows,
        median_s=round(statistics.median(seconds)) if seconds else None,
        max_s=round(max(seconds)) if seconds else None,
        kit=str(recorded.get("kit_commit", "")),
        baseline_s=(recorded.get("baseline") or {}).get("seconds"),
        ci_ids=ci_ids,
        ci_per_area=ci_per_area,
    )


def current_text(markdown: str) -> str:
    """The text a page states as current: before `## History`, without fenced code."""
    markdown = HISTORY.split(markdown, maxsplit=1)[0]
    return re.sub(r"^```.*?^```", "", markdown, flags=re.MULTILINE | re.DOTALL)


# What an area is called in prose (the catalogue's area names; the Relax VM's is `relax`).
AREA_WORDS = {"relax vm": "relax", "relax": "relax", "ffi": "ffi", "frontend": "frontend",
              "model import": "frontend", "targets": "targets", "deploy": "deploy"}  # fmt: skip


def checked_figures(text: str, record: Record) -> tuple[list[str], list[tuple[int, int]]]:
    """(wrong figures, spans of the figures checked) of one page's current text."""
    prose = " ".join(text.split())
    every = record.per_area[strength.ALL_AREAS]
    wrong: list[str] = []
    spans: list[tuple[int, int]] = []

    def check(pattern: str, *expected: object) -> None:
        for match in re.finditer(pattern, prose, re.IGNORECASE):
            got = [number(g) if re.fullmatch(NUM, g, re.I) else g for g in match.groups()]
            want = [e(match) if callable(e) else e for e in expected]
            if got != want:
                wrong.append(f"{match[0]!r} says {got}, the record {want}")
            spans.append(match.span())

    check(r"holds " + NUM + r" mutants", record.catalogue)
    check(r"\b" + NUM + r" of " + NUM + r" (?:run )?killed", every["killed"], every["run"])
    for outcome in ("equivalent", "survived", "inconclusive"):
        check(r"\b" + NUM + r" " + outcome + r"\b", every[outcome])
    check(r"median " + NUM + r" s to a kill, max " + NUM + r" s", record.median_s, record.max_s)
    check(r"CI keeps " + NUM + r" killed", len(record.ci_ids))
    area = "|".join(sorted(AREA_WORDS, key=len, reverse=True))
    check(
        r"\b" + NUM + r" (" + area + r") mutants?\b",
        lambda m: record.ci_per_area.get(AREA_WORDS[m[2].lower()], 0),
        lambda m: m[2],
    )
    check(
        r"at kit ([0-9a-f]{7,40})\b", lambda m: m[1] if record.kit.startswith(m[1]) else record.kit
    )
    check(
        r"at kit [0-9a-f]{7,40}\b[^|]*?baseline PASS in " + NUM + r" s",
        round(record.baseline_s or -1),
    )
    return wrong, spans


# A figure about mutants: a number right before what the mutants did or how many there are.
OUTCOME = r"(?:killed|equivalent|survived|inconclusive)"
FIGURE = re.compile(
    r"\b" + NUM + r" (?:[\w-]+ ){0,2}mutants?\b"
    r"|\b" + NUM + r" (?:of " + NUM + r" )?(?:[\w-]+ ){0,2}" + OUTCOME + r"\b"
    r"|\b(?:median|max) " + NUM + r" s\b",
    re.IGNORECASE,
)  # fmt: skip


def unchecked_figures(text: str, spans: list[tuple[int, int]]) -> list[str]:
    """Mutant figures no rule above checked."""
    prose = " ".join(text.split())
    return [
        m[0]
        for m in FIGURE.finditer(prose)
        if not any(a <= m.start() and m.end() <= b for a, b in spans)
        and m[0].split()[0].lower() not in ("no", "none")
    ]


AREA_TABLE = re.compile(r"^\| area \| mutants \|(.*)\|\s*$")
TABLE_COLUMNS = {"mutants": "mutants", "run": "run", "killed": "killed", "survived": "survived",
                 "inconclusive": "inconclusive", "equivalent": "equivalent"}  # fmt: skip


def area_tables(text: str, record: Record) -> list[str]:
    """Each `| area | mutants | ...` table of the current text against the tally per area."""
    wrong = []
    header: list[str] | None = None
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if AREA_TABLE.match(line.strip()):
            header = cells
            continue
        if header is None or not line.startswith("|"):
            header = None
            continue
        if set(cells[0]) <= set("-: "):
            continue
        row = record.per_area.get(cells[0])
        if row is None:
            wrong.append(f"area table: {cells[0]!r} is not an area of the catalogue")
            continue
        seconds = row["kill_seconds"]
        computed = {
            **{name: row[key] for name, key in TABLE_COLUMNS.items()},
            "median s to kill": round(statistics.median(seconds)) if seconds else "-",
            "max s to kill": round(max(seconds)) if seconds else "-",
        }
        for name, cell in zip(header, cells, strict=False):
            if name in computed and cell != str(computed[name]):
                wrong.append(f"area table, {cells[0]}, {name}: {cell}, the record {computed[name]}")
    return wrong


def docs() -> list[str]:
    """Every page of docs/ but the generated ones (Bazel: //:docs_pages, all of them)."""
    folder = Path(rlocation("docs/results.md")).parent
    return sorted(f"docs/{p.name}" for p in folder.glob("*.md") if p.name not in GENERATED)


def _pages() -> dict[str, str]:
    return {path: current_text(_read(path)) for path in (README, *docs())}


def test_mutant_figures_are_the_records() -> None:
    record = load_record()
    pages = _pages()
    assert {"docs/mutation.md", "docs/results.md", "docs/lanes.md"} <= set(pages), sorted(pages)
    wrong = []
    for path, text in pages.items():
        bad, spans = checked_figures(text, record)
        bad += area_tables(text, record)
        bad += [
            f"{f!r}: a mutant figure this test does not check"
            for f in unchecked_figures(text, spans)
        ]
        wrong += [f"{path}: {w}" for w in bad]
    assert not wrong, (
        "figures that are not what tools/mutants/catalogue.json and docs/mutation_results.json "
        "record (strength.tally); state the record or drop the figure:\n" + "\n".join(wrong)
    )


def test_the_figures_the_readme_states_are_checked() -> None:
    """A floor: the README's teeth paragraph keeps its figures, each one checked above."""
    text = current_text(_read(README))
    _, spans = checked_figures(text, load_record())
    prose = " ".join(text.split())
    stated = sorted(prose[a:b] for a, b in spans)
    assert len(stated) >= 5, stated
    assert any("mutants" in s for s in stated) and any("killed" in s for s in stated)


def counted_verdict_lines(text: str) -> list[str]:
    """Sample verdict lines that give a run's counts (`64 targets`, `722 cases`)."""
    return [
        line.strip()
        for line in text.splitlines()
        if re.match(r"\s*verdict: (PASS|FAIL)\b", line)
        and re.search(r"\b\d+ (targets|cases)\b", line)
    ]


def test_no_counts_in_the_sample_verdict_lines() -> None:
    """A run's own counts are no figure of the kit: the samples show the line's shape."""
    wrong = [f"{p}: {line}" for p in (README, *docs()) for line in counted_verdict_lines(_read(p))]
    assert not wrong, "sample verdict lines with a run's counts:\n" + "\n".join(wrong)
    planted = "```\nverdict: PASS (lane default): 64 targets (64 PASSED), 722 cases (...)\n```"
    assert counted_verdict_lines(planted)


# Versions.


def _pins(lock: str) -> dict[str, str]:
    return {
        m[1].lower(): m[2].split("+")[0]
        for m in re.finditer(r"^([A-Za-z0-9_.-]+)==(\S+)", lock, re.MULTILINE)
    }


def _supported_pythons() -> list[str]:
    for node in ast.parse(_read(VENV_RULE)).body:
        if (
            isinstance(node, ast.Assign)
            and getattr(node.targets[0], "id", "") == "_SUPPORTED_PYTHON"
        ):
            return list(ast.literal_eval(node.value))
    raise AssertionError(f"{VENV_RULE}: no _SUPPORTED_PYTHON")


def _lanes_bzl(name: str) -> dict:
    """A plain-data dict of tools/config/lanes.bzl (LANES, RUNNER_PYTHONS), as lanes.py reads it."""
    for node in ast.parse(_read(LANES_BZL)).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == name:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{LANES_BZL}: no {name}")


def _runner_pythons() -> list[str]:
    return sorted(_lanes_bzl("RUNNER_PYTHONS").values())


def test_the_pins_the_readme_names_are_the_default_lanes() -> None:
    readme = _read(README)
    match = re.search(
        r"Pinned: apache-tvm (\S+), apache-tvm-ffi (\S+), torch (\S+), Bazel ([\d.]+)\.", readme
    )
    assert match, f"{README}: no `Pinned: apache-tvm X, apache-tvm-ffi Y, torch Z, Bazel B.` line"
    default = _lanes_bzl("LANES")["default"]
    pins = _pins(_read("third_party/python/" + default["lock"]))
    assert [match[1], match[2], match[3]] == [
        pins["apache-tvm"],
        pins["apache-tvm-ffi"],
        pins["torch"],
    ]
    assert match[4] == _read(".bazelversion").strip()


@pytest.mark.parametrize("path", [README, "docs/lanes.md"])
def test_each_lanes_tvm_and_tvm_ffi_in_the_lanes_tables_are_its_locks(path: str) -> None:
    table = _lanes_bzl("LANES")
    seen = set()
    for line in _read(path).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or cells[0] not in table:
            continue
        pins = _pins(_read("third_party/python/" + table[cells[0]]["lock"]))
        tvm, ffi = cells[2].split()[0], cells[3].split()[0]
        assert (tvm, ffi) == (pins["apache-tvm"], pins["apache-tvm-ffi"]), f"{path}: {line}"
        seen.add(cells[0])
    assert seen == set(table), f"{path}: the lanes table lacks {sorted(set(table) - seen)}"


def _range(versions: list[str]) -> tuple[str, str]:
    return versions[0], versions[-1]


# Where the docs state the CPythons of the venv rule, and of a bundle: (page, pattern); each
# pattern's groups are the first and last version, or the whole list.
VENV_PYTHONS = [
    (README, r"CPython (3\.\d+)-(3\.\d+) as `python3`"),
    (README, r"Python (3\.\d+)-(3\.\d+) \(a bundle"),
    (README, r"this kit supports Python ((?:3\.\d+, )+3\.\d+)"),
    ("docs/architecture.md", r"python3 \((3\.\d+) to (3\.\d+); other versions are a clear error"),
    ("docs/deployment.md", r"\| Python \| (3\.\d+) to (3\.\d+) with Bazel"),
    ("docs/lanes.md", r"CPython (3\.\d+) to (3\.\d+) are accepted"),
]
RUNNER_PYTHONS = [
    (README, r"a bundle, below: (3\.\d+)-(3\.\d+)\)"),
    ("docs/deployment.md", r"((?:3\.\d+, )+3\.\d+) or (3\.\d+) for a bundle"),
    ("docs/deployment.md", r"tvm-ffi wheels for CPython ((?:3\.\d+, )+3\.\d+) and (3\.\d+)"),
    ("docs/deployment.md", r"a driver for CUDA\s+13, Python (3\.\d+)-(3\.\d+), numpy"),
]


def _stated(groups: tuple[str, ...]) -> list[str]:
    versions = [v for g in groups for v in re.split(r",\s*", g)]
    return versions


@pytest.mark.parametrize(("path", "pattern", "which"), [
    *[(p, r, "venv") for p, r in VENV_PYTHONS], *[(p, r, "runner") for p, r in RUNNER_PYTHONS]
])  # fmt: skip
def test_the_cpythons_stated_are_the_venv_rules_and_the_bundles(
    path: str, pattern: str, which: str
) -> None:
    supported = _supported_pythons() if which == "venv" else _runner_pythons()
    match = re.search(pattern, " ".join(_read(path).split()))
    assert match, f"{path}: no longer states the {which} CPythons as {pattern!r}; update this test"
    stated = _stated(match.groups())
    between = match.string[match.end(1) : match.start(2)] if len(match.groups()) == 2 else ""
    if between in ("-", " to "):
        assert _range(supported) == tuple(stated), f"{path}: {match[0]!r}, {supported}"
    else:
        assert stated == supported, f"{path}: {match[0]!r}, {supported}"


# The checks themselves, on planted drift.

PLANTED_CATALOGUE = {
    "areas": {"ffi": {}, "relax": {}},
    "mutants": [
        {"id": "a", "area": "ffi"},
        {"id": "b", "area": "ffi"},
        {"id": "c", "area": "relax"},
        {"id": "d", "area": "relax"},
    ],
}
PLANTED_RESULTS = {
    "kit_commit": "d3b76834077457590e959b18f59df329f2523bbe",
    "baseline": {"verdict": "PASS", "seconds": 155.0},
    "results": {
        "a": {"outcome": "killed", "seconds": 10.0},
        "b": {"outcome": "equivalent"},
        "c": {"outcome": "killed", "seconds": 30.4},
        "d": {"outcome": "survived", "seconds": 50.0},
    },
}
PLANTED_CI = "./bazelw run //tools/mutants -- --baseline \\\n  --only a c\n"
PLANTED_TEXT = (
    "The catalogue holds 4 mutants. At kit d3b7683, baseline PASS in 155 s: 2 of 3 run killed "
    "(1 equivalent, 1 survived; median 20 s to a kill, max 30 s); CI keeps two killed: one FFI "
    "mutant and one Relax VM mutant.\n\n"
    "| area | mutants | run | killed | survived | inconclusive | equivalent | median s to kill |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|\n"
    "| ffi | 2 | 1 | 1 | 0 | 0 | 1 | 10 |\n"
    "| relax | 2 | 2 | 1 | 1 | 0 | 0 | 30 |\n"
)


def _planted(text: str) -> list[str]:
    record = load_record(PLANTED_CATALOGUE, PLANTED_RESULTS, PLANTED_CI)
    wrong, spans = checked_figures(text, record)
    return wrong + area_tables(text, record) + unchecked_figures(text, spans)


def test_the_planted_text_is_the_planted_record() -> None:
    assert _planted(PLANTED_TEXT) == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("holds 4 mutants", "holds 5 mutants"),
        ("2 of 3 run killed", "3 of 3 run killed"),
        ("1 equivalent", "2 equivalent"),
        ("1 survived", "0 survived"),
        ("median 20 s", "median 28 s"),
        ("max 30 s", "max 91 s"),
        ("keeps two killed", "keeps three killed"),
        ("one FFI mutant", "two FFI mutants"),
        ("kit d3b7683", "kit 0123abc"),
        ("baseline PASS in 155 s", "baseline PASS in 151 s"),
        ("| ffi | 2 | 1 |", "| ffi | 3 | 1 |"),
        ("| relax | 2 | 2 | 1 | 1 | 0 | 0 | 30 |", "| relax | 2 | 2 | 1 | 1 | 0 | 0 | 31 |"),
        ("| ffi |", "| gone |"),
        ("The catalogue holds", "Of 12 mutants the catalogue holds"),
        ("CI keeps", "7 killed; CI keeps"),
        ("CI keeps", "3 were killed; CI keeps"),
        ("CI keeps", "of them 2 more survived; CI keeps"),
    ],
)
def test_each_drift_fails(old: str, new: str) -> None:
    assert old in PLANTED_TEXT
    assert _planted(PLANTED_TEXT.replace(old, new)), f"{new!r} passed"


def test_history_is_not_current_text() -> None:
    page = "# t\n\nholds 4 mutants\n\n## History: earlier\n\nholds 64 mutants, 63 of 63 killed\n"
    assert "64" not in current_text(page)
    assert _planted(current_text(page)) == []


def test_the_real_readme_fails_on_a_planted_drift() -> None:
    readme = current_text(_read(README))
    record = load_record()
    every = record.per_area[strength.ALL_AREAS]
    stated = f"**{every['killed']} of {every['run']} run killed**"
    assert stated in readme
    wrong, _ = checked_figures(readme.replace(stated, "**63 of 63 run killed**"), record)
    assert wrong == [
        f"'63 of 63 run killed' says [63, 63], the record [{every['killed']}, {every['run']}]"
    ]
