"""numpy's array model as the tensor reference: every memory layout numpy has, in every dtype
numpy's type registry names, copied into a runtime tensor on each path and read back each way.

Paths in: `tvm.runtime.tensor(x)`, `tvm.runtime.tensor(x, tvm.cpu())` and `dest.copyfrom(x)`
into a C-contiguous tensor of other values. Ways out: `.numpy()`, `np.from_dlpack(t)` and
`tvm.runtime.from_dlpack(t)`. (`tvm.runtime.from_dlpack` of a numpy array is no copy: it takes
the memory as it is, 64-byte aligned and contiguous, so its outcome depends on the address numpy
chose, not on the layout; it is not walked.)

Each copy must hold the source's logical values (numpy's `np.array(x, order="C")` in native
byte order), with its shape and dtype, come out C-contiguous in native order, and leave the
source untouched. Refusals are pinned by exception class and message: a dtype TVM has no type
for, a sub-byte dtype TVM packs and numpy does not, a non-native byte order given to
`tvm.runtime.tensor`, and a dtype numpy's DLPack import lacks. Deviations:
runtime-tensor-copyfrom-bfloat16-byte-order-ignored (a byte-swapped bfloat16 source is copied
as native bytes) and runtime-tensor-int4-one-element-lost (a one-element int4 array comes back
as an int8 zero).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest
import tvm

from tvm_conformance import deviations
from tvm_conformance.observed import ByteOrderIgnored, SubByteValueLost

SHAPE_2D = (3, 4)
SHAPE_3D = (2, 3, 4)

# --- dtypes: numpy's registry, each either walked or pinned to its refusal --------------------


def registry_dtypes() -> list[np.dtype]:
    """Every dtype numpy's registry names: its own type codes (np.typecodes['All']) and the
    ml_dtypes types registered in np.sctypeDict (bfloat16, float8s, sub-byte ints, ...)."""
    found = [np.dtype(code) for code in np.typecodes["All"]]
    found += [np.dtype(t) for t in set(np.sctypeDict.values()) if t.__module__ == "ml_dtypes"]
    # 'l' and 'q' are the same int64 on LP64: one entry per name.
    return sorted({dtype.name: dtype for dtype in found}.values(), key=lambda d: d.name)


def _is_ml(dtype: np.dtype) -> bool:
    return dtype.type.__module__ == "ml_dtypes"


def _bits(dtype: np.dtype) -> int:
    """The width of a value, which for ml_dtypes' sub-byte types is less than its byte."""
    if not _is_ml(dtype):
        return dtype.itemsize * 8
    info = ml_dtypes.finfo if "float" in dtype.name else ml_dtypes.iinfo
    return int(info(dtype).bits)


def _named(dtype: np.dtype) -> bool:
    """TVM has a type of that name: numpy's bool, int, uint and float kinds, and ml_dtypes'
    floats and ints (no complex, string, object, datetime or void type)."""
    return "complex" not in dtype.name if _is_ml(dtype) else dtype.kind in "biuf"


# The refusals, as (exception class, message pattern).
Refusal = tuple[type[BaseException], str]


def dtype_refusal(dtype: np.dtype, source: np.ndarray) -> Refusal | None:
    """How TVM refuses a copy of `source` (a C-ordered array of `dtype`), None where it copies.

    A dtype TVM has no type for is refused by name (`_named`). ml_dtypes stores a sub-byte value
    in a whole byte where TVM packs them, so the byte counts differ (TVM packs float4_e2m1fn
    itself while copying, so that one is taken)."""
    if not _named(dtype):
        return ValueError, rf"^unknown dtype `{re.escape(str(source.dtype))}`$"
    if _bits(dtype) < 8 and not dtype.name.startswith("float4_e2m1fn"):
        return tvm.error.InternalError, "TensorCopyFromBytes: size mismatch"
    return None


DTYPES = registry_dtypes()
WALKED = [d for d in DTYPES if dtype_refusal(d, np.zeros(SHAPE_2D, d)) is None]
REFUSED = [d for d in DTYPES if d not in WALKED]
# What the walk must hold whatever numpy and ml_dtypes add: the dtypes every TVM user copies.
REQUIRED = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "bfloat16",
}  # fmt: skip


def distinct_values(dtype: np.dtype) -> np.ndarray:
    """Distinct values of `dtype`, exactly representable: small ints, eighths for floats (so
    float4 and float8 have enough), three for bool (a period of 3 shows a transposed copy in
    a trailing axis of 4)."""
    if dtype.kind == "b":
        return np.array([True, False, False])
    if dtype.kind in "iu":
        return np.arange(100).astype(dtype)
    if not _named(dtype):
        return np.zeros(2, dtype)  # refused before any value is read
    wanted = np.arange(-512, 513) / 8
    cast = wanted.astype(dtype)
    exact = np.isfinite(wanted) & (cast.astype("float64") == wanted)
    return cast[exact]


def values(dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """arange over `shape`, through the dtype's distinct values: a C-ordered array where a
    misordered copy shows (each value differs from its neighbours in every axis)."""
    table = distinct_values(dtype)
    index = np.arange(int(np.prod(shape)), dtype="int64") % len(table)
    return table[index].reshape(shape)


# --- layouts: numpy's memory layouts, each with the property that names it ---------------------


@dataclass(frozen=True)
class Layout:
    """A layout: how it is made from a dtype, and the numpy property it must have (or None
    where the dtype cannot have it: a byte order for one-byte or ml_dtypes types)."""

    name: str
    make: Callable[[np.dtype], np.ndarray | None]
    has: Callable[[np.ndarray], bool]


def _swapped(dtype: np.dtype) -> np.dtype | None:
    """The dtype in the other byte order, None where it has none (one-byte types; ml_dtypes
    types, which numpy turns into void)."""
    other = dtype.newbyteorder()
    return other if other != dtype and other.type is dtype.type else None


def _reverse(axes: tuple[int, ...], ndim: int) -> tuple[slice, ...]:
    return tuple(slice(None, None, -1) if a in axes else slice(None) for a in range(ndim))


def _unaligned(dtype: np.dtype) -> np.ndarray | None:
    """The values one byte into a buffer: numpy's `aligned` flag is False."""
    if dtype.itemsize == 1:
        return None
    data = values(dtype, SHAPE_2D)
    return np.frombuffer(b"\0" + data.tobytes(), dtype, offset=1).reshape(SHAPE_2D)


def _negative(x: np.ndarray) -> bool:
    return any(s < 0 for s in x.strides)


def generate_layouts() -> list[Layout]:
    """numpy's layouts: C and Fortran order, transposes (every permutation of a 3-d array),
    negative strides on every nonempty set of axes, stepped slices, broadcasts (zero strides),
    the other byte order, an unaligned buffer, a size-1 axis from None, 0-d and empty."""
    c2 = values  # a C-ordered array of the dtype, reshaped as asked
    out = [
        Layout("c-2d", lambda d: c2(d, SHAPE_2D), lambda x: x.flags.c_contiguous),
        Layout("c-3d", lambda d: c2(d, SHAPE_3D), lambda x: x.flags.c_contiguous),
        Layout(
            "fortran-2d",
            lambda d: np.asfortranarray(c2(d, SHAPE_2D)),
            lambda x: x.flags.f_contiguous and not x.flags.c_contiguous,
        ),
        Layout(
            "fortran-3d",
            lambda d: np.asfortranarray(c2(d, SHAPE_3D)),
            lambda x: x.flags.f_contiguous and not x.flags.c_contiguous,
        ),
        Layout("transposed-2d", lambda d: c2(d, SHAPE_2D).T, lambda x: not x.flags.c_contiguous),
    ]
    for perm in itertools.permutations(range(3)):
        if perm != (0, 1, 2):
            out.append(
                Layout(
                    "permuted-" + "".join(map(str, perm)),
                    lambda d, p=perm: c2(d, SHAPE_3D).transpose(p),
                    lambda x: not x.flags.c_contiguous,
                )
            )
    for n in (1, 2):
        for axes in itertools.combinations(range(2), n):
            out.append(
                Layout(
                    "reversed-" + "".join(map(str, axes)),
                    lambda d, a=axes: c2(d, SHAPE_2D)[_reverse(a, 2)],
                    _negative,
                )
            )
    out += [
        Layout(
            "stepped",
            lambda d: c2(d, SHAPE_2D)[::2, 1:],
            lambda x: not x.flags.c_contiguous and not x.flags.f_contiguous,
        ),
        Layout("stepped-reversed", lambda d: c2(d, SHAPE_3D)[::-1, ::2, ::-3], _negative),
        Layout(
            "broadcast-rows",
            lambda d: np.broadcast_to(c2(d, (SHAPE_2D[1],)), SHAPE_2D),
            lambda x: x.strides[0] == 0,
        ),
        Layout(
            "broadcast-columns",
            lambda d: np.broadcast_to(c2(d, (SHAPE_2D[0], 1)), SHAPE_2D),
            lambda x: x.strides[1] == 0,
        ),
        Layout(
            "broadcast-scalar",
            lambda d: np.broadcast_to(c2(d, ()), SHAPE_3D),
            lambda x: set(x.strides) == {0},
        ),
        Layout(
            "byteswapped-c",
            lambda d: None if _swapped(d) is None else c2(d, SHAPE_2D).astype(_swapped(d)),
            lambda x: not x.dtype.isnative,
        ),
        Layout(
            "byteswapped-transposed",
            lambda d: None if _swapped(d) is None else c2(d, SHAPE_3D).astype(_swapped(d)).T,
            lambda x: not x.dtype.isnative and not x.flags.c_contiguous,
        ),
        Layout("unaligned", _unaligned, lambda x: not x.flags.aligned),
        Layout("newaxis", lambda d: c2(d, SHAPE_2D)[:, None], lambda x: x.shape[1] == 1),
        Layout("0-d", lambda d: c2(d, ()), lambda x: x.ndim == 0),
        Layout("empty-rows", lambda d: c2(d, (0, 4)), lambda x: x.size == 0),
        Layout("empty-columns", lambda d: c2(d, (3, 0)), lambda x: x.size == 0),
        Layout(
            "empty-fortran-3d",
            lambda d: np.asfortranarray(c2(d, (2, 0, 4))),
            lambda x: x.size == 0 and x.ndim == 3,
        ),
    ]
    return out


LAYOUTS = generate_layouts()

# --- paths: into a tensor and back out ----------------------------------------------------------


def native(dtype: np.dtype) -> np.dtype:
    return dtype if dtype.isnative else dtype.newbyteorder("=")


def reference(x: np.ndarray) -> np.ndarray:
    """numpy's answer: the logical values, C-ordered, in native byte order."""
    return np.array(x, dtype=native(x.dtype), order="C", copy=True)


def _other_values(want: np.ndarray) -> np.ndarray:
    """A C-contiguous array that differs from `want` in every element (the destination's
    values before copyfrom, so a copy not made shows)."""
    first, second = distinct_values(want.dtype)[:2]
    return np.where(want == first, second, first).astype(want.dtype)


def _copyfrom(x: np.ndarray) -> tvm.runtime.Tensor:
    dest = tvm.runtime.tensor(_other_values(reference(x)))
    assert dest.copyfrom(x) is dest
    return dest


INTO: dict[str, Callable[[np.ndarray], tvm.runtime.Tensor]] = {
    "tensor": lambda x: tvm.runtime.tensor(x),
    "tensor-cpu": lambda x: tvm.runtime.tensor(x, tvm.cpu()),
    "copyfrom": _copyfrom,
}

OUT: dict[str, Callable[[tvm.runtime.Tensor], np.ndarray]] = {
    "numpy": lambda t: t.numpy(),
    "np-from-dlpack": lambda t: np.from_dlpack(t),
    "tvm-from-dlpack": lambda t: tvm.runtime.from_dlpack(t).numpy(),
}


def into_refusal(path: str, x: np.ndarray) -> Refusal | None:
    """`tvm.runtime.tensor` takes the dtype as numpy gives it, and TVM names no byte order;
    copyfrom converts the source into the destination's dtype first."""
    if path != "copyfrom" and not x.dtype.isnative:
        return ValueError, rf"^unknown dtype `{re.escape(str(x.dtype))}`$"
    return None


def out_refusal(way: str, dtype: np.dtype) -> Refusal | None:
    """numpy's DLPack import has bool, ints and IEEE floats of 16 to 64 bits only (no bfloat16,
    float8, float4 or long double)."""
    if way == "np-from-dlpack" and not (
        not _is_ml(dtype) and (dtype.kind in "biu" or dtype.itemsize <= 8)
    ):
        return RuntimeError, r"^Unsupported dtype in DLTensor\.$"
    return None


def walk() -> Iterator[tuple[Layout, np.dtype, str]]:
    """Every case: each walked dtype in each layout it can have, on each path in; each refused
    dtype in C order on each path in."""
    for dtype in DTYPES:
        for layout in LAYOUTS if dtype in WALKED else LAYOUTS[:1]:
            if layout.make(dtype) is not None:
                for path in INTO:
                    yield layout, dtype, path


def byte_order_ignored(layout: Layout, dtype: np.dtype, path: str) -> bool:
    """The cases of deviation runtime-tensor-copyfrom-bfloat16-byte-order-ignored: copyfrom
    reads a bfloat16 source as raw bytes (`tobytes()`), whatever its byte order."""
    return path == "copyfrom" and dtype.name == "bfloat16" and layout.name.startswith("byteswap")


CASES = [
    pytest.param(
        layout,
        dtype,
        path,
        id=f"{layout.name}-{dtype.name}-{path}",
        marks=[deviations.xfail("runtime-tensor-copyfrom-bfloat16-byte-order-ignored")]
        if byte_order_ignored(layout, dtype, path)
        else [],
    )
    for layout, dtype, path in walk()
]


def _check_like_numpy(out: np.ndarray, want: np.ndarray, how: str) -> None:
    assert (out.shape, out.dtype) == (want.shape, want.dtype), how
    assert out.flags.c_contiguous and out.dtype.isnative, how
    np.testing.assert_array_equal(out, want, err_msg=how)


@pytest.mark.parametrize(("layout", "dtype", "path"), CASES)
def test_copy_holds_numpy_logical_values(layout: Layout, dtype: np.dtype, path: str) -> None:
    """The tensor made from `x` on `path` holds numpy's logical values of `x`, read back each
    way out; `x` is unchanged. A refused dtype or byte order raises its pinned error."""
    x = layout.make(dtype)
    before = (x.copy(), x.tobytes(), x.strides)
    refusal = dtype_refusal(dtype, x) or into_refusal(path, x)
    if refusal is not None:
        with pytest.raises(refusal[0], match=refusal[1]):
            INTO[path](x)
    else:
        want = reference(x)
        tensor = INTO[path](x)
        if byte_order_ignored(layout, dtype, path):
            _raise_if_bytes_taken_as_native(tensor, x)
        assert (tensor.shape, str(tensor.dtype)) == (want.shape, want.dtype.name)
        for way, read in OUT.items():
            refused = out_refusal(way, dtype)
            if refused is not None:
                with pytest.raises(refused[0], match=refused[1]):
                    read(tensor)
                continue
            _check_like_numpy(read(tensor), want, f"{path} then {way}")
    assert (x.tobytes(), x.strides) == before[1:]
    np.testing.assert_array_equal(x, before[0])


def _raise_if_bytes_taken_as_native(tensor: tvm.runtime.Tensor, x: np.ndarray) -> None:
    """The recorded behaviour: the tensor holds the source's bytes, in logical order, read in
    native byte order (each value byte-swapped)."""
    out = tensor.numpy()
    as_native = np.frombuffer(x.tobytes(), native(x.dtype)).reshape(x.shape)
    if not np.array_equal(out, reference(x)) and out.tobytes() == as_native.tobytes():
        raise ByteOrderIgnored(f"{x.dtype} {x.shape}: {out.ravel()[:3]}, numpy {x.ravel()[:3]}")


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.name)
def test_each_layout_has_its_numpy_property(layout: Layout) -> None:
    """A layout is what its name says, in every walked dtype it applies to."""
    made = [x for x in (layout.make(d) for d in WALKED) if x is not None]
    assert made
    for x in made:
        assert layout.has(x), (layout.name, x.dtype, x.shape, x.strides, x.flags)


def test_the_walk_is_what_the_generators_give() -> None:
    """The walk cannot shrink silently: its size is the generators' product (layouts a dtype
    cannot have left out), the dtypes every user copies are walked, and each family of numpy
    layouts is there."""
    applicable = {d.name: sum(layout.make(d) is not None for layout in LAYOUTS) for d in WALKED}
    assert len(CASES) == (sum(applicable.values()) + len(REFUSED)) * len(INTO)
    assert {d.name for d in WALKED} >= REQUIRED
    assert len(LAYOUTS) == 26 and len(INTO) == 3 and len(OUT) == 3
    # Every walked dtype takes every layout but the byte-order and alignment ones.
    assert min(applicable.values()) >= len(LAYOUTS) - 3
    assert {"complex64", "complex128", "str", "object", "datetime64"} <= {d.name for d in REFUSED}
    assert len({c.id for c in CASES}) == len(CASES)


# --- sub-byte values of one element, the one size where the byte counts agree ---------------


SUB_BYTE = [d for d in REFUSED if _is_ml(d) and "complex" not in d.name]


@pytest.mark.parametrize(
    "dtype",
    [
        pytest.param(d, marks=deviations.xfail("runtime-tensor-int4-one-element-lost"))
        if d.name == "int4"
        else d
        for d in SUB_BYTE
    ],
    ids=lambda d: d.name,
)
@pytest.mark.parametrize("shape", [(), (1,)], ids=["0-d", "1"])
def test_sub_byte_dtype_of_one_element_round_trips(dtype: np.dtype, shape: tuple[int]) -> None:
    """One sub-byte value fills one byte in numpy and in TVM's packing alike, so the copy is
    taken; its value and dtype must come back."""
    for value in distinct_values(dtype):
        x = np.full(shape, value, dtype)
        tensor = tvm.runtime.tensor(x)
        assert str(tensor.dtype) == dtype.name
        out = tensor.numpy()
        if dtype.name == "int4" and out.dtype == np.int8 and not out.any():
            # The recorded behaviour: numpy() reads TVM's packed high nibble, where copyfrom
            # wrote ml_dtypes' unpacked byte, and names the result int8.
            raise SubByteValueLost(f"int4 {value} of shape {shape} came back as int8 {out}")
        _check_like_numpy(out, x, f"{dtype.name} {value}")
