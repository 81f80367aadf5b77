"""Small synthetic `bazel test` runs (build events + JUnit XML) for the results tools' tests.

A fake run is what Bazel would leave: a testlogs tree with test.xml files and a build event
JSON file naming some of them, with the canonical command line carrying `//tools/config`
flags. ``archive`` turns it into a run archive with archive_run, as ./bazelw does.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from xml.sax.saxutils import quoteattr

import event_writer
from archive import archive_run

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


def junit(
    cases: list[str], suite_properties: dict[str, str] | None = None, recorded: bool = True
) -> str:
    """A pytest JUnit file around `case_xml` strings; `recorded`: with the selection record
    the kit's plugin writes (every case collected, none deselected), overridden by
    `suite_properties`."""
    if recorded:
        suite_properties = {
            "tvm_collected": str(len(cases)),
            "tvm_deselected": "0",
            **(suite_properties or {}),
        }
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
    remote_cached: tuple[str, ...] = (),
    extra_runs: dict[str, list[str]] | None = None,
    not_built: tuple[str, ...] = (),
    exit_code: int = 0,
    tags: dict[str, list[str]] | None = None,
) -> Path:
    """Write testlogs for `tests` (label -> JUnit text) and a BEP naming them; return the BEP.

    `stale` test.xml files are written to the same testlogs but named by no event (results of
    an earlier invocation). `outputs` (label -> {file name: text}) become the target's
    undeclared outputs, zipped as Bazel does (test.outputs/outputs.zip) and named by its event.
    `remote_cached` results come from a cache (`cachedRemotely`), `extra_runs` (label -> JUnit
    texts) are runs 2, 3, ... of `--runs_per_test`, `not_built` targets have only a
    FAILED_TO_BUILD summary, and `exit_code` is Bazel's, in the buildFinished event. `tags`
    (label -> tags) become targetConfigured events.
    """
    testlogs = root / "testlogs"
    events: list[dict] = [
        event_writer.started_event(start_ms),
        event_writer.command_line_event([_RC_LINE, *flags]),
    ]
    events.extend(
        event_writer.target_configured_event(label, label_tags)
        for label, label_tags in (tags or {}).items()
    )
    for label, text in {**(stale or {}), **tests}.items():
        package, _, name = label[2:].partition(":")
        xml = testlogs / package / name / "test.xml"
        xml.parent.mkdir(parents=True, exist_ok=True)
        xml.write_text(text)
        if label not in tests:
            continue
        action_outputs = [("test.log", f"{xml.parent}/test.log"), ("test.xml", str(xml))]
        if label in (outputs or {}):
            zipped = xml.parent / "test.outputs" / "outputs.zip"
            zipped.parent.mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(zipped, "w") as archive_zip:
                for file_name, text in outputs[label].items():  # type: ignore[index]
                    archive_zip.writestr(file_name, text)
            action_outputs.append(("test.outputs__outputs.zip", str(zipped)))
        texts = [text, *(extra_runs or {}).get(label, [])]
        for run, run_text in enumerate(texts, start=1):
            if run > 1:
                xml = testlogs / package / name / f"run_{run}_of_{len(texts)}" / "test.xml"
                xml.parent.mkdir(parents=True, exist_ok=True)
                xml.write_text(run_text)
                action_outputs = [("test.xml", str(xml))]
            events.append(
                event_writer.test_result_event(
                    label,
                    (statuses or {}).get(label, "FAILED" if "<failure" in run_text else "PASSED"),
                    action_outputs,
                    1500,
                    run=run,
                    cached_locally=label in cached,
                    cached_remotely=label in remote_cached,
                )
            )
    events.extend(event_writer.test_summary_event(label, "FAILED_TO_BUILD") for label in not_built)
    events.append(event_writer.build_finished_event(start_ms + 60_000, exit_code))
    bep = root / "bep.json"
    event_writer.write_events(str(bep), events)
    return bep


def archive(
    root: Path,
    tests: dict[str, str],
    flags: list[str] = (),  # type: ignore[assignment]
    venv_record: dict | None = None,
    patterns: tuple[str, ...] = ("//...",),
    gpu_suite: dict | None = None,
    suite: dict | None = None,
    **kwargs,
) -> str:
    """A run archive under `root/conformance-runs` of a fake run; returns its directory.

    `venv_record` is the lane venv's tvm_conformance_venv.json (the run's identity),
    `patterns` the target patterns after `--` on the command line (`-//pkg:x` excludes),
    `gpu_suite` run.json's record of the targets a GPU run must run, `suite` its record of
    the whole suite (default: the tests given and those not built, so the run is whole)."""
    if suite is None:
        suite = {"source": "fake", "targets": [*tests, *kwargs.get("not_built", ())]}
    work = root / f"work{len(os.listdir(root))}"
    work.mkdir()
    bep = write_bep(work, tests, flags, **kwargs)
    start = kwargs.get("start_ms", 1_795_000_000_000) / 1000.0
    record = None
    if venv_record is not None:
        record = work / "tvm_conformance_venv.json"
        record.write_text(json.dumps(venv_record))
    return archive_run(
        str(bep),
        str(root / "conformance-runs"),
        ["test", *flags, "--", *patterns],
        kwargs.get("exit_code", 0),
        start,
        start + 60,
        str(record) if record else None,
        gpu_suite,
        suite,
    )


def venv_record(
    lane: str = "default",
    tvm_sha: str = "a" * 64,
    ffi_sha: str = "b" * 64,
    user_tvm: str = "",
    python: str = "",
    torch: str = "",
) -> dict:
    """A venv record (third_party/python/venv_tool.py record) with these wheels' sha256 (and
    the interpreter's version and torch's, where given)."""
    record = {
        "lane": lane,
        "packages": {"apache-tvm": "0.27.0.post1", "apache-tvm-ffi": "0.1.14.post0"},
        "installed": {
            "apache-tvm": {
                "version": "0.27.0.post1",
                "file": "apache_tvm-0.27.0.post1-py3-none-any.whl",
                "sha256": tvm_sha,
            },
            "apache-tvm-ffi": {
                "version": "0.1.14.post0",
                "file": "apache_tvm_ffi-0.1.14.post0-cp311.whl",
                "sha256": ffi_sha,
            },
        },
        "user_wheels": {},
        "tvm_libinfo": {"USE_CUDA": "ON"},
    }
    if python:
        record["python"] = python
    if torch:
        record["packages"]["torch"] = torch  # type: ignore[index]
    if user_tvm:
        del record["installed"]["apache-tvm"]
        record["user_wheels"]["apache-tvm"] = {"file": user_tvm, "sha256": tvm_sha}
    return record


class Registry:
    """A deviation registry of the given entries, binding cases as the real one does
    (tvm_conformance.deviation_registry.lists)."""

    def __init__(self, *deviations: object) -> None:
        self._table = {d.id: d for d in deviations}  # type: ignore[attr-defined]

    def by_id(self) -> dict:
        """The entries by id."""
        return dict(self._table)

    def lists(self, dev: object, label: str, case: str) -> bool:
        """Whether `dev` lists `label :: case`."""
        from tvm_conformance import deviation_registry

        return deviation_registry.lists(dev, label, case)  # type: ignore[arg-type]


def deviation(dev_id: str, tests: tuple[str, ...], kind: str = "deviation", **kwargs) -> object:
    """A registry entry (tvm_conformance.deviation_registry.Deviation) for tests."""
    from tvm_conformance import deviation_registry

    fields = dict(
        area="ffi", expected="x", actual=f"{dev_id} happens", raises="builtins.ValueError"
    )
    if kind == "crash":
        fields.update(signal="SIGSEGV", raises="tvm_conformance.crash_isolation.ProcessCrashed")
    fields.update(kwargs)
    return deviation_registry.Deviation(id=dev_id, tests=tests, kind=kind, **fields)
