"""The report's strength section: how many planted breaks of TVM the kit catches.

Reads the mutant catalogue (tools/mutants/catalogue.json) and the recorded results of
`./bazelw run //tools/mutants -- --record docs/mutation_results.json`; per area: the
catalogue's size, how many were run, killed, survived, inconclusive, equivalent; the survivors
by id with the behaviour each breaks (and whether a later test closed it); the test that killed
each mutant. No results file, no section. Standard library only.
"""

from __future__ import annotations

import html
import json
import os
import statistics

CATALOGUE = os.path.join("tools", "mutants", "catalogue.json")
RESULTS = os.path.join("docs", "mutation_results.json")
OUTCOMES = ("killed", "survived", "inconclusive", "equivalent")
COMMAND = "./bazelw run //tools/mutants -- --baseline --record docs/mutation_results.json"


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
    return build(catalogue, recorded)


def build(catalogue: dict, recorded: dict) -> dict:
    """The section from the catalogue and a results file (plain data in, plain data out)."""
    mutants = {m["id"]: m for m in catalogue["mutants"]}
    results = {i: r for i, r in recorded.get("results", {}).items() if i in mutants}
    areas = []
    for area in catalogue["areas"]:
        ids = [i for i, m in mutants.items() if m["area"] == area]
        mine = [results[i] for i in ids if i in results]
        counts = {o: sum(1 for r in mine if r.get("outcome") == o) for o in OUTCOMES}
        kills = [r["seconds"] for r in mine if r.get("outcome") == "killed" and "seconds" in r]
        areas.append(
            {
                "area": area,
                "mutants": len(ids),
                "run": sum(counts[o] for o in ("killed", "survived", "inconclusive")),
                **counts,
                "median_kill_s": round(statistics.median(kills)) if kills else None,
            }
        )
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
    scored = sum(a["killed"] + a["survived"] for a in areas)
    return {
        "catalogue_size": len(mutants),
        "killed": killed,
        "scored": scored,
        "areas": areas,
        "survivors": sorted(survivors, key=lambda s: (s["open"] is False, s["area"], s["id"])),
        "kills": sorted(kills, key=lambda k: (k["area"], k["id"])),
        "lane": recorded.get("lane", ""),
        "scope": recorded.get("scope", ""),
        "command": COMMAND,
    }


def headline(section: dict) -> str:
    """One line: killed of scored, of the catalogue, the lane and scope."""
    return (
        f"{section['killed']} of {section['scored']} mutants run killed "
        f"(catalogue: {section['catalogue_size']}; lane {section['lane'] or '?'}, "
        f"scope {section['scope'] or '?'}); reproduce with `{section['command']}`"
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
    return "".join(parts)
