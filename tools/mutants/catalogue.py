"""The mutant catalogue (tools/mutants/catalogue.json): read it, check it, apply a mutant.

A mutant is one exact text edit of one Python file of the lane's apache-tvm or apache-tvm-ffi
wheel: `old` occurs exactly once in `file` (a path inside the wheel, e.g. tvm_ffi/container.py)
and is replaced by `new`. The catalogue is plain data, like the deviation registry; this module
is the one reader (the runner, its tests and the report's strength section use it). Its
`fixes` are edits of the same form that fix a recorded deviation instead: the runner's `fix`
subcommand checks that the verdict passes with exactly their improvements.
Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
CATALOGUE = os.path.join(HERE, "catalogue.json")
WHEELS = ("apache-tvm", "apache-tvm-ffi")
KINDS = ("plain", "subtle")
# A row as the catalogue names it: a case of a conformance row (docs/conformance.md).
ROW = re.compile(r"//[\w/.-]*:[\w.-]+ :: \S.*")


class CatalogueError(ValueError):
    """The catalogue or a mutant does not hold together (raised with every problem listed)."""


@dataclass(frozen=True)
class Mutant:
    """One planted break: an exact edit of one file of one wheel."""

    id: str
    area: str
    wheel: str
    file: str
    old: str
    new: str
    breaks: str
    rows: tuple[str, ...] = ()
    kind: str = "subtle"
    # Set when no test can tell the mutant from the original: the reason why.
    equivalent: str = ""
    digest: str = ""  # entry_digest of the entry as written (set by load)
    # A fix (the catalogue's `fixes`, not a mutant): the generated cases it must improve, each
    # a case key of the lane's pinned expectations (tvm_conformance.expectations), and what it
    # fixes; `breaks` is empty.
    improves: tuple[str, ...] = ()
    fixes: str = ""


@dataclass(frozen=True)
class Catalogue:
    """The catalogue: the lane and wheel versions it was written against, areas, mutants."""

    lane: str
    wheels: dict[str, str]
    areas: dict[str, dict]
    mutants: tuple[Mutant, ...] = field(default_factory=tuple)
    # Edits that fix a recorded deviation: the verdict must PASS with exactly their
    # improvements (issue 66: a fixed deviation on a user's wheel is good news, never a FAIL).
    fixes: tuple[Mutant, ...] = field(default_factory=tuple)

    def by_id(self, mutant_id: str) -> Mutant:
        """The mutant with this id; KeyError naming the known ids otherwise."""
        for mutant in self.mutants:
            if mutant.id == mutant_id:
                return mutant
        for fix in self.fixes:
            if fix.id == mutant_id:
                return fix
        raise KeyError(f"no mutant {mutant_id!r}; known: {', '.join(m.id for m in self.mutants)}")

    def targets_of(self, mutant: Mutant) -> list[str]:
        """The Bazel target patterns of the mutant's area (a targeted run)."""
        return list(self.areas[mutant.area]["targets"])

    def row_targets_of(self, mutant: Mutant) -> list[str]:
        """The test targets of the rows that should catch the mutant (`//pkg:target`)."""
        return sorted({row.split(" :: ")[0] for row in mutant.rows})


def entry_digest(entry: dict) -> str:
    """sha256 (16 hex digits) of a catalogue entry as written (its JSON object): a recorded
    result of an entry edited since is stale (tools/verdict/strength.py, the same function)."""
    text = json.dumps(entry, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def load(path: str = CATALOGUE) -> Catalogue:
    """Read and check the catalogue; CatalogueError lists every problem found."""
    with open(path, encoding="utf-8") as stream:
        data = json.load(stream)
    mutants = tuple(_entry(entry) for entry in data["mutants"])
    fixes = tuple(_entry(entry) for entry in data.get("fixes", ()))
    catalogue = Catalogue(data["lane"], dict(data["wheels"]), dict(data["areas"]), mutants, fixes)
    problems = check(catalogue)
    if problems:
        raise CatalogueError(f"{path}:\n  " + "\n  ".join(problems))
    return catalogue


def _entry(entry: dict) -> Mutant:
    fields = {**entry, "rows": tuple(entry.get("rows", ())), "digest": entry_digest(entry)}
    fields["improves"] = tuple(entry.get("improves", ()))
    return Mutant(**fields)


def check(catalogue: Catalogue) -> list[str]:
    """Problems of the catalogue's shape (files are checked by apply())."""
    problems: list[str] = []
    seen: set[str] = set()
    for mutant in (*catalogue.mutants, *catalogue.fixes):
        fix = mutant in catalogue.fixes
        where = f"{'fix' if fix else 'mutant'} {mutant.id!r}"
        if fix and (not mutant.fixes.strip() or not mutant.improves or mutant.breaks):
            problems.append(f"{where}: a fix says what it fixes and the cases it improves")
        if not fix and (mutant.improves or mutant.fixes):
            problems.append(f"{where}: a mutant breaks; `improves` and `fixes` are a fix's")
        if mutant.id in seen:
            problems.append(f"{where}: duplicate id")
        seen.add(mutant.id)
        if mutant.area not in catalogue.areas:
            problems.append(f"{where}: area {mutant.area!r} not in {sorted(catalogue.areas)}")
        if mutant.wheel not in WHEELS:
            problems.append(f"{where}: wheel {mutant.wheel!r} not one of {WHEELS}")
        if mutant.kind not in KINDS:
            problems.append(f"{where}: kind {mutant.kind!r} not one of {KINDS}")
        if not mutant.file.endswith(".py") or os.path.isabs(mutant.file):
            problems.append(f"{where}: file {mutant.file!r} is not a relative .py path")
        if not mutant.old or mutant.old == mutant.new:
            problems.append(f"{where}: the edit changes nothing")
        if not fix and not mutant.breaks.strip():
            problems.append(f"{where}: says nothing about the behaviour it breaks")
        # Every entry, equivalent ones too, says which rows state the behaviour it breaks: the
        # rows are what a kill is checked against (kills_outside_rows) and what --scope rows runs.
        if not mutant.rows:
            problems.append(f"{where}: names no rows of docs/conformance.md")
        bad = [row for row in mutant.rows if not ROW.fullmatch(row)]
        if bad:
            problems.append(f"{where}: rows not written `//package:target :: case`: {bad}")
    return problems


def target_of_kill(kill: str) -> str:
    """The test target (`//package:target`) a recorded kill names: `//p:t :: case`, or the
    runner's `crashed (reproduced alone): //p:t`; "" when it names none."""
    start = kill.find("//")
    return kill[start:].split(" :: ")[0].strip() if start >= 0 else ""


def kills_outside_rows(catalogue: Catalogue, recorded: dict) -> list[str]:
    """Problems of a results file (docs/mutation_results.json's shape: `results` a list of
    entries or a dict of them by id) against the catalogue's rows: a kill that names no
    target of its mutant's rows (the rows miss the test that caught it, or the kill was
    incidental and the rows' own tests were never seen failing), a kill that names no test,
    a result of a mutant the catalogue does not have."""
    entries = recorded.get("results") or {}
    if isinstance(entries, dict):
        entries = list(entries.values())
    known = {m.id: m for m in catalogue.mutants}
    problems: list[str] = []
    for result in entries:
        mutant = known.get(result.get("id", ""))
        if mutant is None:
            problems.append(f"result {result.get('id')!r}: no such mutant in the catalogue")
            continue
        if result.get("outcome") != "killed":
            continue
        rows = set(catalogue.row_targets_of(mutant))
        killers = sorted({target_of_kill(k) for k in result.get("killed_by") or []} - {""})
        if not killers:
            problems.append(f"result {mutant.id!r}: killed, but names no test that killed it")
        elif not rows.intersection(killers):
            problems.append(
                f"result {mutant.id!r}: killed by {', '.join(killers)}, none of its rows' "
                f"targets ({', '.join(sorted(rows)) or 'no rows'}): correct the rows or "
                "rerun it with --scope rows"
            )
    return problems


def apply(text: str, mutant: Mutant) -> str:
    """`text` with the mutant's edit; CatalogueError unless `old` occurs exactly once."""
    count = text.count(mutant.old)
    if count != 1:
        raise CatalogueError(
            f"mutant {mutant.id!r}: its old text occurs {count} times in {mutant.file} "
            "(must be exactly once)"
        )
    return text.replace(mutant.old, mutant.new, 1)
