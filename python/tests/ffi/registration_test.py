"""Registration through TVM's own helpers, in the forms users write.

`tvm_ffi.register_global_func` (decorator and call, a second registration of a name raises
unless `override=True`), `list_global_func_names` (lists every registered name), and
`tvm_ffi.register_error` with an explicit kind name, called inside a function (the kind an
error carries across the FFI is the registered name, not the class name).
"""

import uuid

import pytest
import tvm_ffi


def _name(prefix: str) -> str:
    return f"conformance.test.{prefix}_{uuid.uuid4().hex[:8]}"


def test_second_registration_raises_unless_override() -> None:
    name = _name("twice")
    tvm_ffi.register_global_func(name, lambda: 1)
    with pytest.raises(RuntimeError, match="already registered"):
        tvm_ffi.register_global_func(name, lambda: 2)
    assert tvm_ffi.get_global_func(name)() == 1
    tvm_ffi.register_global_func(name, lambda: 3, override=True)
    assert tvm_ffi.get_global_func(name)() == 3


def test_decorator_registers_under_the_given_name() -> None:
    name = _name("decorated")

    @tvm_ffi.register_global_func(name)
    def triple(x: int) -> int:
        return 3 * x

    assert tvm_ffi.get_global_func(name)(14) == 42
    assert triple(2) == 6


def test_list_global_func_names_lists_every_registered_name() -> None:
    before = set(tvm_ffi.registry.list_global_func_names())
    names = [_name("listed") for _ in range(3)]
    for name in names:
        tvm_ffi.register_global_func(name, lambda: None)
    after = tvm_ffi.registry.list_global_func_names()
    assert len(after) == len(set(after))
    assert set(after) == before | set(names)


def test_error_registered_with_an_explicit_name_carries_that_kind() -> None:
    kind = _name("Kind")

    def register_inside_a_function() -> type:
        class LocalError(ValueError):
            """Registered under `kind`, not under its class name."""

        return tvm_ffi.register_error(kind, LocalError)

    local_error = register_inside_a_function()
    converted = tvm_ffi.convert(local_error("boom"))
    assert converted.kind == kind
    assert "boom" in converted.message
    back = converted.py_error()
    assert type(back) is local_error and "boom" in str(back)
