"""./bazelw fails closed: a `test` it cannot archive or judge exits non-zero with one line.

The real ./bazelw runs in a scratch kit (its own verdict tools beside it) with a stand-in Bazel
that writes a build event file naming one passing target and exits 0: the run passes when it
can be archived, and fails, saying why, when the archive cannot be written, when Bazel wrote no
build events, or when no python3 is on PATH. TVM_CONFORMANCE_RUN_DIR_FILE names the archive
of this run, and is emptied when there is none.
"""

import os
import shutil
import subprocess
from pathlib import Path

import archive
import ci_reports
import fake_runs
import pytest
import results
import run_identity
import run_record
import skip_report
import verdict

from tvm_conformance import deviation_registry, pep440

LABEL = "//pkg:x_test"
# The tools a stand-in PATH without python3 still needs (bazelw and the fake Bazel).
_TOOLS = ("bash", "cat", "cp", "cut", "date", "dirname", "dpkg-query", "id", "mktemp", "rm")


def _bazelw() -> Path:
    """The repo's ./bazelw, from the runfiles (Bazel) or the source tree (plain pytest)."""
    from tvm_conformance import runfiles

    return Path(runfiles.rlocation("bazelw"))


@pytest.fixture
def kit(tmp_path: Path) -> Path:
    """A scratch kit: ./bazelw, .bazelversion, the verdict tools, the deviation registry, a
    WORKSPACE, and a stand-in `bazel-4` on bin/ that copies events.json to the build event
    file it is given (and lists LABEL for a query)."""
    root = tmp_path / "kit"
    (root / "tools" / "verdict").mkdir(parents=True)
    (root / "python" / "tvm_conformance").mkdir(parents=True)
    shutil.copy(_bazelw(), root / "bazelw")
    (root / ".bazelversion").write_text("4.2.3\n")
    (root / "WORKSPACE").write_text("")
    for module in (archive, results, run_identity, run_record, ci_reports, verdict, skip_report):
        shutil.copy(module.__file__, root / "tools" / "verdict")
    shutil.copytree(run_record.SCHEMA_DIR, root / "tools" / "verdict" / "schema")
    # The registry and what it imports (//python/tvm_conformance:deviation_registry's srcs).
    for module in (deviation_registry, pep440):
        shutil.copy(module.__file__, root / "python" / "tvm_conformance")
    (root / "python" / "tvm_conformance" / "__init__.py").write_text("")
    junit = fake_runs.junit([fake_runs.case_xml("test_a")])
    bep = fake_runs.write_bep(tmp_path / "fake", {LABEL: junit})
    shutil.copy(bep, root / "events.json")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bazel-4").write_text(
        "#!/bin/sh\n"
        f'case "$1" in *query) echo "{LABEL} False"; exit 0;; esac\n'
        'for arg in "$@"; do case "$arg" in --build_event_json_file=*)\n'
        f'  [ -f {root}/events.json ] && cp {root}/events.json "${{arg#*=}}";; esac; done\n'
        "exit 0\n"
    )
    (bin_dir / "bazel-4").chmod(0o755)
    return root


def _run(kit: Path, path: str | None = None) -> tuple[int, str, str]:
    """./bazelw test //... in the kit with the stand-in Bazel first on PATH: (exit, stderr
    lines saying FAIL, the run directory file's content)."""
    bin_dir = kit.parent / "bin"
    run_dir_file = kit.parent / "run_dir.txt"
    run_dir_file.write_text("stale/run/of/another/invocation\n")
    env = {
        **os.environ,
        "PATH": path or f"{bin_dir}:{os.environ['PATH']}",
        "TVM_CONFORMANCE_RUN_DIR_FILE": str(run_dir_file),
        # The scratch kit's machine is this one: ./bazelw installs nothing here.
        "TVM_CONFORMANCE_SKIP_PREREQUISITES": "1",
    }
    out = subprocess.run(
        [str(kit / "bazelw"), "test", "//..."],
        cwd=kit,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    fail_lines = [line for line in out.stderr.splitlines() if "FAIL" in line]
    return out.returncode, "\n".join(fail_lines) + out.stdout, run_dir_file.read_text().strip()


def test_a_run_that_is_archived_and_judged_passes(kit: Path) -> None:
    code, text, run_dir = _run(kit)
    assert code == 0, text
    assert "verdict: PASS" in text
    assert run_dir.startswith(str(kit / "conformance-runs"))
    # The verdict shown is the one recorded, with the CI reports beside it.
    record = run_record.read(run_dir)
    assert record["verdict"]["status"] == "PASS"
    assert record["verdict"]["line"] in text
    for name in (ci_reports.JUNIT_FILE, ci_reports.CTRF_FILE, ci_reports.SUMMARY_FILE):
        assert os.path.getsize(os.path.join(run_dir, name)) > 0, name


def test_an_archive_that_cannot_be_written_fails_the_run(kit: Path) -> None:
    (kit / "conformance-runs").write_text("a file where the archive directory should be\n")
    code, text, run_dir = _run(kit)
    assert code == 1
    assert "bazelw: FAIL: this run has no verdict: tools/verdict/archive.py could not" in text
    assert "verdict: PASS" not in text
    assert run_dir == ""  # never the stale run of another invocation


def test_a_run_without_build_events_fails(kit: Path) -> None:
    (kit / "events.json").unlink()
    code, text, run_dir = _run(kit)
    assert code == 1
    assert "this run has no verdict: Bazel wrote no build events (bazel exit 0)" in text
    assert run_dir == ""


def test_a_machine_without_python3_fails_the_run(kit: Path) -> None:
    bin_dir = kit.parent / "bin"
    for tool in _TOOLS:
        found = shutil.which(tool)
        if found is None:
            pytest.skip(f"{tool} is not on this machine's PATH; the stand-in PATH needs it")
        os.symlink(found, bin_dir / tool)
    code, text, run_dir = _run(kit, path=str(bin_dir))
    assert code == 1, text
    assert "this run has no verdict: no python3 on PATH to archive and judge it" in text
    assert run_dir == ""
