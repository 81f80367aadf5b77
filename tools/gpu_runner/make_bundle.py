"""Build step: pack the GPU-runner bundle (one tar.gz) from built artefacts and the venv's TVM.

Run by //tools/gpu_runner:bundle (a `tvm_exported_module` genrule, --config=cuda) as

    make_bundle --top FILE ... --ws FILE ... --wheel FILE ... OUT.tar.gz

(--top: at the top of the bundle; --ws: workspace files, source or built, kept at their
workspace path under `tvm_conformance/`; --wheel: under `wheels/`).

The archive's top directory `gpu_runner/` holds run.sh, the runner, the wheels (tvm-ffi per
CPython, pytest's extra needs on 3.10), `pylib/` (TVM in runtime-only form: its Python package
without libtvm_compiler.so and without the C++ sources, headers and 3rd-party trees only the
compiler uses; pytest and its pure-Python needs) and `tvm_conformance/`, a workspace-shaped tree
of the tests, their artefacts and binaries. Entries are sorted with fixed times and owners, so
the same inputs give the same bytes.
"""

import argparse
import gzip
import importlib.metadata
import importlib.util
import io
import os
import sys
import tarfile
from pathlib import Path

TOP = "gpu_runner"
# Parts of the TVM package only the compiler uses (or nothing at run time).
TVM_DROP_DIRS = {"3rdparty", "include", "src", "web", "lib64", "cmake", "licenses"}
TVM_DROP_FILES = {"libtvm_compiler.so"}
# pytest and what it imports, copied from the build's venv (pure Python).
PYTEST_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py")
PYTEST_MODULES = ("typing_extensions",)
# The bundle's budget (issue 14): the archive must stay small enough to ship to every runner.
MAX_BYTES = 60 * 1024 * 1024


def package_dir(name: str) -> Path | None:
    """The directory (package) or file (module) of an importable name in this interpreter."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return None
    origin = Path(spec.origin)
    return origin.parent if origin.name == "__init__.py" else origin


def tvm_files() -> list[tuple[str, Path]]:
    """(archive path, file) of TVM in runtime-only form."""
    root = package_dir("tvm")
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_dir() or rel.parts[0] in TVM_DROP_DIRS or path.name in TVM_DROP_FILES:
            continue
        if "__pycache__" in rel.parts or path.suffix == ".pyc":
            continue
        out.append((f"pylib/tvm/{rel}", path))
    # Its METADATA, so importlib.metadata knows the TVM version (deviations' `applies`).
    dist = importlib.metadata.distribution("apache-tvm")
    metadata = Path(dist.locate_file(f"{dist._path.name}/METADATA"))
    out.append((f"pylib/{dist._path.name}/METADATA", metadata))
    return out


def pytest_files() -> list[tuple[str, Path]]:
    """(archive path, file) of pytest and its pure-Python needs."""
    out = []
    for name in (*PYTEST_PACKAGES, *PYTEST_MODULES):
        where = package_dir(name)
        if where is None:
            continue
        if where.is_file():
            out.append((f"pylib/{where.name}", where))
            continue
        for path in sorted(where.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                out.append((f"pylib/{name}/{path.relative_to(where)}", path))
    return out


def workspace_path(path: str) -> str:
    """`python/x.py` for a source file, and for a built one (`bazel-out/<cfg>/bin/python/...`)."""
    parts = Path(path).parts
    if parts[0] == "bazel-out" and "bin" in parts:
        parts = parts[parts.index("bin") + 1 :]
    return "/".join(parts)


def add(tar: tarfile.TarFile, name: str, path: Path) -> None:
    """Add one file with fixed metadata (executable bit kept)."""
    info = tarfile.TarInfo(f"{TOP}/{name}")
    data = path.read_bytes()
    info.size = len(data)
    info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
    info.mtime = 0
    info.uname = info.gname = ""
    tar.addfile(info, io.BytesIO(data))


def main() -> None:
    """Parse the inputs and write the archive."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", nargs="*", action="extend", default=[])
    parser.add_argument("--ws", nargs="*", action="extend", default=[])
    parser.add_argument("--wheel", nargs="*", action="extend", default=[])
    argv = sys.argv[1:]
    if not argv or argv[-1].startswith("-"):
        parser.error("the last argument must be the output .tar.gz")
    output = argv.pop()  # last, as the genrule passes it; the lists before take any count
    args = parser.parse_args(argv)
    entries = tvm_files() + pytest_files()
    # The lane venv's record (lane, TVM wheel and sha256): run_bundle.py labels its runs by it.
    record = Path(sys.prefix) / "tvm_conformance_venv.json"
    if record.is_file():
        entries.append((record.name, record))
    entries += [(Path(f).name, Path(f)) for f in args.top]
    entries += [(f"tvm_conformance/{workspace_path(f)}", Path(f)) for f in args.ws]
    entries += [(f"wheels/{Path(w).name}", Path(w)) for w in args.wheel]
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, path in sorted(entries):
            add(tar, name, path)
    with (
        open(output, "wb") as out,
        gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as gz,
    ):
        gz.write(raw.getvalue())
    size = os.path.getsize(output)
    if size > MAX_BYTES:
        sys.exit(f"bundle is {size} bytes, over the {MAX_BYTES}-byte budget")


if __name__ == "__main__":
    main()
