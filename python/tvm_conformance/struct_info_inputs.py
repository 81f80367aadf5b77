"""Inputs that a Relax function's declared tensor struct info accepts, and ones it refuses.

The wrong inputs are derived from the declaration, one change at a time: each dimension in turn
one larger (a symbolic dimension only where an earlier tensor binds it: its first occurrence
accepts any value), one dimension more and one fewer, and every other dtype of ``DTYPES``.

    declared = [((2, 3), "float32"), (("n",), "int32"), (("n", 2), "float32")]
    good = conforming(declared)                  # shapes with n = SYMBOLIC_VALUE
    for case in wrong_inputs(declared): case.index, case.shape, case.dtype, case.what
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from tvm import relax

# The dtypes a wrong input takes instead of the declared one.
DTYPES: tuple[str, ...] = ("float32", "float16", "float64", "int32", "int64", "bool")
# The value a symbolic dimension takes in the conforming inputs.
SYMBOLIC_VALUE = 4

# What the VM raises for each kind of departure (TVM 0.27): a dimension fails the shape
# check (RuntimeError "shape[i] mismatch"), the rank and the dtype the tensor's own check
# (ValueError "expect Tensor with ndim / dtype ...").
RAISES: dict[str, type[Exception]] = {"dim": RuntimeError, "ndim": ValueError, "dtype": ValueError}

Dim = int | str
Declared = Sequence[tuple[Sequence[Dim], str]]


def declared_of(params: Sequence[relax.Var]) -> list[tuple[tuple[Dim, ...], str]]:
    """The (shape, dtype) each tensor parameter declares; a symbolic dimension by its name."""
    out = []
    for param in params:
        info = param.ty
        dims = tuple(int(d) if hasattr(d, "value") else str(d) for d in info.shape.values)
        out.append((dims, str(info.dtype)))
    return out


def _concrete(dims: Sequence[Dim]) -> tuple[int, ...]:
    return tuple(d if isinstance(d, int) else SYMBOLIC_VALUE for d in dims)


def conforming(declared: Declared) -> list[tuple[tuple[int, ...], str]]:
    """One (shape, dtype) per declared tensor that the declaration accepts."""
    return [(_concrete(dims), dtype) for dims, dtype in declared]


@dataclasses.dataclass(frozen=True)
class WrongInput:
    """The conforming inputs with tensor ``index`` replaced by ``shape`` / ``dtype``."""

    index: int
    shape: tuple[int, ...]
    dtype: str
    what: str  # "dim 1: 4 for 3", "ndim 3 for 2", "dtype float16 for float32"
    kind: str  # "dim", "ndim" or "dtype"
    axis: int = -1  # kind "dim": the dimension changed

    @property
    def id(self) -> str:
        return f"arg{self.index}-{self.what.replace(' ', '_').replace(':', '')}"


def wrong_inputs(declared: Declared) -> list[WrongInput]:
    """Every one-change departure from the declaration (see the module docstring)."""
    cases = []
    bound: set[str] = set()
    for index, (dims, dtype) in enumerate(declared):
        shape = _concrete(dims)
        for axis, dim in enumerate(dims):
            if isinstance(dim, str) and dim not in bound:
                continue  # its first occurrence binds it: every value is accepted
            wrong = shape[:axis] + (shape[axis] + 1,) + shape[axis + 1 :]
            what = f"dim {axis}: {wrong[axis]} for {dim}"
            cases.append(WrongInput(index, wrong, dtype, what, "dim", axis))
        cases.append(WrongInput(index, (*shape, 1), dtype, f"ndim {len(shape) + 1}", "ndim"))
        if shape:
            cases.append(WrongInput(index, shape[:-1], dtype, f"ndim {len(shape) - 1}", "ndim"))
        for other in DTYPES:
            if other != dtype:
                cases.append(WrongInput(index, shape, other, f"dtype {other} for {dtype}", "dtype"))
        bound |= {d for d in dims if isinstance(d, str)}
    return cases


def tensor_of(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    """A numpy tensor of ``shape`` and ``dtype``: normal floats, small ints, random bools."""
    rng = np.random.default_rng(seed)
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(-4, 5, shape).astype(dtype)
