"""The lane's venv record is true: the TVM a test imports is the one the venv installed.

`./bazelw test` copies the record (tvm_conformance_venv.json: lane, the TVM and tvm-ffi wheels
with their sha256, TVM's libinfo) into each run archive as the run's identity; this test, run
in every lane, checks it against the imported packages. It depends only on the venv, so Bazel
caches it like any other test.
"""

import importlib.metadata
import json
import os
import sys
import sysconfig
from pathlib import Path

import pytest
import tvm
import tvm_ffi

# Written by the venv rule (third_party/python): lane name, pinned packages, and for a user's
# own wheel its file name and sha256.
VENV_INFO = Path(sys.prefix) / "tvm_conformance_venv.json"


def _venv_info() -> dict:
    if not VENV_INFO.is_file():
        return {}
    return json.loads(VENV_INFO.read_text(encoding="utf-8"))


def test_imported_tvm_is_the_installed_one() -> None:
    # Each package's directory sits in the venv's site-packages. Compared as directories, not
    # as strings: under Bazel both are runfiles paths, and on a remote executor whose input root
    # is "/" sys.prefix reads "//bazel-out/..." while the imported file reads "/bazel-out/...".
    site = sysconfig.get_paths()["purelib"]
    for package in (tvm, tvm_ffi):
        assert os.path.samefile(Path(package.__file__).parents[1], site), (package.__file__, site)
    assert tvm.__version__ == importlib.metadata.version("apache-tvm")
    assert tvm_ffi.__version__ == importlib.metadata.version("apache-tvm-ffi")


def test_venv_record_matches_installed_packages() -> None:
    info = _venv_info()
    if not info:
        pytest.skip(f"{VENV_INFO.name} not written by this venv rule")
    pinned = info.get("packages", {})
    if isinstance(pinned, list):  # ["name==version", ...]
        pinned = dict(p.split("==", 1) for p in pinned if "==" in p)
    checked = 0
    for dist in ("apache-tvm", "apache-tvm-ffi"):
        if dist in pinned:
            assert importlib.metadata.version(dist) == pinned[dist], dist
            checked += 1
    if not checked:
        pytest.skip(f"{VENV_INFO.name} pins neither apache-tvm nor apache-tvm-ffi (user wheels)")


def test_venv_record_describes_the_imported_tvm() -> None:
    # ./bazelw copies this record into every run archive as the run's identity and header.
    info = _venv_info()
    if not info:
        pytest.skip(f"{VENV_INFO.name} not written by this venv rule")
    libinfo = tvm.support.libinfo()
    recorded = info.get("tvm_libinfo", {})
    assert "error" not in recorded, recorded
    for key, value in recorded.items():
        assert str(libinfo.get(key, "")) == value, key
    installed = info.get("installed", {})
    for dist, module in (("apache-tvm", tvm), ("apache-tvm-ffi", tvm_ffi)):
        entry = installed.get(dist) or info.get("user_wheels", {}).get(dist)
        assert entry, f"the record names no wheel for {dist}"
        assert len(entry.get("sha256", "")) == 64, entry
        if dist in installed:
            assert entry["version"] == module.__version__, (dist, entry)
