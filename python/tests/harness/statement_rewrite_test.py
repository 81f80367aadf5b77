"""tvm_conformance.statement_rewrite: a method runs on past a checked statement's accepted
failure, stops at any other, leaves out what it is told to, and reports what started.

The unittest classes below are the methods rewritten (their source is read from this file);
`__test__ = False` keeps pytest from collecting them as tests of their own.
"""

from __future__ import annotations

import unittest

import pytest

from tvm_conformance import statement_rewrite
from tvm_conformance.statement_rewrite import Patch, Run

HERE = "statement_rewrite_test"


class Refused(Exception):
    """The failure a checked statement is recorded with."""


def refuse(value: object) -> None:
    raise Refused(f"refused {value!r}")


class Base(unittest.TestCase):
    __test__ = False
    log: list[str] = []

    def setUp(self) -> None:
        self.log.append("setUp")

    def tearDown(self) -> None:
        self.log.append("tearDown")

    def test_steps(self) -> None:
        items = []
        refuse(1)
        items.append("after")
        for value in (2, 3):
            refuse(value)
        self.log.append(f"items={items}")

    def test_inherited(self) -> None:
        refuse("base")
        self.log.append("base done")


class Derived(Base):
    __test__ = False

    def test_inherited(self) -> None:
        super().test_inherited()
        Base.test_inherited(self)
        self.log.append("derived done")

    def test_private_and_nested_names(self) -> None:
        self.__private = 1  # mangled to _Derived__private, as in the class

        class Bad:
            pass

        self.log.append(f"{self._Derived__private} {Bad.__qualname__}")


def _run(name: str, patches: list[Patch], accept: bool = True) -> tuple[Run, list[BaseException]]:
    Base.log = []
    run = Run(patches, lambda patch, error: accept and isinstance(error, Refused))
    case = Derived(name)
    return run, run.run(case)


def test_normalize_ignores_layout_and_comments() -> None:
    assert statement_rewrite.normalize("x = f( 1,\n  2 )  # why") == "x = f(1, 2)"
    with pytest.raises(ValueError):
        statement_rewrite.normalize("a = 1\nb = 2")


def test_statements_walk_every_depth_in_source_order() -> None:
    assert statement_rewrite.statements(Base.test_steps) == [
        "items = []",
        "refuse(1)",
        "items.append('after')",
        "for value in (2, 3):\n    refuse(value)",
        "refuse(value)",
        "self.log.append(f'items={items}')",
    ]
    assert statement_rewrite.function_id(Base.test_steps) == f"{HERE}.Base.test_steps"


def test_an_accepted_failure_goes_on_and_each_run_is_recorded() -> None:
    patches = [
        Patch(f"{HERE}.Base.test_steps", "refuse(1)", "one", instead="items.append('instead')"),
        Patch(f"{HERE}.Base.test_steps", "refuse(value)", "loop"),
    ]
    run, errors = _run("test_steps", patches)
    assert errors == []
    assert Base.log == ["setUp", "items=['instead', 'after']", "tearDown"]
    assert [type(e) for e in run.outcomes["one"]] == [Refused]
    assert [str(e) for e in run.outcomes["loop"]] == ["refused 2", "refused 3"]
    assert run.started[f"{HERE}.Base.test_steps"] == set(range(6))


def test_another_failure_stops_the_method_at_that_statement() -> None:
    run, errors = _run("test_steps", [Patch(f"{HERE}.Base.test_steps", "refuse(1)", "one")], False)
    assert [str(e) for e in errors] == ["refused 1"]
    assert Base.log == ["setUp", "tearDown"]
    assert run.started[f"{HERE}.Base.test_steps"] == {0, 1}


def test_a_statement_that_passes_skips_its_instead() -> None:
    patch = Patch(f"{HERE}.Base.test_steps", "items = []", "init", instead="items = ['no']")
    loop = Patch(f"{HERE}.Base.test_steps", "for value in (2, 3):\n    refuse(value)", "loop")
    run, errors = _run("test_steps", [patch, loop, Patch(patch.where, "refuse(1)", "one")])
    assert errors == []
    assert run.outcomes["init"] == [None]
    assert Base.log == ["setUp", "items=['after']", "tearDown"]


def test_a_left_out_statement_does_not_start_and_its_instead_runs() -> None:
    where = f"{HERE}.Base.test_steps"
    patches = [
        Patch(where, "refuse(1)", "out", run=False, instead="items.append('in its place')"),
        Patch(where, "for value in (2, 3):\n    refuse(value)", "loop out", run=False),
    ]
    run, errors = _run("test_steps", patches)
    assert errors == []
    assert Base.log == ["setUp", "items=['in its place', 'after']", "tearDown"]
    assert run.started[where] == {0, 2, 5}
    assert "out" not in run.outcomes


def test_inherited_methods_run_rewritten_through_super_and_the_class() -> None:
    patch = Patch(f"{HERE}.Base.test_inherited", "refuse('base')", "base")
    run, errors = _run("test_inherited", [patch])
    assert errors == []
    assert Base.log == ["setUp", "base done", "base done", "derived done", "tearDown"]
    assert len(run.outcomes["base"]) == 2
    assert statement_rewrite.called_test_methods(Derived, Derived.test_inherited) == [
        Base.test_inherited,
        Base.test_inherited,
    ]


def test_private_names_and_nested_class_names_are_kept() -> None:
    _, errors = _run("test_private_and_nested_names", [])
    assert errors == []
    assert Base.log[1] == "1 Derived.test_private_and_nested_names.<locals>.Bad"


def test_patch_keys_must_differ() -> None:
    with pytest.raises(ValueError, match="repeat"):
        Run([Patch("a.B.c", "x = 1", "k"), Patch("a.B.c", "y = 1", "k")])
