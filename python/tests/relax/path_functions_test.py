"""Every path parameter of tvm.runtime, tvm.relax and tvm.contrib, in every path form.

The parameters are found, not listed: ``path_forms.discover`` walks the public modules of
tvm.runtime, tvm.relax and tvm.contrib (their public submodules that import; one that needs an
optional package is named in :data:`UNIMPORTABLE` with the package) for every public function
and method (inherited ones included, named by the class that defines them) with a parameter
whose name says it is a path (``path_forms.PATH_WORDS``: path, file_name, filepath, cache_dir,
work_dir, relpath, files, ... ; ``path_to_underline`` / ``path_to_annotate`` are ObjectPaths
into printed IR). Each found ``<function>(<parameter>)`` is driven here (:data:`DRIVERS`) or
named in :data:`NOT_DRIVEN` with the reason, so a path parameter a later TVM adds fails
``test_every_path_parameter_is_driven_or_recorded`` until it is classified.

Each driven parameter gets every form of ``path_forms.FORMS`` in a fresh temporary working
directory (absolute, relative, ``./``, a subdirectory, ``pathlib.Path``, and forms outside the
working directory: a sibling directory, ``..``, a symlinked directory, names with spaces and
non-ASCII letters). A writer must create the file ``open(path, "w")`` would (same inode as
``os.path.realpath(path)``) and nothing else; a directory writer only files inside the
directory the path resolves to. A reader is given the file, written by its companion at the
resolved place, and must read it from there and write nothing. A form a function refuses is a
recorded deviation bound to that parameter and form (:data:`REFUSED`), never a skip.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import tvm
from tvm import relax
from tvm.contrib import tvmjs
from tvm.relax.frontend.nn.extern import ObjectModule, SourceModule

from tvm_conformance import deviations, observed, path_forms, relax_vm
from tvm_conformance.observed import PathLikeRefused
from tvm_conformance.path_forms import FORMS, expect_written, expect_written_under, files

X = np.array([1.0, -2.0, 3.5], "float32")
PARAMS = {"w": X, "b": np.arange(4, dtype="int64")}

# Submodules the walk cannot import here: the optional package each needs.
UNIMPORTABLE = {
    "tvm.relax.frontend.onnx": "onnx",
    "tvm.relax.frontend.stablehlo": "jaxlib",
    "tvm.contrib.hexagon.generate_take_op": "scipy",
    "tvm.contrib.hexagon.hexagon_unary_ops": "scipy",
}

_CUTLASS = "compiles CUTLASS kernels or profilers with nvcc and runs them on a CUDA GPU"
_HEXAGON = "needs the Hexagon SDK toolchain (HEXAGON_TOOLCHAIN)"
_TUNING = "a MetaSchedule work_dir: a database directory that only tuning (minutes) writes"
NOT_DRIVEN = {
    "tvm.contrib.coreml_runtime.create(compiled_model_path)": "needs TVM's CoreML runtime "
    "(macOS; tvm.coreml_runtime.create is not in this wheel)",
    "tvm.contrib.cutlass.build.finalize_modules(lib_path)": _CUTLASS,
    "tvm.contrib.cutlass.build.finalize_modules(tmp_dir)": _CUTLASS,
    "tvm.contrib.cutlass.build.tune_cutlass_kernels(tmp_dir)": _CUTLASS,
    "tvm.contrib.cutlass.gen_conv2d.CutlassConv2DProfiler.__init__(binary_path)": _CUTLASS,
    "tvm.contrib.cutlass.gen_conv2d.CutlassConv2DProfiler.__init__(cutlass_path)": _CUTLASS,
    "tvm.contrib.cutlass.gen_gemm.CutlassGemmProfiler.__init__(binary_path)": _CUTLASS,
    "tvm.contrib.cutlass.gen_gemm.CutlassGemmProfiler.__init__(cutlass_path)": _CUTLASS,
    "tvm.contrib.cutlass.gen_tensor_op.ProfilerEngine.__init__(cutlass_path)": _CUTLASS,
    "tvm.contrib.download.download_testdata(relpath)": "relpath is relative to TVM's test-data "
    "cache (~/.tvm_test_data), not the working directory, and the file lands in $HOME",
    "tvm.contrib.hexagon.tools.ContainerSession.copy_from(container_file_path)": "copies out "
    "of a Hexagon SDK docker container",
    "tvm.contrib.hexagon.tools.ContainerSession.copy_from(host_file_path)": "copies out of a "
    "Hexagon SDK docker container",
    "tvm.contrib.hexagon.tools.ContainerSession.copy_to(host_file_path)": "copies into a "
    "Hexagon SDK docker container",
    "tvm.contrib.hexagon.tools.create_aot_shared(files)": _HEXAGON,
    "tvm.contrib.hexagon.tools.export_module(out_dir)": _HEXAGON,
    "tvm.contrib.hexagon.tools.pack_imports(workspace_dir)": _HEXAGON,
    "tvm.contrib.tvmjs.TensorCacheShardingManager.__init__(cache_dir)": "the writer behind "
    "dump_tensor_cache, which passes it the cache_dir driven here",
    "tvm.contrib.tvmjs.export_runtime(runtime_dir)": "needs the tvmjs web runtime build "
    "(tvmjs.bundle.js, wasm), which the wheel does not ship",
    "tvm.relax.pipeline.static_shape_tuning_pipeline(work_dir)": _TUNING,
    "tvm.relax.transform.transform.MetaScheduleApplyDatabase(work_dir)": _TUNING,
    "tvm.relax.transform.transform.MetaScheduleTuneIRMod(work_dir)": _TUNING,
    "tvm.relax.transform.transform.MetaScheduleTuneTIR(work_dir)": _TUNING,
    "tvm.runtime.disco.session.Session.load_vm_module(path)": "needs a disco Session, and "
    "this wheel has no disco runtime (disco._ffi_api has no SessionThreaded)",
}


@pytest.fixture(scope="module")
def executable() -> relax.VMExecutable:
    return relax.build(relax_vm.doubling_module(), "llvm")


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp/work, the working directory, in the tree of path_forms.make_tree."""
    work = path_forms.make_tree(tmp_path)
    monkeypatch.chdir(work)
    return work


Driver = Callable[
    [str | os.PathLike, Path, relax.VMExecutable, contextlib.AbstractContextManager[None]], None
]
DRIVERS: dict[str, tuple[str, Driver]] = {}


def drives(parameter: str, name: str) -> Callable[[Driver], Driver]:
    """Register a driver of ``parameter`` (``<module>.<qualname>(<param>)``) for the file or
    directory ``name``. It calls the function once, inside the given context manager."""

    def register(driver: Driver) -> Driver:
        DRIVERS[parameter] = (name, driver)
        return driver

    return register


def _params() -> dict[str, tvm.runtime.Tensor]:
    return {key: tvm.runtime.tensor(value) for key, value in PARAMS.items()}


def _read(path: str | os.PathLike, cwd: Path, call: Callable[[], object]) -> object:
    """A reader's call: it wrote nothing in the tree."""
    before = files(cwd.parent)
    result = call()
    assert files(cwd.parent) == before, f"reading {path!r} wrote {files(cwd.parent) - before}"
    return result


@drives("tvm.runtime.executable.Executable.export_library(file_name)", "lib.so")
def _export_executable(path, cwd, executable, call):
    before = files(cwd.parent)
    with call:
        executable.export_library(path)
    expect_written(path, cwd, before)


@drives("tvm.runtime.module.Module.export_library(file_name)", "lib.so")
def _export_module(path, cwd, executable, call):
    before = files(cwd.parent)
    with call:
        executable.mod.export_library(path)
    expect_written(path, cwd, before)


def _workspace(path, cwd, export) -> None:
    """export_library's intermediate object files go into the workspace directory."""
    path_forms.resolved(path).mkdir()
    library = cwd.parent / "lib.so"
    before = files(cwd.parent)
    export(library, path)
    gained = files(cwd.parent) - before
    assert library in gained
    assert {"lib0.o"} <= expect_written_under(path, cwd, before | {library})


@drives("tvm.runtime.executable.Executable.export_library(workspace_dir)", "ws")
def _workspace_executable(path, cwd, executable, call):
    def export(library, workspace):
        with call:
            executable.export_library(os.fspath(library), workspace_dir=workspace)

    _workspace(path, cwd, export)


@drives("tvm.runtime.module.Module.export_library(workspace_dir)", "ws")
def _workspace_module(path, cwd, executable, call):
    def export(library, workspace):
        with call:
            executable.mod.export_library(os.fspath(library), workspace_dir=workspace)

    _workspace(path, cwd, export)


@drives("tvm_ffi.module.Module.write_to_file(file_name)", "lib.o")
def _write_to_file(path, cwd, executable, call):
    before = files(cwd.parent)
    with call:
        executable.mod.imports[0].write_to_file(path)
    expect_written(path, cwd, before)


@drives("tvm.runtime.module.load_module(path)", "lib.so")
def _load_module(path, cwd, executable, call):
    executable.export_library(os.fspath(path_forms.resolved(path)))
    with call:
        module = _read(path, cwd, lambda: tvm.runtime.load_module(path))
    vm = relax.VirtualMachine(module, tvm.cpu())
    np.testing.assert_array_equal(vm["main"](tvm.runtime.tensor(X)).numpy(), X + X)


@drives("tvm.runtime.module.load_static_library(path)", "lib.o")
def _load_static_library(path, cwd, executable, call):
    executable.mod.imports[0].write_to_file(os.fspath(path_forms.resolved(path)))
    with call:
        module = _read(path, cwd, lambda: tvm.runtime.load_static_library(path, ["main"]))
    assert module.kind == "static_library"


@drives("tvm.runtime.params.save_param_dict_to_file(path)", "params.bin")
def _save_params(path, cwd, executable, call):
    before = files(cwd.parent)
    with call:
        tvm.runtime.save_param_dict_to_file(_params(), path)
    expect_written(path, cwd, before)
    back = tvm.runtime.load_param_dict_from_file(os.fspath(path_forms.resolved(path)))
    assert {k: v.numpy().tolist() for k, v in back.items()} == {
        k: v.tolist() for k, v in PARAMS.items()
    }


@drives("tvm.runtime.params.load_param_dict_from_file(path)", "params.bin")
def _load_params(path, cwd, executable, call):
    tvm.runtime.save_param_dict_to_file(_params(), os.fspath(path_forms.resolved(path)))
    with call:
        back = _read(path, cwd, lambda: tvm.runtime.load_param_dict_from_file(path))
    assert {k: v.numpy().tolist() for k, v in back.items()} == {
        k: v.tolist() for k, v in PARAMS.items()
    }


@drives("tvm.contrib.download.download(path)", "data.bin")
def _download(path, cwd, executable, call):
    source = cwd.parent.parent / "source.bin"  # outside the tree: a file:// URL, no network
    source.write_bytes(b"\x00tvm\xff")
    before = files(cwd.parent)
    path_forms.isolate_test_data()  # before the import: it creates TVM's test-data cache
    download = importlib.import_module("tvm.contrib.download")
    with call:
        download.download(source.as_uri(), path)
    expect_written(path, cwd, before)
    assert path_forms.resolved(path).read_bytes() == b"\x00tvm\xff"


@drives("tvm.contrib.tvmjs.dump_tensor_cache(cache_dir)", "cache")
def _dump_tensor_cache(path, cwd, executable, call):
    before = files(cwd.parent)
    with call:
        tvmjs.dump_tensor_cache(_params(), path, show_progress=False)
    assert "tensor-cache.json" in expect_written_under(path, cwd, before)


@drives("tvm.contrib.tvmjs.load_tensor_cache(cachepath)", "cache")
def _load_tensor_cache(path, cwd, executable, call):
    tvmjs.dump_tensor_cache(_params(), os.fspath(path_forms.resolved(path)), show_progress=False)
    with call:
        back, _ = _read(path, cwd, lambda: tvmjs.load_tensor_cache(path, tvm.cpu()))
    assert {k: v.numpy().tolist() for k, v in back.items()} == {
        k: v.tolist() for k, v in PARAMS.items()
    }


@drives("tvm.relax.frontend.nn.extern.ObjectModule.__init__(filepath)", "ext.o")
def _object_module(path, cwd, executable, call):
    path_forms.resolved(path).write_bytes(b"\x7fELF")
    with call:
        module = _read(path, cwd, lambda: ObjectModule({"f": None}, path))
    assert os.stat(module.filepath).st_ino == os.stat(path_forms.resolved(path)).st_ino


@drives("tvm.relax.frontend.nn.extern.SourceModule.compile(output_path)", "ext.o")
def _source_module_compile(path, cwd, executable, call):
    module = SourceModule({"f": None}, 'extern "C" int f() { return 1; }', "cpp")
    before = files(cwd.parent)
    with call:
        module.compile(path)
    expect_written(path, cwd, before)


# Forms a function refuses: (parameter, form) -> (deviation, exception class, full message).
_SAVE_REFUSED = (
    "runtime-param-file-pathlib-refused",
    TypeError,
    r"Mismatched type on argument #1 when calling: `runtime\.SaveParamsToFile\(0: "
    r"Map<str, ffi\.Tensor>, 1: str\) -> void`\. Expected `str` but got `ffi\.OpaquePyObject`",
)
_LOAD_REFUSED = (
    "runtime-param-file-pathlib-refused",
    TypeError,
    r"Mismatched type on argument #0 when calling: `runtime\.LoadParamsFromFile\(0: str\) -> "
    r"Map<str, ffi\.Tensor>`\. Expected `str` but got `ffi\.OpaquePyObject`",
)
_WRITE_TO_FILE_REFUSED = (
    "ffi-module-write-to-file-pathlib-refused",
    TypeError,
    r"Mismatched type on argument #1 when calling: `ffi\.ModuleWriteToFile\(0: ffi\.Module, "
    r"1: str, 2: str\) -> void`\. Expected `str` but got `ffi\.OpaquePyObject`",
)
_STATIC_LIBRARY_REFUSED = (
    "runtime-load-static-library-pathlib-refused",
    TypeError,
    r"Mismatched type on argument #0 when calling: `runtime\.ModuleLoadStaticLibrary\(0: "
    r"std::string, 1: Array<str>\) -> ffi\.Module`\. Expected `std::string` but got "
    r"`ffi\.OpaquePyObject`",
)
_TENSOR_CACHE_REFUSED = (
    "contrib-tvmjs-load-tensor-cache-pathlib-refused",
    AttributeError,
    r"'PosixPath' object has no attribute 'endswith'",
)
_PATHLIB_REFUSED = {
    "tvm.runtime.params.save_param_dict_to_file(path)": _SAVE_REFUSED,
    "tvm.runtime.params.load_param_dict_from_file(path)": _LOAD_REFUSED,
    "tvm_ffi.module.Module.write_to_file(file_name)": _WRITE_TO_FILE_REFUSED,
    "tvm.runtime.module.load_static_library(path)": _STATIC_LIBRARY_REFUSED,
    "tvm.contrib.tvmjs.load_tensor_cache(cachepath)": _TENSOR_CACHE_REFUSED,
}
REFUSED: dict[tuple[str, str], tuple[str, type[BaseException], str]] = {
    (parameter, form): refusal
    for parameter, refusal in _PATHLIB_REFUSED.items()
    for form in path_forms.PATHLIB_FORMS
}


def test_the_walk_skips_only_modules_missing_an_optional_package(discovered) -> None:
    for module, error in discovered["unimportable"].items():
        assert module in UNIMPORTABLE, f"{module} does not import: {error}"
        assert re.search(rf"\b{re.escape(UNIMPORTABLE[module])}\b", error), (module, error)
    assert discovered["modules"] > 100  # the walk did walk


def test_every_path_parameter_is_driven_or_recorded(discovered) -> None:
    found = set(discovered["parameters"])
    assert not set(DRIVERS) & set(NOT_DRIVEN)
    assert found - set(DRIVERS) - set(NOT_DRIVEN) == set(), "path parameters to classify"
    assert set(DRIVERS) | set(NOT_DRIVEN) == found, "classified, no longer found"


@pytest.fixture(scope="module")
def discovered() -> dict[str, object]:
    return path_forms.discover_in_child()


def _case(parameter: str, form: str) -> object:
    if (parameter, form) not in REFUSED:
        return pytest.param(parameter, form, id=f"{parameter}-{form}")
    mark = deviations.xfail(REFUSED[parameter, form][0])
    return pytest.param(parameter, form, id=f"{parameter}-{form}", marks=mark)


@pytest.mark.parametrize(("parameter", "form"), [_case(p, f) for p in DRIVERS for f in FORMS])
def test_path_parameter_in_every_form(
    executable: relax.VMExecutable, cwd: Path, parameter: str, form: str
) -> None:
    name, driver = DRIVERS[parameter]
    path = FORMS[form](name, cwd)
    call: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
    if (parameter, form) in REFUSED:
        _, exc_type, message = REFUSED[parameter, form]
        call = observed.recorded(exc_type, message, PathLikeRefused)
    driver(path, cwd, executable, call)
