"""check_my_wheel: bad input is a clear error before anything builds; the command it runs; and
./bazelw keys the venv by each wheel's content (sha256), not its path."""

import hashlib
import os
import subprocess
import zipfile
from pathlib import Path

import check_my_wheel
import pytest


def _wheel(path: Path, name: str = "apache-tvm", payload: str = "1") -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {name}\n")
        archive.writestr("x/payload.txt", payload)
    return path


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "tools" / "config").mkdir(parents=True)
    (tmp_path / "tools" / "config" / "lanes.bzl").write_text(
        'LANES = {"default": {"lock": "a.lock"}, "ffi_next": {"lock": "b.lock"}}\n'
    )
    monkeypatch.setattr(check_my_wheel, "ROOT", str(tmp_path))
    return tmp_path


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
        "--config=ffi_next",
        "--config=cuda",
        f"--repo_env=TVM_CONFORMANCE_TVM_WHEEL={tvm}",
        f"--repo_env=TVM_CONFORMANCE_TVM_FFI_WHEEL={ffi}",
        "-k",
        "//...",
    ]


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
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}

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
    # Without them: the whole suite, every target run.
    parsed.targets, parsed.fail_fast = None, False
    command = check_my_wheel.bazel_command(parsed, wheels)
    assert command[-1] == "//..." and "--notest_keep_going" not in command
