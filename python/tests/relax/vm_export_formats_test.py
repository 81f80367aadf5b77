"""Export formats of a Relax executable beyond the shared library: a `.tar` archive loaded back
with `tvm.runtime.load_module`, and `Executable.jit()` of a build whose host code is C source
(target "c": the one module that must be compiled before it can run). Values from numpy.
Then the options of `export_library`: `fcompile`, `workspace_dir`, and the keyword arguments it
hands to the compile function (`options`, `cc`), each checked by what it leaves behind."""

import os
import stat
from pathlib import Path

import numpy as np
import pytest
import tvm
from tvm import relax
from tvm.support import cc

from tvm_conformance import relax_vm

X = np.array([1.0, -2.0, 3.5], "float32")


# x + x, the smallest program the VM builds.
Double = relax_vm.doubling_module()


def _run(module: tvm.runtime.Module) -> np.ndarray:
    vm = relax.VirtualMachine(module, tvm.cpu())
    return vm["main"](tvm.runtime.tensor(X)).numpy()


def test_tar_export_loads_and_runs(tmp_path: Path) -> None:
    path = os.fspath(tmp_path / "double.tar")
    relax.build(Double, "llvm").export_library(path)
    np.testing.assert_array_equal(_run(tvm.runtime.load_module(path)), X + X)


def test_jit_of_c_source_host_code_compiles_it_and_runs() -> None:
    executable = relax.build(Double, "c")
    np.testing.assert_array_equal(_run(executable.jit()), X + X)


# A linker option whose effect is visible in the file: the library's DT_SONAME entry.
SONAME = "libconformance_export_probe.so"


def test_export_library_hands_fcompile_its_options_and_workspace(tmp_path: Path) -> None:
    """`fcompile` is called once with the output path, object files written into
    `workspace_dir`, and the other keyword arguments (here `options`); the library it links
    carries the option's effect and runs."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    calls = []

    def fcompile(output: str, objects: list[str], **kwargs: object) -> None:
        calls.append((output, list(objects), dict(kwargs)))
        cc.create_shared(output, objects, **kwargs)

    path = os.fspath(tmp_path / "double.so")
    options = [f"-Wl,-soname,{SONAME}"]
    relax.build(Double, "llvm").export_library(
        path, fcompile=fcompile, workspace_dir=os.fspath(workspace), options=options
    )

    assert len(calls) == 1
    output, objects, kwargs = calls[0]
    assert output == path and kwargs == {"options": options}
    assert objects and all(os.path.dirname(o) == os.fspath(workspace) for o in objects), objects
    assert sorted(os.listdir(workspace)) == sorted(os.path.basename(o) for o in objects)
    assert SONAME.encode() in Path(path).read_bytes()
    np.testing.assert_array_equal(_run(tvm.runtime.load_module(path)), X + X)


def test_export_library_links_with_the_compiler_named_by_cc(tmp_path: Path) -> None:
    """`cc=` reaches the default compile function: the named compiler (a script that logs its
    arguments and runs the default one) links the library, with the `options` given."""
    real = cc.get_cc()
    if real is None:
        pytest.skip("tvm.support.cc finds no C compiler on this platform")
    log = tmp_path / "cc.log"
    wrapper = tmp_path / "logging-cc"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    path = os.fspath(tmp_path / "double.so")

    relax.build(Double, "llvm").export_library(
        path, cc=os.fspath(wrapper), options=[f"-Wl,-soname,{SONAME}"]
    )

    lines = log.read_text().splitlines()
    assert len(lines) == 1 and f"-o {path}" in lines[0] and SONAME in lines[0], lines
    assert SONAME.encode() in Path(path).read_bytes()
    np.testing.assert_array_equal(_run(tvm.runtime.load_module(path)), X + X)
