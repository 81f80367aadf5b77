"""Known crashers of tvm-ffi / TVM, each run in a child process and expected to fail cleanly.

Every test runs a reproducer with ``tvm_conformance.crash_isolation.check_isolated`` and asserts
the clear error a sound FFI would give. Today the child dies (SIGSEGV, or SIGABRT), so each test
is the strict xfail of a listed crash deviation, bound to the signal the registry records
(``raises=crash_isolation.crashed_by(signal)``: a child dying of another signal fails): the
test process itself never dies, and a tvm-ffi that fixes one shows as a strict XPASS naming
the deviation.

Each child announces its steps (``crash_step``) and prints the marker right before the call
that reproduces the crash (``reproducing_call()``): a crash anywhere before it (``import tvm``,
the extension load, ``relax.build``, the valid first call) fails the test naming the step,
instead of counting as the recorded crash.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from tvm_conformance import deviations
from tvm_conformance.crash_isolation import PACKAGE_ROOT, check_isolated, child_env
from tvm_conformance.relax_vm import EXEC_MODES
from tvm_conformance.runfiles import rlocation

# The child loads the extensions itself; this process never calls a crasher.
_LOAD = textwrap.dedent(
    """
    crash_step("import tvm_ffi")
    import tvm_ffi
    crash_step("load the extensions")
    tvm_ffi.load_module({ffi_testing!r})
    tvm_ffi.load_module({hello!r})
    crash_step("set up the call")
    """
)


def _child(body: str) -> str:
    """Source of a child that loads the kit's extensions, then runs `body`."""
    head = _LOAD.format(
        ffi_testing=rlocation("cpp/ext/libffi_testing.so"), hello=rlocation("cpp/ext/libhello.so")
    )
    return head + textwrap.dedent(body)


@deviations.xfail("robust-none-for-function-segfault")
@pytest.mark.parametrize(
    "call",
    [
        "tvm_ffi.get_global_func('callhello')(None)",
        "tvm_ffi.get_global_func('testing.call_n_times')(None, 3)",
        "tvm_ffi.get_global_func('testing.invoke')(None)",
    ],
    ids=["callhello", "call_n_times", "invoke"],
)
def test_none_where_cpp_function_expected_is_type_error(call: str) -> None:
    outcome = check_isolated(
        _child(
            f"""
            try:
                reproducing_call()
                {call}
            except TypeError as err:
                print("TYPE_ERROR", err)
            """
        )
    )
    assert "TYPE_ERROR" in outcome.stdout, outcome.stdout


# TVMScript parsed from a string: the child has no source file for inspect to read. The target
# is llvm (the crash is in the VM's argument handling, not in generated code).
_RELAX_NONE_CALLABLE = """
crash_step("import tvm")
import tvm
from tvm import relax

crash_step("relax.build")
mod = tvm.script.from_source('''
@I.ir_module
class Module:
    @R.function
    def main(callback: R.Callable([], R.Tensor([4], "float32"))):
        result = callback()
        return result
''')
vm = relax.VirtualMachine(relax.build(mod, target="llvm", exec_mode={exec_mode!r}), tvm.cpu())
crash_step("the valid first call")
assert vm["main"](lambda: tvm.runtime.tensor([1.0, 2.0, 3.0, 4.0])).numpy().tolist() == [
    1.0, 2.0, 3.0, 4.0
]
try:
    reproducing_call()
    vm["main"](None)
except Exception as err:
    print("CLEAR_ERROR", type(err).__name__, err)
"""


@deviations.xfail("robust-relax-none-callable-segfault")
@pytest.mark.parametrize("exec_mode", EXEC_MODES)
def test_none_for_relax_callable_parameter_is_error(exec_mode: str) -> None:
    outcome = check_isolated(_RELAX_NONE_CALLABLE.format(exec_mode=exec_mode))
    assert "CLEAR_ERROR" in outcome.stdout, outcome.stdout


@deviations.xfail("robust-deep-callback-recursion-segfault")
def test_deep_python_cpp_recursion_is_recursion_error() -> None:
    outcome = check_isolated(
        _child(
            """
            import sys
            invoke = tvm_ffi.get_global_func("testing.invoke")

            def descend(depth):
                return invoke(descend, depth + 1)

            try:
                reproducing_call()
                descend(0)
            except RecursionError:
                print("RECURSION_ERROR", sys.getrecursionlimit())
            """
        )
    )
    assert "RECURSION_ERROR" in outcome.stdout, outcome.stdout


@deviations.xfail("robust-lone-surrogate-error-segfault")
def test_exception_message_with_lone_surrogate_crosses_cpp() -> None:
    outcome = check_isolated(
        _child(
            """
            def callback():
                raise ValueError("bad byte " + chr(0xD800))

            invoke = tvm_ffi.get_global_func("testing.invoke")
            try:
                reproducing_call()
                invoke(callback)
            except ValueError as err:
                print("VALUE_ERROR", ascii(str(err)))
            """
        )
    )
    assert "VALUE_ERROR" in outcome.stdout, outcome.stdout


@deviations.xfail("robust-self-referential-container-segfault")
@pytest.mark.parametrize(
    ("make", "convert"),
    [
        ("value = []; value.append(value)", "tvm_ffi.get_global_func('testing.any_echo')(value)"),
        ("value = {}; value['self'] = value", "tvm_ffi.get_global_func('testing.any_echo')(value)"),
        ("import tvm; value = []; value.append(value)", "tvm.runtime.convert(value)"),
    ],
    ids=["list-echo", "dict-echo", "list-convert"],
)
def test_self_referential_container_is_error(make: str, convert: str) -> None:
    outcome = check_isolated(
        _child(
            f"""
            {make}
            try:
                reproducing_call()
                {convert}
            except (ValueError, RecursionError, TypeError) as err:
                print("CLEAR_ERROR", type(err).__name__)
            """
        )
    )
    assert "CLEAR_ERROR" in outcome.stdout, outcome.stdout


@deviations.xfail("robust-deep-nesting-segfault")
@pytest.mark.parametrize("wrap", ["value = [value]", "value = {'k': value}"], ids=["list", "dict"])
def test_deeply_nested_container_converts_or_is_error(wrap: str) -> None:
    outcome = check_isolated(
        _child(
            f"""
            value = []
            for _ in range(50_000):
                {wrap}
            echo = tvm_ffi.get_global_func("testing.any_echo")
            try:
                reproducing_call()
                echo(value)
                print("CONVERTED")
            except (ValueError, RecursionError) as err:
                print("CLEAR_ERROR", type(err).__name__)
            """
        )
    )
    assert "CONVERTED" in outcome.stdout or "CLEAR_ERROR" in outcome.stdout, outcome.stdout


@deviations.xfail("robust-duplicate-global-registration-abort")
def test_second_library_with_same_global_names_fails_to_load(tmp_path: Path) -> None:
    # A copy under another name: dlopen maps it again, so its static initialisers register
    # `myadd` and `callhello` a second time.
    copy = tmp_path / "libhello_copy.so"
    copy.write_bytes(Path(rlocation("cpp/ext/libhello.so")).read_bytes())
    outcome = check_isolated(
        _child(
            f"""
            try:
                reproducing_call()
                tvm_ffi.load_module({str(copy)!r})
            except Exception as err:
                print("LOAD_ERROR", type(err).__name__, err)
            """
        )
    )
    assert "LOAD_ERROR" in outcome.stdout, outcome.stdout


def test_isolated_child_imports_this_package_without_pythonpath(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The child finds tvm_conformance where this process did, also where only this process's
    sys.path has it (plain pytest reads pyproject.toml's pythonpath; a child does not)."""
    import tvm_conformance

    monkeypatch.delenv("PYTHONPATH", raising=False)
    outcome = check_isolated("import tvm_conformance\nprint(tvm_conformance.__file__)\n")
    assert Path(outcome.stdout.strip().splitlines()[-1]) == Path(tvm_conformance.__file__)


def test_child_env_puts_the_package_root_first_and_keeps_the_rest() -> None:
    """A child's environment: the base's variables, the extra ones, and PYTHONPATH with the
    package's root first, then the base's or extra's own entries (an empty one dropped)."""
    assert Path(PACKAGE_ROOT, "tvm_conformance", "crash_isolation.py").is_file()
    env = child_env({"KEEP": "1", "PYTHONPATH": "a"}, EXTRA="2")
    assert env == {"KEEP": "1", "EXTRA": "2", "PYTHONPATH": os.pathsep.join((PACKAGE_ROOT, "a"))}
    assert child_env({}, PYTHONPATH="b")["PYTHONPATH"] == os.pathsep.join((PACKAGE_ROOT, "b"))
    assert child_env({"PYTHONPATH": ""})["PYTHONPATH"] == PACKAGE_ROOT
    assert child_env()["PATH"] == os.environ["PATH"]
