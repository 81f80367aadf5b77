"""CPython's own protocol tests (test.seq_tests, test.list_tests, test.mapping_tests) run with
the FFI containers as `type2test`, statement by statement.

Each test method is one case, run once per process through
:mod:`tvm_conformance.statement_rewrite`: it passes when every statement it runs passes. A
statement that deviates is recorded (RECORDED): the method checks it on its own and goes on,
and its own case `<method>::<key>` is the strict xfail of its deviation, which holds only if the
statement failed exactly the recorded way (exception class and message). A statement outside
the collections.abc protocol the container presents is left out with its reason (EXCLUDED);
a method is left out whole only where its reason covers every check in it (EXCLUDED_METHODS).
Statements are named by their source (ast.unparse) inside their function, so one table serves
CPython 3.10 and 3.11, whose test sources differ. The tables are checked both ways: an entry
that names no statement fails, as does a failing statement no entry names. test_statement_figures
prints how many statements run. Skipped, naming why, where the interpreter does not ship the
`test` package.
"""

from __future__ import annotations

import ast
import platform
import re
import unittest
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
import tvm_ffi

from tvm_conformance import deviation_registry, deviations, statement_rewrite

try:
    from test import list_tests, mapping_tests, seq_tests
except ImportError as err:  # a Python built without its test suite
    pytest.skip(f"this interpreter lacks CPython's test package: {err}", allow_module_level=True)

LABEL = "//python/tests/ffi:container_cpython_test"


class DefaultArray(tvm_ffi.Array):
    """Array whose argument defaults to empty, as tuple() does (the tests build `T()`)."""

    def __init__(self, input_list: Any = ()) -> None:
        super().__init__(input_list)


class DefaultMap(tvm_ffi.Map):
    """Map whose argument defaults to empty, as dict() does."""

    def __init__(self, input_dict: Any = None) -> None:
        super().__init__({} if input_dict is None else input_dict)


class MapProtocol(mapping_tests.BasicTestMappingProtocol):
    """The read tests build their mapping by construction: a Map cannot be written to."""

    type2test = DefaultMap
    __test__ = False  # run case by case below, not collected as a TestCase of its own

    def _full_mapping(self, data: dict[Any, Any]) -> Any:
        return self.type2test(data)


ARRAY = "seq_tests.CommonTest-Array"
LIST = "list_tests.CommonTest-List"
MAP = "mapping_tests.BasicTestMappingProtocol-Map"
DICT = "mapping_tests.TestMappingProtocol-Dict"
HASH_DICT = "mapping_tests.TestHashMappingProtocol-Dict"
CLASSES: dict[str, tuple[type[unittest.TestCase], type]] = {
    ARRAY: (seq_tests.CommonTest, DefaultArray),
    LIST: (list_tests.CommonTest, tvm_ffi.List),
    MAP: (MapProtocol, DefaultMap),
    DICT: (mapping_tests.TestMappingProtocol, tvm_ffi.Dict),
    HASH_DICT: (mapping_tests.TestHashMappingProtocol, tvm_ffi.Dict),
}
SEQUENCES = (ARRAY, LIST)
DICTS = (DICT, HASH_DICT)


@dataclass(frozen=True)
class Recorded:
    """A statement that fails the recorded way; the method checks it alone and goes on."""

    groups: tuple[str, ...]  # CLASSES keys whose methods run it
    where: str  # statement_rewrite.function_id of the function that holds it
    statement: str  # its source (compared after ast.unparse)
    # Its case is `<method>::<key>`; `update-` and `eq-dict-` start the keys of the deviations
    # that share test_update, so the registry lists each by its own pattern.
    key: str
    deviation: str
    raises: type[BaseException]
    message: str  # re.fullmatch of str(exception)
    instead: str = ""  # what the statement should have done, so later statements see it
    python: str = ""  # PEP 440 spec of the CPython versions whose sources hold it; "" all

    def patch(self) -> statement_rewrite.Patch:
        """The statement, checked alone."""
        return statement_rewrite.Patch(self.where, self.statement, self.key, True, self.instead)


@dataclass(frozen=True)
class Excluded:
    """A statement outside the protocol the container presents: left out, with the reason."""

    groups: tuple[str, ...]
    where: str
    statement: str
    reason: str
    instead: str = ""  # the part of the statement the reason leaves in (run in its place)
    python: str = ""

    @property
    def key(self) -> str:
        """Its name in a run (never a case of its own)."""
        return f"excluded:{self.where}:{self.statement}"

    def patch(self) -> statement_rewrite.Patch:
        """The statement, left out."""
        return statement_rewrite.Patch(self.where, self.statement, self.key, False, self.instead)


def applies_here(entry: Recorded | Excluded) -> bool:
    """True if this interpreter's test sources hold the entry's statement."""
    return deviation_registry.version_matches(platform.python_version(), entry.python)


# --- whole methods left out: the reason covers every check the method makes -----------------
REPEAT = "uses `*` (repetition), which Sequence does not define"
REPR = "repr text, of plain, self-containing and deeply nested containers: not in the protocol"
WRITE_MAP = "writes to the mapping; tvm_ffi.Map is a read-only Mapping"
DICT_ONLY = "a dict method outside MutableMapping"
EXCLUDED_METHODS: dict[str, str] = {
    f"{ARRAY}-test_imul": REPEAT,
    f"{ARRAY}-test_repeat": REPEAT,
    f"{ARRAY}-test_getitemoverwriteiter": "checks that tuple's iterator ignores a subclass's "
    "__getitem__: a CPython detail; Sequence's own __iter__ mixin uses it",
    f"{LIST}-test_imul": REPEAT + " (`*=` in place)",
    f"{LIST}-test_repeat": REPEAT,
    f"{LIST}-test_copy": "list.copy, outside MutableSequence",
    f"{LIST}-test_sort": "list.sort, outside MutableSequence",
    f"{LIST}-test_repr": REPR,
    f"{LIST}-test_repr_deep": REPR,
    f"{HASH_DICT}-test_repr": REPR,
    f"{HASH_DICT}-test_repr_deep": REPR,
    **{f"{MAP}-{m}": WRITE_MAP for m in ("test_pop", "test_popitem", "test_setdefault")},
    **{f"{MAP}-{m}": WRITE_MAP for m in ("test_update", "test_write")},
    **{f"{group}-test_copy": DICT_ONLY for group in DICTS},
    **{f"{group}-test_fromkeys": DICT_ONLY + " (dict.fromkeys)" for group in DICTS},
}

# --- statements left out ------------------------------------------------------------------
_SEQ = "seq_tests.CommonTest"
_LIST = "list_tests.CommonTest"
_BASIC = "mapping_tests.BasicTestMappingProtocol"
_MAPPING = "mapping_tests.TestMappingProtocol"
_HASH = "mapping_tests.TestHashMappingProtocol"
_ADDMUL_REPEATS = (
    "self.assertEqual(self.type2test(), u2*0)",
    "self.assertEqual(self.type2test(), 0*u2)",
    "self.assertEqual(u2, u2*1)",
    "self.assertEqual(u2, 1*u2)",
    "self.assertEqual(u2+u2, u2*2)",
    "self.assertEqual(u2+u2, 2*u2)",
    "self.assertEqual(u2+u2+u2, u2*3)",
    "self.assertEqual(u2+u2+u2, 3*u2)",
    "self.assertEqual(u3, u3*1)",
    "self.assertIsNot(u3, u3*1)",
)
_BY_VALUE = (
    "a list crosses into the Dict by value (an Array), as tvm_ffi.convert documents: the "
    "stored value does not change with the list setdefault returned"
)
EXCLUDED: tuple[Excluded, ...] = (
    *(Excluded(SEQUENCES, f"{_SEQ}.test_addmul", s, REPEAT) for s in _ADDMUL_REPEATS),
    Excluded(
        SEQUENCES,
        f"{_SEQ}.test_count",
        "a = self.type2test([0, 1, 2])*3",
        REPEAT,
        instead="a = self.type2test([0, 1, 2, 0, 1, 2, 0, 1, 2])",
    ),
    Excluded(
        (LIST,),
        f"{_LIST}.test_setitem",
        "with self.assertRaisesRegex(TypeError, msg):\n    a['a'] = 'python'",
        "list's message text ('list indices must be ...'); the TypeError itself is checked",
        instead="with self.assertRaises(TypeError):\n    a['a'] = 'python'",
    ),
    Excluded(
        (LIST,),
        f"{_LIST}.test_extend",
        "a.extend(CustomIter())",
        "an iterator whose __length_hint__ is sys.maxsize: List.extend materialises it with "
        "list(), which trusts the hint (MemoryError, as list() itself)",
    ),
    Excluded(
        DICTS,
        f"{_MAPPING}.test_constructor",
        "self.assertEqual(self.type2test(x=1, y=2), {'x': 1, 'y': 2})",
        "dict(**kwargs) construction: the constructor is not part of MutableMapping",
    ),
    Excluded(
        DICTS,
        f"{_MAPPING}.test_popitem",
        "b = a.copy()",
        DICT_ONLY + " (dict.copy)",
        instead="b = self._empty_mapping()\nb.update(a)",  # the copy popitem is checked on
    ),
    *(
        Excluded(DICTS, f"{_MAPPING}.test_setdefault", s, _BY_VALUE)
        for s in (
            "self.assertEqual(d['key'][0], 3)",
            "d.setdefault('key', []).append(4)",
            "self.assertEqual(len(d['key']), 2)",
        )
    ),
)


# --- recorded deviations ------------------------------------------------------------------
def _python_eq(
    groups: tuple[str, ...], where: str, key: str, statement: str, message: str
) -> Recorded:
    """A statement that fails because the container never calls Python's == / hash."""
    return Recorded(
        groups,
        where,
        statement,
        key,
        "ffi-container-python-eq-not-called",
        AssertionError,
        message,
    )


def _update_refused(
    where: str,
    key: str,
    statement: str,
    raises: type[BaseException],
    message: str,
    instead: str = "",
) -> Recorded:
    """A Dict.update form dict.update takes, refused (instead: the same items as a dict)."""
    return Recorded(
        DICTS, where, statement, key, "ffi-dict-update-mapping-only", raises, message, instead
    )


def _no_items(kind: str) -> str:
    """Dict.update reads other.items() whatever ``other`` is."""
    return rf"'{kind}' object has no attribute 'items'"


def _no_kwargs(name: str) -> str:
    return rf"Dict\.update\(\) got an unexpected keyword argument '{name}'"


_NO_ARGUMENT = r"Dict\.update\(\) missing 1 required positional argument: 'other'"


def _eq_dict(where: str, key: str, name: str, expected: str) -> Recorded:
    """`self.assertEqual(<name>, <dict literal>)` fails only because a Dict never equals a
    dict; instead the contents are compared, so a changed content still fails the method."""
    return Recorded(
        DICTS,
        where,
        f"self.assertEqual({name}, {expected})",
        key,
        "ffi-map-eq-dict-false",
        AssertionError,
        r"\{.*\} != " + re.escape(repr(ast.literal_eval(expected))),
        instead=f"self.assertEqual(dict({name}.items()), {expected})",
    )


RECORDED: tuple[Recorded, ...] = (
    _python_eq(
        SEQUENCES,
        f"{_SEQ}.test_contains_fake",
        "contains-always-eq",
        "self.assertIn(ALWAYS_EQ, self.type2test([1]))",
        r".*ALWAYS_EQ.* not found in .*",
    ),
    _python_eq(
        SEQUENCES,
        f"{_SEQ}.test_contains_fake",
        "contains-one-in-always-eq",
        "self.assertIn(1, self.type2test([ALWAYS_EQ]))",
        r"1 not found in .*",
    ),
    _python_eq(
        SEQUENCES,
        f"{_SEQ}.test_contains_fake",
        "contains-never-eq-in-always-eq",
        "self.assertIn(NEVER_EQ, self.type2test([ALWAYS_EQ]))",
        r".*NEVER_EQ.* not found in .*",
    ),
    _python_eq(
        SEQUENCES,
        f"{_SEQ}.test_contains_order",
        "contains-compares-in-order",
        "self.assertRaises(DoNotTestEq, checklast.__contains__, 1)",
        r"DoNotTestEq not raised by __contains__",
    ),
    Recorded(
        groups=(LIST,),
        where=f"{_LIST}.test_exhausted_iterator",
        statement="self.assertEqual(list(empit), [9])",
        key="iterator-sees-appended",
        deviation="ffi-list-iterator-fixed-length",
        raises=AssertionError,
        message=r"Lists differ: \[\] != \[9\].*",
    ),
    _python_eq(
        (HASH_DICT,),
        f"{_HASH}.test_eq",
        "compare-calls-key-eq",
        "self.assertRaises(Exc, lambda: d1==d2)",
        r"Exc not raised by <lambda>",
    ),
    Recorded(
        groups=(HASH_DICT,),
        where=f"{_HASH}.test_pop",
        statement="self.assertRaises(Exc, d.pop, x)",
        key="pop-hashes-key",
        deviation="ffi-container-python-eq-not-called",
        raises=KeyError,
        message=r"<.*BadHash object at .*>",
    ),
    Recorded(
        groups=(HASH_DICT,),
        where=f"{_HASH}.test_getitem",
        statement="self.assertRaises(Exc, d.__getitem__, x)",
        key="getitem-hashes-key",
        deviation="ffi-container-python-eq-not-called",
        raises=KeyError,
        message=r"'key is not in Map'",
    ),
    _python_eq(
        (HASH_DICT,),
        f"{_HASH}.test_setdefault",
        "setdefault-hashes-key",
        "self.assertRaises(Exc, d.setdefault, x, [])",
        r"Exc not raised by setdefault",
    ),
    _eq_dict(f"{_MAPPING}.test_clear", "eq-dict-cleared", "d", "{}"),
    _eq_dict(f"{_MAPPING}.test_getitem", "eq-dict-after-writes", "d", "{'a': 4, 'c': 3}"),
    # BasicTestMappingProtocol.test_update, run by TestMappingProtocol.test_update.
    _update_refused(
        f"{_BASIC}.test_update", "update-nothing", "d.update()", TypeError, _NO_ARGUMENT
    ),
    _update_refused(
        f"{_BASIC}.test_update",
        "update-dict-items",
        "d.update(self.other.items())",
        AttributeError,
        _no_items("dict_items"),
        instead="d.update(dict(self.other.items()))",
    ),
    _update_refused(
        f"{_BASIC}.test_update",
        "update-keys-object",
        "d.update(SimpleUserDict())",
        AttributeError,
        _no_items("SimpleUserDict"),
        instead="d.update(dict(SimpleUserDict()))",
    ),
    # Three FailingUserDict classes (keys() raises; its iterator raises; __getitem__ raises),
    # each checked with this same statement.
    _update_refused(
        f"{_BASIC}.test_update",
        "update-failing-keys-object",
        "self.assertRaises(Exc, d.update, FailingUserDict())",
        AttributeError,
        _no_items("FailingUserDict"),
    ),
    _update_refused(
        f"{_BASIC}.test_update",
        "update-failing-iterable",
        "self.assertRaises(Exc, d.update, badseq())",
        AttributeError,
        _no_items("badseq"),
    ),
    _update_refused(
        f"{_BASIC}.test_update",
        "update-bad-pair",
        "self.assertRaises(ValueError, d.update, [(1, 2, 3)])",
        AttributeError,
        _no_items("list"),
    ),
    # TestMappingProtocol.test_update's own statements.
    _eq_dict(f"{_MAPPING}.test_update", "eq-dict-updated", "d", "{1:1, 2:2, 3:3}"),
    _update_refused(
        f"{_MAPPING}.test_update", "update-nothing-keeps", "d.update()", TypeError, _NO_ARGUMENT
    ),
    _update_refused(
        f"{_MAPPING}.test_update",
        "update-keyword",
        "d.update(x=100)",
        TypeError,
        _no_kwargs("x"),
        instead="d.update({'x': 100})",
    ),
    _update_refused(
        f"{_MAPPING}.test_update",
        "update-keyword-again",
        "d.update(y=20)",
        TypeError,
        _no_kwargs("y"),
        instead="d.update({'y': 20})",
    ),
    _update_refused(
        f"{_MAPPING}.test_update",
        "update-keywords",
        "d.update(x=1, y=2, z=3)",
        TypeError,
        _no_kwargs("x"),
        instead="d.update({'x': 1, 'y': 2, 'z': 3})",
    ),
    _eq_dict(f"{_MAPPING}.test_update", "eq-dict-keywords", "d", '{"x":1, "y":2, "z":3}'),
    _update_refused(
        f"{_MAPPING}.test_update",
        "update-pairs",
        'd.update([("x", 100), ("y", 20)])',
        AttributeError,
        _no_items("list"),
        instead="d.update(dict([('x', 100), ('y', 20)]))",
    ),
    _eq_dict(f"{_MAPPING}.test_update", "eq-dict-pairs", "d", '{"x":100, "y":20}'),
    _update_refused(
        f"{_MAPPING}.test_update",
        "update-pairs-and-keywords",
        'd.update([("x", 100), ("y", 20)], x=1, y=2)',
        TypeError,
        _no_kwargs("x"),
        instead="d.update(dict([('x', 100), ('y', 20)], x=1, y=2))",
    ),
    _eq_dict(f"{_MAPPING}.test_update", "eq-dict-pairs-and-keywords", "d", '{"x":1, "y":2}'),
    _update_refused(
        f"{_MAPPING}.test_update",
        "update-items-view",
        "d.update(self._full_mapping({1:2, 3:4, 5:6}).items())",
        AttributeError,
        _no_items("ItemsView"),
        instead="d.update(dict(self._full_mapping({1: 2, 3: 4, 5: 6}).items()))",
    ),
    _eq_dict(f"{_MAPPING}.test_update", "eq-dict-items-view", "d", "{1:2, 2:4, 3:4, 5:6}"),
    _update_refused(
        f"{_MAPPING}.test_update",
        "update-keys-object-again",
        "d.update(SimpleUserDict())",
        AttributeError,
        _no_items("SimpleUserDict"),
        instead="d.update(dict(SimpleUserDict()))",
    ),
    _update_refused(
        f"{_BASIC}.test_write",
        "update-item-list",
        "p.update(items)",
        AttributeError,
        _no_items("list"),
        instead="p.update(dict(items))",
    ),
)


def _entries(group: str) -> list[Recorded | Excluded]:
    """The entries a group's runs apply on this interpreter."""
    return [e for e in (*RECORDED, *EXCLUDED) if group in e.groups and applies_here(e)]


def _case_class(group: str) -> type[unittest.TestCase]:
    """The group's CPython class with its FFI container as type2test."""
    base, ffi_type = CLASSES[group]
    return type(f"FFI_{base.__name__}", (base,), {"type2test": ffi_type})


CASE_CLASSES = {group: _case_class(group) for group in CLASSES}


def _functions(group: str, method: str) -> list[Any]:
    """The method's function and every test method it calls (their statements run in it)."""
    case_class = CASE_CLASSES[group]
    owner = statement_rewrite.defining_class(case_class, method)
    func = vars(owner)[method]
    return [func, *statement_rewrite.called_test_methods(owner, func)]


def _statement_cases() -> dict[str, tuple[str, Recorded]]:
    """`<method>::<key>` -> (method case id, entry) for each recorded statement a method runs."""
    cases = {}
    for group in CLASSES:
        for method in unittest.TestLoader().getTestCaseNames(CASE_CLASSES[group]):
            name = f"{group}-{method}"
            if name in EXCLUDED_METHODS:
                continue
            fids = {statement_rewrite.function_id(f) for f in _functions(group, method)}
            for entry in _entries(group):
                if isinstance(entry, Recorded) and entry.where in fids:
                    cases[f"{name}::{entry.key}"] = (name, entry)
    return cases


METHODS = {
    f"{group}-{method}": (group, method)
    for group in CLASSES
    for method in unittest.TestLoader().getTestCaseNames(CASE_CLASSES[group])
}
STATEMENTS = _statement_cases()


@dataclass
class MethodRun:
    """One method run: its failures and the rewrite's record (outcomes, statements started)."""

    errors: list[BaseException]
    run: statement_rewrite.Run


def _accepts(entry: Recorded, error: BaseException) -> bool:
    """True if ``error`` is the entry's recorded failure on the installed tvm-ffi."""
    return (
        deviations.applies(entry.deviation)
        and type(error) is entry.raises
        and re.fullmatch(entry.message, str(error), re.DOTALL) is not None
    )


@cache
def run_method(name: str, *, whole: bool = False) -> MethodRun:
    """Run one method once per process. ``whole``: no statement entries, so it stops at its
    first failing statement, as a method ran before statements were recorded (issue 68)."""
    group, method = METHODS[name]
    entries = [] if whole else _entries(group)
    by_key = {entry.key: entry for entry in entries}

    def accept(patch: statement_rewrite.Patch, error: BaseException) -> bool:
        entry = by_key[patch.key]
        return isinstance(entry, Recorded) and _accepts(entry, error)

    run = statement_rewrite.Run([entry.patch() for entry in entries], accept)
    return MethodRun(run.run(CASE_CLASSES[group](method)), run)


@pytest.mark.parametrize("name", list(METHODS))
def test_cpython_protocol_test(name: str) -> None:
    """Every statement the method runs passes (recorded ones are their own cases)."""
    if name in EXCLUDED_METHODS:
        pytest.skip(f"excluded: {EXCLUDED_METHODS[name]}")
    errors = run_method(name).errors
    if errors:
        error = errors[0]
        raise AssertionError(f"{name} failed: {type(error).__name__}: {error}") from error


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=deviations.xfail(entry.deviation))
        for name, (_, entry) in STATEMENTS.items()
    ],
)
def test_cpython_recorded_statement(name: str) -> None:
    """The statement failed exactly the recorded way each time it ran (xfail), or passed every
    time (a strict XPASS: upstream fixed it); any other failure fails the case."""
    method, entry = STATEMENTS[name]
    outcomes = run_method(method).run.outcomes.get(entry.key)
    if not outcomes:
        errors = run_method(method).errors
        raise AssertionError(f"{name}: {entry.statement!r} never ran; the method: {errors}")
    failures = [error for error in outcomes if error is not None]
    for error in failures:
        if not _accepts(entry, error):
            raise error
    if failures:
        error = failures[0]
        raise deviations.raises_of(deviation_registry.by_id()[entry.deviation])(
            f"{type(error).__name__}: {error}"
        )


def test_tables_name_statements_that_exist_and_every_failure() -> None:
    """Both ways: each entry names a statement of its function in this interpreter's sources
    and a method of its groups runs it; no method run here fails at a statement no entry names;
    each recorded statement's case is listed by its deviation in the registry."""
    stale = []
    for entry in (*RECORDED, *EXCLUDED):
        if not applies_here(entry):
            continue
        module, _, qualname = entry.where.partition(".")
        owner, _, method = qualname.partition(".")
        # `where` starts with the module's last part, imported here under that name.
        func = vars(getattr(globals()[module], owner))[method]
        if statement_rewrite.normalize(entry.statement) not in statement_rewrite.statements(func):
            stale.append(f"{entry.where}: {entry.statement}")
        elif isinstance(entry, Excluded) and not any(
            entry.where in {statement_rewrite.function_id(f) for f in _functions(*METHODS[n])}
            for n in METHODS
            if METHODS[n][0] in entry.groups and n not in EXCLUDED_METHODS
        ):
            stale.append(f"{entry.where}: {entry.statement} (no method runs it)")
    stale += [
        f"{e.where}: {e.key} (no method runs it)"
        for e in RECORDED
        if applies_here(e) and e not in {entry for _, entry in STATEMENTS.values()}
    ]
    assert not stale, "table entries naming no statement:\n" + "\n".join(stale)
    assert set(EXCLUDED_METHODS) <= set(METHODS), sorted(set(EXCLUDED_METHODS) - set(METHODS))
    for group in CLASSES:
        keys = [entry.key for entry in _entries(group)]
        assert len(keys) == len(set(keys)), f"{group}: keys repeat"
    unlisted = [
        f"{name}: {type(error).__name__}: {error}"
        for name in METHODS
        if name not in EXCLUDED_METHODS
        for error in run_method(name).errors
    ]
    assert not unlisted, "failing statements no entry names:\n" + "\n".join(unlisted)
    registry = deviation_registry.by_id()
    not_listed = [
        name
        for name, (_, entry) in STATEMENTS.items()
        if not deviation_registry.lists(
            registry[entry.deviation], LABEL, f"test_cpython_recorded_statement[{name}]"
        )
    ]
    assert not not_listed, f"recorded statements their deviation does not list: {not_listed}"
    cases = [f"test_cpython_recorded_statement[{name}]" for name in STATEMENTS]
    unused = [
        entry
        for dev in registry.values()
        for entry in dev.tests
        if entry.startswith(LABEL + " ")
        and not any(deviation_registry.lists(dev, LABEL, case) for case in cases)
    ]
    assert not unused, f"registry entries naming no recorded statement: {unused}"


def _has_exclusion(name: str) -> bool:
    """True if the method, or a statement it runs, is left out: the methods left out whole
    before issue 68 are exactly these (its statement exclusions were whole methods then)."""
    group, method = METHODS[name]
    fids = {statement_rewrite.function_id(f) for f in _functions(group, method)}
    return name in EXCLUDED_METHODS or any(
        isinstance(e, Excluded) and e.where in fids for e in _entries(group)
    )


def test_statement_figures() -> None:
    """Print how many of CPython's statements run, before issue 68 (a method stops at its first
    failing statement; one with an exclusion runs none) and now. A statement is an ast.stmt
    node of the method or of a test method it calls, at any depth; it ran if it started at
    least once. No method runs fewer statements now."""
    total = before = after = 0
    fewer = []
    for name in METHODS:
        functions = _functions(*METHODS[name])
        fids = [statement_rewrite.function_id(f) for f in functions]
        total += sum(len(statement_rewrite.statements(f)) for f in functions)
        ran_before = (
            0
            if _has_exclusion(name)
            else sum(len(run_method(name, whole=True).run.started.get(f, ())) for f in fids)
        )
        ran_after = (
            0
            if name in EXCLUDED_METHODS
            else sum(len(run_method(name).run.started.get(f, ())) for f in fids)
        )
        before += ran_before
        after += ran_after
        if ran_after < ran_before:
            fewer.append(name)
    print(
        f"CPython {platform.python_version()} protocol tests: {len(METHODS)} methods "
        f"({len(METHODS) - len(EXCLUDED_METHODS)} run), {total} statements; ran before issue "
        f"68: {before}, now: {after}; {len(RECORDED)} recorded statements "
        f"({len(STATEMENTS)} cases), {len(EXCLUDED)} excluded statements, "
        f"{len(EXCLUDED_METHODS)} excluded methods"
    )
    assert not fewer, f"methods that run fewer statements than before: {fewer}"
