"""Write build events: the one writer of what results.py reads.

The GPU runner (tools/gpu_runner/run_bundle.py, without Bazel) and the tests' fake runs
(testing/fake_runs.py) write their runs with it, and only with it, so both produce exactly what
a `./bazelw test` archive holds. Standard library only.
"""

from __future__ import annotations

import json

# The command line Bazel expands configs and rc files into; the reader takes its options only.
CANONICAL = "canonical"


def started_event(start_ms: int, command: str = "test") -> dict:
    """The started event: when the invocation began and its command."""
    return {
        "id": {"started": {}},
        "started": {"startTimeMillis": str(start_ms), "command": command},
    }


def command_line_event(options: list[str], command: str = "test") -> dict:
    """The canonical structuredCommandLine event: the command and its options (configs expanded,
    each as its combinedForm, e.g. `--//tools/config:lane=default`)."""
    return {
        "id": {"structuredCommandLine": {"commandLineLabel": CANONICAL}},
        "structuredCommandLine": {
            "commandLineLabel": CANONICAL,
            "sections": [
                {"sectionLabel": "command", "chunkList": {"chunk": [command]}},
                {
                    "sectionLabel": "command options",
                    "optionList": {"option": [{"combinedForm": o} for o in options]},
                },
            ],
        },
    }


def pattern_event(patterns: list[str]) -> dict:
    """The pattern event: the target patterns of the command line (`-//pkg:x` excludes)."""
    return {"id": {"pattern": {"pattern": list(patterns)}}}


def test_result_event(
    label: str,
    status: str,
    outputs: list[tuple[str, str]],
    millis: int,
    run: int = 1,
    cached_locally: bool = False,
    cached_remotely: bool | None = None,
    shard: int = 1,
) -> dict:
    """A testResult event: `outputs` are (name, path) of the attempt's files (test.xml, ...);
    `shard` numbers a shard of a sharded target from 1, as Bazel does."""
    result: dict[str, object] = {
        "status": status,
        "testAttemptDurationMillis": str(millis),
        "testActionOutput": [{"name": name, "uri": "file://" + path} for name, path in outputs],
    }
    if cached_locally:
        result["cachedLocally"] = True
    if cached_remotely is not None:
        result["executionInfo"] = {"cachedRemotely": cached_remotely}
    return {
        "id": {"testResult": {"label": label, "run": run, "shard": shard, "attempt": 1}},
        "testResult": result,
    }


def target_configured_event(label: str, tags: list[str], kind: str = "py_test rule") -> dict:
    """A targetConfigured event: the target's kind and tags (as Bazel writes them)."""
    return {
        "id": {"targetConfigured": {"label": label}},
        "configured": {"targetKind": kind, "tag": list(tags)},
    }


def test_summary_event(label: str, status: str) -> dict:
    """A testSummary event: the target's overall status (PASSED, FAILED, FAILED_TO_BUILD...)."""
    return {"id": {"testSummary": {"label": label}}, "testSummary": {"overallStatus": status}}


def build_finished_event(finish_ms: int, exit_code: int) -> dict:
    """The buildFinished event: when, and the exit code (0: success)."""
    return {
        "id": {"buildFinished": {}},
        "finished": {
            "overallSuccess": exit_code == 0,
            "finishTimeMillis": str(finish_ms),
            "exitCode": {"name": "OK" if exit_code == 0 else "FAILED", "code": exit_code},
        },
    }


def write_events(path: str, events: list[dict]) -> None:
    """Write `events` as a build event file (one JSON object a line), as Bazel's BEP JSON."""
    with open(path, "w", encoding="utf-8") as stream:
        stream.writelines(json.dumps(event) + "\n" for event in events)
