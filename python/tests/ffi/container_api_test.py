"""FFI containers against the Python types they mirror: every public method and view.

`tvm_ffi.Array` is a `Sequence` (like `tuple`), `tvm_ffi.List` a `MutableSequence` (like
`list`), `tvm_ffi.Map` a `Mapping` and `tvm_ffi.Dict` a `MutableMapping` (like `dict`). Each
case runs the same operations on the FFI container and on the Python value and compares the
results, so the expected values come from Python, not from TVM. Indexing and iteration alone
(container_test.py) leave the other methods and views unchecked.
"""

from __future__ import annotations

from typing import Any

import pytest
import tvm
import tvm_ffi

VALUES = [3, 1, 4, 1, 5, 9, 2, 6]
MAPPING = {"a": 1, "b": 2, "c": 30}
INDICES = list(range(-len(VALUES), len(VALUES)))
SLICES = [
    slice(None, None, 2),
    slice(1, None, 3),
    slice(None, None, -1),
    slice(-2, None),
    slice(-6, -1, 2),
    slice(5, 1, -2),
    slice(100, None),
]


def test_array_indexing_and_slicing_match_tuple() -> None:
    array, plain = tvm_ffi.Array(VALUES), tuple(VALUES)
    assert [array[i] for i in INDICES] == [plain[i] for i in INDICES]
    for part in SLICES:
        assert list(array[part]) == list(plain[part]), part
    for bad in (len(VALUES), -len(VALUES) - 1):
        with pytest.raises(IndexError):
            array[bad]


def test_array_refuses_assignment_and_bad_indices_like_tuple() -> None:
    """An Array is immutable: item, slice (stepped included) assignment and deletion are
    TypeError, as for a tuple; a far out-of-range index is IndexError, a non-integer TypeError."""
    array, plain = tvm_ffi.Array(VALUES), tuple(VALUES)
    for container in (array, plain):
        for index in (0, -1, slice(None, None, 2), slice(5, 1, -2)):
            with pytest.raises(TypeError, match="does not support item assignment"):
                container[index] = [0, 0] if isinstance(index, slice) else 0
            with pytest.raises(TypeError, match="support item deletion"):
                del container[index]
        with pytest.raises(IndexError):
            container[10**6]
        for bad in ("1", 1.0, None):
            with pytest.raises(TypeError, match="indices must be integers or slices"):
                container[bad]
    assert list(array) == VALUES


def test_array_truth_length_contains_and_concatenation_match_tuple() -> None:
    array, empty = tvm_ffi.Array(VALUES), tvm_ffi.Array([])
    assert bool(array) is True and bool(empty) is False and len(empty) == 0
    assert [v in array for v in (1, 9, 7, -1)] == [True, True, False, False]
    assert list(array + [7, 8]) == VALUES + [7, 8]
    assert list([7, 8] + array) == [7, 8] + VALUES
    assert list(reversed(array)) == list(reversed(VALUES))
    assert array.index(4) == VALUES.index(4) and array.count(1) == VALUES.count(1)


def test_list_mutations_match_list() -> None:
    ffi_list, plain = tvm_ffi.List(VALUES), list(VALUES)
    steps: list[tuple[str, tuple[Any, ...]]] = [
        ("append", (7,)),
        ("insert", (-1, 40)),
        ("insert", (-100, 41)),
        ("insert", (2, 42)),
        ("insert", (100, 43)),
        ("extend", ([50, 51],)),
        ("reverse", ()),
        ("remove", (4,)),
    ]
    for name, args in steps:
        getattr(ffi_list, name)(*args)
        getattr(plain, name)(*args)
        assert list(ffi_list) == plain, (name, args)
    assert ffi_list.pop() == plain.pop()
    assert ffi_list.pop(0) == plain.pop(0)
    assert ffi_list.pop(-2) == plain.pop(-2)
    assert list(ffi_list) == plain
    ffi_list[1], plain[1] = 99, 99
    ffi_list[-1], plain[-1] = 98, 98
    ffi_list[1:3], plain[1:3] = [5, 5, 5], [5, 5, 5]
    del ffi_list[0], plain[0]
    del ffi_list[::2], plain[::2]
    assert list(ffi_list) == plain
    ffi_list.clear()
    assert len(ffi_list) == 0 and not ffi_list
    with pytest.raises(IndexError):
        ffi_list.pop()


def test_list_reads_match_list() -> None:
    ffi_list, plain = tvm_ffi.List(VALUES), list(VALUES)
    assert [ffi_list[i] for i in INDICES] == [plain[i] for i in INDICES]
    for part in SLICES:
        assert list(ffi_list[part]) == plain[part], part
    for bad in (len(VALUES), -len(VALUES) - 1, 10**6):
        with pytest.raises(IndexError):
            ffi_list[bad]
        with pytest.raises(IndexError):
            ffi_list[bad] = 0
        with pytest.raises(IndexError):
            del ffi_list[bad]
        with pytest.raises(IndexError):
            ffi_list.pop(bad)
    assert list(ffi_list) == plain  # nothing changed by the refused operations


# Slices assigned to: extended ones (a step other than 1, negative included) take exactly as
# many values as they select; plain ones grow or shrink the list.
ASSIGNED_SLICES = [
    *SLICES,
    slice(1, 5, 2),
    slice(-1, None, -3),
    slice(None, None, -2),
    slice(6, 0, -1),
    slice(-100, 100, 3),
    slice(2, 2),
    slice(3, 1),
]


def _slice_id(part: slice) -> str:
    """`1_5_2` for [1:5:2], `N_N_-1` for [::-1] (no `:`, which pytest's node ids split on)."""
    return "_".join("N" if v is None else str(v) for v in (part.start, part.stop, part.step))


@pytest.mark.parametrize("part", ASSIGNED_SLICES, ids=_slice_id)
def test_list_slice_assignment_and_deletion_match_list(part: slice) -> None:
    plain = list(VALUES)
    count = len(plain[part])
    replacement = [100 + i for i in range(count)]
    ffi_list = tvm_ffi.List(VALUES)
    ffi_list[part], plain[part] = replacement, list(replacement)
    assert list(ffi_list) == plain
    # A tuple or a generator as the value: any iterable, like list's.
    ffi_list, plain = tvm_ffi.List(VALUES), list(VALUES)
    ffi_list[part], plain[part] = (v for v in replacement), tuple(replacement)
    assert list(ffi_list) == plain
    ffi_list, plain = tvm_ffi.List(VALUES), list(VALUES)
    del ffi_list[part], plain[part]
    assert list(ffi_list) == plain
    ffi_list, plain = tvm_ffi.List(VALUES), list(VALUES)
    if part.step not in (None, 1):
        # An extended slice refuses a value of another length (list says ValueError).
        with pytest.raises(ValueError):
            plain[part] = replacement + [0]
        with pytest.raises(ValueError):
            ffi_list[part] = replacement + [0]
        assert list(ffi_list) == plain == VALUES
    else:
        ffi_list[part], plain[part] = [7, 7, 7], [7, 7, 7]
        assert list(ffi_list) == plain


def test_map_views_and_lookups_match_dict() -> None:
    amap = tvm_ffi.Map(MAPPING)
    assert len(amap) == len(MAPPING)
    assert sorted(amap.keys()) == sorted(MAPPING.keys())
    assert sorted(amap.values()) == sorted(MAPPING.values())
    assert sorted(amap.items()) == sorted(MAPPING.items())
    assert sorted(amap) == sorted(MAPPING)
    assert len(amap.keys()) == len(amap.values()) == len(amap.items()) == len(MAPPING)
    for key in ("a", "c", "zz"):
        assert (key in amap) == (key in MAPPING)
        assert (key in amap.keys()) == (key in MAPPING.keys())
        assert amap.get(key) == MAPPING.get(key)
        assert amap.get(key, -7) == MAPPING.get(key, -7)
    assert ("a", 1) in amap.items() and ("a", 2) not in amap.items()
    assert ("zz", 1) not in amap.items()
    with pytest.raises(KeyError):
        amap["zz"]
    assert bool(tvm_ffi.Map({})) is False and bool(amap) is True


def test_dict_mutations_match_dict() -> None:
    ffi_dict, plain = tvm_ffi.Dict(MAPPING), dict(MAPPING)
    ffi_dict["d"], plain["d"] = 4, 4
    ffi_dict["a"], plain["a"] = 10, 10
    assert ffi_dict.pop("b") == plain.pop("b")
    assert ffi_dict.pop("b", "gone") == plain.pop("b", "gone")
    assert "b" not in ffi_dict
    ffi_dict.update({"e": 5, "a": 11})
    plain.update({"e": 5, "a": 11})
    del ffi_dict["c"], plain["c"]
    assert dict(ffi_dict.items()) == plain
    assert sorted(ffi_dict.values()) == sorted(plain.values())
    assert ffi_dict.get("zz", 0) == 0 and ffi_dict.get("e") == 5
    with pytest.raises(KeyError):
        ffi_dict.pop("zz")
    with pytest.raises(KeyError):
        del ffi_dict["zz"]
    ffi_dict.clear()
    assert len(ffi_dict) == 0 and not ffi_dict


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ([1, 2], tvm_ffi.Array),
        ((1, 2), tvm_ffi.Array),
        ({"k": 1}, tvm_ffi.Map),
        ("x" * 1000, str),
        (b"\x00\xff", bytes),
        (bytearray(b"ab"), bytes),
    ],
    ids=["list", "tuple", "dict", "long-str", "bytes", "bytearray"],
)
def test_convert_gives_the_immutable_ffi_type_with_the_same_value(
    value: object, kind: type
) -> None:
    for convert in (tvm_ffi.convert, tvm.runtime.convert):
        out = convert(value)
        assert isinstance(out, kind), (convert, type(out))
        if isinstance(value, dict):
            assert dict(out.items()) == value
        elif isinstance(value, (list, tuple)):
            assert list(out) == list(value)
        else:
            assert out == value and len(out) == len(value)
    assert not isinstance(tvm_ffi.convert([1]), tvm_ffi.List)
    assert not isinstance(tvm_ffi.convert({"k": 1}), tvm_ffi.Dict)
