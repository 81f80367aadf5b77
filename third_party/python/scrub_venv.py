"""Make a fresh venv's files independent of where it was created.

Run by the `python_venv` repository rule. Bazel keys cached actions by the digests of their
inputs; every venv file is an input of every py_test. Anything holding the venv's absolute path
(bytecode, console-script shebangs, RECORD files, activate scripts, pyvenv.cfg's `command =`)
would make two clones miss each other's cache, so it goes. File names with spaces go too:
Bazel 4 runfiles cannot carry them (none is needed at run time).
"""

import os
import shutil
import sys


def scrub(venv: str) -> None:
    """Remove location-dependent files from the venv rooted at `venv`."""
    bin_dir = os.path.join(venv, "bin")
    for name in os.listdir(bin_dir):
        path = os.path.join(bin_dir, name)
        # Keep the interpreter links; scripts carry absolute shebangs and are never used.
        if not name.startswith("python"):
            os.remove(path)
    for root, dirs, files in os.walk(venv):
        for d in list(dirs):
            if d == "__pycache__":
                shutil.rmtree(os.path.join(root, d))
                dirs.remove(d)
        for f in files:
            path = os.path.join(root, f)
            if (
                f.endswith((".pyc", ".pyo"))
                or " " in f
                or (root.endswith(".dist-info") and f in ("RECORD", "direct_url.json"))
            ):
                os.remove(path)
    cfg = os.path.join(venv, "pyvenv.cfg")
    with open(cfg) as fh:
        lines = [line for line in fh if not line.startswith("command")]
    with open(cfg, "w") as fh:
        fh.writelines(lines)


if __name__ == "__main__":
    scrub(sys.argv[1])
