"""The tolerance rule where the computation is ill-conditioned: it models the algorithm TVM runs,
it never accepts a wrong answer as a pass, and no allowance is infinite for finite inputs.

Issue 67's probes, each drawn over several seeds: a variance and a layer norm of data with a
large offset (mean 1000, std 1), where a one-pass model's allowance was twice the answer; a
serial float32 product of 2,048 terms near 1, which one rounding of the output could not
cover; a square root at an exact zero with an inexact argument, whose first-order allowance
was infinite. Expected values come from PyTorch in float64 and from numpy's float32 arithmetic.
"""

import numpy as np
import pytest
import torch

from tvm_conformance import numerics

SEEDS = range(5)


def _offset_rows(seed: int, mean: float) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return mean + torch.randn(4, 256, generator=generator)


# The statistics TVM legalizes in two passes (relax.variance, topi.nn.layer_norm).
TWO_PASS = {
    "var": lambda x: torch.var(x, dim=1),
    "std": lambda x: torch.std(x, dim=1, correction=0),
    "var_mean": lambda x: torch.var_mean(x, dim=1),
    "layer_norm": lambda x: torch.nn.functional.layer_norm(x, (256,)),
    "batch_norm_training": lambda x: torch.nn.functional.batch_norm(
        x.T.contiguous(), None, None, training=True
    ),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("op", sorted(TWO_PASS))
def test_offset_data_rejects_zero_doubled_and_negated_outputs(op: str, seed: int) -> None:
    x = _offset_rows(seed, 1000.0)
    refs = numerics.references(TWO_PASS[op], [x])
    with torch.no_grad():
        own = TWO_PASS[op](x)
    own = [t.numpy() for t in (own if isinstance(own, tuple) else (own,))]
    # PyTorch's float32 result (a well-conditioned algorithm) passes: no false FAIL.
    numerics.check_outputs(own, refs)
    assert numerics.judgeable(refs) == []
    for wrong in (np.zeros_like, lambda a: 2 * a, np.negative):
        assert not numerics.matches([wrong(a) for a in own], refs)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_two_pass_variance_is_judged_tightly_on_offset_data(seed: int) -> None:
    """Two passes lose about u * n * |x - mean|, not u * E[x**2]: at mean 1000 the allowance
    stays a small fraction of the variance (the one-pass model allowed 1.8-2.5 times it)."""
    x = _offset_rows(seed, 1000.0)
    (ref,) = numerics.references(lambda t: torch.var(t, dim=1), [x])
    assert np.median(ref.allowed_error() / np.abs(ref.value)) < 1e-3


@pytest.mark.parametrize("seed", SEEDS)
def test_a_one_pass_group_norm_on_offset_data_is_not_judgeable(seed: int) -> None:
    """topi's group_norm takes E[x**2] - E[x]**2: at mean 1000 its rounding can exceed the
    variance itself, and the check says so (failing closed) instead of passing anything."""
    x = _offset_rows(seed, 1000.0).reshape(2, 8, 8, 8)
    model = torch.nn.GroupNorm(2, 8).eval()
    refs = numerics.references(model, [x])
    assert numerics.judgeable(refs)
    with torch.no_grad():
        own = model(x).numpy()
    with pytest.raises(numerics.NotJudgeable, match="not judgeable"):
        numerics.check_outputs([own], refs)
    assert not numerics.matches([own], refs)
    # At mean 0 the same model is judged, and PyTorch's result passes.
    centred = x - 1000.0
    refs = numerics.references(model, [centred])
    assert numerics.judgeable(refs) == []
    with torch.no_grad():
        numerics.check_outputs([model(centred).numpy()], refs)


def _serial_product(x: np.ndarray) -> np.ndarray:
    """Each row's product, one float32 multiplication at a time (correctly rounded)."""
    acc = x[:, 0].copy()
    for j in range(1, x.shape[1]):
        acc = np.multiply(acc, x[:, j], dtype=np.float32)
    return acc


@pytest.mark.parametrize("seed", SEEDS)
def test_a_serial_product_of_2048_terms_passes_and_a_planted_error_fails(seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    x = 1 + 0.01 * torch.randn(64, 2048, generator=generator)
    (ref,) = numerics.references(lambda t: torch.prod(t, dim=1), [x])
    serial = _serial_product(x.numpy())
    assert numerics.compare(serial, ref).ok
    assert numerics.compare(torch.prod(x, dim=1).numpy(), ref).ok
    # One term dropped (a loop one step short) is far outside.
    short = _serial_product(x.numpy()[:, :-1])
    assert not numerics.compare(short, ref).ok


def test_running_products_and_log_sums_pass_and_planted_errors_fail() -> None:
    generator = torch.Generator().manual_seed(3)
    x = 1 + 0.01 * torch.randn(4, 512, generator=generator)
    (ref,) = numerics.references(lambda t: torch.cumprod(t, dim=1), [x])
    running = np.cumprod(x.numpy(), axis=1, dtype=np.float32)
    assert numerics.compare(running, ref).ok
    shifted = running.copy()
    shifted[:, 1:] = running[:, :-1]  # each output one step behind
    assert not numerics.compare(shifted, ref).ok
    y = 5 * torch.randn(8, 300, generator=generator)
    (ref,) = numerics.references(lambda t: torch.logcumsumexp(t, dim=1), [y])
    assert numerics.compare(torch.logcumsumexp(y, dim=1).numpy(), ref).ok
    # Each output without its own newest term must fail.
    short = np.log(np.cumsum(np.exp(y.double().numpy()), axis=1) - np.exp(y.double().numpy()))
    assert not numerics.compare(short[:, 1:].astype(np.float32), numerics.Reference(
        ref.value[:, 1:], ref.dtype, ref.magnitude[:, 1:]
    )).ok  # fmt: skip


def test_a_product_that_underflows_in_float32_is_not_judged_as_zero_or_tiny() -> None:
    """125 terms under 1: 1e-56 in float64, below float32's smallest subnormal. The rounding
    floor makes the allowance cover it, so the output cannot be judged, not a false FAIL."""
    generator = torch.Generator().manual_seed(0)
    x = torch.rand(125, generator=generator) * 0.5
    refs = numerics.references(lambda t: torch.prod(t), [x])
    assert numerics.judgeable(refs)
    assert not numerics.matches([np.float32(0.0).reshape(())], refs)


def test_an_infinite_derivative_gets_the_change_its_input_allowance_makes() -> None:
    """sqrt(3x - (x + x + x)) + x: the argument is exactly 0 in float64 but inexact in float32,
    and sqrt's derivative at 0 is infinite. The allowance is sqrt of the argument's own."""
    x = torch.tensor([1.0, 2.0, 4.0, 0.5])
    refs = numerics.references(lambda t: torch.sqrt(3 * t - (t + t + t)) + t, [x])
    (ref,) = refs
    assert np.isfinite(ref.allowed_error()).all()
    assert (ref.allowed_error() < 0.01 * np.abs(ref.value)).all()
    assert numerics.matches([x.numpy()], refs)
    assert not numerics.matches([np.full(4, 1e6, np.float32)], refs)
    # What float32 can give: sqrt of the argument's largest rounding.
    worst = x.numpy() + np.sqrt(np.float32(3) * x.numpy() * np.float32(2.0**-23))
    assert numerics.matches([worst.astype(np.float32)], refs)


def test_an_op_without_a_rounding_model_is_refused_by_name() -> None:
    x = torch.eye(3) + 0.1
    with pytest.raises(numerics.ReferenceError, match=r"no rounding model for aten\.linalg_inv"):
        numerics.references(torch.linalg.inv, [x])
    assert numerics.rounding_model(torch.ops.aten.linalg_inv_ex.default) == "refused"
    assert numerics.rounding_model(torch.ops.aten.prod.dim_int) == "sum"
    assert numerics.rounding_model(torch.ops.aten.exp.default) == "pointwise"
    assert numerics.rounding_model(torch.ops.aten.view_copy.default) == "move"


def test_an_output_cast_to_half_is_allowed_half_precision_once() -> None:
    """x.half() of float32 data rounds once in float16: the allowance is u(float16) |y|, not
    that scaled again by float16's u (which accepted an all-zero output)."""
    x = torch.linspace(-3.0, 3.0, 16)
    (ref,) = numerics.references(lambda t: t.half(), [x])
    nonzero = ref.value != 0
    per_value = ref.allowed_error()[nonzero] / np.abs(ref.value[nonzero])
    assert per_value.max() <= numerics.ROUNDING_FACTOR * 2.0**-11 * 1.01
    assert numerics.compare(x.half().numpy(), ref).ok
    assert not numerics.compare(np.zeros(16, np.float16), ref).ok
