"""Load the repo's C++ TVM-FFI extensions (cpp/ext/) into the running process."""

import tvm_ffi

from tvm_conformance.runfiles import rlocation


def load_extension(name: str) -> tvm_ffi.Module:
    """Load `cpp/ext/lib<name>.so`; its global functions are registered on return."""
    return tvm_ffi.load_module(rlocation(f"cpp/ext/lib{name}.so"))
