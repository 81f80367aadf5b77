"""tools/build_defs/write_wheel.py: metadata from pyproject.toml, RECORD hashes, byte-identical
rebuilds, and the checks that keep the module list and the version from drifting."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from tvm_conformance.runfiles import rlocation

PYPROJECT = """
[project]
name = "demo-pkg"
version = "1.2.3"
description = "a demo"
requires-python = ">=3.10"
dependencies = ["pytest>=8"]

[project.optional-dependencies]
fast = ["numpy"]

[project.entry-points.pytest11]
"demo.plugin" = "demo.plugin"

[tool.demo.wheel]
modules = ["__init__", "plugin"]
"""


@pytest.fixture(scope="module")
def writer() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "write_wheel", rlocation("tools/build_defs/write_wheel.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def sources(tmp_path: Path) -> list[str]:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "__init__.py").write_text('"""demo"""\n')
    (tmp_path / "plugin.py").write_text("X = 1\n")
    return [str(tmp_path / "__init__.py"), str(tmp_path / "plugin.py")]


def test_wheel_contents_and_record(writer: ModuleType, sources: list[str], tmp_path: Path) -> None:
    out = tmp_path / "out.whl"
    name = writer.write(str(tmp_path / "pyproject.toml"), "demo", sources, str(out))
    assert name == "demo_pkg-1.2.3-py3-none-any.whl"
    with zipfile.ZipFile(out) as wheel:
        names = wheel.namelist()
        assert names[:2] == ["demo/__init__.py", "demo/plugin.py"]
        assert names[-1] == "demo_pkg-1.2.3.dist-info/RECORD"
        meta = wheel.read("demo_pkg-1.2.3.dist-info/METADATA").decode()
        assert "Name: demo-pkg\nVersion: 1.2.3\n" in meta
        assert "Requires-Dist: pytest>=8\n" in meta
        assert 'Requires-Dist: numpy; extra == "fast"\n' in meta
        points = wheel.read("demo_pkg-1.2.3.dist-info/entry_points.txt").decode()
        assert points == "[pytest11]\ndemo.plugin = demo.plugin\n"
        for line in wheel.read(names[-1]).decode().splitlines()[:-1]:
            path, digest, size = line.split(",")
            data = wheel.read(path)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == "sha256=" + expected.decode() and int(size) == len(data), path


def test_rebuild_is_byte_identical(writer: ModuleType, sources: list[str], tmp_path: Path) -> None:
    first, second = tmp_path / "a.whl", tmp_path / "b.whl"
    writer.write(str(tmp_path / "pyproject.toml"), "demo", sources, str(first))
    writer.write(str(tmp_path / "pyproject.toml"), "demo", list(reversed(sources)), str(second))
    assert first.read_bytes() == second.read_bytes()


def test_sources_must_be_the_listed_modules(
    writer: ModuleType, sources: list[str], tmp_path: Path
) -> None:
    extra = tmp_path / "runfiles.py"
    extra.write_text("")
    with pytest.raises(writer.WheelError, match="given but not listed: runfiles"):
        writer.write(str(tmp_path / "pyproject.toml"), "demo", [*sources, str(extra)], "x.whl")
    with pytest.raises(writer.WheelError, match="listed but not given: plugin"):
        writer.write(str(tmp_path / "pyproject.toml"), "demo", sources[:1], "x.whl")


def test_declared_output_name_must_match(
    writer: ModuleType, sources: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "demo_pkg-9.9.9-py3-none-any.whl"
    argv = ["--pyproject", str(tmp_path / "pyproject.toml"), "--package", "demo"]
    assert writer.main([*argv, "--out", str(out), "--expect-name", str(out), *sources]) == 1
    assert "the wheel is demo_pkg-1.2.3-py3-none-any.whl" in capsys.readouterr().err
