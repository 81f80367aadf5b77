"""Shared fixture of the robustness tests: the C++ extensions a test module names in EXTENSIONS.

    EXTENSIONS = ("hello", "ffi_testing")   # cpp/ext/lib<name>.so, in the py_test's data

Loaded once per module before its first test and kept alive until its last, as in
python/tests/ffi/conftest.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import tvm_ffi

from tvm_conformance.extensions import load_extension


@pytest.fixture(scope="module", autouse=True)
def extensions(request: pytest.FixtureRequest) -> Iterator[list[tvm_ffi.Module]]:
    """The loaded modules of the test module's EXTENSIONS (none: nothing loaded)."""
    modules = [load_extension(name) for name in getattr(request.module, "EXTENSIONS", ())]
    yield modules
    del modules
