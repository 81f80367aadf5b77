"""report.md: the conformance report's model (report_model.build()) as Markdown.

In this order: the overall verdict; the scoreboard (a line per column); the rows whose outcome
differs between columns; the matrix of behaviours x columns; each column's diff against the
previous run of its identity; then deviations, skips, exception fidelity and overhead.
"""

from __future__ import annotations

import report_model as model
import strength


def _md(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def render(report: dict) -> str:
    """report.md of one report."""
    verdict = "PASS" if report["passed"] else "FAIL"
    out = [
        "# TVM conformance report",
        "",
        f"Generated {report['generated']}. **Verdict: {verdict}**",
        "",
    ]
    board = model.scoreboard_rows(report)
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
        out += [f"- {_md(line)}" for line in model.diff_lines(col)]
        out += ["", f"**{col['summary_line']}**", ""]
        drift = model.drift_lines(col)
        if drift:
            out += [f"### Registry drift of {col['title']}", "", _md(drift[0]), ""]
            out += [f"- `{_md(line)}`" for line in drift[1:]]
            out.append("")
        if col["deviations"]:
            out += ["| deviation | kind | what TVM does | cases |", "|---|---|---|---|"]
            for dev_id, d in col["deviations"].items():
                out.append(f"| `{dev_id}` | {d['kind']} | {_md(d['actual'])} | {len(d['cases'])} |")
            out.append("")
        if col.get("fixed"):
            out += ["| fixed deviation | what the pinned TVM does | cases |", "|---|---|---|"]
            for dev_id, d in col["fixed"].items():
                cases = "; ".join(d["cases"])
                out.append(f"| `{dev_id}` | {_md(d['actual'])} | {_md(cases)} |")
            out.append("")
        if col["skips"]:
            out += ["| skipped cases | reason |", "|---|---|"]
            out += [f"| {n} | {_md(reason)} |" for reason, n in col["skips"].items()]
            out.append("")
        header, rows = model.op_corpus_table(col)
        if header:
            out += [f"### Op corpus scoreboard of {col['title']}", ""]
            out += [f"- {_md(line)}" for line in model.op_corpus_lines(col)]
            out += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
            out.append("")
        if col.get("exception_fidelity"):
            out += ["Exception fidelity:", ""]
            out += ["| " + " | ".join(h for _, h in model.FIDELITY_COLUMNS) + " |"]
            out += ["|" + "---|" * len(model.FIDELITY_COLUMNS)]
            for row in col["exception_fidelity"]:
                out.append(
                    "| "
                    + " | ".join(
                        _md(model.fidelity_value(row, k)) for k, _ in model.FIDELITY_COLUMNS
                    )
                    + " |"
                )
            out.append("")
    names, rows = model.overhead_table(report)
    if names:
        out += ["## FFI and VM overhead", "", model.OVERHEAD_NOTE, ""]
        out += ["| case | floor | " + " | ".join(_md(n) for n in names) + " |"]
        out += ["|" + "---|" * (len(names) + 2)]
        out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
        out.append("")
    out += strength.markdown_lines(report.get("strength"))
    return "\n".join(out)


def _md_row(row: dict) -> str:
    cells = " | ".join(_md(c["text"]) for c in row["cells"])
    return f"| {row['seed']} | {_md(row['behaviour'])} | {cells} |"
