"""report.html: the conformance report's model (report_model.build()) as one HTML page.

The same sections as report.md (render_md.py), with the matrix's cells coloured by outcome and
their cases on hover. Self-contained: inline CSS, no script, no network.
"""

from __future__ import annotations

import html

import strength
from report_model import (
    FIDELITY_COLUMNS,
    OVERHEAD_NOTE,
    diff_lines,
    drift_lines,
    fidelity_value,
    op_corpus_lines,
    op_corpus_table,
    overhead_table,
    scoreboard_rows,
    upstream_url,
)

CELL_COLOURS = {
    "passed": "#c8f0c8",
    "failed": "#f6b3b3",
    "crashed": "#e39be3",
    "deviation": "#f8e3a3",
    "skipped": "#dde3ea",
    "not run": "#ffffff",
}


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


def render(report: dict) -> str:
    """report.html of one report: one file, inline CSS, no scripts or network."""
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
        parts += [f"<li>{e(line)}</li>" for line in diff_lines(col)]
        parts.append(f"</ul><p><b>{e(col['summary_line'])}</b></p>")
        drift = drift_lines(col)
        if drift:
            parts.append(f"<h3>Registry drift</h3><p>{e(drift[0])}</p><ul>")
            parts += [f"<li><code>{e(line)}</code></li>" for line in drift[1:]]
            parts.append("</ul>")
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
        if col.get("fixed"):
            parts.append(
                "<table class='fixed'><tr><th>fixed deviation</th>"
                "<th>what the pinned TVM does</th><th>cases</th></tr>"
            )
            for dev_id, d in col["fixed"].items():
                url = upstream_url(d.get("upstream", ""))
                link = f" <a href='{e(url)}'>upstream</a>" if url else ""
                parts.append(
                    f"<tr><td>{e(dev_id)}{link}</td><td>{e(d['actual'])}</td>"
                    f"<td>{'<br>'.join(e(c) for c in d['cases'])}</td></tr>"
                )
            parts.append("</table>")
        if col["skips"]:
            parts.append("<table><tr><th>skipped cases</th><th>reason</th></tr>")
            parts += [f"<tr><td>{n}</td><td>{e(r)}</td></tr>" for r, n in col["skips"].items()]
            parts.append("</table>")
        header, rows = op_corpus_table(col)
        if header:
            lines = op_corpus_lines(col)
            parts.append("<details><summary>Op corpus scoreboard</summary><ul>")
            parts += [f"<li>{e(line)}</li>" for line in lines]
            parts.append("</ul><table><tr>")
            parts += [f"<th>{e(h)}</th>" for h in header]
            parts.append("</tr>")
            for row in rows:
                parts.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>")
            parts.append("</table></details>")
        if col.get("exception_fidelity"):
            parts.append("<details><summary>Exception fidelity</summary><table><tr>")
            parts += [f"<th>{e(h)}</th>" for _, h in FIDELITY_COLUMNS]
            parts.append("</tr>")
            for row in col["exception_fidelity"]:
                parts.append("<tr>")
                parts += [f"<td>{e(fidelity_value(row, k))}</td>" for k, _ in FIDELITY_COLUMNS]
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
    parts.append(strength.html_section(report.get("strength")))
    parts.append("</body></html>\n")
    return "".join(parts)
