"""The rule's classification of ATen ops: every op modelled or refused by name, never a guess.

The walk over PyTorch's corpus (every float32 sample of the op-corpus tier, its ATen ops
classified) is tools/numerics_sweep/ops_walk.py, run once by .ci/run: it depends on torch and
the kit only, not on the TVM a lane tests. Here: the ops it found refused
(numerics.REFUSED_OPS) are refused by rounding_model, a refused op makes the reference raise
naming it, and the kinds of representative ops.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tvm_conformance import numerics


def _op(qualified: str) -> torch._ops.OpOverload | str:
    """The op named ``namespace.name.overload``; its bare name where the op is registered
    only once its Python module runs (torch_nn's linear cross entropy: rounding_model takes a
    name too)."""
    namespace, name, overload = qualified.split(".")
    try:
        return getattr(getattr(getattr(torch.ops, namespace), name), overload)
    except AttributeError:
        return name


@pytest.mark.parametrize("qualified", sorted(numerics.REFUSED_OPS))
def test_each_listed_op_is_refused(qualified: str) -> None:
    assert numerics.rounding_model(_op(qualified)) == "refused"


def test_a_refused_op_makes_the_reference_raise_naming_it() -> None:
    x = torch.linspace(-2.0, 2.0, 16)
    with pytest.raises(numerics.ReferenceError, match=r"no rounding model for aten\.histc"):
        numerics.references(lambda t: torch.histc(t, bins=4), [x])


@pytest.mark.parametrize(
    ("qualified", "kind"),
    [
        ("aten.exp.default", "pointwise"),
        ("aten.prod.dim_int", "sum"),
        ("aten.cumprod.default", "sum"),
        ("aten.logcumsumexp.default", "sum"),
        ("aten.view_copy.default", "move"),
        ("aten.kthvalue.default", "indexed selection"),
        ("aten.fill.Scalar", "constant"),
        ("aten.scatter.reduce", "refused"),
        ("aten.scatter.src", "move"),
    ],
)
def test_representative_ops_have_their_kind(qualified: str, kind: str) -> None:
    assert numerics.rounding_model(_op(qualified)) == kind


def test_reference_ops_names_each_op_with_its_kind() -> None:
    kinds = numerics.reference_ops(lambda t: torch.softmax(t, -1).sum(), [torch.randn(3, 4)])
    assert kinds["aten.exp.default"] == "pointwise"
    assert kinds["aten.sum.dim_IntList"] == "sum"
    assert kinds["aten.amax.default"] == "selection"
    assert set(kinds.values()) <= set(numerics.MODEL_KINDS)


def _inplace_ops_with_pointwise_functional() -> list[tuple[str, str]]:
    """From torch's registry: (in-place overload, its out-of-place overload) for every
    in-place ATen op whose out-of-place twin is tagged pointwise."""
    pairs = []
    for name in dir(torch.ops.aten):
        if not name.endswith("_") or name.startswith("_"):
            continue
        functional = getattr(torch.ops.aten, name[:-1], None)
        for overload in getattr(torch.ops.aten, name).overloads():
            twin = getattr(functional, overload, None)
            if twin is not None and torch.Tag.pointwise in twin.tags:
                pairs.append((f"aten.{name}.{overload}", f"aten.{name[:-1]}.{overload}"))
    return pairs


@pytest.mark.parametrize(("inplace", "functional"), _inplace_ops_with_pointwise_functional())
def test_an_inplace_op_has_its_functional_twins_kind(inplace: str, functional: str) -> None:
    # mish_ and threshold_ (nn.functional's inplace=True) carry no pointwise tag of their own.
    assert numerics.rounding_model(_op(inplace)) == numerics.rounding_model(_op(functional))


@pytest.mark.parametrize("width", [512, 4096])
def test_an_accumulating_put_rounds_its_additions(width: int) -> None:
    """index_put(accumulate=True) adds values into the data: its float32 result (torch's, each
    place added to once per index) is within the rule, where a move's zero allowance refused
    it; a result off by a hundred roundings is not; without accumulate the put stays exact."""
    rng = np.random.default_rng(width)
    data = torch.from_numpy(rng.standard_normal(width).astype(np.float32))
    values = torch.from_numpy(rng.standard_normal(width).astype(np.float32))
    index = torch.from_numpy(rng.integers(0, width // 2, width))

    def put(d: torch.Tensor, v: torch.Tensor, accumulate: bool) -> torch.Tensor:
        return torch.index_put(d, (index,), v, accumulate)

    (added,) = numerics.references(lambda d, v: put(d, v, True), [data, values])
    result = put(data, values, True)
    assert not np.array_equal(result.double().numpy(), added.value)  # rounding happened
    numerics.check_outputs([result.numpy()], [added])
    off = result.double() + 100 * float(numerics.unit_roundoff("float32")) * added.magnitude
    with pytest.raises(AssertionError, match="differ"):
        numerics.check_outputs([off.float().numpy()], [added])
    (moved,) = numerics.references(lambda d, v: put(d, v, False), [data, values])
    assert not moved.magnitude.any()
