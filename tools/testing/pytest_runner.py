"""Entry point of every tvm_py_test: runs pytest on the files given as arguments.

pytest's settings (plugin, --strict-markers, test file pattern) come from the repo's
pyproject.toml, found beside the test files in runfiles, so Bazel and plain pytest agree.
This runner only adds what Bazel asks of a test:
  * JUnit XML into $XML_OUTPUT_FILE, so skips and xfails are visible per case;
  * no bytecode written into runfiles or the venv;
  * a non-zero exit for every failure, including pytest's 5 (nothing collected), so a target
    whose files lost their tests does not pass silently;
  * torch kept out of the process unless the target declares ``uses_torch = True``
    (``TVM_CONFORMANCE_TORCH=0``, set by ``tvm_py_test``): tvm_ffi imports torch eagerly
    when it is installed, which costs every test process seconds that only the torch
    interop and model-import tests need. TVM and tvm_ffi see torch as absent (their own
    optional-import path, as on a machine without torch); any other import of torch is an
    error naming the fix, so a test never loses torch silently (``importorskip`` included).
"""

import importlib.abc
import os
import sys

sys.dont_write_bytecode = True

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


if os.environ.get("TVM_CONFORMANCE_TORCH") == "0":
    sys.meta_path.insert(0, TorchKeptOut())

import pytest  # noqa: E402


def main(argv: list[str]) -> int:
    """Run pytest with Bazel's conventions; return the process exit code."""
    args = ["-p", "no:cacheprovider", "-rsxX"]
    xml_output = os.environ.get("XML_OUTPUT_FILE")
    if xml_output:
        args.append("--junitxml=" + xml_output)
    code = int(pytest.main(args + argv))
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        print("tvm_py_test: pytest collected no tests; failing the target.", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
