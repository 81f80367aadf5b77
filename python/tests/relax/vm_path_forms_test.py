"""Path arguments in every form a user writes: absolute, relative, `./`, a subdirectory and
`pathlib.Path` (relative and absolute), and forms that point outside the working directory (a
sibling directory, `..`, a symlinked directory, a directory and file name with spaces or
non-ASCII letters, absolute and as `pathlib.Path`), for each path parameter of
`export_library`, `tvm.runtime.load_module` and the parameter-file functions
(`save_param_dict_to_file`, `load_param_dict_from_file`). The path parameters are found in each
function's signature; the working directory is a fresh temporary one. A written file must be
where the OS resolves the path (`os.path.realpath`, what `open(path, "w")` would create) and
nowhere else: the temporary tree gains exactly that file (the same inode). The forms and the
tree are tvm_conformance.path_forms's; path_functions_test drives every other path parameter
of tvm.runtime, tvm.relax and tvm.contrib (found by a walk of their modules) with them.
"""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path

import numpy as np
import pytest
import tvm
from tvm import relax

from tvm_conformance import deviations, observed, path_forms, relax_vm
from tvm_conformance.observed import PathLikeRefused
from tvm_conformance.path_forms import FORMS, PATHLIB_FORMS, STR_FORMS, expect_written, files

X = np.array([1.0, -2.0, 3.5], "float32")

# Parameter names that take a file path, as TVM 0.27 spells them.
PATH_NAMES = {"path", "file_name", "fname", "filename"}
FUNCTIONS = {
    "export_library": relax.VMExecutable.export_library,
    "load_module": tvm.runtime.load_module,
    "save_param_dict_to_file": tvm.runtime.save_param_dict_to_file,
    "load_param_dict_from_file": tvm.runtime.load_param_dict_from_file,
}


# x + x, the smallest program the VM builds.
Double = relax_vm.doubling_module()


@pytest.fixture(scope="module")
def executable() -> relax.VMExecutable:
    return relax.build(Double, "llvm")


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp/work, the working directory, in the tree of path_forms.make_tree."""
    work = path_forms.make_tree(tmp_path)
    monkeypatch.chdir(work)
    return work


def test_the_path_parameters_are_the_ones_driven() -> None:
    """Every function driven here has exactly one path parameter, found by its name."""
    for name, func in FUNCTIONS.items():
        params = [p for p in inspect.signature(func).parameters if p in PATH_NAMES]
        assert len(params) == 1, (name, params)


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("suffix", ["so", "tar"])
def test_export_library_and_load_module_take_every_path_form(
    executable: relax.VMExecutable, cwd: Path, suffix: str, form: str
) -> None:
    path = FORMS[form](f"lib.{suffix}", cwd)
    before = files(cwd.parent)
    executable.export_library(path)
    expect_written(path, cwd, before)
    module = tvm.runtime.load_module(path)
    vm = relax.VirtualMachine(module, tvm.cpu())
    np.testing.assert_array_equal(vm["main"](tvm.runtime.tensor(X)).numpy(), X + X)


@pytest.mark.parametrize("form", list(FORMS))
def test_load_module_of_a_missing_file_names_it(cwd: Path, form: str) -> None:
    path = FORMS[form]("missing.so", cwd)
    with pytest.raises(ValueError, match=f"cannot find file {re.escape(os.fspath(path))}"):
        tvm.runtime.load_module(path)


def _param_round_trip(path: str | os.PathLike, cwd: Path) -> None:
    params = {"w": tvm.runtime.tensor(X), "b": tvm.runtime.tensor(np.arange(4, dtype="int64"))}
    before = files(cwd.parent)
    tvm.runtime.save_param_dict_to_file(params, path)
    expect_written(path, cwd, before)
    back = tvm.runtime.load_param_dict_from_file(path)
    assert sorted(back) == sorted(params)
    for key, value in params.items():
        assert str(back[key].dtype) == str(value.dtype)
        np.testing.assert_array_equal(back[key].numpy(), value.numpy())


@pytest.mark.parametrize("form", STR_FORMS)
def test_param_dict_file_round_trips_in_every_str_path_form(cwd: Path, form: str) -> None:
    _param_round_trip(FORMS[form]("params.bin", cwd), cwd)


@deviations.xfail("runtime-param-file-pathlib-refused")
@pytest.mark.parametrize("form", PATHLIB_FORMS)
def test_param_dict_file_round_trips_through_a_pathlib_path(cwd: Path, form: str) -> None:
    """A `pathlib.Path` is taken as export_library and load_module take it."""
    path = FORMS[form]("params.bin", cwd)
    message = (
        r"Mismatched type on argument #1 when calling: `runtime\.SaveParamsToFile\(0: "
        r"Map<str, ffi\.Tensor>, 1: str\) -> void`\. Expected `str` but got `ffi\.OpaquePyObject`"
    )
    with observed.recorded(TypeError, message, PathLikeRefused):
        _param_round_trip(path, cwd)
