"""The one build-event writer, read back by the reader (results.read_run): every event it
writes means to the reader what Bazel's own event of that kind means."""

from __future__ import annotations

import json
from pathlib import Path

import event_writer
import results
import run_identity

START_MS = 1_795_000_000_000
PASSING = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">'
    '<testcase classname="pkg.a_test" name="test_one" time="0.5"/>'
    '<testcase classname="pkg.a_test" name="test_two" time="0.5">'
    '<skipped type="pytest.skip" message="no GPU">x.py:1: no GPU</skipped></testcase>'
    "</testsuite></testsuites>"
)
FAILING = PASSING.replace(
    'time="0.5"/>', 'time="0.5"><failure message="boom">x</failure></testcase>'
)


def _write_xml(root: Path, name: str, text: str) -> str:
    path = root / name / "test.xml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return str(path)


def _write(root: Path, events: list[dict]) -> results.Run:
    bep = root / "bep.json"
    event_writer.write_events(str(bep), events)
    return results.read_run(str(bep))


def test_a_written_run_reads_back_with_its_flags_targets_cases_and_times(tmp_path: Path) -> None:
    passing = _write_xml(tmp_path, "a", PASSING)
    failing = _write_xml(tmp_path, "b", FAILING)
    run = _write(
        tmp_path,
        [
            event_writer.started_event(START_MS),
            event_writer.command_line_event(
                ["--//tools/config:cuda", "--//tools/config:lane=ffi_next", "--test_filter=x"]
            ),
            event_writer.pattern_event(["//pkg/...", "-//pkg:c_test"]),
            event_writer.target_configured_event("//pkg:a_test", ["gpu", "small"]),
            event_writer.test_result_event("//pkg:a_test", "PASSED", [("test.xml", passing)], 1500),
            event_writer.test_summary_event("//pkg:a_test", "PASSED"),
            event_writer.test_result_event(
                "//pkg:b_test", "FAILED", [("test.xml", failing)], 250, cached_remotely=True
            ),
            event_writer.test_summary_event("//pkg:b_test", "FAILED"),
            event_writer.test_summary_event("//pkg:c_test", "FAILED_TO_BUILD"),
            event_writer.build_finished_event(START_MS + 60_000, 3),
        ],
    )
    assert run.flags == {"cuda": "true", "lane": "ffi_next"}
    assert run.lane == "ffi_next" and run_identity.config(run) == "cuda"
    assert run_identity.selection(run) == ["--test_filter=x"]
    assert run_identity.pattern_list(run) == ["//pkg/...", "-//pkg:c_test"]
    assert run.meta["start"] == START_MS / 1000 and run.meta["end"] == START_MS / 1000 + 60
    assert run.exit_code == 3 and run.meta["success"] is False
    assert sorted(run.targets) == ["//pkg:a_test", "//pkg:b_test", "//pkg:c_test"]
    a, b, c = (run.targets[f"//pkg:{n}_test"] for n in "abc")
    assert (a.status, a.source, a.cached, a.duration_s, a.tags) == (
        "PASSED", "executed", False, 1.5, ["gpu", "small"],
    )  # fmt: skip
    assert [(x.name, x.outcome, x.message) for x in a.cases] == [
        ("test_one", "passed", ""),
        ("test_two", "skipped", "no GPU"),
    ]
    # No remote cache on the command line: a remotely cached result came from the disk cache.
    assert (b.status, b.source, b.cached, b.tags) == ("FAILED", "disk cache", True, [])
    assert [x.outcome for x in b.cases] == ["failed", "skipped"]
    assert (c.status, c.cases, c.xml_paths) == ("FAILED_TO_BUILD", [], [])


def test_each_run_of_a_repeated_test_and_a_local_cache_hit_read_back(tmp_path: Path) -> None:
    first = _write_xml(tmp_path, "run1", PASSING)
    second = _write_xml(tmp_path, "run2", FAILING)
    run = _write(
        tmp_path,
        [
            event_writer.started_event(START_MS),
            event_writer.command_line_event(["--remote_cache=grpc://cache:1"]),
            event_writer.test_result_event(
                "//pkg:a_test", "PASSED", [("test.xml", first)], 250, run=1, cached_locally=True
            ),
            event_writer.test_result_event(
                "//pkg:a_test", "FAILED", [("test.xml", second)], 500, run=2, cached_remotely=False
            ),
            event_writer.test_summary_event("//pkg:a_test", "FAILED"),
            event_writer.build_finished_event(START_MS + 1_000, 0),
        ],
    )
    target = run.targets["//pkg:a_test"]
    assert target.status == "FAILED" and target.source == "action cache"
    assert target.cached is False  # run 2 executed
    assert target.duration_s == 0.75
    assert target.xml_paths == [first, second]
    # The worst of the runs stands for a case, the others are kept.
    one = target.case("test_one")
    assert one is not None and [r.outcome for r in one.runs()] == ["failed", "passed"]
    assert run.exit_code == 0 and run.meta["success"] is True
    assert run_identity.pattern_list(run) == [] and run.lane == "default"


def test_the_file_is_one_json_object_a_line_as_bazel_writes_it(tmp_path: Path) -> None:
    events = [
        event_writer.started_event(START_MS, command="build"),
        event_writer.command_line_event([], command="build"),
        event_writer.build_finished_event(START_MS, 1),
    ]
    bep = tmp_path / "bep.json"
    event_writer.write_events(str(bep), events)
    lines = bep.read_text().splitlines()
    assert [json.loads(line) for line in lines] == events
    assert results.command_options(events) == []
    assert events[0]["started"]["command"] == "build"
    assert events[1]["structuredCommandLine"]["sections"][0]["chunkList"]["chunk"] == ["build"]
    assert events[2]["finished"]["exitCode"] == {"name": "FAILED", "code": 1}
