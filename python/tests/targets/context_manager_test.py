"""TVM's scoped context managers: entered, nested, left normally and by an exception.

The managers are found by walking the public modules the conformance rows use (`tvm.target`,
`tvm.transform`, `tvm.runtime`): every class with `__enter__` / `__exit__` and a `current()`
classmethod. Each is entered, nested in itself, and left both ways; `current()` is checked
after each step against the scope that should be innermost. Devices (`tvm.cpu(0)`) are not
context managers in TVM 0.27: checked, so a device scope added later is walked too.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import pytest
import tvm

MODULES = ("tvm.target", "tvm.transform", "tvm.runtime")

# Two distinct instances of each manager, and how to tell them apart through `current()`.
MAKERS: dict[str, tuple[Callable[[], object], Callable[[], object], Callable[[object], object]]] = {
    "tvm.target.Target": (
        lambda: tvm.target.Target("llvm"),
        lambda: tvm.target.Target("c"),
        lambda cur: None if cur is None else str(cur.kind.name),
    ),
    "tvm.transform.PassContext": (
        lambda: tvm.transform.PassContext(opt_level=3),
        lambda: tvm.transform.PassContext(opt_level=1, disabled_pass=["FoldConstant"]),
        lambda cur: (int(cur.opt_level), [str(p) for p in cur.disabled_pass]),
    ),
}


def scoped_managers() -> list[str]:
    """Dotted names of the public classes with __enter__, __exit__ and current()."""
    found = set()
    for module_name in MODULES:
        module = eval(module_name, {"tvm": tvm})  # noqa: S307 (a fixed module name)
        for name, obj in vars(module).items():
            if name.startswith("_") or not inspect.isclass(obj):
                continue
            if all(hasattr(obj, a) for a in ("__enter__", "__exit__", "current")):
                found.add(f"{module_name}.{name}")
    return sorted(found)


class Boom(Exception):
    """Raised inside a scope to leave it by an exception."""


@pytest.mark.parametrize("how", ["normal", "exception"])
@pytest.mark.parametrize("name", sorted(MAKERS))
def test_scope_is_entered_nested_and_popped(name: str, how: str) -> None:
    make_outer, make_inner, read = MAKERS[name]
    cls = eval(name, {"tvm": tvm})  # noqa: S307 (a name from MAKERS)
    before = read(cls.current())
    outer, inner = make_outer(), make_inner()
    with outer as entered:
        assert entered is outer
        assert read(cls.current()) == read(outer)
        try:
            with inner:
                assert read(cls.current()) == read(inner)
                with outer:  # the same object nested again
                    assert read(cls.current()) == read(outer)
                assert read(cls.current()) == read(inner)
                if how == "exception":
                    raise Boom
        except Boom:
            pass
        assert read(cls.current()) == read(outer), f"{name}: inner scope not popped ({how})"
    assert read(cls.current()) == before, f"{name}: outer scope not popped"
    if how == "exception":
        with pytest.raises(Boom):
            with outer:
                raise Boom
        assert read(cls.current()) == before, f"{name}: scope not popped by an exception"


def test_every_scoped_manager_is_driven() -> None:
    """The walk finds the managers MAKERS drives, and nothing it does not."""
    assert scoped_managers() == sorted(MAKERS)


def test_target_current_outside_every_scope() -> None:
    """`Target.current()` with its default (allow_none=True) is None; allow_none=False raises."""
    assert tvm.target.Target.current() is None
    assert tvm.target.Target.current(allow_none=True) is None
    with pytest.raises(RuntimeError, match="Target context required"):
        tvm.target.Target.current(allow_none=False)


def test_a_device_is_not_a_context_manager() -> None:
    """TVM 0.27 has no device scope: `with tvm.cpu(0)` is a TypeError, not a silent no-op."""
    dev = tvm.cpu(0)
    assert not hasattr(dev, "__enter__")
    with pytest.raises(TypeError):
        with dev:  # type: ignore[attr-defined]
            pass
