"""results.py: a run is what its build events name, read from a BEP file or a run archive."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import fake_runs
import pytest
import results
import run_record
from fake_runs import case_xml, junit

from tvm_conformance import deviations

GTEST_XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3" name="AllTests"><testsuite name="Ffi" tests="3">
<testcase name="Runs" status="run" result="completed" classname="Ffi" time="0.01"/>
<testcase name="Skips" status="run" result="skipped" classname="Ffi">
<skipped message="no device"><![CDATA[t.cc:5 no device]]></skipped></testcase>
<testcase name="DISABLED_Off" status="notrun" result="suppressed" classname="Ffi"/>
</testsuite></testsuites>"""


def test_reads_cases_outcomes_messages_properties_and_deviation(tmp_path: Path) -> None:
    xml = tmp_path / "test.xml"
    xml.write_text(
        junit(
            [
                case_xml(
                    "test_a[llvm]", properties={"tvm_target": "llvm", "exec_mode": "compiled"}
                ),
                case_xml("test_b", "skipped", "Skipped: no GPU"),
                case_xml("test_c", "xfailed", "deviation ffi-x: arrives as RuntimeError"),
                case_xml("test_d", "failed", "assert 1 == 2"),
                case_xml("test_e", "xpass", "deviation ffi-y: fixed upstream"),
            ],
            suite_properties={"tvm_version": "0.27.0"},
            recorded=False,
        )
    )
    cases, suite = results.read_junit(str(xml))
    assert suite == {"tvm_version": "0.27.0"}
    by_name = {c.name: c for c in cases}
    assert by_name["test_a[llvm]"].outcome == "passed"
    assert by_name["test_a[llvm]"].properties == {"tvm_target": "llvm", "exec_mode": "compiled"}
    assert by_name["test_a[llvm]"].time_s == 0.5
    assert (by_name["test_b"].outcome, by_name["test_b"].message) == ("skipped", "no GPU")
    assert (by_name["test_c"].outcome, by_name["test_c"].deviation) == ("xfailed", "ffi-x")
    assert by_name["test_d"].outcome == "failed" and not by_name["test_d"].xpass_strict
    assert by_name["test_d"].message == "assert 1 == 2"
    assert by_name["test_e"].xpass_strict and by_name["test_e"].deviation == "ffi-y"


def test_reads_googletest_outcomes_and_suite_case_ids(tmp_path: Path) -> None:
    xml = tmp_path / "test.xml"
    xml.write_text(GTEST_XML)
    cases, _ = results.read_junit(str(xml))
    assert [(c.name, c.outcome, c.message) for c in cases] == [
        ("Runs", "passed", ""),
        ("Skips", "skipped", "no device"),
        ("DISABLED_Off", "disabled", "disabled (googletest DISABLED_)"),
    ]
    assert cases[0].ids() == ["Runs", "Ffi.Runs"] and cases[0].googletest


def test_deviation_pattern_matches_the_registry_reason_format() -> None:
    reason = f"{deviations.REASON_PREFIX}ffi-some-id: what TVM does"
    assert deviations.REASON_PATTERN.search(reason)["id"] == "ffi-some-id"
    assert results.DEVIATION_PATTERN.pattern == deviations.REASON_PATTERN.pattern


def test_bep_run_has_only_the_named_targets_with_status_cache_and_duration(tmp_path: Path) -> None:
    bep = fake_runs.write_bep(
        tmp_path,
        {"//pkg:a_test": junit([case_xml("test_a")]), "//pkg:b_test": junit([case_xml("test_b")])},
        flags=["--//tools/config:lane=tvm_prev"],
        cached=("//pkg:b_test",),
        stale={"//pkg:removed_test": junit([case_xml("test_old")])},
    )
    run = results.read_run(str(bep))
    assert sorted(run.targets) == ["//pkg:a_test", "//pkg:b_test"]
    assert run.lane == "tvm_prev"
    a, b = run.targets["//pkg:a_test"], run.targets["//pkg:b_test"]
    assert (a.status, a.cached, a.duration_s) == ("PASSED", False, 1.5)
    assert b.cached
    assert [c.name for _, c in run.cases()] == ["test_a", "test_b"]


def test_archive_copies_named_xml_only_and_records_the_run(tmp_path: Path) -> None:
    path = fake_runs.archive(
        tmp_path,
        {"//pkg/sub:a_test_cuda": junit([case_xml("test_a[cuda]")])},
        flags=["--//tools/config:cuda=true", "--//tools/config:require_gpu=true"],
        stale={"//pkg:removed_test": junit([case_xml("test_old")])},
    )
    name = os.path.basename(path)
    assert name == "20261118T110640Z-default", name  # UTC start, lane
    files = sorted(str(p.relative_to(path)) for p in Path(path).rglob("*") if p.is_file())
    assert files == ["build_events.json", "run.json", "tests/pkg/sub/a_test_cuda/test.xml"]
    meta = json.loads(Path(path, "run.json").read_text())
    assert meta["lane"] == "default" and meta["cuda"] is True and meta["cuda_gpu"] is True
    assert meta["config"] == "cuda_gpu" and meta["machine"]["cpu"]
    assert meta["exit_code"] == 0 and meta["wall_s"] == 60
    assert meta["bazel_args"][0] == "test"
    # Read back from the archive: the copy, not the testlogs (which may be gone).
    for xml in Path(tmp_path).glob("work*/testlogs/**/test.xml"):
        xml.unlink()
    run = results.read_run(path)
    assert [c.name for _, c in run.cases()] == ["test_a[cuda]"]
    assert run.meta["wall_s"] == 60


def test_archive_keeps_undeclared_outputs_and_reads_their_json(tmp_path: Path) -> None:
    table = {"title": "Exception fidelity", "rows": [{"case": "OSError", "type_kept": False}]}
    path = fake_runs.archive(
        tmp_path,
        {
            "//py:fidelity_test": junit([case_xml("test_table")]),
            "//py:plain_test": junit([case_xml("test_plain")]),
        },
        outputs={"//py:fidelity_test": {"exception_fidelity.json": json.dumps(table)}},
    )
    assert Path(path, "tests/py/fidelity_test/outputs.zip").is_file()
    assert not Path(path, "tests/py/plain_test/outputs.zip").exists()
    # Read back from the archive, with the testlogs gone.
    for zipped in Path(tmp_path).glob("work*/testlogs/**/outputs.zip"):
        zipped.unlink()
    run = results.read_run(path)
    assert run.targets["//py:fidelity_test"].output_json("exception_fidelity.json") == table
    assert run.targets["//py:fidelity_test"].output_json("other.json") is None
    assert run.targets["//py:plain_test"].output_json("exception_fidelity.json") is None


def test_unreadable_xml_is_an_error_of_its_target(tmp_path: Path) -> None:
    bep = fake_runs.write_bep(tmp_path, {"//pkg:broken": "<testsuites><testcase"})
    run = results.read_run(str(bep))
    assert run.targets["//pkg:broken"].errors
    assert "cannot read test.xml of //pkg:broken" in run.targets["//pkg:broken"].errors[0]


def test_runs_in_lists_archives_of_a_directory(tmp_path: Path) -> None:
    first = fake_runs.archive(tmp_path, {"//p:a": junit([case_xml("t")])})
    second = fake_runs.archive(tmp_path, {"//p:a": junit([case_xml("t")])})
    assert results.runs_in(str(tmp_path / "conformance-runs")) == [first, second]
    assert results.runs_in(first) == [first]
    with pytest.raises(FileNotFoundError, match="no run archive"):
        results.runs_in(str(tmp_path / "nothing"))


def test_command_line_is_standard_library_only(tmp_path: Path) -> None:
    bep = fake_runs.write_bep(tmp_path, {"//p:a": junit([case_xml("test_t")])})
    # -E -S: no PYTHONPATH, no site-packages.
    script = Path(results.__file__).with_name("results.py")
    out = subprocess.run(
        [sys.executable, "-E", "-S", str(script), str(bep)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(out)["targets"]["//p:a"]["cases"][0]["name"] == "test_t"


def test_remote_cache_uri_falls_back_to_the_local_testlogs(tmp_path: Path) -> None:
    """With a remote cache the build events name test.xml by a bytestream:// URI."""
    workspace = tmp_path / "ws"
    xml = workspace / "bazel-testlogs" / "pkg" / "remote_test" / "test.xml"
    xml.parent.mkdir(parents=True)
    xml.write_text(junit([case_xml("test_ok")]))
    events = [
        {"id": {"started": {}}, "started": {"workspaceDirectory": str(workspace)}},
        {
            "id": {"testResult": {"label": "//pkg:remote_test", "run": 1, "shard": 1}},
            "testResult": {
                "testActionOutput": [
                    {"name": "test.xml", "uri": "bytestream://127.0.0.1:1/blobs/abc/12"}
                ],
                "status": "PASSED",
            },
        },
    ]
    bep = tmp_path / "bep.json"
    bep.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    run = results.read_run(str(bep))
    assert [c.name for c in run.targets["//pkg:remote_test"].cases] == ["test_ok"]


@pytest.mark.parametrize(
    ("shards", "runs", "folders"),
    [
        (2, 1, ["shard_1_of_2", "shard_2_of_2"]),
        (1, 2, ["run_1_of_2", "run_2_of_2"]),
        (
            2,
            2,
            [
                "shard_1_of_2_run_1_of_2",
                "shard_1_of_2_run_2_of_2",
                "shard_2_of_2_run_1_of_2",
                "shard_2_of_2_run_2_of_2",
            ],
        ),
    ],
)
def test_remote_uris_of_shards_and_runs_fall_back_to_their_own_folders(
    tmp_path: Path, shards: int, runs: int, folders: list[str]
) -> None:
    """Remote execution names each shard's test.xml and outputs.zip by bytestream:// URIs;
    Bazel downloads them to `shard_S_of_N` / `run_R_of_M` folders of the testlogs."""
    workspace = tmp_path / "ws"
    logs = workspace / "bazel-testlogs" / "pkg" / "sharded_test"
    events: list[dict] = [
        {"id": {"started": {}}, "started": {"workspaceDirectory": str(workspace)}}
    ]
    attempts = [(s, r) for s in range(1, shards + 1) for r in range(1, runs + 1)]
    for (shard, run), folder in zip(attempts, folders, strict=True):
        (logs / folder / "test.outputs").mkdir(parents=True)
        (logs / folder / "test.xml").write_text(junit([case_xml(f"test_{folder}")]))
        with zipfile.ZipFile(logs / folder / "test.outputs" / "outputs.zip", "w") as zipped:
            zipped.writestr("where.json", json.dumps(folder))
        events.append(
            {
                "id": {"testResult": {"label": "//pkg:sharded_test", "run": run, "shard": shard}},
                "testResult": {
                    "testActionOutput": [
                        {"name": "test.xml", "uri": "bytestream://127.0.0.1:1/blobs/a/1"},
                        {
                            "name": "test.outputs__outputs.zip",
                            "uri": "bytestream://127.0.0.1:1/blobs/b/2",
                        },
                    ],
                    "status": "PASSED",
                },
            }
        )
    bep = tmp_path / "bep.json"
    bep.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    target = results.read_run(str(bep)).targets["//pkg:sharded_test"]
    assert sorted(c.name for c in target.cases) == sorted(f"test_{f}" for f in folders)
    assert not target.errors
    assert target.output_json("where.json") in folders


def _with_run_json(tmp_path: Path, text: str) -> str:
    run_dir = fake_runs.archive(tmp_path, {"//p:a": junit([case_xml("test_t")])})
    Path(run_dir, results.ARCHIVE_META).write_text(text)
    return run_dir


def test_the_archive_records_its_version_and_older_ones_still_read(tmp_path: Path) -> None:
    run_dir = fake_runs.archive(tmp_path, {"//p:a": junit([case_xml("test_t")])})
    record = json.loads(Path(run_dir, results.ARCHIVE_META).read_text())
    assert record[run_record.VERSION_KEY] == run_record.SCHEMA_VERSION == 2
    assert record["runner"] == run_record.BAZEL
    # Version 0 (no version key) and 1 (`archive_version: 1`) read, their runner upgraded from
    # what they hold.
    older = _with_run_json(tmp_path, json.dumps({"exit_code": 0}))
    assert results.read_run(older).exit_code == 0
    assert results.read_run(older).runner == run_record.GPU_RUNNER_BUNDLE
    v1 = {run_record.LEGACY_VERSION_KEY: 1, "exit_code": 0, "bazel_args": ["test", "--", "//..."]}
    assert results.read_run(_with_run_json(tmp_path, json.dumps(v1))).runner == run_record.BAZEL


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({run_record.VERSION_KEY: run_record.SCHEMA_VERSION + 1}),
        json.dumps({run_record.LEGACY_VERSION_KEY: 99}),
        json.dumps({run_record.VERSION_KEY: "2"}),
        json.dumps({run_record.VERSION_KEY: 2, "runner": "bazel"}),  # the schema refuses it
        json.dumps([1, 2]),
        "{not json",
    ],
)
def test_a_run_record_this_kit_cannot_read_is_refused(tmp_path: Path, text: str) -> None:
    run_dir = _with_run_json(tmp_path, text)
    with pytest.raises(ValueError):
        results.read_run(run_dir)


@pytest.mark.parametrize(
    ("script", "args"),
    [
        ("verdict.py", []),
        ("conformance_check.py", ["--run"]),
        ("report.py", ["--out", "OUT"]),
    ],
)
def test_a_refused_archive_is_one_line_and_exit_2(
    tmp_path: Path, script: str, args: list[str]
) -> None:
    run_dir = _with_run_json(tmp_path, json.dumps({run_record.LEGACY_VERSION_KEY: 99}))
    doc = tmp_path / "conformance.md"
    doc.write_text("| row | seed | `//p:a :: test_t` |\n")
    tool = Path(results.__file__).with_name(script)
    argv = [a.replace("OUT", str(tmp_path / "out")) for a in args]
    if script == "conformance_check.py":
        argv = [*argv, run_dir, str(doc)]
    elif script == "report.py":
        argv = [*argv, "--conformance", str(doc), run_dir]
    else:
        argv = [*argv, run_dir]
    proc = subprocess.run(
        [sys.executable, str(tool), *argv], capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "archive_version 99" in proc.stderr
