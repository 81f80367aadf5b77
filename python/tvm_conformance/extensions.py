"""Load the repo's C++ TVM-FFI extensions (cpp/ext/) into the running process.

A test module names the extensions it needs, and its package's conftest.py imports the fixture
that loads them (python/tests/ffi, python/tests/robustness):

    EXTENSIONS = ("hello", "ffi_testing")   # cpp/ext/lib<name>.so, in the py_test's data

    from tvm_conformance.extensions import extensions  # noqa: F401   (in conftest.py)
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import tvm_ffi

from tvm_conformance.runfiles import rlocation


def load_extension(name: str) -> tvm_ffi.Module:
    """Load `cpp/ext/lib<name>.so`; its global functions are registered on return."""
    return tvm_ffi.load_module(rlocation(f"cpp/ext/lib{name}.so"))


@pytest.fixture(scope="module", autouse=True)
def extensions(request: pytest.FixtureRequest) -> Iterator[list[tvm_ffi.Module]]:
    """The loaded modules of the test module's EXTENSIONS (none: nothing loaded).

    Loaded once per module, before its first test, and kept alive until its last test ran:
    their globals (`myadd`, `testing.*`) are registered for as long as the module holds them.
    """
    modules = [load_extension(name) for name in getattr(request.module, "EXTENSIONS", ())]
    yield modules
    del modules
