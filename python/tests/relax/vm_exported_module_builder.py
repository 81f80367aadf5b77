"""Build step: compile a small Relax model with tvm.compile and export it as a shared library.

Run by the `tvm_exported_module` genrule (tools/build_defs/tvm.bzl) as
`vm_exported_module_builder OUT.so`; it writes OUT.so and nothing else. The model is
`main(x, y) = x * y + 1` on float32[2, 3]; the Python and C++ tests check those numbers.
"""

import argparse
import os
import tempfile

import tvm
from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class ExportedModel:
    """The model both languages run."""

    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
        z = R.add(R.multiply(x, y), R.const(1.0, "float32"))
        return z


def build(output: str) -> None:
    """Compile ExportedModel for llvm and export it to `output` (a .so path)."""
    executable = tvm.compile(ExportedModel, target="llvm")
    # export_library compiles and links in a workspace directory; give it one private to this
    # action and gone afterwards, so the only file left behind is `output`.
    with tempfile.TemporaryDirectory() as scratch:
        executable.export_library(output, workspace_dir=scratch)


def main() -> None:
    """Parse the output path and build."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", help="path of the shared library to write")
    args = parser.parse_args()
    build(os.path.abspath(args.output))


if __name__ == "__main__":
    main()
