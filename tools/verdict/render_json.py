"""report.json: the conformance report's model (report_model.build()) as it is, for tools."""

from __future__ import annotations

import json


def render(report: dict) -> str:
    """report.json of one report: the model, keys sorted."""
    return json.dumps(report, indent=1, sort_keys=True) + "\n"
