"""CPython's own protocol tests (test.seq_tests, test.list_tests, test.mapping_tests) run with
the FFI containers as `type2test`.

Each test method is one case. A method that fails is either a recorded deviation (strict
xfail: the case checks the failure is exactly the recorded one, class and message) or excluded
with its reason (it tests something outside the collections.abc protocol the container
presents). The tables are checked both ways: a listed method that passes fails its case.
Skipped, naming why, where the interpreter does not ship the `test` package.
"""

from __future__ import annotations

import re
import unittest
from typing import Any

import pytest
import tvm_ffi

from tvm_conformance import deviation_registry, deviations

try:
    from test import list_tests, mapping_tests, seq_tests
except ImportError as err:  # a Python built without its test suite
    pytest.skip(f"this interpreter lacks CPython's test package: {err}", allow_module_level=True)


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


CLASSES: dict[str, tuple[type[unittest.TestCase], type]] = {
    "seq_tests.CommonTest-Array": (seq_tests.CommonTest, DefaultArray),
    "list_tests.CommonTest-List": (list_tests.CommonTest, tvm_ffi.List),
    "mapping_tests.BasicTestMappingProtocol-Map": (MapProtocol, DefaultMap),
    "mapping_tests.TestMappingProtocol-Dict": (mapping_tests.TestMappingProtocol, tvm_ffi.Dict),
    "mapping_tests.TestHashMappingProtocol-Dict": (
        mapping_tests.TestHashMappingProtocol,
        tvm_ffi.Dict,
    ),
}

REPEAT = (
    "uses `*` (repetition), which Sequence does not define; its other checks are driven by "
    "the state machine (container_protocol_test)"
)
DICT_ONLY = "a dict method outside MutableMapping"
REPR = "repr text of a self-containing or deeply nested container; repr is not part of the protocol"
WRITE_MAP = "writes to the mapping; tvm_ffi.Map is a read-only Mapping"
EXCLUDED: dict[str, str] = {
    "seq_tests.CommonTest-Array-test_addmul": REPEAT,
    "seq_tests.CommonTest-Array-test_count": REPEAT,
    "seq_tests.CommonTest-Array-test_imul": REPEAT,
    "seq_tests.CommonTest-Array-test_repeat": REPEAT,
    "seq_tests.CommonTest-Array-test_getitemoverwriteiter": "checks that tuple's iterator "
    "ignores a subclass's __getitem__: a CPython detail; Sequence's own __iter__ mixin uses it",
    "list_tests.CommonTest-List-test_addmul": REPEAT,
    "list_tests.CommonTest-List-test_count": REPEAT,
    "list_tests.CommonTest-List-test_imul": REPEAT,
    "list_tests.CommonTest-List-test_repeat": REPEAT,
    "list_tests.CommonTest-List-test_copy": "list.copy, outside MutableSequence",
    "list_tests.CommonTest-List-test_sort": "list.sort, outside MutableSequence",
    "list_tests.CommonTest-List-test_repr": REPR,
    "list_tests.CommonTest-List-test_repr_deep": REPR,
    "list_tests.CommonTest-List-test_setitem": "checks list's message text ('list indices "
    "must be ...'); the exception classes are checked by the state machine",
    "list_tests.CommonTest-List-test_extend": "an iterator whose __length_hint__ is "
    "sys.maxsize: List.extend materialises it with list(), which trusts the hint (MemoryError, "
    "as list() itself); extend of ordinary iterables is driven by the state machine",
    "mapping_tests.BasicTestMappingProtocol-Map-test_pop": WRITE_MAP,
    "mapping_tests.BasicTestMappingProtocol-Map-test_popitem": WRITE_MAP,
    "mapping_tests.BasicTestMappingProtocol-Map-test_setdefault": WRITE_MAP,
    "mapping_tests.BasicTestMappingProtocol-Map-test_update": WRITE_MAP,
    "mapping_tests.BasicTestMappingProtocol-Map-test_write": WRITE_MAP,
}
for _cls in ("TestMappingProtocol", "TestHashMappingProtocol"):
    _prefix = f"mapping_tests.{_cls}-Dict-"
    EXCLUDED |= {
        _prefix + "test_constructor": "dict(**kwargs) / dict(pairs) construction: the "
        "constructor is not part of MutableMapping",
        _prefix + "test_copy": DICT_ONLY,
        _prefix + "test_fromkeys": DICT_ONLY,
        _prefix + "test_popitem": "starts with a.copy() (" + DICT_ONLY + "); popitem is driven "
        "by the state machine",
        _prefix + "test_setdefault": "mutates the list setdefault returned and expects the "
        "stored value to change: a list crosses into the Dict by value (an Array), as "
        "tvm_ffi.convert documents",
    }
EXCLUDED |= {
    "mapping_tests.TestHashMappingProtocol-Dict-test_repr": REPR,
    "mapping_tests.TestHashMappingProtocol-Dict-test_repr_deep": REPR,
}

# Recorded deviations: case -> (deviation id, exception class, message regex of the failure).
RECORDED: dict[str, tuple[str, type[BaseException], str]] = {
    "seq_tests.CommonTest-Array-test_contains_fake": (
        "ffi-container-python-eq-not-called",
        AssertionError,
        r".*ALWAYS_EQ.* not found in .*",
    ),
    "seq_tests.CommonTest-Array-test_contains_order": (
        "ffi-container-python-eq-not-called",
        AssertionError,
        r"DoNotTestEq not raised.*",
    ),
    "list_tests.CommonTest-List-test_contains_fake": (
        "ffi-container-python-eq-not-called",
        AssertionError,
        r".*ALWAYS_EQ.* not found in .*",
    ),
    "list_tests.CommonTest-List-test_contains_order": (
        "ffi-container-python-eq-not-called",
        AssertionError,
        r"DoNotTestEq not raised.*",
    ),
    "list_tests.CommonTest-List-test_exhausted_iterator": (
        "ffi-list-iterator-fixed-length",
        AssertionError,
        r"Lists differ: \[\] != \[9\].*",
    ),
    "mapping_tests.TestHashMappingProtocol-Dict-test_eq": (
        "ffi-container-python-eq-not-called",
        AssertionError,
        r"Exc not raised by <lambda>",
    ),
    "mapping_tests.TestHashMappingProtocol-Dict-test_pop": (
        "ffi-container-python-eq-not-called",
        KeyError,
        r"<.*BadHash object at .*>",
    ),
}
for _cls in ("TestMappingProtocol", "TestHashMappingProtocol"):
    _prefix = f"mapping_tests.{_cls}-Dict-"
    RECORDED |= {
        _prefix + "test_clear": ("ffi-map-eq-dict-false", AssertionError, r"\{\} != \{\}"),
        _prefix + "test_getitem": (
            "ffi-map-eq-dict-false",
            AssertionError,
            r".*\{\"a\": 4, \"c\": 3\} != .*",
        ),
        _prefix + "test_update": (
            "ffi-dict-update-mapping-only",
            TypeError,
            r"Dict\.update\(\) missing 1 required positional argument: 'other'",
        ),
        _prefix + "test_write": (
            "ffi-dict-update-mapping-only",
            AttributeError,
            r"'list' object has no attribute 'items'",
        ),
    }


def _cases() -> list[Any]:
    cases = []
    for group, (base, ffi_type) in CLASSES.items():
        case_class = type(f"FFI_{base.__name__}", (base,), {"type2test": ffi_type})
        for method in unittest.TestLoader().getTestCaseNames(case_class):
            name = f"{group}-{method}"
            marks = [deviations.xfail(RECORDED[name][0])] if name in RECORDED else []
            cases.append(pytest.param(case_class, method, id=name, marks=marks))
    return cases


CASES = _cases()


def _run(case_class: type[unittest.TestCase], method: str) -> BaseException | None:
    """Run one CPython test method; its first failure or error, None if it passed."""
    result = unittest.TestResult()
    failure: list[BaseException] = []

    class Keep(unittest.TestResult):
        def addFailure(self, test: Any, err: Any) -> None:  # noqa: N802 (unittest's name)
            failure.append(err[1])

        def addError(self, test: Any, err: Any) -> None:  # noqa: N802
            failure.append(err[1])

    result = Keep()
    case_class(method).run(result)
    return failure[0] if failure else None


@pytest.mark.parametrize(("case_class", "method"), CASES)
def test_cpython_protocol_test(
    case_class: type[unittest.TestCase], method: str, request: Any
) -> None:
    name = request.node.callspec.id
    if name in EXCLUDED:
        pytest.skip(f"excluded: {EXCLUDED[name]}")
    failure = _run(case_class, method)
    if name in RECORDED and failure is not None:
        dev_id, exc_type, message = RECORDED[name]
        if type(failure) is exc_type and re.fullmatch(message, str(failure), re.DOTALL):
            # The deviation's own class: the failure is exactly the recorded one.
            raise deviations.raises_of(deviation_registry.by_id()[dev_id])(
                f"{type(failure).__name__}: {failure}"
            )
    if failure is not None:
        raise AssertionError(f"{name} failed: {type(failure).__name__}: {failure}")


def test_tables_name_only_existing_methods() -> None:
    """Every excluded or recorded name is a collected case (no stale entries)."""
    ids = {case.id for case in CASES}
    assert set(EXCLUDED) <= ids, sorted(set(EXCLUDED) - ids)
    assert set(RECORDED) <= ids, sorted(set(RECORDED) - ids)
    assert not set(EXCLUDED) & set(RECORDED)
    print(
        f"CPython protocol tests: {len(ids)} methods, {len(EXCLUDED)} excluded, "
        f"{len(RECORDED)} recorded deviations, {len(ids) - len(EXCLUDED)} run"
    )
