"""A test's runfiles hold the venv's core: torch (and what only torch requires) and the
installers come only with the targets that declare them (third_party/python/BUILD.venv.tpl)."""

import os
from pathlib import Path

import pytest

# Plain pytest runs on the whole venv; the groups are a property of Bazel's runfiles.
pytestmark = pytest.mark.skipif(
    "TEST_SRCDIR" not in os.environ, reason="runfiles groups exist only under Bazel"
)


def _runfiles_site_packages() -> Path:
    # pytest is in the core: its package's parent is the runfiles' site-packages. Not
    # resolved: the entries are symlinks into the real venv, which has everything.
    return Path(pytest.__file__).parent.parent


def test_the_core_has_the_packages_every_test_imports() -> None:
    site = _runfiles_site_packages()
    for name in ("pytest", "numpy", "tvm", "tvm_ffi"):
        assert (site / name / "__init__.py").exists(), f"{name} missing from {site}"


def test_torch_and_what_only_torch_requires_are_left_out() -> None:
    site = _runfiles_site_packages()
    for name in ("torch", "sympy", "networkx"):
        assert not (site / name).exists(), f"{name} is in a runfiles tree without uses_torch"


def test_the_installers_are_left_out() -> None:
    site = _runfiles_site_packages()
    for name in ("pip", "setuptools"):
        assert not (site / name).exists(), f"{name} is in a runfiles tree that installs nothing"


def test_a_package_is_one_runfile_not_its_files() -> None:
    # One symlink per package in each sandbox, where one per file cost Bazel about 0.3 s a
    # test (docs/performance.md). Bazel still keys results by the files: it hashes a
    # directory input's contents.
    if not Path(__file__).is_symlink():
        pytest.skip("runfiles are copies here (a remote executor stages files), not symlinks")
    site = _runfiles_site_packages()
    for name in ("numpy", "tvm", "tvm_ffi", "_pytest"):
        assert (site / name).is_symlink(), f"{name} is a tree of per-file symlinks"
