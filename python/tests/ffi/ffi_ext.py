"""Loads the C++ FFI fixtures (//cpp/ext:hello, //cpp/ext:ffi_testing) into this process."""

import tvm_ffi

from tvm_conformance.runfiles import rlocation

_LIBS = ("cpp/ext/libhello.so", "cpp/ext/libffi_testing.so")
# Keep the modules referenced: the registered globals point into these libraries.
_MODULES: list[tvm_ffi.Module] = []


def load() -> None:
    """Load both extension libraries once; their globals register on load."""
    if not _MODULES:
        _MODULES.extend(tvm_ffi.load_module(rlocation(path)) for path in _LIBS)
