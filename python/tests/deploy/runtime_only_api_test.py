"""What a runtime-only process (TVM_USE_RUNTIME_LIB=1) may and may not call.

The runtime-only `import tvm` loads no compiler library and runs exported artefacts
(runtime_only_test.py). The compiler's Python API is still importable by name, so a deployed
program that reaches for it must be told the compiler is absent; TVM raises an AttributeError
from deep inside instead (listed deviations).
"""

import importlib

import pytest
import tvm

from tvm_conformance import deploy, deviations, observed, targets

pytestmark = pytest.mark.usefixtures("runtime_only")


def test_import_tvm_loads_no_compiler_library() -> None:
    assert deploy.compiler_libraries_mapped() == []
    assert "libtvm_runtime.so" in deploy.mapped_libraries()
    assert not targets.compiler_loaded()


def test_runtime_api_is_available() -> None:
    tensor = tvm.runtime.tensor([1.0, 2.0])

    assert tensor.numpy().tolist() == [1.0, 2.0]
    assert callable(tvm.runtime.load_module)
    assert tvm.runtime.enabled("cpu")


@deviations.xfail("deploy-relax-import-unclear")
def test_relax_import_says_the_compiler_is_absent() -> None:
    with (
        observed.compiler_absence_unclear("RegisterOpAttr"),
        pytest.raises((ImportError, RuntimeError), match="(?i)compiler|runtime.only"),
    ):
        importlib.import_module("tvm.relax")


@deviations.xfail("deploy-compile-unclear")
def test_compile_says_the_compiler_is_absent() -> None:
    with (
        observed.compiler_absence_unclear("IRModule"),
        pytest.raises((ImportError, RuntimeError), match="(?i)compiler|runtime.only"),
    ):
        tvm.compile(tvm.IRModule(), target="llvm")


def test_compiler_still_absent_after_reaching_for_it() -> None:
    # What the compiler would answer is missing, and asking does not load it.
    with pytest.raises(AttributeError, match="'IRModule'"):
        tvm.IRModule()
    with pytest.raises(AttributeError, match="'Target'"):
        tvm.target.Target("llvm")

    assert deploy.compiler_libraries_mapped() == []
