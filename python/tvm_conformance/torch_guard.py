"""Keep torch out of a test process whose target does not use it.

tvm_ffi imports torch eagerly whenever it is installed: about 2.5 s of every process that
imports TVM. ``tvm_py_test`` sets ``TVM_CONFORMANCE_TORCH=0`` unless the target declares
``uses_torch = True``; the Bazel runner (and any worker process a test starts, through
:func:`install_from_environment`) then installs :class:`TorchKeptOut`:

* TVM and tvm_ffi import torch optionally (``try: import torch except ImportError``): they
  get ``ModuleNotFoundError`` and run as on a machine without torch;
* any other importer (a test, ``pytest.importorskip``) gets a ``RuntimeError`` naming
  ``uses_torch``, so a test can never lose torch silently.
"""

from __future__ import annotations

import importlib.abc
import os
import sys

ENV_VAR = "TVM_CONFORMANCE_TORCH"
# Packages that import torch optionally (try/except ImportError) and work without it.
_OPTIONAL_TORCH_IMPORTERS = ("tvm_ffi", "tvm")
_IMPORT_MACHINERY = ("importlib", "importlib._bootstrap", "importlib._bootstrap_external")


class TorchKeptOut(importlib.abc.MetaPathFinder):
    """Refuses ``import torch``: absent for TVM's optional imports, an error for tests."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        """Raise for torch and its submodules; leave every other module alone."""
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        importer = _importer_module()
        why = "torch is kept out of this test target (tvm_py_test without uses_torch = True)"
        if importer.split(".")[0] in _OPTIONAL_TORCH_IMPORTERS:
            raise ModuleNotFoundError(why, name=fullname)
        raise RuntimeError(
            f"{why}, but {importer or 'a test'} imports {fullname}: set uses_torch = True on "
            "the target's tvm_py_test"
        )


def _importer_module() -> str:
    """The module whose code runs the import statement, past the import machinery."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if not (name in _IMPORT_MACHINERY or frame.f_code.co_filename.startswith("<frozen")):
            return name
        frame = frame.f_back
    return ""


def install_from_environment() -> bool:
    """Install :class:`TorchKeptOut` when ``TVM_CONFORMANCE_TORCH=0``; True if installed."""
    if os.environ.get(ENV_VAR) != "0":
        return False
    if not any(isinstance(finder, TorchKeptOut) for finder in sys.meta_path):
        sys.meta_path.insert(0, TorchKeptOut())
    return True


def child_prelude() -> str:
    """Python source that a ``python -c`` child runs first to keep the same guard."""
    if os.environ.get(ENV_VAR) != "0":
        return ""
    return "import tvm_conformance.torch_guard as _g; _g.install_from_environment()\n"
