"""Renderers of the conformance report's model (report.build()): Markdown and one HTML page.

Both show, in this order: the overall verdict; a scoreboard with one line per column (what was
tested, where, the verdict, counts, where the results came from); the rows whose outcome differs
between columns; the matrix of behaviours x columns; each column's diff against the previous
run of its identity; then deviations, skips, exception fidelity and overhead per column.
The HTML page is self-contained: inline CSS, no script, no network.
"""

from __future__ import annotations

import html
import re

CELL_COLOURS = {
    "passed": "#c8f0c8",
    "failed": "#f6b3b3",
    "crashed": "#e39be3",
    "deviation": "#f8e3a3",
    "skipped": "#dde3ea",
    "not run": "#ffffff",
}
FIDELITY_COLUMNS = (
    ("case", "case"),
    ("crossing", "crossing"),
    ("caught", "arrives as"),
    ("type_kept", "type kept"),
    ("args_kept", "args kept"),
    ("picklable", "picklable"),
    ("attribute_kept", "attribute kept"),
)
OVERHEAD_NOTE = (
    "ns per call (ratio to a floor timed in the same process), from "
    "//benchmarks:overhead_ratio_test; compare ratios across machines, not ns."
)
_UPSTREAM = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)#(?P<num>\d+)$")


def upstream_url(ref: str) -> str:
    """`apache/tvm#123` -> its GitHub URL; a URL stays; anything else gives ""."""
    ref = ref.strip()
    if ref.startswith("https://"):
        return ref
    match = _UPSTREAM.match(ref)
    return f"https://github.com/{match['repo']}/issues/{match['num']}" if match else ""


def short_sha(entry: object) -> str:
    """`0.27.0.post1 (sha256 1a2b3c4d)` of an identity entry."""
    if not isinstance(entry, dict):
        return "unknown"
    sha = str(entry.get("sha256", ""))[:8] or "no sha256"
    text = f"{entry.get('version', '?')} (sha256 {sha})"
    if entry.get("source") == "user wheel":
        text += f", your wheel {entry.get('file', '')}"
    return text


def scoreboard_rows(report: dict) -> list[dict[str, str]]:
    """One dict per column: the scoreboard's cells as text."""
    out = []
    for col in report["columns"]:
        ident, machine, verdict = col["identity"], col["machine"], col["verdict"]
        s = col["summary"]["tvm"]
        src = ", ".join(f"{n} {k}" for k, n in col["sources"]["targets"].items()) or "no targets"
        if col["sources"]["hosts"]:
            src += " (hosts: " + ", ".join(col["sources"]["hosts"]) + ")"
        outcomes = verdict["outcomes"]
        out.append(
            {
                "column": col["title"],
                "verdict": ("PASS" if verdict["passed"] else f"FAIL ({len(verdict['problems'])})"),
                "behaviours": f"{s['hold']} hold, {s['deviations']} dev, {s['fail']} fail, "
                f"{s['skipped']} skip, {s['not_run']} not run",
                "cases": ", ".join(f"{n} {k}" for k, n in sorted(outcomes.items())),
                "TVM": short_sha(ident.get("tvm")),
                "tvm-ffi": short_sha(ident.get("tvm_ffi")),
                "machine": f"{machine.get('host', '?')}: {machine.get('cpu', '?')}, "
                f"GPU {machine.get('gpu', '?')}",
                "results from": src,
                "run": f"{col['run']} ({col['wall_s']:.0f} s)",
            }
        )
    return out


def _md(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _fidelity_value(row: dict, key: str) -> str:
    value = row.get(key, "")
    text = ("yes" if value else "NO") if isinstance(value, bool) else str(value)
    if key == "attribute_kept" and "attribute" in row:
        return f"{row['attribute']}: {text}"
    return text


def overhead_table(report: dict) -> tuple[list[str], list[list[str]]]:
    """Columns that measured the overhead, and a row per case: case, floor, `ns (ratio x)`."""
    cols = [c for c in report["columns"] if c.get("overhead")]
    cases: dict[tuple[str, str], dict[str, str]] = {}
    for col in cols:
        for row in col["overhead"]:
            key = (str(row.get("case", "?")), str(row.get("floor", "?")))
            cases.setdefault(key, {})[col["title"]] = (
                f"{float(row.get('ns', 0)):.0f} ({float(row.get('ratio', 0)):.2f}x)"
            )
    rows = [
        [case, floor] + [by_col.get(c["title"], "") for c in cols]
        for (case, floor), by_col in cases.items()
    ]
    return [c["title"] for c in cols], rows


def _diff_lines(col: dict) -> list[str]:
    d = col.get("diff")
    if not d:
        return ["No earlier run of this identity and config."]
    lines = [f"Against {d['previous']}:"]
    for key in ("newly failing", "fixed", "added", "changed"):
        lines.append(f"{key}: {len(d[key])}" + (" — " + "; ".join(d[key]) if d[key] else ""))
    return lines


def markdown(report: dict) -> str:
    """report.md."""
    verdict = "PASS" if report["passed"] else "FAIL"
    out = [
        "# TVM conformance report",
        "",
        f"Generated {report['generated']}. **Verdict: {verdict}**",
        "",
    ]
    board = scoreboard_rows(report)
    if board:
        keys = list(board[0])
        out += ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
        out += ["| " + " | ".join(_md(r[k]) for k in keys) + " |" for r in board]
        out.append("")
    for col in report["columns"]:
        if col["verdict"]["problems"]:
            out += [f"Problems of {col['title']}:", ""]
            out += [f"- {_md(p)}" for p in col["verdict"]["problems"][:50]]
            out.append("")
    titles = [c["title"] for c in report["columns"]]
    header = "| seed | behaviour | " + " | ".join(_md(t) for t in titles) + " |"
    rule = "|" + "---|" * (len(titles) + 2)
    differ = [r for r in report["matrix"] if r["differs"]]
    out += ["## Rows that differ between columns", ""]
    if differ:
        out += [header, rule]
        out += [_md_row(r) for r in differ]
    else:
        out.append("None: every behaviour has the same outcome wherever it ran.")
    out += ["", "## Matrix", "", header, rule]
    out += [_md_row(r) for r in report["matrix"]]
    out.append("")
    for col in report["columns"]:
        out += [f"## {col['title']}", ""]
        out += [f"- {_md(line)}" for line in _diff_lines(col)]
        out += ["", f"**{col['summary_line']}**", ""]
        if col["deviations"]:
            out += ["| deviation | kind | what TVM does | cases |", "|---|---|---|---|"]
            for dev_id, d in col["deviations"].items():
                out.append(f"| `{dev_id}` | {d['kind']} | {_md(d['actual'])} | {len(d['cases'])} |")
            out.append("")
        if col["skips"]:
            out += ["| skipped cases | reason |", "|---|---|"]
            out += [f"| {n} | {_md(reason)} |" for reason, n in col["skips"].items()]
            out.append("")
        if col.get("exception_fidelity"):
            out += ["Exception fidelity:", ""]
            out += ["| " + " | ".join(h for _, h in FIDELITY_COLUMNS) + " |"]
            out += ["|" + "---|" * len(FIDELITY_COLUMNS)]
            for row in col["exception_fidelity"]:
                out.append(
                    "| "
                    + " | ".join(_md(_fidelity_value(row, k)) for k, _ in FIDELITY_COLUMNS)
                    + " |"
                )
            out.append("")
    names, rows = overhead_table(report)
    if names:
        out += ["## FFI and VM overhead", "", OVERHEAD_NOTE, ""]
        out += ["| case | floor | " + " | ".join(_md(n) for n in names) + " |"]
        out += ["|" + "---|" * (len(names) + 2)]
        out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
        out.append("")
    return "\n".join(out)


def _md_row(row: dict) -> str:
    cells = " | ".join(_md(c["text"]) for c in row["cells"])
    return f"| {row['seed']} | {_md(row['behaviour'])} | {cells} |"


def _cell_html(cell: dict, deviations: dict) -> str:
    e = html.escape
    status = cell["status"]
    title = "\n".join(
        f"{o['test']} [{o['target']}/{o['mode']}]: {o['status']}"
        + (f" — {o['detail']}" if o["detail"] else "")
        for o in cell["outcomes"]
    )
    text = e(cell["text"])
    links = []
    for dev_id in sorted({o["deviation"] for o in cell["outcomes"] if o["deviation"]}):
        url = upstream_url(deviations.get(dev_id, {}).get("upstream", ""))
        if url:
            links.append(f" <a href='{e(url)}'>upstream</a>")
    cls = "s-" + status.replace(" ", "-")
    return f"<td class='{cls}' title='{e(title)}'>{text}{''.join(links)}</td>"


def _matrix_html(report: dict, rows: list[dict], table_id: str) -> list[str]:
    e = html.escape
    parts = [f"<table id='{table_id}' class='matrix'><tr><th>seed</th><th>behaviour</th>"]
    parts += [f"<th>{e(c['title'])}</th>" for c in report["columns"]]
    parts.append("</tr>")
    for row in rows:
        cls = "differs" if row["differs"] else "same"
        parts.append(
            f"<tr class='{cls}'><td>{e(row['seed'])}</td>"
            f"<td title='{e('; '.join(row['tests']))}'>{e(row['behaviour'])}</td>"
        )
        parts += [_cell_html(c, report["deviations"]) for c in row["cells"]]
        parts.append("</tr>")
    parts.append("</table>")
    return parts


def html_page(report: dict) -> str:
    """report.html: one file, inline CSS, no scripts or network."""
    e = html.escape
    style = "".join(
        f"td.s-{k.replace(' ', '-')}{{background:{v}}}" for k, v in CELL_COLOURS.items()
    )
    verdict = "PASS" if report["passed"] else "FAIL"
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>TVM conformance report</title><style>",
        "body{font-family:sans-serif;margin:1.5em;color:#111}"
        "table{border-collapse:collapse;margin:0.5em 0 1.5em}"
        "td,th{border:1px solid #999;padding:3px 6px;font-size:13px;vertical-align:top}"
        "th{background:#eef}.verdict{font-size:20px;padding:6px 12px;display:inline-block}"
        ".PASS{background:#c8f0c8}.FAIL{background:#f6b3b3}"
        "#only-differ:checked~table.matrix tr.same{display:none}"
        "table.matrix td:nth-child(n+3){text-align:center;white-space:nowrap}" + style,
        "</style></head><body><h1>TVM conformance report</h1>",
        f"<p><span id='verdict' class='verdict {verdict}'>Verdict: {verdict}</span> "
        f"&nbsp; {len(report['columns'])} column(s), generated {e(report['generated'])}</p>",
    ]
    board = scoreboard_rows(report)
    if board:
        parts.append("<table id='scoreboard'><tr>")
        parts += [f"<th>{e(k)}</th>" for k in board[0]]
        parts.append("</tr>")
        for row in board:
            cls = "PASS" if row["verdict"] == "PASS" else "FAIL"
            parts.append("<tr>")
            for key, value in row.items():
                extra = f" class='{cls}'" if key == "verdict" else ""
                parts.append(f"<td{extra}>{e(value)}</td>")
            parts.append("</tr>")
        parts.append("</table>")
    for col in report["columns"]:
        if col["verdict"]["problems"]:
            parts.append(f"<details><summary>Problems of {e(col['title'])}</summary><ul>")
            parts += [f"<li>{e(p)}</li>" for p in col["verdict"]["problems"][:200]]
            parts.append("</ul></details>")
    differ = [r for r in report["matrix"] if r["differs"]]
    parts.append(f"<h2>Rows that differ between columns ({len(differ)})</h2>")
    if differ:
        parts += _matrix_html(report, differ, "differ")
    else:
        parts.append("<p>None: every behaviour has the same outcome wherever it ran.</p>")
    parts.append(
        "<h2>Matrix</h2><input type='checkbox' id='only-differ'>"
        "<label for='only-differ'> only rows that differ</label>"
    )
    parts += _matrix_html(report, report["matrix"], "matrix")
    for col in report["columns"]:
        parts.append(f"<h2>{e(col['title'])}</h2><ul>")
        parts += [f"<li>{e(line)}</li>" for line in _diff_lines(col)]
        parts.append(f"</ul><p><b>{e(col['summary_line'])}</b></p>")
        if col["deviations"]:
            parts.append(
                "<table><tr><th>deviation</th><th>kind</th><th>what TVM does</th>"
                "<th>cases</th></tr>"
            )
            for dev_id, d in col["deviations"].items():
                url = upstream_url(d.get("upstream", ""))
                link = f" <a href='{e(url)}'>upstream</a>" if url else ""
                parts.append(
                    f"<tr><td>{e(dev_id)}{link}</td><td>{e(d['kind'])}</td>"
                    f"<td>{e(d['actual'])}</td><td>{len(d['cases'])}</td></tr>"
                )
            parts.append("</table>")
        if col["skips"]:
            parts.append("<table><tr><th>skipped cases</th><th>reason</th></tr>")
            parts += [f"<tr><td>{n}</td><td>{e(r)}</td></tr>" for r, n in col["skips"].items()]
            parts.append("</table>")
        if col.get("exception_fidelity"):
            parts.append("<details><summary>Exception fidelity</summary><table><tr>")
            parts += [f"<th>{e(h)}</th>" for _, h in FIDELITY_COLUMNS]
            parts.append("</tr>")
            for row in col["exception_fidelity"]:
                parts.append("<tr>")
                parts += [f"<td>{e(_fidelity_value(row, k))}</td>" for k, _ in FIDELITY_COLUMNS]
                parts.append("</tr>")
            parts.append("</table></details>")
    names, rows = overhead_table(report)
    if names:
        parts.append(f"<h2>FFI and VM overhead</h2><p>{e(OVERHEAD_NOTE)}</p><table><tr>")
        parts += [f"<th>{e(h)}</th>" for h in ["case", "floor", *names]]
        parts.append("</tr>")
        for row in rows:
            parts.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "".join(parts)
