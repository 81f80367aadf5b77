"""Runtime-only set-up for the deployment tests: TVM without its compiler library.

Under Bazel the targets set TVM_USE_RUNTIME_LIB=1 (BUILD.bazel). Under plain pytest this file
sets it when TVM is not imported yet; if it is (other tests in the same session loaded the
compiler), the runtime-only cases skip, saying so: run this directory in a process of its own.

A runtime-only `import tvm` does not load TVM's CUDA runtime sidecar (TVM 0.27 autoloads device
backends only with the compiler), so this process loads it itself, as a deployed program would:
where it cannot load (no GPU driver) the cuda cases skip with the plugin's reason.
"""

from __future__ import annotations

import os
import sys

import pytest

from tvm_conformance import deploy, runfiles

if "tvm" not in sys.modules:
    os.environ.setdefault("TVM_USE_RUNTIME_LIB", "1")

import tvm  # noqa: E402  (after the environment is set)

CUDA_RUNTIME_PROBLEM = deploy.load_cuda_runtime() if not deploy.compiler_libraries_mapped() else ""


@pytest.fixture
def runtime_only() -> None:
    """This process runs TVM without its compiler: skip (plain pytest) or fail (Bazel) if not."""
    loaded = deploy.compiler_libraries_mapped()
    if not loaded and os.environ.get("TVM_USE_RUNTIME_LIB") == "1":
        return
    what = ", ".join(loaded) or "TVM_USE_RUNTIME_LIB unset"
    why = (
        f"TVM's compiler is loaded in this process ({what}, tvm {tvm.__version__}); "
        "the deployment tests need TVM_USE_RUNTIME_LIB=1 before "
        "`import tvm`: run python/tests/deploy in a pytest process of its own"
    )
    if runfiles.under_bazel():
        pytest.fail(why)
    pytest.skip(why)
