"""The installed wheel's venv, shared by the package tests (wheel_install_test, wheel_import_test).

A fresh venv (no pip, nothing installed) sees the lane venv's packages (apache-tvm, pytest,
numpy; torch where the target has it) through a .pth file, so nothing is downloaded; the
Bazel-built wheel is installed into it with pip, offline. Its processes get an environment
without PYTHONPATH or pytest settings, so only what the wheel installed can be imported from
tvm_conformance.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tvm_conformance.runfiles import rlocation

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

# What would reach the repo's sources or steer pytest in a child process.
_STEERING = (
    "PYTHONPATH",
    "PYTEST_ADDOPTS",
    "PYTEST_PLUGINS",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
    "TVM_TEST_TARGETS",
)


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without what would reach the repo's sources or steer pytest."""
    env = {k: v for k, v in os.environ.items() if k not in _STEERING}
    env.update(extra)
    return env


@dataclasses.dataclass(frozen=True)
class FreshVenv:
    """A venv with the wheel installed: its python and its site-packages."""

    python: Path
    site: Path

    def env(self, **extra: str) -> dict[str, str]:
        """The environment its processes run with."""
        return clean_env(**extra)


def _wheel() -> Path:
    with open(rlocation("python/pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    name = f"{project['name']}-{project['version']}-py3-none-any.whl"
    path = Path(rlocation(f"python/{name}"))
    if not path.exists():  # plain pytest: Bazel's output tree
        path = Path(rlocation(f"bazel-bin/python/{name}"))
    if not path.exists():
        pytest.skip(f"{name} is not built: run ./bazelw build //python:wheel first")
    return path


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> FreshVenv:
    """A venv with the wheel installed and the lane's packages visible."""
    root = tmp_path_factory.mktemp("fresh")
    # In a child without PYTHONPATH: under Bazel, runfiles' `python_venv/venv` directory would
    # shadow the standard library's venv module in this process.
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--symlinks", root / "venv"],
        check=True,
        cwd=root,
        env=clean_env(),
    )
    python = root / "venv" / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # The lane's packages (and pip) come after the venv's own site-packages.
    Path(site, "lane_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run(
        [python, "-m", "pip", "install", "--no-index", "--no-deps", "--no-compile"]
        + ["--disable-pip-version-check", "--no-cache-dir", str(_wheel())],
        env=clean_env(),
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    assert Path(site, "tvm_conformance", "legacy.py").exists()
    return FreshVenv(python=python, site=Path(site))
