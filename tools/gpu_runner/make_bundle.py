"""Build step: pack a GPU-runner bundle (one archive) from built artefacts and the venv's TVM.

Run by the `tvm_test_bundle` rules //tools/gpu_runner:bundle and :lane_bundle as

    make_bundle @PARAMFILE   (--top FILE ... --ws FILE ... --wheel FILE ... --manifest
                              tests.json --compiler|--runtime-only --max-bytes N OUT)

(--top: at the top of the bundle; --ws: workspace files, source or built, kept at their
workspace path under `tvm_conformance/`; --wheel: under `wheels/`; --manifest: the tests and
how to run them, as `tests.json`; --compiler: TVM with libtvm_compiler.so and the pure-Python
packages the tests import, not the runtime-only form). A `.tar.xz` output is packed with xz -9.

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
import lzma
import os
import sys
import tarfile
from pathlib import Path

TOP = "gpu_runner"
# Parts of the TVM package only the compiler uses (or nothing at run time).
TVM_DROP_DIRS = {"3rdparty", "include", "src", "web", "lib64", "cmake", "licenses"}
TVM_DROP_FILES = {"libtvm_compiler.so"}
# With --compiler, libtvm_compiler.so stays (and the rest of the package the compiler uses).
TVM_COMPILER_DROP_DIRS = {"3rdparty", "include", "src", "web", "cmake", "licenses"}
# Python packages of TVM that nothing imports unless asked and no test of a bundle asks for: the
# model importers besides torch's, and CUTLASS's offload (imported lazily by its own pass). In
# the lane bundle they are xz budget (65,000,000 bytes) that the suite's `_cuda` tests need.
TVM_UNUSED_PACKAGES = {
    ("relax", "frontend", "onnx"),
    ("relax", "frontend", "tflite"),
    ("relax", "frontend", "stablehlo"),
    ("contrib", "cutlass"),
}
# pytest and what it imports, copied from the build's venv (pure Python).
PYTEST_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py")
PYTEST_MODULES = ("typing_extensions",)
# tvm_conformance.runfiles resolves data with bazel-runfiles (pure Python): run_bundle.py runs
# each test with runfiles as Bazel does.
RUNFILES_PACKAGES = ("runfiles",)
# With --compiler, of pygments' 500 lexers only those pytest imports (it highlights Python
# source and diffs); the rest is 0.7 MB of the lane bundle's xz budget.
PYGMENTS_LEXERS = {"__init__.py", "_mapping.py", "diff.py", "python.py"}
# xz for the lane bundle: preset 9 with the x86 branch filter (libtvm_compiler.so is 259 MB of
# x86 code: 1.6 MB smaller) and a dictionary that spans more of it. `tar xJf` unpacks it.
XZ_FILTERS = [
    {"id": lzma.FILTER_X86},
    {"id": lzma.FILTER_LZMA2, "preset": 9, "dict_size": 256 * 1024 * 1024},
]
# The bundle's budget (docs/deployment.md): small enough to ship to every runner.
MAX_BYTES = 60 * 1024 * 1024


def package_dir(name: str) -> Path | None:
    """The directory (package) or file (module) of an importable name in this interpreter."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return None
    origin = Path(spec.origin)
    return origin.parent if origin.name == "__init__.py" else origin


def tvm_files(compiler: bool = False) -> list[tuple[str, Path]]:
    """(archive path, file) of TVM in runtime-only form, or with its compiler library."""
    root = package_dir("tvm")
    drop_dirs = TVM_COMPILER_DROP_DIRS if compiler else TVM_DROP_DIRS
    drop_files = set() if compiler else TVM_DROP_FILES
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_dir() or rel.parts[0] in drop_dirs or path.name in drop_files:
            continue
        if any(rel.parts[: len(unused)] == unused for unused in TVM_UNUSED_PACKAGES):
            continue
        if "__pycache__" in rel.parts or path.suffix == ".pyc":
            continue
        out.append((f"pylib/tvm/{rel}", path))
    # Its METADATA, so importlib.metadata knows the TVM version (deviations' `applies`).
    dist = importlib.metadata.distribution("apache-tvm")
    metadata = Path(dist.locate_file(f"{dist._path.name}/METADATA"))
    out.append((f"pylib/{dist._path.name}/METADATA", metadata))
    return out


def metadata_files(names: tuple[str, ...]) -> list[tuple[str, Path]]:
    """(archive path, METADATA) of the distributions holding `names`: pytest's header asks
    importlib.metadata for pluggy's version, as TVM's deviations ask for TVM's."""
    dists = importlib.metadata.packages_distributions()
    out = {}
    for name in names:
        for dist_name in dists.get(name, []):
            dist = importlib.metadata.distribution(dist_name)
            path = Path(dist.locate_file(f"{dist._path.name}/METADATA"))
            if path.is_file():
                out[f"pylib/{dist._path.name}/METADATA"] = path
    return sorted(out.items())


def pytest_files(extra: tuple[str, ...] = ()) -> list[tuple[str, Path]]:
    """(archive path, file) of pytest and its pure-Python needs (and `extra` packages)."""
    out = metadata_files((*PYTEST_PACKAGES, *PYTEST_MODULES, *extra)) if extra else []
    for name in (*PYTEST_PACKAGES, *PYTEST_MODULES, *extra):
        where = package_dir(name)
        if where is None:
            continue
        if where.is_file():
            out.append((f"pylib/{where.name}", where))
            continue
        for path in sorted(where.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            rel = path.relative_to(where)
            if extra and name == "pygments" and rel.parts[0] == "lexers":
                if rel.name not in PYGMENTS_LEXERS:
                    continue
            out.append((f"pylib/{name}/{rel}", path))
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


def expand_param_files(argv: list[str]) -> list[str]:
    """Bazel's `@FILE` arguments (one argument a line) replaced by their lines."""
    out = []
    for arg in argv:
        if arg.startswith("@"):
            out += Path(arg[1:]).read_text(encoding="utf-8").splitlines()
        else:
            out.append(arg)
    return out


def write_archive(output: str, entries: list[tuple[str, Path]]) -> None:
    """A tar of `entries` (sorted, fixed metadata): gzip -9, or xz -9 for `.tar.xz`."""
    names = [name for name, _ in entries]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        sys.exit(f"bundle: packed twice: {', '.join(twice)}")
    if output.endswith(".tar.xz"):
        with lzma.open(output, "wb", format=lzma.FORMAT_XZ, filters=XZ_FILTERS) as xz:
            with tarfile.open(fileobj=xz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for name, path in sorted(entries):
                    add(tar, name, path)
        return
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, path in sorted(entries):
            add(tar, name, path)
    with (
        open(output, "wb") as out,
        gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as gz,
    ):
        gz.write(raw.getvalue())


def main() -> None:
    """Parse the inputs and write the archive."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", nargs="*", action="extend", default=[])
    parser.add_argument("--ws", nargs="*", action="extend", default=[])
    parser.add_argument("--wheel", nargs="*", action="extend", default=[])
    parser.add_argument("--manifest", help="the tests' manifest (tvm_test_bundle), as tests.json")
    parser.add_argument("--compiler", action="store_true", help="TVM with its compiler library")
    parser.add_argument("--runtime-only", dest="compiler", action="store_false")
    parser.add_argument("--max-bytes", type=int, default=MAX_BYTES)
    argv = expand_param_files(sys.argv[1:])
    if not argv or argv[-1].startswith("-"):
        parser.error("the last argument must be the output archive")
    output = argv.pop()  # last, as the genrule passes it; the lists before take any count
    args = parser.parse_args(argv)
    entries = tvm_files(args.compiler) + pytest_files(RUNFILES_PACKAGES)
    # The lane venv's record (lane, TVM wheel and sha256): run_bundle.py labels its runs by it.
    record = Path(sys.prefix) / "tvm_conformance_venv.json"
    if record.is_file():
        entries.append((record.name, record))
    if args.manifest:
        entries.append(("tests.json", Path(args.manifest)))
    entries += [(Path(f).name, Path(f)) for f in args.top]
    entries += [(f"tvm_conformance/{workspace_path(f)}", Path(f)) for f in dict.fromkeys(args.ws)]
    entries += [(f"wheels/{Path(w).name}", Path(w)) for w in args.wheel]
    write_archive(output, entries)
    size = os.path.getsize(output)
    print(f"bundle: {output}: {size} bytes, {len(entries)} files")
    if size > args.max_bytes:
        sys.exit(f"bundle is {size} bytes, over the {args.max_bytes}-byte budget")


if __name__ == "__main__":
    main()
