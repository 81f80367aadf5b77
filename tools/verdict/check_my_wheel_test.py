"""check_my_wheel: bad input is a clear error before anything builds; the command it runs; and
./bazelw keys the venv by each wheel's content (sha256), not its path."""

import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import check_my_wheel
import fake_runs
import pytest


def _wheel(
    path: Path, name: str = "apache-tvm", payload: str = "1", tag: str = "py3-none-any"
) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {name}\n")
        archive.writestr("x.dist-info/WHEEL", f"Wheel-Version: 1.0\nTag: {tag}\n")
        archive.writestr("x/payload.txt", payload)
    return path


# The lane's Python as lane_python() describes it (the tests do not depend on this machine's).
LINUX_311 = {
    "version": "3.11",
    "implementation": "cpython",
    "platform": "linux_x86_64",
    "machine": "x86_64",
    "glibc": "2.36",
}


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "tools" / "config").mkdir(parents=True)
    (tmp_path / "tools" / "config" / "lanes.bzl").write_text(
        'LANES = {"default": {"lock": "a.lock"}, "ffi_next": {"lock": "b.lock"}}\n'
    )
    monkeypatch.setattr(check_my_wheel, "ROOT", str(tmp_path))
    monkeypatch.setattr(check_my_wheel, "lane_python", _fake_lane_python)
    # No other CPython on this fake machine's PATH unless a test adds one.
    monkeypatch.setattr(check_my_wheel, "find_python", lambda version: (None, []))
    return tmp_path


def _fake_lane_python(python: str = "python3") -> dict[str, str]:
    """LINUX_311 for python3; `/fake/bin/python3.X` is CPython 3.X on the same platform."""
    found = re.fullmatch(r"/fake/bin/python(3\.\d+)", python)
    return dict(LINUX_311, version=found[1]) if found else dict(LINUX_311)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tvm-wheel", "/nonexistent/apache_tvm.whl"], "no such file"),
        (["--tvm-wheel", "{txt}"], "not a wheel (.whl)"),
        (["--tvm-wheel", "{broken}"], "not a readable wheel with METADATA"),
        (["--tvm-wheel", "{ffi}"], "a wheel of 'apache_tvm_ffi', not apache-tvm"),
        (["--tvm-wheel", "{tvm}", "--tvm-ffi-wheel", "{tvm}"], "not apache-tvm-ffi"),
        (["--tvm-wheel", "{tvm}", "--config", "rocm"], "--config=rocm: one of cpu, cuda, cuda_gpu"),
        (["--tvm-wheel", "{tvm}", "--lane", "nightly"], "--lane=nightly: one of default, ffi_next"),
        (
            ["--tvm-wheel", "{mac}"],
            "its tags (cp39-cp39-macosx_11_0_arm64) cannot install into the lane's Python 3.11 "
            "on linux_x86_64",
        ),
        (["--tvm-wheel", "{win}"], "(cp311-cp311-win_amd64) cannot install into the lane's"),
        (
            ["--tvm-wheel", "{tvm}", "--tvm-ffi-wheel", "{ffi312}"],
            "f312.whl is for CPython 3.12, but no working CPython 3.12 was found",
        ),
        (["--tvm-wheel", "{tvm}", "--python", "3.9"], "--python=3.9: the kit runs on CPython"),
        (["--tvm-wheel", "{tvm}", "--python", "/no/such/python"], "not an executable file"),
        (["--tvm-wheel", "{tvm}", "--python", "3.13"], "no working CPython 3.13 was found"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(
    workspace: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    files = {
        "txt": workspace / "notes.txt",
        "broken": workspace / "broken.whl",
        "ffi": _wheel(workspace / "ffi.whl", "apache_tvm_ffi"),
        "tvm": _wheel(workspace / "tvm.whl"),
        "mac": _wheel(workspace / "mac.whl", tag="cp39-cp39-macosx_11_0_arm64"),
        "win": _wheel(workspace / "win.whl", tag="cp311-cp311-win_amd64"),
        "ffi312": _wheel(
            workspace / "f312.whl", "apache-tvm-ffi", tag="cp312-cp312-manylinux_2_28_x86_64"
        ),
    }
    files["txt"].write_text("x")
    files["broken"].write_text("not a zip")
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in args]
    assert check_my_wheel.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_the_command_names_lane_config_and_absolute_wheels(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    tvm = _wheel(workspace / "tvm.whl")
    ffi = _wheel(workspace / "ffi.whl", "apache-tvm-ffi")
    parsed = check_my_wheel.argparse.Namespace(lane="ffi_next", config="cuda", bazel_args=["-k"])
    wheels = {
        "apache-tvm": check_my_wheel.check_wheel("tvm.whl", "apache-tvm"),
        "apache-tvm-ffi": check_my_wheel.check_wheel(str(ffi), "apache-tvm-ffi"),
    }
    assert check_my_wheel.bazel_command(parsed, wheels) == [
        str(workspace / "bazelw"),
        "test",
        "--require-whole",
        "--config=ffi_next",
        "--config=cuda",
        f"--repo_env=TVM_CONFORMANCE_TVM_WHEEL={tvm}",
        f"--repo_env=TVM_CONFORMANCE_TVM_FFI_WHEEL={ffi}",
        "-k",
        "//...",
    ]


@pytest.mark.parametrize(
    ("asked", "ffi_tag", "interpreter"),
    [
        (None, "cp312-cp312-manylinux_2_28_x86_64", "/fake/bin/python3.12"),
        (None, "cp313-cp313-manylinux_2_28_x86_64", "/fake/bin/python3.13"),
        (None, "cp311-cp311-manylinux_2_28_x86_64", "python3"),  # the host's own
        (None, "py3-none-any", "python3"),  # no CPython in the tag: the host's
        ("3.12", "cp311-cp311-manylinux_2_28_x86_64", "/fake/bin/python3.12"),  # asked wins
        (sys.executable, "cp312-cp312-manylinux_2_28_x86_64", sys.executable),  # a path
    ],
)
def test_the_python_comes_from_the_tvm_ffi_wheel_tag_or_the_option(
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    asked: str | None,
    ffi_tag: str,
    interpreter: str,
) -> None:
    monkeypatch.setattr(check_my_wheel, "find_python", lambda v: (f"/fake/bin/python{v}", []))
    ffi = _wheel(workspace / "ffi.whl", "apache-tvm-ffi", tag=ffi_tag)
    chosen = check_my_wheel.choose_python(asked, str(ffi))
    assert chosen == interpreter
    # The venv rule gets it only when it is not the default python3.
    parsed = check_my_wheel.argparse.Namespace(
        lane="default", config="cpu", bazel_args=[], interpreter=chosen
    )
    command = check_my_wheel.bazel_command(parsed, {})
    wanted = [] if chosen == "python3" else [f"--repo_env=TVM_CONFORMANCE_PYTHON={chosen}"]
    assert [a for a in command if "TVM_CONFORMANCE_PYTHON" in a] == wanted


def test_a_wheel_for_another_python_than_asked_is_refused(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(check_my_wheel, "find_python", lambda v: (f"/fake/bin/python{v}", []))
    tvm = _wheel(workspace / "tvm.whl")
    ffi = _wheel(workspace / "ffi.whl", "apache-tvm-ffi", tag="cp311-cp311-manylinux_2_28_x86_64")
    argv = ["--tvm-wheel", str(tvm), "--tvm-ffi-wheel", str(ffi), "--python", "3.12"]
    assert check_my_wheel.main(argv) == 2
    assert "cannot install into the lane's Python 3.12" in capsys.readouterr().err


def _bazelw() -> Path:
    """The repo's ./bazelw, from the runfiles (Bazel) or the source tree (plain pytest)."""
    from tvm_conformance import runfiles

    return Path(runfiles.rlocation("bazelw"))


def test_bazelw_passes_each_wheels_sha256_so_a_rebuilt_wheel_rekeys_the_venv(
    tmp_path: Path,
) -> None:
    # A stand-in Bazel that prints its arguments: what the repository rule would get.
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bazel-4").write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    (fake / "bazel-4").chmod(0o755)
    wheel = _wheel(tmp_path / "apache_tvm-0.0.0-py3-none-any.whl", payload="first build")
    # The stand-in Bazel is all it needs of the machine: ./bazelw installs nothing here.
    env = {
        **os.environ,
        "PATH": f"{fake}:{os.environ['PATH']}",
        "TVM_CONFORMANCE_SKIP_PREREQUISITES": "1",
    }

    def args() -> list[str]:
        command = [
            str(_bazelw()),
            "build",
            f"--repo_env=TVM_CONFORMANCE_TVM_WHEEL={wheel}",
            "//x",
        ]
        out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        return out.stdout.splitlines()

    first = args()
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert f"--repo_env=TVM_CONFORMANCE_TVM_WHEEL_SHA256={sha}" in first
    _wheel(wheel, payload="second build")  # rebuilt at the same path
    second = args()
    assert second != first
    assert (
        f"--repo_env=TVM_CONFORMANCE_TVM_WHEEL_SHA256={hashlib.sha256(wheel.read_bytes()).hexdigest()}"
        in second
    )


@pytest.mark.parametrize(
    ("tag", "installs"),
    [
        ("py3-none-any", True),
        ("cp311-cp311-manylinux_2_17_x86_64", True),
        ("cp311-cp311-manylinux2014_x86_64", True),
        ("cp38-abi3-manylinux_2_17_x86_64", True),
        ("cp311-cp311-linux_x86_64", True),
        ("cp311-cp311-manylinux_2_39_x86_64", False),  # newer glibc than the machine's
        ("cp311-cp311-manylinux_2_17_aarch64", False),
        ("cp312-cp312-manylinux_2_17_x86_64", False),
        ("cp39-cp39-macosx_11_0_arm64", False),
        ("cp311-cp311-win_amd64", False),
        ("py2-none-any", False),
    ],
)
def test_wheel_tags_are_read_against_the_lanes_python_and_platform(
    tag: str, installs: bool
) -> None:
    assert check_my_wheel.tag_installs(tag, LINUX_311) is installs


def test_tags_come_from_the_wheel_file_else_its_name() -> None:
    assert check_my_wheel.wheel_tags("x.whl", "Tag: cp311-cp311-a\nTag: cp311-cp311-b\n") == {
        "cp311-cp311-a",
        "cp311-cp311-b",
    }
    assert check_my_wheel.wheel_tags("apache_tvm-0.27.0-py2.py3-none-any.whl") == {
        "py2-none-any",
        "py3-none-any",
    }


def _fake_interpreter(path: Path, version: str, exit_status: int = 0) -> Path:
    """An executable that answers lane_python()'s question as CPython `version` whose real
    binary is `<path>.real`, or fails with `exit_status` (a pyenv shim for an inactive version
    exits 127)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    facts = json.dumps(dict(LINUX_311, version=version, executable=f"{path}.real"))
    body = (
        f"echo '{facts}'"
        if exit_status == 0
        else f"echo 'pyenv: not active' >&2; exit {exit_status}"
    )
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def test_find_python_skips_an_inactive_shim_and_names_what_it_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shim = _fake_interpreter(tmp_path / "shims" / "python3.13", "3.13", exit_status=127)
    wrong = _fake_interpreter(tmp_path / "wrong" / "python3.13", "3.12")
    real = _fake_interpreter(tmp_path / "bin" / "python3.13", "3.13")
    path = os.pathsep.join(str(p.parent) for p in (shim, wrong, real))
    monkeypatch.setenv("PATH", path)
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    found, tried = check_my_wheel.find_python("3.13")
    assert found == f"{real}.real"  # the binary it reports, not the name on PATH
    assert len(tried) == 2
    assert tried[0].startswith(f"{shim} does not run")
    assert tried[1] == f"{wrong} is cpython 3.12"


def test_find_python_falls_back_to_pyenv_builds_newest_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "pyenv"
    for build in ("3.13.0", "3.13.10", "3.13.2", "3.12.9"):
        _fake_interpreter(root / "versions" / build / "bin" / f"python{build[:4]}", build[:4])
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("PYENV_ROOT", str(root))
    candidates = check_my_wheel.python_candidates("3.13")
    assert [Path(c).parts[-3] for c in candidates] == ["3.13.10", "3.13.2", "3.13.0"]
    assert check_my_wheel.find_python("3.13")[0] == f"{candidates[0]}.real"
    assert check_my_wheel.find_python("3.10") == (None, [])


def test_no_working_python_is_one_line_naming_what_was_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shim = _fake_interpreter(tmp_path / "shims" / "python3.12", "3.12", exit_status=127)
    monkeypatch.setenv("PATH", str(shim.parent))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    with pytest.raises(check_my_wheel.UsageError) as raised:
        check_my_wheel.choose_python("3.12", None)
    message = str(raised.value)
    assert "no working CPython 3.12 was found" in message and f"{shim} does not run" in message
    assert "\n" not in message


def test_lane_python_describes_the_host_python3() -> None:
    facts = check_my_wheel.lane_python(sys.executable)
    assert facts["version"] == f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert facts["platform"].startswith(("linux_", "macosx_", "win_"))


def test_a_bad_tag_stops_before_anything_runs(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # ./bazelw here would record that it ran: it must not run at all.
    ran = workspace / "ran"
    bazelw = workspace / "bazelw"
    bazelw.write_text(f"#!/bin/sh\ntouch {ran}\n")
    bazelw.chmod(0o755)
    wheel = _wheel(
        workspace / "apache_tvm-1-cp39-cp39-macosx_11_0_arm64.whl",
        tag="cp39-cp39-macosx_11_0_arm64",
    )
    assert check_my_wheel.main(["--tvm-wheel", str(wheel)]) == 2
    assert "cannot install into the lane's Python 3.11" in capsys.readouterr().err
    assert not ran.exists()


def _fake_bazelw(workspace: Path, run_dir: str, status: int) -> None:
    """A ./bazelw that 'runs' by naming an archive already written, as the real one does."""
    script = workspace / "bazelw"
    script.write_text(
        f'#!/bin/sh\necho "{run_dir}" > "$TVM_CONFORMANCE_RUN_DIR_FILE"\nexit {status}\n'
    )
    script.chmod(0o755)


def test_check_my_wheel_reports_the_run_it_made_not_the_newest_start(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "docs").mkdir()
    (workspace / "docs" / "conformance.md").write_text("# no rows\n")
    wheel = _wheel(workspace / "apache_tvm-9-py3-none-any.whl")
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    record = fake_runs.venv_record(tvm_sha=sha, user_tvm=wheel.name)
    good = {"//pkg:a_test": fake_runs.junit([fake_runs.case_xml("test_a")])}
    bad = {"//pkg:a_test": fake_runs.junit([fake_runs.case_xml("test_a", "failed")])}
    # An earlier run of the same wheel, and an archive copied in whose recorded start is later
    # than the run check_my_wheel is about to make (a clock stepped back).
    earlier = fake_runs.archive(workspace, good, venv_record=record, start_ms=1_700_000_000_000)
    fake_runs.archive(workspace, good, venv_record=record, start_ms=1_900_000_000_000)
    current = fake_runs.archive(
        workspace, bad, venv_record=record, start_ms=1_800_000_000_000, exit_code=3
    )
    _fake_bazelw(workspace, current, 3)
    assert check_my_wheel.main(["--tvm-wheel", str(wheel)]) == 1
    out = capsys.readouterr().out
    last = out.strip().splitlines()[-1]
    assert last.startswith("verdict: FAIL") and "bazel exit 3" in last, out
    assert "FAILED: //pkg:a_test :: test_a" in out
    report = json.loads((workspace / "conformance-report" / "report.json").read_text())
    (column,) = report["columns"]
    assert column["run"] == Path(current).name
    # Diffed against the earlier run of its identity, not the later-started copy.
    assert column["diff"]["previous"] == Path(earlier).name


def test_a_partial_run_without_targets_fails_naming_what_it_left_out(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "docs").mkdir()
    (workspace / "docs" / "conformance.md").write_text("")
    wheel = _wheel(workspace / "apache_tvm-9-py3-none-any.whl")
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    record = fake_runs.venv_record(tvm_sha=sha, user_tvm=wheel.name)
    good = {"//pkg:a_test": fake_runs.junit([fake_runs.case_xml("test_a")])}
    current = fake_runs.archive(
        workspace, good, venv_record=record, patterns=("//...", "-//pkg:b_test")
    )
    _fake_bazelw(workspace, current, 0)
    # The whole suite is required without --targets: a negative pattern among the extra
    # arguments leaves a target out, and the check exits 1 saying so.
    assert check_my_wheel.main(["--tvm-wheel", str(wheel), "--", "--", "-//pkg:b_test"]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith("verdict: PARTIAL PASS (") and "PARTIAL: -//pkg:b_test" in out[-1]
    assert (
        "check_my_wheel: PARTIAL: the whole suite is required without --targets, and this run "
        "left out: -//pkg:b_test"
    ) in out


def test_targets_and_fail_fast_narrow_the_command(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    tvm = _wheel(workspace / "tvm.whl")
    parsed = check_my_wheel.argparse.Namespace(
        lane="default",
        config="cpu",
        bazel_args=[],
        targets=["//python/tests/ffi/...", "//cpp/tests/..."],
        fail_fast=True,
    )
    wheels = {"apache-tvm": check_my_wheel.check_wheel(str(tvm), "apache-tvm")}
    command = check_my_wheel.bazel_command(parsed, wheels)
    assert command[-2:] == ["//python/tests/ffi/...", "//cpp/tests/..."]
    assert "//..." not in command
    assert "--notest_keep_going" in command
    # A partial check by design: ./bazelw's verdict allows it, saying why.
    assert (
        "--allow-partial=check my wheel --targets //python/tests/ffi/... //cpp/tests/..." in command
    )
    # Without them: the whole suite, every target run, and nothing less passes.
    parsed.targets, parsed.fail_fast = None, False
    command = check_my_wheel.bazel_command(parsed, wheels)
    assert command[-1] == "//..." and "--notest_keep_going" not in command
    assert command[2] == "--require-whole"
