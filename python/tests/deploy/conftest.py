"""Runtime-only set-up for the deployment tests: TVM without its compiler library.

Under Bazel the targets set TVM_USE_RUNTIME_LIB=1 (BUILD.bazel). Under plain pytest this file
sets it when pytest was given this directory (or files in it) alone and TVM is not imported
yet. In a session that collects other tests too (`pytest python/tests tools`, the README's), it
leaves TVM whole: a runtime-only `import tvm` here would break every later test module that
imports the compiler (`tvm.relax`); the runtime-only cases skip then, saying so: run this
directory in a process of its own.

A runtime-only `import tvm` does not load TVM's CUDA runtime sidecar (TVM 0.27 autoloads device
backends only with the compiler), so this process loads it itself, as a deployed program would:
where it cannot load (no GPU driver) the cuda cases skip with the plugin's reason.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tvm_conformance import deploy, runfiles

_HERE = Path(__file__).resolve().parent


def _session_is_this_directory(config: pytest.Config) -> bool:
    """True when every path pytest was given (its testpaths when none) lies in this directory."""
    base = Path(config.invocation_params.dir)
    paths = [(base / str(arg).split("::")[0]).resolve() for arg in config.args]
    return bool(paths) and all(path == _HERE or _HERE in path.parents for path in paths)


def pytest_configure(config: pytest.Config) -> None:
    """Runtime-only TVM for a session of this directory alone, set before `import tvm`; then
    the CUDA runtime sidecar, which a runtime-only `import tvm` does not load by itself."""
    if "tvm" not in sys.modules and _session_is_this_directory(config):
        os.environ.setdefault("TVM_USE_RUNTIME_LIB", "1")
    import tvm  # noqa: F401  (after the environment is set)

    if not deploy.compiler_libraries_mapped():
        deploy.load_cuda_runtime()


@pytest.fixture
def runtime_only() -> None:
    """This process runs TVM without its compiler: skip (plain pytest) or fail (Bazel) if not."""
    loaded = deploy.compiler_libraries_mapped()
    if not loaded and os.environ.get("TVM_USE_RUNTIME_LIB") == "1":
        return
    import tvm

    what = ", ".join(loaded) or "TVM_USE_RUNTIME_LIB unset"
    why = (
        f"TVM's compiler is loaded in this process ({what}, tvm {tvm.__version__}); "
        "the deployment tests need TVM_USE_RUNTIME_LIB=1 before "
        "`import tvm`: run python/tests/deploy in a pytest process of its own"
    )
    if runfiles.under_bazel():
        pytest.fail(why)
    pytest.skip(why)
