"""Make a fresh venv's files independent of where it was created.

Run by the `python_venv` repository rule. Bazel keys cached actions by the digests of their
inputs; every venv file is an input of every py_test. Anything holding the venv's absolute path
(bytecode, console-script shebangs, RECORD files, activate scripts, pyvenv.cfg's `command =`)
would make two clones miss each other's cache, so it goes. File names with spaces cannot stay:
Bazel 4 runfiles cannot carry them. Some are data a module beside them reads by name at import
(setuptools' vendored jaraco.text reads `Lorem ipsum.txt`, so without it `import setuptools`,
and with it torch.utils.cpp_extension and torch.testing._internal, fail): such a file is
renamed (spaces to underscores) and the string literals naming it in the modules of its
directory are rewritten to the new name. One that no module beside it names is removed.

Then the bytecode is written again, location-free: hash-based .pyc files (PEP 552,
checked-hash: valid while the source bytes are, with no mtime in them) whose embedded file
names are relative to the venv (the import system points code objects at the real source when
it loads them). Without bytecode every test process compiles TVM's and torch's Python anew:
`import tvm` took 4.5 s instead of 2.7 s with torch, 1.45 s instead of 0.8 s without.
"""

import compileall
import glob
import os
import py_compile
import shutil
import sys


def scrub(venv: str, only: list[str] | None = None) -> None:
    """Remove location-dependent files from the venv rooted at `venv`; with `only`, from
    those top-level site-packages entries (a layer's new distributions) and bin/ alone."""
    bin_dir = os.path.join(venv, "bin")
    for name in os.listdir(bin_dir):
        path = os.path.join(bin_dir, name)
        # Keep the interpreter links; scripts carry absolute shebangs and are never used.
        if not name.startswith("python"):
            os.remove(path)
    if only is None:
        roots = [venv]
    else:
        roots = [os.path.join(p, e) for p in _site_packages(venv) for e in only]
    for top in roots:
        for root, dirs, files in os.walk(top):
            for d in list(dirs):
                if d == "__pycache__":
                    shutil.rmtree(os.path.join(root, d))
                    dirs.remove(d)
            for f in files:
                path = os.path.join(root, f)
                if " " in f:
                    _rename_or_remove_spaced(root, f)
                elif f.endswith((".pyc", ".pyo")) or (
                    root.endswith(".dist-info") and f in ("RECORD", "direct_url.json")
                ):
                    os.remove(path)
    if only is not None:
        return  # pyvenv.cfg comes scrubbed from the base venv
    cfg = os.path.join(venv, "pyvenv.cfg")
    with open(cfg) as fh:
        lines = [line for line in fh if not line.startswith("command")]
    with open(cfg, "w") as fh:
        fh.writelines(lines)


def _rename_or_remove_spaced(directory: str, name: str) -> str | None:
    """Give the file `name` (it has a space) in `directory` a space-free name, and point the
    modules of `directory` that name it in a string literal at that name; remove it if none
    does. Returns the new name, or None when removed."""
    path = os.path.join(directory, name)
    quoted = [q + name + q for q in ("'", '"')]
    readers = []
    for entry in sorted(os.listdir(directory)):
        if entry.endswith(".py"):
            with open(
                os.path.join(directory, entry), encoding="utf-8", errors="surrogateescape"
            ) as fh:
                source = fh.read()
            if any(q in source for q in quoted):
                readers.append((entry, source))
    if not readers:
        os.remove(path)
        return None
    new_name = name.replace(" ", "_")
    new_path = os.path.join(directory, new_name)
    if os.path.lexists(new_path):
        raise SystemExit(f"scrub_venv: cannot rename {path!r}: {new_name!r} exists beside it")
    os.rename(path, new_path)
    for entry, source in readers:
        for q in ("'", '"'):
            source = source.replace(q + name + q, q + new_name + q)
        # A new file, not a write through: a layer's files may be hard links into its base.
        tmp = os.path.join(directory, entry + ".scrub-tmp")
        with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(source)
        shutil.copymode(os.path.join(directory, entry), tmp)
        os.replace(tmp, os.path.join(directory, entry))
    return new_name


def _site_packages(venv: str) -> list[str]:
    return glob.glob(os.path.join(os.path.abspath(venv), "lib", "python3*", "site-packages"))


def compile_bytecode(venv: str, only: list[str] | None = None) -> bool:
    """Write location-free, hash-checked bytecode for everything in site-packages (or for
    the entries `only` names)."""
    venv = os.path.abspath(venv)  # compile_dir strips `stripdir` from the paths it walks
    ok = True
    for site_packages in _site_packages(venv):
        for path in (
            [site_packages] if only is None else [os.path.join(site_packages, e) for e in only]
        ):
            if os.path.isdir(path):
                ok &= compileall.compile_dir(
                    path,
                    quiet=2,
                    stripdir=venv,
                    invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
                    # One process a core: a whole venv is about 28 s of one core, on the path
                    # of every first build (each file's bytecode is its own, so the same).
                    workers=0,
                )
            elif path.endswith(".py") and os.path.isfile(path):
                ok &= compileall.compile_file(
                    path,
                    quiet=2,
                    stripdir=venv,
                    invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
                )
    return ok


if __name__ == "__main__":
    # scrub_venv.py VENV [ENTRY ...]: the whole venv, or a layer's new top-level entries.
    _only = sys.argv[2:] or None
    scrub(sys.argv[1], _only)
    # Some packages ship files that are not valid for this Python (templates, py2 leftovers):
    # they stay without bytecode, as before; nothing else depends on the result.
    compile_bytecode(sys.argv[1], _only)
