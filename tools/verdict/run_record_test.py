"""run_record.py: one schema, one writer for both paths, every version read or refused.

The record ./bazelw's archive writes and the one a GPU-runner bundle writes conform to the
schema file, checked by the record's own standard-library validator and, where the
`jsonschema` package is importable, by a real JSON Schema validator too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import fake_runs
import pytest
import results
import run_identity
import run_record
import verdict
from fake_runs import case_xml, junit

LLVM = {"tvm_target": "llvm"}
REGISTRY = fake_runs.Registry(
    fake_runs.deviation("ffi-listed", ("//pkg:a_test_llvm :: test_known[llvm]",))
)
TESTS = {
    "//pkg:a_test_llvm": junit(
        [
            case_xml("test_ok[llvm]", properties=LLVM),
            case_xml("test_known[llvm]", "xfailed", "deviation ffi-listed: x", properties=LLVM),
            case_xml("test_off[llvm]", "skipped", "needs a thing", properties=LLVM),
            case_xml("test_bad[llvm]", "failed", "assert 1 == 2", properties=LLVM),
        ]
    )
}


def _judged(tmp_path: Path) -> tuple[str, dict]:
    """A ./bazelw archive of TESTS, judged and recorded as ./bazelw does; (dir, record)."""
    run_dir = fake_runs.archive(tmp_path, TESTS, exit_code=3)
    run = results.read_run(run_dir)
    assert verdict.judge(run, REGISTRY, record_to=run_dir) == 1
    return run_dir, run_record.read(run_dir)


def _bundle_record() -> dict:
    """A GPU-runner bundle's record, as run_bundle.bundle_record makes it."""
    return run_record.new_record(
        run_record.GPU_RUNNER_BUNDLE,
        exit_code=0,
        start=1.0,
        end=2.0,
        lane="default",
        flags={"cuda": "true", "lane": "default", "require_gpu": "true"},
        config="cuda_gpu",
        identity={"lane": "default"},
        machine={"gpu": "none"},
        targets=1,
        bundle="//tools/gpu_runner:bundle",
        partial=["//tools/gpu_runner:bundle carries 1 of the suite's 3 _cuda targets"],
        gpu_suite={"source": "tests.json", "targets": ["//a:x_test_cuda"]},
        jobs=2,
        python="3.11.2",
        require_gpu=True,
        cuda=True,
        cuda_gpu=True,
    )


def test_the_schema_file_carries_its_version() -> None:
    schema = run_record.load_schema()
    assert schema["$id"].endswith(f"v{run_record.SCHEMA_VERSION}")
    assert schema["properties"][run_record.VERSION_KEY] == {"const": run_record.SCHEMA_VERSION}
    assert schema["properties"]["runner"]["enum"] == list(run_record.RUNNERS)


def test_the_archive_record_holds_the_verdict_that_was_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, record = _judged(tmp_path)
    printed = capsys.readouterr().out.splitlines()
    got = record["verdict"]
    assert record["runner"] == run_record.BAZEL and got["status"] == "FAIL"
    assert got["line"] == printed[-1]
    assert [p["text"] for p in got["problems"]] == [
        line[len("verdict: ") :] for line in printed[:-1]
    ]
    failed = next(p for p in got["problems"] if p["kind"] == "FAILED")
    assert failed["target"] == "//pkg:a_test_llvm" and failed["case"] == "test_bad[llvm]"
    assert failed["whose"] == "tvm"
    exit_problem = next(p for p in got["problems"] if p["kind"] == "BAZEL EXIT 3")
    assert exit_problem["whose"] == "machine" and exit_problem["target"] == ""
    cases = {c["case"]: c for c in got["cases"]}
    assert cases["test_known[llvm]"]["deviation"] == "ffi-listed"
    assert cases["test_known[llvm]"]["outcome"] == "xfailed"
    assert cases["test_off[llvm]"]["skip_reason"] == "needs a thing"
    assert cases["test_ok[llvm]"]["properties"]["tvm_target"] == "llvm"
    assert got["counts"]["cases"]["failed"] == 1 and got["counts"]["skipped"] == 1
    assert got["identity_key"] == run_identity.identity_key(results.read_run(run_dir))


def test_a_partial_pass_is_recorded_with_why(tmp_path: Path) -> None:
    good = {"//pkg:a_test_llvm": junit([case_xml("test_ok[llvm]", properties=LLVM)])}
    run_dir = fake_runs.archive(tmp_path, good, patterns=("//pkg/...",))
    assert verdict.judge(results.read_run(run_dir), REGISTRY, record_to=run_dir) == 0
    got = run_record.read(run_dir)["verdict"]
    assert got["status"] == "PARTIAL PASS" and got["partial"] is True
    assert got["partial_why"] == ["not //..."]


def test_both_paths_write_records_the_schema_accepts(tmp_path: Path) -> None:
    run_dir, record = _judged(tmp_path)
    schema = run_record.load_schema()
    assert run_record.schema_problems(record, schema) == []
    bundle = _bundle_record()
    assert run_record.schema_problems(bundle, schema) == []
    run_record.write(str(tmp_path), bundle)
    assert run_record.read(str(tmp_path))["runner"] == run_record.GPU_RUNNER_BUNDLE


def test_a_real_json_schema_validator_accepts_both_records(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not in this venv")
    _, record = _judged(tmp_path)
    schema = run_record.load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(record, schema, cls=jsonschema.Draft202012Validator)
    jsonschema.validate(_bundle_record(), schema, cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"runner": "cron"}, "runner"),
        ({"exit_code": "0"}, "exit_code"),
        ({"stray": 1}, "`stray` is not a field"),
        ({"schema_version": True}, "schema_version"),
    ],
)
def test_the_writer_refuses_what_the_schema_refuses(
    tmp_path: Path, change: dict, says: str
) -> None:
    record = {**_bundle_record(), **change}
    with pytest.raises(ValueError, match=says):
        run_record.write(str(tmp_path), record)
    assert not (tmp_path / run_record.RECORD_FILE).exists()


def test_each_runner_must_carry_its_own_fields(tmp_path: Path) -> None:
    bundle = _bundle_record()
    del bundle["partial"]
    assert any("partial" in p for p in run_record.schema_problems(bundle, run_record.load_schema()))
    bazel = {**_bundle_record(), "runner": run_record.BAZEL}
    assert any(
        "bazel_args" in p for p in run_record.schema_problems(bazel, run_record.load_schema())
    )


def _old(tmp_path: Path, record: dict) -> str:
    run_dir = fake_runs.archive(tmp_path, TESTS)
    Path(run_dir, run_record.RECORD_FILE).write_text(json.dumps(record))
    return run_dir


def test_version_0_reads_and_its_runner_comes_from_what_it_holds(tmp_path: Path) -> None:
    bazel = run_record.read(_old(tmp_path, {"exit_code": 0, "bazel_args": ["test", "//..."]}))
    assert bazel["runner"] == run_record.BAZEL and bazel["upgraded_from"] == 0
    bundle = run_record.read(_old(tmp_path, {"exit_code": 0, "partial": ["x"]}))
    assert bundle["runner"] == run_record.GPU_RUNNER_BUNDLE and bundle["partial"] == ["x"]


def test_version_1_reads_both_runners(tmp_path: Path) -> None:
    v1 = {run_record.LEGACY_VERSION_KEY: 1, "exit_code": 0}
    bazel = run_record.read(_old(tmp_path, {**v1, "bazel_args": ["test", "--", "//..."]}))
    assert bazel["runner"] == run_record.BAZEL and bazel["upgraded_from"] == 1
    bundle = run_record.read(_old(tmp_path, {**v1, "runner": "gpu_runner bundle", "bundle": "b"}))
    assert bundle["runner"] == run_record.GPU_RUNNER_BUNDLE
    assert run_identity.partial(results.read_run(_old(tmp_path, {**v1, "partial": ["p"]}))) == ["p"]


def test_an_old_archive_judged_again_is_rewritten_as_version_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # What main's archive.py wrote as version 1: version 2's fields less the version and runner.
    run_dir = fake_runs.archive(tmp_path, TESTS, exit_code=3)
    v1 = json.loads(Path(run_dir, run_record.RECORD_FILE).read_text())
    del v1[run_record.VERSION_KEY], v1["runner"]
    Path(run_dir, run_record.RECORD_FILE).write_text(
        json.dumps({**v1, run_record.LEGACY_VERSION_KEY: 1})
    )
    assert verdict.judge(results.read_run(run_dir), REGISTRY, record_to=run_dir) == 1
    raw = json.loads(Path(run_dir, run_record.RECORD_FILE).read_text())
    assert raw[run_record.VERSION_KEY] == 2 and run_record.LEGACY_VERSION_KEY not in raw
    assert raw["runner"] == run_record.BAZEL and raw["verdict"]["status"] == "FAIL"
    # One too thin to be a version-2 record is judged, but not recorded: one line, exit 2.
    thin = _old(tmp_path, {run_record.LEGACY_VERSION_KEY: 1, "exit_code": 3})
    capsys.readouterr()
    assert verdict.judge(results.read_run(thin), REGISTRY, record_to=thin) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "could not be recorded" in err[0]


@pytest.mark.parametrize(
    "record",
    [
        {run_record.VERSION_KEY: run_record.SCHEMA_VERSION + 1},
        {run_record.LEGACY_VERSION_KEY: 99},
        {run_record.VERSION_KEY: 2.0},
    ],
)
def test_a_newer_or_odd_version_is_refused_in_one_line_exit_2(tmp_path: Path, record: dict) -> None:
    run_dir = _old(tmp_path, record)
    with pytest.raises(ValueError, match="version this kit reads"):
        run_record.read(run_dir)
    for tool in ("run_record.py", "verdict.py"):
        proc = subprocess.run(
            [sys.executable, str(Path(run_record.__file__).with_name(tool)), run_dir],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_the_validator_refuses_a_keyword_it_does_not_check() -> None:
    with pytest.raises(ValueError, match="oneOf"):
        run_record.schema_problems(1, {"oneOf": [{"type": "integer"}]})


def test_a_registry_drift_is_read_by_this_schema_and_by_the_v2_schema_before_it(
    tmp_path: Path,
) -> None:
    # The drift of a user's wheel sits in the identity object, which v2 has always left open:
    # a reader with the earlier v2 schema (no registry_drift property) accepts it too.
    _, record = _judged(tmp_path)
    record["identity"]["registry_drift"] = {
        "against": "tools/registry_snapshot/default.json",
        "differences": ["global removed: vm.builtin.debug_print"],
        "counts": {"globals": {"added": 0, "removed": 1, "changed": 0}},
    }
    schema = run_record.load_schema()
    assert run_record.schema_problems(record, schema) == []
    earlier = json.loads(json.dumps(schema))
    del earlier["$defs"]["identity"]["properties"]["registry_drift"]
    assert earlier["$defs"]["identity"].get("additionalProperties", True) is not False
    assert run_record.schema_problems(record, earlier) == []
    record["identity"]["registry_drift"]["differences"] = [1]
    assert run_record.schema_problems(record, schema) != []


def test_a_record_this_process_checked_is_not_checked_again_and_any_edit_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The schema check runs once per record text in a process (a written record's text is
    checked as written); a record changed on disk since is a new text, checked again."""
    run_dir, _ = _judged(tmp_path)
    checks: list[object] = []
    real = run_record.schema_problems

    def counted(value: object, schema: dict, root: dict | None = None) -> list[str]:
        checks.append(value)
        return real(value, schema, root)

    monkeypatch.setattr(run_record, "schema_problems", counted)
    run_record.attach(run_dir, "exit_code", 0)
    assert len(checks) <= 2  # the text read (unless written here), then the text written
    checks.clear()
    first, again = run_record.read(run_dir), run_record.read(run_dir)
    assert first == again and first["exit_code"] == 0 and checks == []
    path = Path(run_dir) / run_record.RECORD_FILE
    edited = json.loads(path.read_text(encoding="utf-8"))
    edited["runner"] = "no such runner"
    path.write_text(json.dumps(edited, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not a valid run record"):
        run_record.read(run_dir)
    assert len(checks) == 1


def test_a_record_json_cannot_hold_is_refused_and_nothing_written(tmp_path: Path) -> None:
    record = _bundle_record()
    record["jobs"] = {2}
    with pytest.raises(ValueError, match="not a valid run record: not JSON"):
        run_record.write(str(tmp_path), record)
    assert list(tmp_path.iterdir()) == []
