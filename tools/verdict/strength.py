"""The report's strength section: how many planted breaks of TVM the kit catches.

Reads the mutant catalogue (tools/mutants/catalogue.json) and the recorded results of
`./bazelw run //tools/mutants -- --record docs/mutation_results.json`; per area: the
catalogue's size, how many were run, killed, survived, inconclusive, equivalent; the survivors
by id with the behaviour each breaks (and whether a later test closed it); the test that killed
each mutant. The score divides kills by every mutant run (inconclusive ones included), is
refused while a result lacks a passing baseline, and results of another kit commit or of an
edited catalogue entry are listed as stale. No results file, no section. Standard library only.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import statistics
import subprocess
from collections.abc import Iterable

CATALOGUE = os.path.join("tools", "mutants", "catalogue.json")
RESULTS = os.path.join("docs", "mutation_results.json")
# What became of one mutant (tools/mutants/runner.py classifies each run).
MUTANT_OUTCOMES = ("killed", "survived", "inconclusive", "equivalent")
# Every mutant run counts, inconclusive ones too (they are not kills); an equivalent one is not run.
RUN_OUTCOMES = ("killed", "survived", "inconclusive")
ALL_AREAS = "all"
COMMAND = "./bazelw run //tools/mutants -- --record docs/mutation_results.json"


def entry_digest(entry: dict) -> str:
    """tools/mutants/catalogue.py's entry_digest (kept in step by strength_test.py)."""
    text = json.dumps(entry, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def kit_commit(workspace: str) -> str | None:
    """The workspace's commit (`git rev-parse HEAD`), None outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=workspace, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip() or None


def same_kit(workspace: str, commits: set[str], head: str | None) -> set[str]:
    """Those of `commits` whose tree is HEAD's but for the results file: recording results
    (and merging the branch that recorded them unchanged) makes a new commit of the same
    kit, which must not turn them stale. A commit git does not know is not the same kit."""
    same = set()
    for made in commits:
        if not made or made == head or "+" in made or not head:
            continue
        try:
            status = subprocess.run(
                ["git", "diff", "--quiet", made, head, "--", ".", f":!{RESULTS}"],
                cwd=workspace,
                capture_output=True,
                check=False,
            ).returncode
        except OSError:
            continue
        if status == 0:
            same.add(made)
    return same


def stale_reason(
    result: dict, entry: dict, commit: str | None, same: set[str] | frozenset[str] = frozenset()
) -> str:
    """Why a recorded result no longer speaks for the kit: its catalogue entry was edited since,
    or it was made by another kit (a commit whose tree differs from `commit`'s other than in
    the results file: `same` lists the ones that do not), or an edited tree; "" when current."""
    if result.get("entry_digest") != entry_digest(entry):
        return "catalogue entry edited since" if result.get("entry_digest") else "no entry digest"
    made = result.get("kit_commit")
    if not made:
        return "no kit commit"
    if commit and made != commit and made not in same:
        return f"kit {str(made)[:12]}, not {commit[:12]}"
    return ""


def load(workspace: str) -> dict | None:
    """The section's data, or None when the workspace has no recorded results."""
    results_path = os.path.join(workspace, RESULTS)
    catalogue_path = os.path.join(workspace, CATALOGUE)
    if not (os.path.isfile(results_path) and os.path.isfile(catalogue_path)):
        return None
    with open(catalogue_path, encoding="utf-8") as stream:
        catalogue = json.load(stream)
    with open(results_path, encoding="utf-8") as stream:
        recorded = json.load(stream)
    head = kit_commit(workspace)
    entries = recorded.get("results", {})
    made = {
        str(r.get("kit_commit"))
        for r in (entries.values() if isinstance(entries, dict) else entries)
        if r.get("kit_commit")
    }
    return build(catalogue, recorded, head, same_kit(workspace, made, head))


def tally(
    areas: list[str], mutant_areas: list[str], placed: Iterable[tuple[str, dict]]
) -> dict[str, dict]:
    """The one count of mutant results, for this section and the runner's table: per area of
    `areas` (in order), then ALL_AREAS (every result, whatever its area), the catalogue's
    mutants there (`mutant_areas`: each catalogue mutant's area), how many were run
    (RUN_OUTCOMES), each of MUTANT_OUTCOMES, and the seconds of each kill that has them.
    `placed` are (area, result) pairs."""
    rows = {
        area: {
            "mutants": sum(1 for a in mutant_areas if area in (ALL_AREAS, a)),
            "run": 0,
            **dict.fromkeys(MUTANT_OUTCOMES, 0),
            "kill_seconds": [],
        }
        for area in [*areas, ALL_AREAS]
    }
    for area, result in placed:
        outcome = result.get("outcome")
        mine = [rows[area]] if area in rows and area != ALL_AREAS else []
        for row in [*mine, rows[ALL_AREAS]]:
            if outcome in MUTANT_OUTCOMES:
                row[outcome] += 1
            if outcome in RUN_OUTCOMES:
                row["run"] += 1
            if outcome == "killed" and "seconds" in result:
                row["kill_seconds"].append(result["seconds"])
    return rows


def _median(seconds: list[float]) -> int | None:
    return round(statistics.median(seconds)) if seconds else None


def build(
    catalogue: dict,
    recorded: dict,
    commit: str | None = None,
    same: set[str] | frozenset[str] = frozenset(),
) -> dict:
    """The section from the catalogue and a results file (plain data in, plain data out);
    `commit` is the kit's: results of another commit are marked stale, unless `same` lists
    that commit (same_kit: its tree differs from `commit`'s only in the results file)."""
    mutants = {m["id"]: m for m in catalogue["mutants"]}
    entries = recorded.get("results", {})
    if isinstance(entries, list):
        entries = {e.get("id", ""): e for e in entries}
    results = {i: r for i, r in entries.items() if i in mutants}
    rows = tally(
        list(catalogue["areas"]),
        [m["area"] for m in mutants.values()],
        ((mutants[i]["area"], r) for i, r in results.items()),
    )
    areas = [
        {
            "area": area,
            **{k: rows[area][k] for k in ("mutants", "run", *MUTANT_OUTCOMES)},
            "median_kill_s": _median(rows[area]["kill_seconds"]),
        }
        for area in catalogue["areas"]
    ]
    survivors = [
        {"id": i, "area": mutants[i]["area"], "breaks": mutants[i]["breaks"], "open": True}
        for i, r in results.items()
        if r.get("outcome") == "survived"
    ] + [
        {
            "id": i,
            "area": mutants[i]["area"],
            "breaks": mutants[i]["breaks"],
            "open": False,
            "closed_by": (r.get("killed_by") or ["?"])[0],
        }
        for i, r in results.items()
        if r.get("outcome") == "killed" and r.get("was_survivor")
    ]
    kills = [
        {"id": i, "area": mutants[i]["area"], "test": (r.get("killed_by") or ["?"])[0]}
        for i, r in results.items()
        if r.get("outcome") == "killed"
    ]
    killed = sum(a["killed"] for a in areas)
    # Every mutant run counts, inconclusive ones too: they are not kills.
    scored = sum(a["run"] for a in areas)
    stale = {
        i: why for i, r in results.items() if (why := stale_reason(r, mutants[i], commit, same))
    }
    unbaselined = sorted(
        i
        for i, r in results.items()
        if r.get("outcome") != "equivalent" and (r.get("baseline") or {}).get("verdict") != "PASS"
    )
    return {
        "catalogue_size": len(mutants),
        "killed": killed,
        "scored": scored,
        "inconclusive": sum(a["inconclusive"] for a in areas),
        "stale": stale,
        "unbaselined": unbaselined,
        "areas": areas,
        "survivors": sorted(survivors, key=lambda s: (s["open"] is False, s["area"], s["id"])),
        "kills": sorted(kills, key=lambda k: (k["area"], k["id"])),
        "lane": recorded.get("lane", ""),
        "scope": recorded.get("scope", ""),
        "command": COMMAND,
    }


def headline(section: dict) -> str:
    """One line: killed of every mutant run (inconclusive ones named), of the catalogue, the
    lane and scope, the stale results; the score is refused while a result has no passing
    baseline of its run."""
    unbaselined = section.get("unbaselined", [])
    stale = section.get("stale", {})
    score = (
        f"score refused: {len(unbaselined)} result(s) without a passing baseline of their "
        f"kit commit; {section['killed']} of {section['scored']} mutants run killed"
        if unbaselined
        else f"{section['killed']} of {section['scored']} mutants run killed"
    )
    return (
        f"{score} ({section.get('inconclusive', 0)} inconclusive; "
        f"catalogue: {section['catalogue_size']}; lane {section['lane'] or '?'}, "
        f"scope {section['scope'] or '?'}; {len(stale)} stale)"
        f"; reproduce with `{section['command']}`"
    )


AREA_HEADERS = ("area", "mutants", "run", "killed", "survived", "inconclusive", "equivalent",
                "median s to kill")  # fmt: skip


def _area_cells(area: dict) -> list[str]:
    median = area["median_kill_s"]
    return [str(area[k]) for k in AREA_HEADERS[:-1]] + ["-" if median is None else str(median)]


def markdown_lines(section: dict | None) -> list[str]:
    """The section in report.md (nothing without results)."""
    if not section:
        return []

    def cell(text: object) -> str:
        return " ".join(str(text).split()).replace("|", "\\|")

    out = ["## Strength: planted breaks the kit catches", "", headline(section), ""]
    out += ["| " + " | ".join(AREA_HEADERS) + " |", "|" + "---|" * len(AREA_HEADERS)]
    out += ["| " + " | ".join(_area_cells(a)) + " |" for a in section["areas"]]
    out.append("")
    if section["survivors"]:
        out += ["| survivor | area | behaviour it breaks | status |", "|---|---|---|---|"]
        for s in section["survivors"]:
            status = "open" if s["open"] else f"closed by {cell(s['closed_by'])}"
            out.append(f"| `{s['id']}` | {s['area']} | {cell(s['breaks'])} | {status} |")
        out.append("")
    if section["kills"]:
        out += ["| mutant | area | first test that failed |", "|---|---|---|"]
        out += [f"| `{k['id']}` | {k['area']} | {cell(k['test'])} |" for k in section["kills"]]
        out.append("")
    if section.get("stale"):
        out += ["| stale result | why |", "|---|---|"]
        out += [f"| `{i}` | {cell(why)} |" for i, why in sorted(section["stale"].items())]
        out.append("")
    return out


def html_section(section: dict | None) -> str:
    """The section in report.html (an empty string without results)."""
    if not section:
        return ""
    e = html.escape
    parts = ["<h2>Strength: planted breaks the kit catches</h2>", f"<p>{e(headline(section))}</p>"]
    parts.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in AREA_HEADERS) + "</tr>")
    for area in section["areas"]:
        parts.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in _area_cells(area)) + "</tr>")
    parts.append("</table>")
    if section["survivors"]:
        parts.append("<table><tr><th>survivor</th><th>area</th><th>behaviour it breaks</th>"
                     "<th>status</th></tr>")  # fmt: skip
        for s in section["survivors"]:
            status = "open" if s["open"] else f"closed by {s['closed_by']}"
            parts.append(
                f"<tr><td><code>{e(s['id'])}</code></td><td>{e(s['area'])}</td>"
                f"<td>{e(s['breaks'])}</td><td>{e(status)}</td></tr>"
            )
        parts.append("</table>")
    if section.get("stale"):
        parts.append("<table><tr><th>stale result</th><th>why</th></tr>")
        for i, why in sorted(section["stale"].items()):
            parts.append(f"<tr><td><code>{e(i)}</code></td><td>{e(why)}</td></tr>")
        parts.append("</table>")
    return "".join(parts)
