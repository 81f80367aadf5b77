"""A target declaring ``uses_torch`` gets torch and what only torch requires, but not torch's
C++ headers and CMake files (third_party/python/BUILD.venv.tpl)."""

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    "TEST_SRCDIR" not in os.environ, reason="runfiles groups exist only under Bazel"
)


def _runfiles_site_packages() -> Path:
    # Not resolved: the entries are symlinks into the real venv, which has everything.
    return Path(pytest.__file__).parent.parent


def test_torch_and_what_only_torch_requires_are_there() -> None:
    site = _runfiles_site_packages()
    for name in ("torch/__init__.py", "torch/_C", "sympy/__init__.py", "networkx/__init__.py"):
        assert (site / name).exists(), f"{name} missing from a uses_torch target's runfiles"


def test_torch_headers_and_cmake_files_are_left_out() -> None:
    site = _runfiles_site_packages()
    for name in ("include", "share"):
        assert not (site / "torch" / name).exists(), f"torch/{name} is in the runfiles"
