"""Small synthetic `bazel test` runs (build events + JUnit XML) for the results tools' tests.

A fake run is what Bazel would leave: a testlogs tree with test.xml files and a build event
JSON file naming some of them, with the canonical command line carrying `//tools/config`
flags. ``archive`` turns it into a run archive with results.archive_run, as ./bazelw does.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from xml.sax.saxutils import quoteattr

import results

# An rc-file line as Bazel lists it: not a flag in force (the reader must ignore it).
_RC_LINE = "--default_override=2:build:x=--//tools/config:lane=no"


def case_xml(
    name: str,
    outcome: str = "passed",
    message: str = "",
    properties: dict[str, str] | None = None,
    classname: str = "python.tests.pkg.x_test",
) -> str:
    """One pytest-style <testcase>; outcome passed/failed/skipped/xfailed/xpass."""
    props = ""
    if properties:
        props = (
            "<properties>"
            + "".join(
                f"<property name={quoteattr(k)} value={quoteattr(v)}/>"
                for k, v in properties.items()
            )
            + "</properties>"
        )
    body = {
        "passed": "",
        "failed": f"<failure message={quoteattr(message or 'assert False')}>boom</failure>",
        "xpass": f"<failure message={quoteattr('[XPASS(strict)] ' + message)}/>",
        "skipped": f'<skipped type="pytest.skip" message={quoteattr(message)}>x.py:1: '
        f"{message}</skipped>",
        "xfailed": f'<skipped type="pytest.xfail" message={quoteattr(message)}/>',
    }[outcome]
    return (
        f'<testcase classname={quoteattr(classname)} name={quoteattr(name)} time="0.5">'
        + (props + body)
        + "</testcase>"
    )


def junit(cases: list[str], suite_properties: dict[str, str] | None = None) -> str:
    """A pytest JUnit file around `case_xml` strings."""
    props = ""
    if suite_properties:
        props = (
            "<properties>"
            + "".join(
                f"<property name={quoteattr(k)} value={quoteattr(v)}/>"
                for k, v in suite_properties.items()
            )
            + "</properties>"
        )
    return (
        '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">'
        + props
        + "".join(cases)
        + "</testsuite></testsuites>"
    )


def write_bep(
    root: Path,
    tests: dict[str, str],
    flags: list[str] = (),  # type: ignore[assignment]
    cached: tuple[str, ...] = (),
    stale: dict[str, str] | None = None,
    start_ms: int = 1_795_000_000_000,
    statuses: dict[str, str] | None = None,
    outputs: dict[str, dict[str, str]] | None = None,
) -> Path:
    """Write testlogs for `tests` (label -> JUnit text) and a BEP naming them; return the BEP.

    `stale` test.xml files are written to the same testlogs but named by no event (results of
    an earlier invocation). `outputs` (label -> {file name: text}) become the target's
    undeclared outputs, zipped as Bazel does (test.outputs/outputs.zip) and named by its event.
    """
    testlogs = root / "testlogs"
    events: list[dict] = [
        {"id": {"started": {}}, "started": {"startTimeMillis": str(start_ms), "command": "test"}},
        {
            "id": {"structuredCommandLine": {"commandLineLabel": "canonical"}},
            "structuredCommandLine": {
                "commandLineLabel": "canonical",
                "sections": [
                    {"sectionLabel": "command", "chunkList": {"chunk": ["test"]}},
                    {
                        "sectionLabel": "command options",
                        "optionList": {
                            "option": [
                                {"combinedForm": _RC_LINE},
                                *({"combinedForm": f} for f in flags),
                            ]
                        },
                    },
                ],
            },
        },
    ]
    for label, text in {**(stale or {}), **tests}.items():
        package, _, name = label[2:].partition(":")
        xml = testlogs / package / name / "test.xml"
        xml.parent.mkdir(parents=True, exist_ok=True)
        xml.write_text(text)
        if label not in tests:
            continue
        action_outputs = [
            {"name": "test.log", "uri": f"file://{xml.parent}/test.log"},
            {"name": "test.xml", "uri": f"file://{xml}"},
        ]
        if label in (outputs or {}):
            zipped = xml.parent / "test.outputs" / "outputs.zip"
            zipped.parent.mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(zipped, "w") as archive_zip:
                for file_name, text in outputs[label].items():  # type: ignore[index]
                    archive_zip.writestr(file_name, text)
            action_outputs.append({"name": "test.outputs__outputs.zip", "uri": f"file://{zipped}"})
        events.append(
            {
                "id": {"testResult": {"label": label, "run": 1, "shard": 1, "attempt": 1}},
                "testResult": {
                    "testActionOutput": action_outputs,
                    "testAttemptDurationMillis": "1500",
                    "status": (statuses or {}).get(
                        label, "FAILED" if "<failure" in text else "PASSED"
                    ),
                    **({"cachedLocally": True} if label in cached else {}),
                },
            }
        )
    events.append(
        {
            "id": {"buildFinished": {}},
            "finished": {"overallSuccess": True, "finishTimeMillis": str(start_ms + 60_000)},
        }
    )
    bep = root / "bep.json"
    bep.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    return bep


def archive(root: Path, tests: dict[str, str], flags: list[str] = (), **kwargs) -> str:  # type: ignore[assignment]
    """A run archive under `root/conformance-runs` of a fake run; returns its directory."""
    work = root / f"work{len(os.listdir(root))}"
    work.mkdir()
    bep = write_bep(work, tests, flags, **kwargs)
    start = kwargs.get("start_ms", 1_795_000_000_000) / 1000.0
    return results.archive_run(
        str(bep), str(root / "conformance-runs"), ["test", *flags, "//..."], 0, start, start + 60
    )
