"""How far a floating-point result may be from the exact one: the kit's one tolerance rule.

A TVM result is compared with a float64 evaluation of the same computation (its own error is
about 2**-29 of float32's, negligible), and may differ from it by what rounding in the
computation's dtype can cause, never by a hand-picked rtol/atol:

    |tvm_i - ref_i| <= ROUNDING_FACTOR * u(dtype) * magnitude_i

``u`` is the dtype's unit roundoff (2**-24 for float32). ``magnitude_i`` is the standard
deviation, in units of ``u``, of the error that rounding puts on output ``i``, carried forward
through the computation's ATen graph in one float64 pass (composite ops such as GELU, softmax
and the norms decomposed, so what they round inside counts): an op's output inherits its
inputs' error variances through its squared derivatives (first order; errors of different
elements independent) and adds its own rounding: ``|y|`` for a correctly rounded operation,
``2 k |y|`` for an elementary function measured at ``k`` ulps on TVM's code
(ELEMENTARY_ULPS), and for a sum of ``n`` terms the root sum of its squared partial sums,
expected over the order of the terms (``_partial_sums``: about ``sqrt(n/6) * rms(terms) *
sqrt(n)`` for terms of mixed sign, ``sqrt(n/3) * |sum|`` for terms of one sign). Inputs and
weights are the same values on both sides; Python constants are rounded to the dtype, as TVM
rounds them; a cast inside the model (``.float()``, ``.half()``) runs in float64 in the
reference and counts as a rounding. The cost is a few float64 passes over the graph, linear in
its size. docs/model_import.md ("The tolerance rule") has the model, its assumptions and the
measurement of ROUNDING_FACTOR.

Discrete outputs (integer and bool dtypes) must equal the reference, except where they were
decided by comparing floating values that rounding could reorder: an argmax / argmin index is
accepted when the float64 scores of TVM's index and the reference's differ by no more than the
allowance of their difference; a comparison's result when its two sides are that close. Other
discrete outputs accept the values the reference takes when every input and weight moves by a
rounding-sized amount.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch

# Multiples of u * magnitude accepted. The magnitude bounds the error's standard deviation
# (each rounding counted at its largest, |d| <= u |y|, where round-to-nearest errors have
# variance at most u**2 |y|**2 / 3): 3.5 is at least 6 standard deviations of that, a chance
# under 2e-9 per element for the near-Gaussian sum of many independent roundings. Measured over
# the sweep (tools/numerics_sweep) in docs/model_import.md.
ROUNDING_FACTOR = 3.5

UNIT_ROUNDOFF: dict[str, float] = {
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
    "float32": 2.0**-24,
    "float64": 2.0**-53,
}

# Perturbed float64 evaluations tried for a discrete output not decided from scores.
_DISCRETE_TRIALS = 8


def unit_roundoff(dtype: Any) -> float:
    """The unit roundoff of a floating dtype (numpy or torch spelling)."""
    name = str(dtype).removeprefix("torch.")
    if name not in UNIT_ROUNDOFF:
        raise ValueError(
            f"no unit roundoff for dtype {name!r}; floating dtypes known: {sorted(UNIT_ROUNDOFF)}"
        )
    return UNIT_ROUNDOFF[name]


@dataclasses.dataclass(frozen=True)
class Reference:
    """One output of a computation, evaluated in float64.

    ``dtype`` is the dtype the checked implementation must produce (the computation's own
    output dtype). For floating outputs ``magnitude`` is the per-element size of the rounding
    error (see the module docstring); a discrete output decided from floating values has
    ``scores``, any other ``admissible``: the values the reference takes under rounding-sized
    perturbations of its inputs (the first is the unperturbed one).
    """

    value: np.ndarray
    dtype: np.dtype
    magnitude: np.ndarray | None
    admissible: tuple[np.ndarray, ...] = ()
    scores: Scores | None = None

    @property
    def discrete(self) -> bool:
        return self.magnitude is None

    def allowed_error(self) -> np.ndarray:
        """Per element: the error rounding in ``dtype`` can cause."""
        if self.magnitude is None:
            raise ValueError("a discrete output has no error allowance; it must match exactly")
        return ROUNDING_FACTOR * unit_roundoff(self.dtype) * self.magnitude


@dataclasses.dataclass(frozen=True)
class Comparison:
    """The outcome of checking one output against its reference."""

    ok: bool
    # Largest observed error / allowed error over the elements (0 when exact; inf when an
    # element with no allowance differs). Discrete outputs: 0 or inf.
    worst_ratio: float
    message: str
    # False when the comparison could not tell a right output from a wrong one (vacuous):
    # then ``ok`` is False too, whatever the output was.
    judgeable: bool = True


class NotJudgeable(AssertionError):
    """The rule's allowance would accept an all-zero output (and the doubled one) at this
    input: it cannot tell right from wrong there, so the check fails closed."""


@contextmanager
def _float64_default() -> Iterator[None]:
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


# Composite ATen ops are evaluated through their decompositions so that the values they round
# inside (1 + erf(x) in GELU, the sum of exponentials in softmax, a variance) are counted.
_aten = torch.ops.aten
_DECOMPOSED = [
    _aten.gelu,
    _aten._softmax,
    _aten._log_softmax,
    _aten.logsumexp,
    _aten.native_layer_norm,
    _aten.native_group_norm,
    _aten.native_batch_norm,
    _aten._native_batch_norm_legit,
    _aten._native_batch_norm_legit_no_training,
    _aten.silu,
    _aten.mish,
    _aten.softplus,
    _aten.elu,
    _aten.hardswish,
    _aten.hardsigmoid,
    _aten.linalg_vector_norm,
    _aten._scaled_dot_product_flash_attention_for_cpu,
    # Composites whose decompositions lower to ops with a rounding model of their own
    # (tools/numerics_sweep/ops_walk.py: no decomposition reaches an unlisted refused op).
    _aten._safe_softmax,
    _aten._prelu_kernel,
    _aten.glu,
    _aten.log_sigmoid_forward,
    _aten.addmv,
    _aten.addr,
    _aten.mv,
    _aten.dot,
    _aten.vdot,
    _aten.trace,
    _aten.rsub,
    _aten.addcmul,
    _aten.addcdiv,
    _aten.floor_divide,
    _aten.logspace,
    _aten.nansum,
    _aten.mse_loss,
    _aten.smooth_l1_loss,
    _aten.huber_loss,
    _aten.soft_margin_loss,
    _aten.binary_cross_entropy,
    _aten.binary_cross_entropy_with_logits,
    _aten.nll_loss_forward,
    _aten.nll_loss2d_forward,
    _aten.norm,
    _aten.dist,
    _aten.renorm,
    _aten.upsample_bilinear2d,
    _aten.upsample_linear1d,
    _aten.upsample_bicubic2d,
    _aten.upsample_trilinear3d,
    _aten._upsample_nearest_exact1d,
    _aten.grid_sampler_2d,
    _aten.embedding,
    _aten.rot90,
    _aten.take,
    _aten.diag_embed,
    _aten.index_add,
    _aten.index_copy,
    _aten.index_fill,
    _aten.im2col,
    _aten._chunk_cat,
    _aten.unsafe_split,
    _aten.block_diag,
    _aten.linalg_cross,
    _aten.aminmax,
    _aten.max_unpool2d,
    _aten.max_unpool3d,
    _aten._unsafe_masked_index,
    _aten._batch_norm_with_update,
]

# Elementary functions are not correctly rounded: each is counted as (k, c), an error of at most
# k ulps of its result plus c units of u absolute (TVM's tanh and sigmoid near 0 are accurate to
# an absolute amount). Measured on TVM 0.27's llvm code by tools/numerics_sweep/ulps.py (a dense
# grid of float32 arguments over each function's domain, every llvm variant of the sweep; the
# largest, rounded up to a quarter); `ulps -- --check` fails if one is exceeded. An ulp is at
# most 2u relative, so the function rounds by at most 2 k u |y| + c u. Keys: ATen's op names
# (`pow` is Relax's `power`).
ELEMENTARY_ULPS: dict[str, tuple[float, float]] = {
    "acos": (1.0, 0.0),
    "asin": (1.0, 0.0),
    "atan": (1.0, 0.0),
    "cos": (0.75, 0.25),
    "cosh": (1.0, 0.0),
    "erf": (1.0, 0.0),
    "exp": (0.75, 0.0),
    "log": (0.75, 0.25),
    "pow": (0.75, 0.0),
    "rsqrt": (1.5, 0.25),
    "sigmoid": (1.5, 0.5),
    "sin": (0.75, 0.25),
    "sinh": (1.75, 0.0),
    "tan": (2.0, 0.0),
    "tanh": (1.5, 0.5),
}
# An elementary function TVM has no op of its own for (expm1, log1p, exp2, ...) or one not
# measured: the largest measured error of each kind.
_UNMEASURED_ULPS = (
    max(k for k, _ in ELEMENTARY_ULPS.values()),
    max(c for _, c in ELEMENTARY_ULPS.values()),
)
# Basic arithmetic (IEEE 754: correctly rounded, half an ulp, at most u |y|).
_CORRECTLY_ROUNDED = frozenset(
    "add sub rsub mul div true_divide sqrt reciprocal square fma".split()
)


@dataclasses.dataclass(frozen=True)
class FunctionErrors:
    """How far the functions a target's code calls are from exact, per ATen op name.

    ``elementary``: (k ulps of the result, c units of u absolute); ``unlisted``: the same for an
    elementary function the table does not name; ``operations``: ulps of basic arithmetic that
    is not correctly rounded on the target; ``ulps_per_argument``: ulps added per unit of the
    first argument's magnitude (CUDA's fast exp). ``in_float32_ulps``: the numbers are float32
    ulps of a float32 evaluation, so a narrower dtype counts them at its own u plus its final
    rounding and a float64 computation is not affected (the llvm table is applied as measured,
    in the computation's dtype).
    """

    name: str
    elementary: dict[str, tuple[float, float]]
    unlisted: tuple[float, float]
    operations: dict[str, float] = dataclasses.field(default_factory=dict)
    ulps_per_argument: dict[str, float] = dataclasses.field(default_factory=dict)
    in_float32_ulps: bool = False


LLVM_FUNCTIONS = FunctionErrors("llvm (measured)", ELEMENTARY_ULPS, _UNMEASURED_ULPS)

# TVM 0.27 compiles CUDA with --use_fast_math (tvm.support.nvcc, NVRTC and nvcc alike), so its
# float32 code calls the hardware approximations: nvcc turns tanhf into tanh.approx.f32, expf
# and logf into ex2/lg2.approx, sinf/cosf into sin/cos.approx, x/y into div.approx, sqrtf and
# rsqrtf into their .approx forms (read from the PTX of `nvcc -arch=sm_90 --use_fast_math`).
# The bounds are NVIDIA's documented ones for those intrinsics (CUDA C++ Programming Guide,
# intrinsic functions; prec-div/prec-sqrt=false rows): __tanhf a relative error of 2**-10.987
# (4133 float32 ulps); __expf 2 + 1.173 |x| ulps; __logf 3 ulps, or 2**-21.41 absolute on
# [0.5, 2]; __sinf / __cosf 2**-21.41 / 2**-21.19 absolute on [-pi, pi] (NVIDIA gives no bound
# outside it); x/y 2 ulps; 1/x 1; sqrtf 1; rsqrtf 2. A function with no bound of its own
# counts at the coarsest of CUDA's documented single-precision bounds (4 ulps) plus sin/cos's
# absolute 2**-21 (8 u). Measured on a GPU (`ulps.py --variants cuda`, H100 sm_90, driver
# 580.159.04, 2026-11-28; docs/deployment.md "Runs on GPUs"): every function within these
# bounds except four, which take the measurement (the largest over ulps.py's grids, rounded
# up to a quarter): sin and cos on [-10, 10] (outside NVIDIA's [-pi, pi]), and tan and pow,
# which fast math also replaces (__tanf: __sinf / __cosf; __powf: exp2(y log2 x) with the
# approximate ex2/lg2, its error growing with |y log2 x|: measured for |y| <= 4 and x in
# [1e-3, 100], |y log2 x| up to 40). A documented bound stays where it is the larger:
# another GPU may use all of it.
_CUDA_TANH_ULPS = 2.0**-10.987 / 2.0**-23
CUDA_FAST_MATH_FUNCTIONS = FunctionErrors(
    "cuda (--use_fast_math: NVIDIA's documented bounds, measured where larger)",
    elementary={
        "tanh": (_CUDA_TANH_ULPS, 0.0),
        "exp": (2.0, 0.0),
        "log": (3.0, 2.0**-21.41 / 2.0**-24),
        "rsqrt": (2.0, 0.0),
        # Measured (the comment above): k ulps of the result plus c units of 2**-24.
        "sin": (18.25, 20.25),
        "cos": (17.25, 19.25),
        "tan": (40.0, 3.75),
        "pow": (57.75, 0.0),
    },
    unlisted=(4.0, 8.0),
    operations={"div": 2.0, "true_divide": 2.0, "reciprocal": 1.0, "sqrt": 1.0},
    ulps_per_argument={"exp": 1.173},
    in_float32_ulps=True,
)


def function_errors(target: Any = None) -> FunctionErrors:
    """The function errors of ``target`` (a tvm Target, a kind name or a target string; None
    is llvm): CUDA's fast-math bounds for a cuda target, the measured llvm table otherwise."""
    kind = getattr(getattr(target, "kind", None), "name", None)
    if kind is None and isinstance(target, str):
        text = target.strip()
        # TVM_TEST_TARGETS entries may be JSON objects ({"kind": "cuda", ...}).
        spec = json.loads(text) if text.startswith("{") else {"kind": (text.split() or [""])[0]}
        kind = spec.get("kind")
    elif kind is None and isinstance(target, dict):
        kind = target.get("kind")
    return CUDA_FAST_MATH_FUNCTIONS if kind == "cuda" else LLVM_FUNCTIONS


# Ops that move or select values without computing: the variance of their output is the op
# applied to the variances of their inputs (constants they insert, a pad value, are exact).
_MOVES = frozenset(
    (
        "alias as_strided cat clone constant_pad_nd contiguous copy detach expand flatten "
        "index_select index permute reshape select slice split split_with_sizes squeeze stack "
        "t transpose unsqueeze view unbind unsafe_view _unsafe_view lift_fresh_copy repeat roll "
        "flip narrow movedim gather pad reflection_pad1d reflection_pad2d replication_pad1d "
        "replication_pad2d masked_fill diagonal unfold upsample_nearest1d upsample_nearest2d "
        "_unsafe_index tril triu where slice_scatter select_scatter index_put scatter "
        "pixel_shuffle pixel_unshuffle channel_shuffle masked_select masked_scatter put "
        "reflection_pad3d replication_pad3d diagonal_scatter as_strided_scatter _unsafe_index_put"
    ).split()
)
# Moves that add instead where accumulate=True (index_put's third positional argument).
_ACCUMULATING_PUTS = frozenset(("index_put", "_unsafe_index_put"))


def _accumulates(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    return bool(args[3] if len(args) > 3 else kwargs.get("accumulate", False))


def _put_partial_sums(args: tuple[Any, ...]) -> torch.Tensor:
    """A bound on the sum over an accumulating put's additions of their squared partial sums,
    per element: the count of additions there times the square of the data's magnitude plus
    the values' added there (no partial sum exceeds that, in any order)."""
    data, indices, values = args[0], args[1], args[2]
    magnitude = torch.index_put(data.abs(), indices, values.abs(), accumulate=True)
    count = torch.index_put(
        torch.zeros_like(data), indices, torch.ones_like(values), accumulate=True
    )
    return count * magnitude**2


# Ops whose result is one of their inputs' values chosen by comparing them (or its negation):
# the error of the result is at most that of the input it came from.
_SELECTIONS = frozenset(
    (
        "abs neg relu hardtanh clamp clamp_min clamp_max sign maximum minimum fmax fmin amax "
        "amin max min max_pool1d_with_indices max_pool2d_with_indices max_pool3d_with_indices "
        "adaptive_max_pool2d sort topk"
    ).split()
)
# Ops that create values from constants (rounded to the dtype already, see _round_scalar).
_CONSTANTS = frozenset(
    (
        "full zeros ones empty scalar_tensor arange zeros_like ones_like full_like empty_like "
        "new_zeros new_ones new_full new_empty linspace fill zero eye"
    ).split()
)
_CASTS = frozenset("_to_copy to type_as".split())
_COMPARISONS = frozenset("gt lt ge le eq ne".split())

# Ops that pick values along a dim and return (values, indices), or one value without a dim.
_INDEXED_SELECTIONS = frozenset("cummax cummin kthvalue median nanmedian mode".split())
_POOLED_SELECTIONS = frozenset(
    "adaptive_max_pool2d adaptive_max_pool3d fractional_max_pool2d fractional_max_pool3d".split()
)
# Every kind rounding_model gives; "refused" raises ReferenceError naming the op.
MODEL_KINDS = (
    "constant", "cast", "move", "selection", "indexed selection", "sum", "pointwise", "discrete",
    "refused",
)  # fmt: skip


def _base_name(target: Any) -> str:
    """An op's name without its overload or its in-place underscore."""
    name = _op_name(target)
    return name.rstrip("_") if not name.startswith("_") else name


def rounding_model(target: Any) -> str:
    """How the reference carries rounding through ATen op ``target`` (an OpOverload, or an op
    name): one of MODEL_KINDS. An op that is none of them is refused (ReferenceError), never
    given a guessed allowance."""
    name = target if isinstance(target, str) else _base_name(target)
    plain = name.removesuffix("_copy")
    if getattr(target, "_overloadname", "") in ("reduce", "value_reduce"):
        # scatter(reduce=...) and scatter_reduce combine values: no move, no model.
        return "refused"
    if name in _CONSTANTS:
        return "constant"
    if name in _CASTS:
        return "cast"
    if name in _MOVES or plain in _MOVES:
        return "move"
    if name in _SELECTIONS or name in _POOLED_SELECTIONS:
        return "selection"
    if name in _INDEXED_SELECTIONS:
        return "indexed selection"
    if name in _SUM_RULES:
        return "sum"
    tags = getattr(target, "tags", ())
    if torch.Tag.pointwise in tags or name in _CORRECTLY_ROUNDED:
        return "pointwise"
    if torch.Tag.inplace in tags and _functional_is_pointwise(target):
        # mish_, threshold_ (inplace=True) carry no pointwise tag of their own: their value is
        # the functional op's.
        return "pointwise"
    return "refused"


def _functional_is_pointwise(target: Any) -> bool:
    """Whether the out-of-place overload of in-place op ``target`` is tagged pointwise."""
    packet = getattr(torch.ops.aten, _op_name(target).removesuffix("_"), None)
    functional = getattr(packet, getattr(target, "_overloadname", "default"), None)
    return torch.Tag.pointwise in getattr(functional, "tags", ())


# The ATen ops PyTorch's corpus emits that the rule refuses, listed once (iterative linear
# algebra, FFTs, histograms, reductions that combine values by index, losses and resizes the
# rule does not decompose); tools/numerics_sweep/ops_walk.py checks the corpus against it.
REFUSED_OPS = frozenset(
    """
    aten._cdist_forward.default aten._ctc_loss.default aten._embedding_bag_forward_only.default
    aten._fft_c2r.default aten._histogramdd_bin_edges.default
    aten._histogramdd_from_bin_cts.default aten._linalg_det.default aten._linalg_eigh.default
    aten._linalg_slogdet.default aten._linalg_solve_ex.default aten._linalg_svd.default
    aten._pdist_forward.default aten._softmax_backward_data.default aten._trilinear.default
    aten._unique2.default aten._unsafe_masked_index_put_accumulate.default
    aten._upsample_bicubic2d_aa.default aten._upsample_bilinear2d_aa.default
    aten.addbmm.default aten.cholesky.default
    aten.cholesky_inverse.default aten.cholesky_solve.default aten.embedding_renorm_.default
    aten.geqrf.default aten.grid_sampler_3d.default aten.histc.default aten.histogram.bin_ct
    aten.index_reduce.default aten.linalg_cholesky_ex.default
    aten.linalg_householder_product.default aten.linalg_inv_ex.default
    aten.linalg_ldl_factor_ex.default aten.linalg_ldl_solve.default aten.linalg_lstsq.default
    aten.linalg_lu.default aten.linalg_lu_factor_ex.default aten.linalg_lu_solve.default
    aten.linalg_matrix_exp.default aten.linalg_pinv.atol_rtol_tensor aten.linalg_qr.default
    aten.linalg_solve_triangular.default aten.lu_unpack.default
    aten.max_pool2d_with_indices_backward.default
    aten.multi_margin_loss.default aten.multilabel_margin_loss_forward.default
    aten.ormqr.default aten.resize_.default aten.resize_as_.default aten.scatter.reduce
    aten.scatter_add.default aten.scatter_reduce.two aten.segment_reduce.default
    aten.triangular_solve.default aten.unique_consecutive.default aten.unique_dim.default
    torch_nn._linear_cross_entropy_batch_chunked.default
    torch_nn._linear_cross_entropy_batch_chunked_no_reduction.default
    """.split()
)


def _qualified(target: Any) -> str:
    return str(target) if not isinstance(target, str) else f"aten.{target}"


class ReferenceError(ValueError):
    """The computation cannot be evaluated in float64 (a value the model makes stays narrower)."""


def _decompositions() -> dict[Any, Any]:
    from torch._decomp import get_decompositions

    # Only these: torch's wider tables lower some ops to prims.
    table = get_decompositions(_DECOMPOSED)
    # The statistics as TVM computes them (the algorithms the allowance models, on purpose).
    for packet, function in (
        (_aten.var, _two_pass_var),
        (_aten.var_mean, _two_pass_var_mean),
        (_aten.std, _two_pass_std),
        (_aten.std_mean, _two_pass_std_mean),
    ):
        table[packet.correction] = function
    table[_aten.native_group_norm.default] = _one_pass_group_norm
    return table


# -- The statistics TVM computes ------------------------------------------------------------
# TVM 0.26 and 0.27 legalize relax.variance / relax.std (torch.var, std, var_mean, the
# training batch norm) and topi's layer_norm in two passes: the mean as sum / n, then the mean
# of (x - mean)**2, which stays accurate on offset data; the frontends scale a corrected
# variance by n / (n - correction) as a constant of the dtype. topi's group_norm (and
# instance_norm) sum x and x**2 in one pass and take E[x**2] - E[x]**2, which loses about
# u * E[x**2] / var on offset data. The reference decomposes each into those steps, so the
# allowance is what that algorithm rounds: a TVM that moves to a worse algorithm fails.


def _reduced_dims(x: torch.Tensor, dim: Any) -> list[int]:
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(x.dim()))
    return [d % max(x.dim(), 1) for d in _as_list(dim)]


def _two_pass_var_mean(
    x: torch.Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    dims = _reduced_dims(x, dim)
    count = math.prod(x.shape[d] for d in dims)
    correction = 1 if correction is None else correction
    mean = torch.mean(x, dims, keepdim=True) if dims else x
    centred = x - mean
    squares = centred * centred
    divisor = max(count - correction, 0)
    if dims:
        variance = torch.mean(squares, dims, keepdim=keepdim)
    else:
        variance = squares
    if divisor == 0:
        variance = variance * count / 0.0
    elif divisor != count:
        variance = variance * (count / divisor)
    if dims and not keepdim:
        mean = mean.squeeze(dims)
    return variance, mean


def _two_pass_var(
    x: torch.Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> torch.Tensor:
    return _two_pass_var_mean(x, dim, correction=correction, keepdim=keepdim)[0]


def _two_pass_std(
    x: torch.Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> torch.Tensor:
    return torch.sqrt(_two_pass_var(x, dim, correction=correction, keepdim=keepdim))


def _two_pass_std_mean(
    x: torch.Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    variance, mean = _two_pass_var_mean(x, dim, correction=correction, keepdim=keepdim)
    return torch.sqrt(variance), mean


def _one_pass_group_norm(
    x: torch.Tensor,
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
    batch: int,
    channels: int,
    inner: int,
    groups: int,
    eps: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    grouped = x.reshape(batch, groups, -1)
    mean = torch.mean(grouped, [2], keepdim=True)
    square_mean = torch.mean(grouped * grouped, [2], keepdim=True)
    rstd = torch.rsqrt(square_mean - mean * mean + eps)
    out = ((grouped - mean) * rstd).reshape(x.shape)
    per_channel = [1, channels] + [1] * (x.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(per_channel)
    if bias is not None:
        out = out + bias.reshape(per_channel)
    return out, mean.reshape(batch, groups), rstd.reshape(batch, groups)


def _op_name(target: Any) -> str:
    name = getattr(getattr(target, "overloadpacket", target), "__name__", str(target))
    return name.split(".")[0]


def _flatten(output: Any, path: str = "output") -> list[torch.Tensor]:
    if isinstance(output, torch.Tensor):
        return [output]
    if isinstance(output, (tuple, list)):
        return [t for i, o in enumerate(output) for t in _flatten(o, f"{path}[{i}]")]
    raise TypeError(f"unsupported output type at {path}: {type(output).__name__}")


def _as_tensor(value: Any) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value.detach()
    array = np.asarray(value)
    if array.dtype.name == "bfloat16":  # ml_dtypes' bfloat16, which torch cannot read
        return torch.from_numpy(array.view(np.int16).copy()).view(torch.bfloat16)
    return torch.as_tensor(array)


def numpy_dtype(dtype: Any) -> np.dtype:
    """The numpy dtype of a torch or numpy dtype; bfloat16 is ml_dtypes' (what TVM returns)."""
    name = str(dtype).removeprefix("torch.")
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _partial_sums(total: torch.Tensor, squares: torch.Tensor, count: float) -> torch.Tensor:
    """Sum over k of s_k**2, the squared partial sums of a sum of ``count`` terms whose total is
    ``total`` and whose squares sum to ``squares``, expected over the orders of the terms.

    Each addition rounds its partial sum s_k, so the sum's accumulated rounding has variance
    about u**2 * sum_k s_k**2. With the terms taken in a random order, s_k is the sum of a
    random k-subset: E[s_k] = (k/n) S and Var[s_k] = k (n-k) / (n-1) * sigma**2 (sampling without
    replacement, sigma**2 the terms' variance); summed over k = 1..n this is exactly
    (n + 1) (2 S**2 + Q) / 6 with Q the sum of the squared terms. Terms of one sign give
    about n S**2 / 3 (the partial sums grow to S), terms of mixed sign about n Q / 6 (a random
    walk): the rounding follows the partial sums, not the terms' total size.
    """
    return (count + 1) * (2 * total**2 + squares) / 6


# Products held at once when the partial sums of a matrix product are taken in order.
_CHUNK_ELEMENTS = 2**23


def _ordered_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Sum over k of s_k**2 for each element of a @ b (a: (..., M, K), b: (..., K, N)), the
    partial sums taken in index order: what a loop over k (TVM's llvm code) rounds."""
    batch = a.shape[:-2]
    a3 = a.reshape(-1, *a.shape[-2:])
    b3 = b.expand(*batch, *b.shape[-2:]).reshape(-1, *b.shape[-2:]) if batch else b[None]
    m, k = a3.shape[-2:]
    n = b3.shape[-1]
    out = torch.empty(a3.shape[0], m, n, dtype=torch.float64)
    rows = max(1, _CHUNK_ELEMENTS // max(k * n, 1))
    for i in range(a3.shape[0]):
        for start in range(0, m, rows):
            products = a3[i, start : start + rows, :, None] * b3[i, None, :, :]
            out[i, start : start + rows] = products.cumsum(dim=1).square().sum(dim=1)
    return out.reshape(*batch, m, n)


def _ordered_sum(x: torch.Tensor, dims: Any, keepdim: bool, like: torch.Tensor) -> torch.Tensor:
    """Sum over k of s_k**2 for a sum of x over ``dims`` (None: all), in index order."""
    if x.dim() == 0:
        # A 0-d tensor is a sum of one term (dim 0 and -1 name it too): its partial sum is itself.
        return x.square().reshape(like.shape)
    dims = list(range(x.dim())) if dims is None else [d % x.dim() for d in _as_list(dims)]
    kept = [d for d in range(x.dim()) if d not in dims]
    moved = x.permute(*kept, *dims).reshape(*[x.shape[d] for d in kept], -1)
    ordered = moved.cumsum(dim=-1).square().sum(dim=-1)
    return ordered.reshape(like.shape)


def _as_list(dims: Any) -> list[int]:
    return list(dims) if isinstance(dims, (list, tuple)) else [dims]


def _ordered_conv2d(
    x: torch.Tensor, weight: torch.Tensor, stride: Any, padding: Any, dilation: Any, groups: int
) -> torch.Tensor | None:
    """Sum over k of s_k**2 for each output of a 2-D convolution, its terms in the order
    (in-channel, kernel row, kernel column); None for other convolutions."""
    if x.dim() != 4 or weight.dim() != 4:
        return None
    n, c = x.shape[:2]
    o = weight.shape[0]
    columns = torch.nn.functional.unfold(
        x, weight.shape[2:], dilation=dilation, padding=padding, stride=stride
    )  # (n, c * kh * kw, L)
    per_group = c // groups
    span = per_group * math.prod(weight.shape[2:])
    out_per_group = o // groups
    length = columns.shape[-1]
    result = torch.empty(n, o, length, dtype=torch.float64)
    flat = weight.reshape(o, -1)
    chunk = max(1, _CHUNK_ELEMENTS // max(span * length, 1))
    for g in range(groups):
        cols = columns[:, g * span : (g + 1) * span]  # (n, span, L)
        for i in range(n):
            for start in range(g * out_per_group, (g + 1) * out_per_group, chunk):
                stop = min(start + chunk, (g + 1) * out_per_group)
                products = flat[start:stop, :, None] * cols[i, None]  # (oc, span, L)
                result[i, start:stop] = products.cumsum(dim=1).square().sum(dim=1)
    return result


def _round_scalar(value: Any, dtype: torch.dtype) -> Any:
    """A Python float constant as the computation's dtype holds it (TVM rounds it so)."""
    if isinstance(value, float) and math.isfinite(value):
        return torch.tensor(value, dtype=dtype).item()
    return value


def _float_defaults(
    target: Any, args: tuple[Any, ...], kwargs: dict[str, Any], dtype: torch.dtype
) -> dict[str, Any]:
    """The float arguments an op takes at their schema default (LeakyReLU's slope 0.01, an
    ELU's alpha), rounded to the dtype: TVM's importers write them into the model as
    constants of that dtype."""
    schema = getattr(target, "_schema", None)
    if schema is None:
        return {}
    filled = {}
    for position, argument in enumerate(schema.arguments):
        if position < len(args) and not argument.kwarg_only:
            continue
        if argument.name in kwargs or not argument.has_default_value():
            continue
        if isinstance(argument.default_value, float):
            filled[argument.name] = _round_scalar(argument.default_value, dtype)
    return filled


def _expanded(variance: torch.Tensor | None, like: torch.Tensor) -> torch.Tensor:
    if variance is None:
        return torch.zeros_like(like, dtype=torch.float64)
    return variance.expand(like.shape) if variance.shape != like.shape else variance


@dataclasses.dataclass(frozen=True)
class Scores:
    """What a discrete output was decided from: the float64 scores an argmax / argmin chose
    among (``dim`` None: the flattened tensor), or the two sides of a comparison, each with its
    rounding magnitude."""

    kind: str  # "argmax", "argmin" or "compare"
    values: tuple[np.ndarray, ...]
    magnitudes: tuple[np.ndarray, ...]
    roundoff: float  # u of the computation's dtype: the magnitudes' unit
    dim: int | None = None
    keepdim: bool = False


class _Propagator(torch.fx.Interpreter):
    """Runs a traced graph in float64, carrying for every floating value the variance of the
    error that rounding in the computation's dtype puts on it, in units of u(dtype)**2.

    Linear in the graph: each op's output variance comes from its inputs' variances (first
    order: squared derivatives; errors of different elements taken as independent) plus the
    op's own rounding: |y|**2 for a correctly rounded op, (2 k |y|)**2 for an elementary
    function of k ulps, and for a sum the squared partial sums (see _partial_sums).
    """

    def __init__(
        self,
        module: torch.fx.GraphModule,
        dtype: torch.dtype,
        functions: FunctionErrors = LLVM_FUNCTIONS,
    ) -> None:
        super().__init__(module)
        self.dtype = dtype
        self.u = unit_roundoff(dtype)
        self.functions = functions
        self.variance: dict[torch.fx.Node, Any] = {}
        self.real_dtype: dict[torch.fx.Node, torch.dtype] = {}
        self.scores: dict[torch.fx.Node, Any] = {}
        # The dtype each placeholder had before the float64 copy (set by the caller).
        self.leaf_dtypes: dict[str, torch.dtype | None] = {}
        self.current_target: Any = None
        self.current_real: torch.dtype = dtype

    # -- bookkeeping -------------------------------------------------------------------------
    def _var_of(self, arg: Any) -> Any:
        return torch.fx.node.map_arg(arg, lambda node: self.variance.get(node))

    def _rounding(self, real: torch.dtype) -> float:
        """One rounding in dtype ``real``, in units of u(computation dtype)**2."""
        name = str(real).removeprefix("torch.")
        if name not in UNIT_ROUNDOFF:
            return 1.0
        return (UNIT_ROUNDOFF[name] / self.u) ** 2

    def run_node(self, n: torch.fx.Node) -> Any:
        if n.op == "placeholder":
            result = super().run_node(n)
            original = self.leaf_dtypes.get(n.name)
            if isinstance(result, torch.Tensor) and result.is_floating_point():
                # Inputs and weights are the same values on both sides: no error.
                self.variance[n] = torch.zeros((), dtype=torch.float64).expand(result.shape)
                self.real_dtype[n] = original or self.dtype
            return result
        if n.op != "call_function":
            result = super().run_node(n)
            if n.op == "get_attr" and isinstance(result, torch.Tensor):
                if result.is_floating_point():
                    self.variance[n] = torch.zeros_like(result, dtype=torch.float64)
                    self.real_dtype[n] = self.dtype
            return result
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        # An in-place op (relu_) follows the rule of its functional form.
        name = _op_name(n.target)
        name = name.rstrip("_") if not name.startswith("_") else name
        real_target: torch.dtype | None = None
        if isinstance(kwargs.get("dtype"), torch.dtype) and kwargs["dtype"].is_floating_point:
            # A float64 here is the trace's own (a decomposition computes in its input's
            # dtype): the value stays in the dtype it had. A narrower one is the model's cast.
            if kwargs["dtype"] != torch.float64:
                real_target = kwargs["dtype"]
            kwargs = {**kwargs, "dtype": torch.float64}
        args = tuple(torch.fx.node.map_aggregate(args, lambda a: _round_scalar(a, self.dtype)))
        kwargs = {k: _round_scalar(v, self.dtype) for k, v in kwargs.items()}
        kwargs.update(_float_defaults(n.target, args, kwargs, self.dtype))
        result = n.target(*args, **kwargs)
        self._check_float64(n, result)
        inputs_real = [
            self.real_dtype[a]
            for a in n.all_input_nodes
            if a in self.real_dtype and self.real_dtype[a] is not None
        ]
        real = real_target or (
            functools.reduce(torch.promote_types, inputs_real) if inputs_real else self.dtype
        )
        if name == "getitem":
            parent = n.args[0]
            var = self.variance.get(parent)
            index = n.args[1]
            self.variance[n] = var[index] if isinstance(var, (tuple, list)) else None
            if parent in self.real_dtype:
                self.real_dtype[n] = self.real_dtype[parent]
            scores = self.scores.get(parent)
            if isinstance(scores, dict) and index in scores:
                self.scores[n] = scores[index]
            return result
        self.real_dtype[n] = real
        self.current_target = n.target
        self.current_real = real
        self.variance[n] = _exact_specials(
            self._variance(n, name, args, kwargs, result, real), result
        )
        return result

    def _check_float64(self, n: torch.fx.Node, result: Any) -> None:
        for out in result if isinstance(result, (tuple, list)) else (result,):
            if (
                isinstance(out, torch.Tensor)
                and out.is_floating_point()
                and out.dtype != torch.float64
            ):
                raise ReferenceError(
                    f"the float64 reference of this computation is not float64 at {n.name} "
                    f"({n.target}): it gives {out.dtype}; a value the model creates in a fixed "
                    f"dtype cannot be evaluated in float64, so the rule cannot judge it"
                )

    # -- the rules ---------------------------------------------------------------------------
    def _variance(
        self,
        n: torch.fx.Node,
        name: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        result: Any,
        real: torch.dtype,
    ) -> Any:
        outputs = result if isinstance(result, (tuple, list)) else (result,)
        if not any(isinstance(o, torch.Tensor) and o.is_floating_point() for o in outputs):
            self._record_scores(n, name, args, kwargs, result)
            return None
        rounding = self._rounding(real)
        variances = self._var_of(n.args)
        kw_variances = self._var_of(n.kwargs)
        if name in _CONSTANTS:
            return torch.zeros_like(result, dtype=torch.float64)
        if name in _CASTS:
            source = variances[0]
            # A cast to a narrower dtype rounds; a cast that changes nothing is counted too
            # (the model's own dtype at that point is not tracked), which only widens.
            return _expanded(source, result) + rounding * result**2
        kind = rounding_model(n.target)
        if kind == "move":
            moved = self._move(n, args, kwargs, variances, kw_variances)
            if name in _ACCUMULATING_PUTS and _accumulates(args, kwargs):
                # index_put(accumulate=True) adds: each addition rounds its partial sum.
                return moved + rounding * _put_partial_sums(args)
            return moved
        if kind == "selection":
            return self._selection(n, name, args, kwargs, result, variances)
        if kind == "indexed selection":
            return self._indexed_selection(n, args, kwargs, result, variances)
        if kind == "sum":
            return _SUM_RULES[name](self, args, kwargs, result, variances, rounding)
        if kind == "pointwise":
            return self._pointwise(n, name, args, kwargs, result, variances, rounding)
        raise ReferenceError(
            f"no rounding model for {_qualified(n.target)} (at {n.name}): the kit models each "
            f"op it evaluates or refuses it, never a guess (docs/model_import.md, 'The "
            f"tolerance rule'); a case that needs it is not judged"
        )

    def _record_scores(
        self,
        n: torch.fx.Node,
        name: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        result: Any,
    ) -> None:
        variances = self._var_of(n.args)
        if name in ("argmax", "argmin") and isinstance(args[0], torch.Tensor):
            dim = args[1] if len(args) > 1 else kwargs.get("dim")
            keepdim = bool(args[2] if len(args) > 2 else kwargs.get("keepdim", False))
            self.scores[n] = Scores(
                name,
                (args[0].numpy(),),
                (_expanded(variances[0], args[0]).sqrt().numpy(),),
                self.u,
                dim,
                keepdim,
            )
        elif name in _COMPARISONS:
            sides = []
            for value, var in zip(args[:2], variances[:2], strict=True):
                value = value if isinstance(value, torch.Tensor) else torch.tensor(float(value))
                var = var if isinstance(var, torch.Tensor) else None
                sides.append((value.double(), _expanded(var, value.double()).sqrt()))
            shape = result.shape
            self.scores[n] = Scores(
                "compare",
                tuple(v.expand(shape).numpy() for v, _ in sides),
                tuple(m.expand(shape).numpy() for _, m in sides),
                self.u,
            )

    def _move(
        self,
        n: torch.fx.Node,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        variances: Any,
        kw_variances: Any,
    ) -> Any:
        def swap(value: Any, var: Any) -> Any:
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                # Dense: as_strided reads the storage, which a broadcast variance lacks.
                variance = _expanded(var if isinstance(var, torch.Tensor) else None, value)
                return variance.contiguous()
            if isinstance(value, float):
                return 0.0  # a constant it inserts (pad value, fill) is exact
            if isinstance(value, (list, tuple)) and isinstance(var, (list, tuple)):
                return type(value)(swap(v, w) for v, w in zip(value, var, strict=True))
            return value

        new_args = tuple(swap(a, v) for a, v in zip(args, variances, strict=True))
        if _op_name(n.target).endswith("_") and new_args:  # in place: write to a copy
            new_args = (new_args[0].clone(), *new_args[1:])
        new_kwargs = {k: swap(v, kw_variances.get(k)) for k, v in kwargs.items()}
        out = n.target(*new_args, **new_kwargs)
        return out

    def _selection(
        self,
        n: torch.fx.Node,
        name: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        result: Any,
        variances: Any,
    ) -> Any:
        first = args[0]
        var = _expanded(variances[0] if isinstance(variances[0], torch.Tensor) else None, first)
        if name in ("maximum", "minimum", "fmax", "fmin") or (
            name in ("max", "min") and len(args) > 1 and isinstance(args[1], torch.Tensor)
        ):
            other = args[1]
            other_var = variances[1] if isinstance(variances[1], torch.Tensor) else None
            other_var = _expanded(other_var, other) if isinstance(other, torch.Tensor) else 0.0
            return torch.maximum(var, torch.as_tensor(other_var)).expand(result.shape).clone()
        if name in ("amax", "amin"):
            dims = args[1] if len(args) > 1 else kwargs.get("dim", [])
            keepdim = bool(args[2] if len(args) > 2 else kwargs.get("keepdim", False))
            return torch.amax(var, dim=dims or list(range(var.dim())), keepdim=keepdim)
        if name in ("max", "min"):
            if len(args) == 1 and not kwargs:  # the whole tensor
                return var.max()
            dim = args[1] if len(args) > 1 else kwargs["dim"]
            keepdim = bool(args[2] if len(args) > 2 else kwargs.get("keepdim", False))
            values = torch.amax(var, dim=dim, keepdim=keepdim)
            self.scores[n] = {
                1: Scores(
                    "argmax" if name == "max" else "argmin",
                    (first.numpy(),),
                    (var.sqrt().numpy(),),
                    self.u,
                    dim,
                    keepdim,
                )
            }
            return (values, None)
        if name.startswith("max_pool") or name in _POOLED_SELECTIONS:
            pooled = n.target(var, *args[1:], **kwargs)
            return (pooled[0], None)
        if name in ("sort", "topk"):
            dim = -1
            if name == "sort":
                dim = args[1] if len(args) > 1 else kwargs.get("dim", -1)
            else:
                dim = args[2] if len(args) > 2 else kwargs.get("dim", -1)
            return (var.gather(dim, result[1]), None)
        # Element-wise: abs, neg, relu, clamp, hardtanh, sign.
        return var.expand(result.shape).clone()

    def _indexed_selection(
        self,
        n: torch.fx.Node,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        result: Any,
        variances: Any,
    ) -> Any:
        """(values, indices) picked along a dim (cummax, kthvalue, median, mode): each value's
        error is that of the element its index names; without a dim, the largest."""
        first = args[0]
        var = _expanded(variances[0] if isinstance(variances[0], torch.Tensor) else None, first)
        if not isinstance(result, (tuple, list)):
            return var.max().expand(result.shape).clone() if var.numel() else var.sum()
        values, indices = result[0], result[1]
        if first.dim() == 0:
            return (var.clone(), None)
        dims = [a for a in args[1:] if isinstance(a, int) and not isinstance(a, bool)]
        dim = kwargs.get("dim", dims[-1] if dims else -1) % first.dim()
        index = indices if indices.dim() == first.dim() else indices.unsqueeze(dim)
        picked = var.gather(dim, index.to(torch.int64))
        return (picked.reshape(values.shape), None)

    def _pointwise(
        self,
        n: torch.fx.Node,
        name: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        result: torch.Tensor,
        variances: Any,
        rounding: float,
    ) -> torch.Tensor:
        import torch.autograd.forward_ad as fwad

        total = torch.zeros_like(result)
        for position, (value, var) in enumerate(zip(args, variances, strict=False)):
            if not (
                isinstance(value, torch.Tensor)
                and value.is_floating_point()
                and isinstance(var, torch.Tensor)
                and bool((var != 0).any())
            ):
                continue
            # Each output element depends on one element of each input (broadcasting): the
            # forward derivative along ones is d out_i / d in_(i).
            with fwad.dual_level():
                dual = list(args)
                # A copy: a broadcast view (an expand's output) cannot carry a tangent.
                dual[position] = fwad.make_dual(value.clone(), torch.ones_like(value))
                tangent = fwad.unpack_dual(n.target(*dual, **kwargs)).tangent
            if tangent is not None:
                # A zero derivative ignores its input's error, even an infinite one (exp(-inf)).
                carried = torch.where(tangent == 0, 0.0, tangent**2 * _expanded(var, result))
                steep = ~torch.isfinite(tangent) & torch.isfinite(result)
                if bool(steep.any()):
                    # No first-order bound where the derivative is infinite (sqrt at 0, acos at
                    # 1): the change the input's allowance itself can make, either way.
                    carried = torch.where(
                        steep, self._secant(n, args, kwargs, position, var, result), carried
                    )
                total = total + carried
        ulps, floor = self._function_error(name, args)
        return total + rounding * ((2 * ulps * result) ** 2 + floor**2) + self._underflow()

    def _underflow(self) -> float:
        """A rounding below the dtype's normal range errs by up to half its smallest subnormal
        (an exp of -600 is 0 in float32): the absolute floor of one rounding, in u**2."""
        tiny = _SMALLEST_SUBNORMAL.get(str(self.current_real).removeprefix("torch."), 0.0)
        return (tiny / (2 * self.u)) ** 2

    def _function_error(self, name: str, args: tuple[Any, ...]) -> tuple[Any, float]:
        """(ulps, absolute floor in u) of one evaluation of op ``name`` on the target."""
        functions = self.functions
        if functions.in_float32_ulps and self.u < UNIT_ROUNDOFF["float32"]:
            # Fast math approximates float32 code only: double functions stay accurate
            # (counted as llvm's measured ones).
            functions = LLVM_FUNCTIONS
        if name in functions.operations:
            ulps, floor = functions.operations[name], 0.0
        elif name in _CORRECTLY_ROUNDED:
            return 0.5, 0.0
        else:
            ulps, floor = functions.elementary.get(name, functions.unlisted)
        if name in functions.ulps_per_argument and args and isinstance(args[0], torch.Tensor):
            ulps = ulps + functions.ulps_per_argument[name] * args[0].abs()
        if functions.in_float32_ulps:
            scale = UNIT_ROUNDOFF["float32"] / self.u
            extra = 0.5 if scale < 1 else 0.0
            ulps, floor = ulps * scale + extra, floor * scale
        return ulps, floor

    def _secant(
        self,
        n: torch.fx.Node,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        position: int,
        var: torch.Tensor,
        result: torch.Tensor,
    ) -> torch.Tensor:
        """The variance (units of u**2) that moving input ``position`` by its whole allowance,
        ROUNDING_FACTOR standard deviations up or down, puts on the result: the larger change
        of the two (a side where the op is undefined counts as no change)."""
        value = args[position]
        step = ROUNDING_FACTOR * self.u * _expanded(var, value).sqrt()
        changes = []
        for sign in (1.0, -1.0):
            moved = list(args)
            moved[position] = value + sign * step
            with np.errstate(all="ignore"):
                change = (n.target(*moved, **kwargs) - result).abs()
            changes.append(torch.where(torch.isnan(change), 0.0, change))
        largest = torch.maximum(*changes).expand(result.shape)
        return (largest / (ROUNDING_FACTOR * self.u)) ** 2


def _exact_specials(variance: Any, result: Any) -> Any:
    """An infinite or NaN value carries no rounding error: the comparison asks both sides to
    give the same special value (a masked score's -inf, its exp's 0 follow from it)."""
    if isinstance(variance, (tuple, list)):
        return type(variance)(_exact_specials(v, r) for v, r in zip(variance, result, strict=True))
    if isinstance(variance, torch.Tensor) and isinstance(result, torch.Tensor):
        return torch.where(torch.isfinite(result), variance, 0.0)
    return variance


def _count(source: torch.Tensor, result: torch.Tensor) -> int:
    return max(source.numel() // max(result.numel(), 1), 1)


def _reduce_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, bool]:
    dims = args[1] if len(args) > 1 else kwargs.get("dim")
    keepdim = bool(args[2] if len(args) > 2 else kwargs.get("keepdim", False))
    if dims is None or dims == []:
        return None, keepdim
    return dims, keepdim


def _summed(t: torch.Tensor, dims: Any, keepdim: bool, like: torch.Tensor) -> torch.Tensor:
    total = t.sum() if dims is None else t.sum(dim=dims, keepdim=keepdim)
    return total.reshape(like.shape)


def _var(values: Any, index: int) -> torch.Tensor | None:
    var = values[index] if len(values) > index else None
    return var if isinstance(var, torch.Tensor) else None


def _rule_matmul(p: _Propagator, args, kwargs, result, variances, rounding):  # noqa: ANN001, ANN202
    op = torch.mm if result.dim() == 2 else torch.bmm
    a, b = args[0], args[1]
    va, vb = _expanded(_var(variances, 0), a), _expanded(_var(variances, 1), b)
    squares = op(a**2, b**2)
    ordered = _ordered_matmul(a, b)
    own = torch.maximum(_partial_sums(result, squares, a.shape[-1]), ordered) + squares
    return op(va, b**2) + op(a**2, vb) + rounding * own


def _rule_addmm(p: _Propagator, args, kwargs, result, variances, rounding):  # noqa: ANN001, ANN202
    op = torch.mm if result.dim() == 2 else torch.bmm
    c, a, b = args[0], args[1], args[2]
    beta = float(kwargs.get("beta", 1.0))
    alpha = float(kwargs.get("alpha", 1.0))
    vc = _expanded(_var(variances, 0), c)
    va, vb = _expanded(_var(variances, 1), a), _expanded(_var(variances, 2), b)
    squares = beta**2 * c**2 + alpha**2 * op(a**2, b**2)
    # In order: the product's partial sums, then the bias added to the whole.
    ordered = alpha**2 * _ordered_matmul(a, b) + result**2
    own = torch.maximum(_partial_sums(result, squares, a.shape[-1] + 1), ordered) + squares
    propagated = beta**2 * vc + alpha**2 * (op(va, b**2) + op(a**2, vb))
    return propagated.expand(result.shape) + rounding * own


def _rule_convolution(p: _Propagator, args, kwargs, result, variances, rounding):  # noqa: ANN001, ANN202
    x, weight, bias, *rest = args
    transposed = bool(rest[3]) if len(rest) > 3 else False
    groups = rest[5] if len(rest) > 5 else 1
    conv = torch.ops.aten.convolution
    vx, vw = _expanded(_var(variances, 0), x), _expanded(_var(variances, 1), weight)
    vb = _var(variances, 2)
    if transposed:  # weight (in, out / groups, k...): each output sums at most in / groups x k
        count = (weight.shape[0] // max(groups, 1)) * math.prod(weight.shape[2:])
    else:
        count = math.prod(weight.shape[1:])
    count += bias is not None
    squares = conv(x**2, weight**2, None if bias is None else bias**2, *rest)
    own = _partial_sums(result, squares, count)
    if not transposed and not any(rest[4] if len(rest) > 4 else ()):
        ordered = _ordered_conv2d(x, weight, rest[0], rest[1], rest[2], groups)
        if ordered is not None:
            ordered = ordered.reshape(result.shape) + (0 if bias is None else result**2)
            own = torch.maximum(own, ordered)
    own = own + squares
    propagated = conv(
        vx, weight**2, None if vb is None else vb.expand(bias.shape).contiguous(), *rest
    )
    propagated = propagated + conv(x**2, vw, None, *rest)
    return propagated + rounding * own


def _rule_sum(p: _Propagator, args, kwargs, result, variances, rounding):  # noqa: ANN001, ANN202
    x = args[0]
    dims, keepdim = _reduce_args(args, kwargs)
    vx = _expanded(_var(variances, 0), x)
    count = _count(x, result)
    own = torch.maximum(
        _partial_sums(result, _summed(x**2, dims, keepdim, result), count),
        _ordered_sum(x, dims, keepdim, result),
    )
    return _summed(vx, dims, keepdim, result) + rounding * own


def _rule_mean(p: _Propagator, args, kwargs, result, variances, rounding):  # noqa: ANN001, ANN202
    x = args[0]
    dims, keepdim = _reduce_args(args, kwargs)
    vx = _expanded(_var(variances, 0), x)
    count = _count(x, result)
    total = result * count
    own = torch.maximum(
        _partial_sums(total, _summed(x**2, dims, keepdim, result), count),
        _ordered_sum(x, dims, keepdim, result),
    )
    own = own / count**2
    return _summed(vx, dims, keepdim, result) / count**2 + rounding * (own + result**2)


def _rule_avg_pool(p: _Propagator, args, kwargs, result, variances, rounding):  # noqa: ANN001, ANN202
    x = args[0]
    target = p.current_target
    vx = _expanded(_var(variances, 0), x)
    name = target._overloadpacket.__name__
    dims = 3 if name.endswith("3d") else 2
    if name.startswith("_adaptive"):
        out_size = args[1]
        count = math.prod(
            math.ceil(x.shape[-dims + i] / max(out_size[i], 1)) + 1 for i in range(dims)
        )
    else:
        kernel = list(args[1]) if isinstance(args[1], (list, tuple)) else [args[1]]
        count = math.prod(kernel * dims if len(kernel) == 1 else kernel)
    mean_of_squares = target(x**2, *args[1:], **kwargs)
    own = _partial_sums(result * count, mean_of_squares * count, count) / count**2
    return target(vx, *args[1:], **kwargs) / count + rounding * (own + result**2)


def _rule_cumsum(p: _Propagator, args, kwargs, result, variances, rounding):  # noqa: ANN001, ANN202
    x = args[0]
    dim = args[1] if len(args) > 1 else kwargs["dim"]
    vx = _expanded(_var(variances, 0), x)
    # A running sum rounds exactly its own partial sums, in order.
    return torch.cumsum(vx, dim) + rounding * torch.cumsum(result**2, dim)


def _product_sensitivity(
    x: torch.Tensor, vx: torch.Tensor, dim: int, cumulative: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """(carried variance, product of the nonzero terms) of the products of x along ``dim``
    (running products with ``cumulative``, keepdim shape else): d prod / d x_i is the product of
    the other terms, y / x_i without a zero, the nonzero terms' product at the one zero, 0 with
    two."""
    zero = x == 0
    safe = torch.where(zero, 1.0, x)

    def along(t: torch.Tensor) -> torch.Tensor:
        return t.cumsum(dim) if cumulative else t.sum(dim, keepdim=True)

    nonzero = safe.cumprod(dim) if cumulative else safe.prod(dim, keepdim=True)
    zeros = along(zero.to(torch.float64))
    relative = along(torch.where(zero, 0.0, vx / safe**2))
    at_zero = along(torch.where(zero, vx, 0.0))
    carried = torch.where(zeros == 0, nonzero**2 * relative, 0.0)
    carried = carried + torch.where(zeros == 1, nonzero**2 * at_zero, 0.0)
    return carried, nonzero


# The smallest subnormal of each dtype: below u |y|, a rounding errs by up to half of it.
_SMALLEST_SUBNORMAL = {"float16": 2.0**-24, "bfloat16": 2.0**-133, "float32": 2.0**-149}


def _underflow(p: _Propagator, x: torch.Tensor, dim: int, cumulative: bool) -> torch.Tensor:
    """The squared absolute floor of a product's roundings (units of u**2): a running product
    that falls into the subnormals rounds by up to half the smallest subnormal, which the later
    terms scale by at most the product of their sizes above 1 (PyTorch's samples underflow: a
    product of 125 terms under 1 is 1e-56 in float64, 0 in float32)."""
    tiny = _SMALLEST_SUBNORMAL.get(str(p.dtype).removeprefix("torch."), 0.0)
    growth = x.abs().clamp(min=1.0)
    growth = growth.cumprod(dim) if cumulative else growth.prod(dim, keepdim=True)
    return (tiny / (2 * p.u) * growth) ** 2


# A long product's roundings are no uniform noise: near 1 each one is a fixed function of the
# term (y (1 + d) rounds y's last bits by about y d), so its variance can reach its bound
# u**2 y**2, not the u**2 y**2 / 3 the rule's factor assumes; measured, a serial float32
# cumprod of 4,096 terms 1 +- 1e-4 errs by 1.14 times the unscaled allowance. Each product
# rounding counts three times.
_PRODUCT_ROUNDING = 3.0


def _rule_prod(p: _Propagator, args, kwargs, result, variances, rounding):  # noqa: ANN001, ANN202
    """A product of n terms rounds n - 1 times, each by at most u of the running product, which
    the later terms scale to the result: (n - 1) |y|**2, in any order (a zero term makes the
    product exactly 0)."""
    x = args[0]
    vx = _expanded(_var(variances, 0), x)
    if len(args) > 1 or "dim" in kwargs:
        dim = (args[1] if len(args) > 1 else kwargs["dim"]) % max(x.dim(), 1)
    else:
        x, vx, dim = x.reshape(-1), vx.reshape(-1), 0
    if x.dim() == 0:
        return vx.reshape(result.shape).clone()
    carried, _ = _product_sensitivity(x, vx, dim, cumulative=False)
    steps = x.shape[dim] - 1
    own = steps * (result.reshape(carried.shape) ** 2 + _underflow(p, x, dim, cumulative=False))
    own = _PRODUCT_ROUNDING * own
    return (carried + rounding * own).reshape(result.shape)


def _rule_cumprod(p: _Propagator, args, kwargs, result, variances, rounding):  # noqa: ANN001, ANN202
    """Running products: the k-th (from 0) has rounded k times, each scaled to |y_k|."""
    x = args[0]
    vx = _expanded(_var(variances, 0), x)
    if x.dim() == 0:
        return vx.clone()
    dim = (args[1] if len(args) > 1 else kwargs["dim"]) % x.dim()
    carried, _ = _product_sensitivity(x, vx, dim, cumulative=True)
    shape = [1] * x.dim()
    shape[dim] = x.shape[dim]
    steps = torch.arange(x.shape[dim], dtype=torch.float64).reshape(shape)
    own = _PRODUCT_ROUNDING * steps * (result**2 + _underflow(p, x, dim, cumulative=True))
    return carried + rounding * own


def _rule_logcumsumexp(p: _Propagator, args, kwargs, result, variances, rounding):  # noqa: ANN001, ANN202
    """y_k = log(sum_{j<=k} exp(x_j)), as exp of each term (shifted by at most the largest),
    a running sum, a log and the shift added back. Every term is relative to the k-th sum, so
    it is formed in the log domain: sum_{j<=k} exp(a_j - 2 y_k) = exp(logcumsumexp(a) - 2 y)."""
    x = args[0]
    if x.dim() == 0:
        return _expanded(_var(variances, 0), x).clone() + rounding * result**2
    dim = (args[1] if len(args) > 1 else kwargs["dim"]) % x.dim()
    vx = _expanded(_var(variances, 0), x)
    y = result
    finite = torch.isfinite(x)
    top = torch.amax(torch.where(finite, x, -math.inf), dim, keepdim=True)
    top = torch.where(torch.isfinite(top), top, 0.0)

    def relative(log_terms: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return torch.exp(torch.logcumsumexp(log_terms, dim) - 2 * y)

    exp_ulps, _ = p._function_error("exp", (x - top,))
    log_ulps, log_floor = p._function_error("log", (x,))
    carried = relative(2 * x + torch.log(vx))
    exp_own = relative(2 * x + torch.log((x - top) ** 2 + (2 * exp_ulps) ** 2))
    sums_own = relative(2 * y)
    log_own = (2 * log_ulps) ** 2 * torch.maximum(y**2, (y - top) ** 2) + log_floor**2
    total = carried + rounding * (exp_own + sums_own + log_own + y**2)
    return torch.where(torch.isfinite(y), total, 0.0)


_SUM_RULES: dict[str, Callable[..., Any]] = {
    "prod": _rule_prod,
    "cumprod": _rule_cumprod,
    "logcumsumexp": _rule_logcumsumexp,
    "mm": _rule_matmul,
    "bmm": _rule_matmul,
    "addmm": _rule_addmm,
    "baddbmm": _rule_addmm,
    "convolution": _rule_convolution,
    "sum": _rule_sum,
    "mean": _rule_mean,
    "avg_pool2d": _rule_avg_pool,
    "avg_pool3d": _rule_avg_pool,
    "_adaptive_avg_pool2d": _rule_avg_pool,
    "_adaptive_avg_pool3d": _rule_avg_pool,
    "cumsum": _rule_cumsum,
}


class _Float64Computation:
    """``fn`` (a module or a callable of tensors) evaluated in float64: its data (the floating
    inputs and, for a module, its floating parameters and buffers) as exact leaves, every value
    it rounds on the way carried with its error variance, through the ATen decompositions of
    composite ops."""

    def __init__(
        self,
        fn: Callable[..., Any],
        inputs: Sequence[Any],
        functions: FunctionErrors = LLVM_FUNCTIONS,
    ) -> None:
        self.functions = functions
        if isinstance(fn, torch.nn.Module):
            # A copy: the mode is kept (a train-mode batch norm reads its batch's statistics).
            original = dict(fn.named_parameters()) | dict(fn.named_buffers())
            self._leaf_dtypes = {k: v.dtype for k, v in original.items()}
            module = copy.deepcopy(fn).double()
            state = dict(module.named_parameters()) | dict(module.named_buffers())
            self._state = {k: v.detach() for k, v in state.items()}

            def call(state: dict[str, torch.Tensor], *args: torch.Tensor) -> Any:
                return torch.func.functional_call(module, state, args)
        else:
            self._state = {}
            self._leaf_dtypes = {}

            def call(state: dict[str, torch.Tensor], *args: torch.Tensor) -> Any:
                return fn(*args)

        self._call = call
        self._inputs = [_as_tensor(x) for x in inputs]
        # The dtype the computation runs in: its floating data's (float32 for the models here).
        floating = [t for t in [*self._inputs, *self._state.values()] if t.is_floating_point()]
        self.dtype = floating[0].dtype if floating else torch.float32
        self._input_dtypes = [t.dtype for t in self._inputs]
        self._inputs = [t.double() if t.is_floating_point() else t for t in self._inputs]

    def run(self, scale: Callable[[torch.Tensor], torch.Tensor] | None = None) -> list[Any]:
        """Outputs; ``scale`` maps each floating leaf first (perturbations)."""
        inputs = [
            t if not t.is_floating_point() or scale is None else scale(t) for t in self._inputs
        ]
        state = {
            k: v if not v.is_floating_point() or scale is None else scale(v)
            for k, v in self._state.items()
        }
        with torch.no_grad(), _float64_default():
            return _flatten(self._call(state, *inputs))

    def run_with_magnitudes(
        self,
    ) -> list[tuple[torch.Tensor, np.ndarray | None, Scores | None]]:
        """Each output with its magnitude (None for a discrete output) and, for a discrete
        output decided directly from floating scores, those scores."""
        from torch.fx.experimental.proxy_tensor import make_fx

        with torch.no_grad(), _float64_default():
            # Traced on copies: an in-place op (LeakyReLU(inplace=True)) would otherwise apply
            # itself to the data before the recorded run, which then applies it again.
            try:
                graph = make_fx(self._call, decomposition_table=_decompositions())(
                    {k: v.clone() for k, v in self._state.items()},
                    *[t.clone() for t in self._inputs],
                )
            except Exception as err:  # noqa: BLE001 - any tracing failure means the same
                raise ReferenceError(
                    f"the computation cannot be evaluated in float64 op by op (tracing it "
                    f"failed: {type(err).__name__}: {err}); the rule needs its ATen graph"
                ) from err
            propagator = _Propagator(graph, self.dtype, self.functions)
            placeholders = [n for n in graph.graph.nodes if n.op == "placeholder"]
            dtypes = [self._leaf_dtypes.get(k) for k in self._state] + self._input_dtypes
            propagator.leaf_dtypes = {p.name: d for p, d in zip(placeholders, dtypes, strict=False)}
            # Copies go in: a train-mode batch norm updates its running statistics in place.
            outputs = _flatten(
                propagator.run(
                    {k: v.clone() for k, v in self._state.items()},
                    *[t.clone() for t in self._inputs],
                )
            )
        output_node = next(n for n in graph.graph.nodes if n.op == "output")
        output_nodes = _flatten_nodes(output_node.args[0])
        result = []
        for out, node in zip(outputs, output_nodes, strict=True):
            if not out.is_floating_point():
                scores = propagator.scores.get(node) if isinstance(node, torch.fx.Node) else None
                result.append((out, None, scores if isinstance(scores, Scores) else None))
                continue
            variance = propagator.variance.get(node) if isinstance(node, torch.fx.Node) else None
            magnitude = (
                torch.zeros_like(out) if variance is None else _expanded(variance, out)
            ).sqrt()
            unbounded = torch.isfinite(out) & ~torch.isfinite(magnitude)
            if bool(unbounded.any()):
                raise ReferenceError(
                    f"the allowance of output {len(result)} is not finite at "
                    f"{unbounded.nonzero()[0].tolist()} where the reference is finite "
                    f"({out[unbounded][0].item()!r}): the rule cannot bound it, so it does not "
                    f"judge it"
                )
            result.append((out, magnitude.numpy().copy(), None))
        return result


def reference_ops(fn: Callable[..., Any], inputs: Sequence[Any]) -> dict[str, str]:
    """Each ATen op (overload) the reference evaluates for ``fn(*inputs)`` (its float64 graph,
    composites decomposed as the rule decomposes them) -> how it carries rounding: "discrete"
    for an op without a floating output (decided exactly or from its scores), else its
    rounding_model ("refused" makes references() raise ReferenceError naming it)."""
    from torch.fx.experimental.proxy_tensor import make_fx

    computation = _Float64Computation(fn, inputs)
    with torch.no_grad(), _float64_default():
        graph = make_fx(computation._call, decomposition_table=_decompositions())(
            {k: v.clone() for k, v in computation._state.items()},
            *[t.clone() for t in computation._inputs],
        )
    kinds = {}
    for n in graph.graph.nodes:
        if n.op != "call_function" or _op_name(n.target) == "getitem":
            continue
        value = n.meta.get("val")
        values = value if isinstance(value, (tuple, list)) else (value,)
        floating = any(isinstance(v, torch.Tensor) and v.is_floating_point() for v in values)
        kinds[_qualified(n.target)] = rounding_model(n.target) if floating else "discrete"
    return kinds


def _flatten_nodes(arg: Any) -> list[Any]:
    if isinstance(arg, (tuple, list)):
        return [x for a in arg for x in _flatten_nodes(a)]
    return [arg]


def references(
    fn: Callable[..., Any], inputs: Sequence[Any], target: Any = None
) -> list[Reference]:
    """Evaluate ``fn(*inputs)`` in float64: one Reference per (flattened) output.

    ``fn`` is a ``torch.nn.Module`` (its floating parameters and buffers count as data) or a
    callable of torch tensors; ``inputs`` are tensors or arrays, in the computation's dtype.
    ``target`` (the one the checked code was built for; None is llvm) picks how accurate its
    elementary functions are (function_errors).
    """
    computation = _Float64Computation(fn, inputs, function_errors(target))
    with torch.no_grad():
        # The dtypes the checked implementation must produce: the computation's own (a copy
        # runs it: a train-mode module updates its running statistics).
        own = copy.deepcopy(fn) if isinstance(fn, torch.nn.Module) else fn
        # On copies: an in-place op must not change the caller's inputs.
        own_dtypes = [t.dtype for t in _flatten(own(*[_as_tensor(x).clone() for x in inputs]))]
    results = computation.run_with_magnitudes()
    refs = []
    alternatives: list[list[torch.Tensor]] | None = None
    for i, ((value, magnitude, scores), dtype) in enumerate(zip(results, own_dtypes, strict=True)):
        np_dtype = numpy_dtype(dtype)
        if magnitude is not None:
            # The propagation counts in units of u(the computation's dtype); the allowance
            # applies u(the output's dtype): an output cast to another width (x.half()) is
            # rescaled, or its allowance would count the cast's rounding twice over.
            scale = unit_roundoff(computation.dtype) / unit_roundoff(np_dtype)
            refs.append(Reference(value.numpy(), np_dtype, magnitude * scale))
            continue
        if scores is not None:
            refs.append(Reference(value.numpy(), np_dtype, None, (value.numpy(),), scores))
            continue
        if alternatives is None:
            alternatives = _perturbed_runs(computation)
        admissible = (value.numpy(), *(run[i].numpy() for run in alternatives))
        refs.append(Reference(value.numpy(), np_dtype, None, admissible))
    return refs


def _perturbed_runs(computation: _Float64Computation) -> list[list[torch.Tensor]]:
    """The computation with every floating leaf moved by its rounding allowance, random signs."""
    delta = ROUNDING_FACTOR * unit_roundoff(computation.dtype)
    generator = torch.Generator().manual_seed(0)

    def perturb(t: torch.Tensor) -> torch.Tensor:
        signs = torch.randint(0, 2, t.shape, generator=generator).to(t.dtype) * 2 - 1
        return t * (1 + delta * signs)

    return [computation.run(perturb) for _ in range(_DISCRETE_TRIALS)]


def compare(actual: Any, reference: Reference, *, label: str = "output") -> Comparison:
    """Check ``actual`` (an array) against ``reference``: shape, dtype, then values by the rule."""
    got = np.asarray(actual)
    want = reference.value
    if got.shape != want.shape:
        return Comparison(False, np.inf, f"{label}: shape {got.shape} differs from {want.shape}")
    if got.dtype != reference.dtype:
        return Comparison(
            False, np.inf, f"{label}: dtype {got.dtype} differs from {reference.dtype}"
        )
    if reference.discrete:
        ok = np.zeros(got.shape, dtype=bool)
        for candidate in reference.admissible:
            ok |= got == candidate
        if reference.scores is not None and not ok.all():
            ok |= _near_tie(got, want, reference.scores)
        if ok.all():
            return Comparison(True, 0.0, f"{label}: equal")
        index = tuple(int(i) for i in np.argwhere(~ok)[0])
        why = (
            "exact unless the float64 scores of the two choices differ by no more than "
            "rounding allows"
            if reference.scores is not None
            else "exact unless a rounding-sized change of the inputs changes it"
        )
        return Comparison(
            False,
            np.inf,
            f"{label}: {int((~ok).sum())} of {got.size} elements differ from the float64 "
            f"reference (a discrete output: {why}); first at {list(index)}: got "
            f"{got[index]}, expected {sorted({c[index].item() for c in reference.admissible})}",
        )
    if (vacuous := vacuity(reference)) is not None:
        return Comparison(False, np.inf, f"{label}: not judgeable: {vacuous}", judgeable=False)
    wide = got.astype(np.float64)
    same_special = (np.isnan(wide) & np.isnan(want)) | (np.isinf(want) & (wide == want))
    with np.errstate(invalid="ignore"):
        error = np.where(same_special, 0.0, np.abs(wide - want))
    error = np.where(np.isnan(error), np.inf, error)
    allowed = reference.allowed_error()
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(error == 0, 0.0, error / allowed)
    worst = float(ratio.max()) if ratio.size else 0.0
    if worst <= 1.0:
        return Comparison(True, worst, f"{label}: within rounding (worst {worst:.3g} of allowed)")
    index = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    where = list(int(i) for i in index)
    u = unit_roundoff(reference.dtype)
    return Comparison(
        False,
        worst,
        f"{label}: {int((ratio > 1).sum())} of {got.size} elements differ from the float64 "
        f"reference by more than {reference.dtype} rounding allows; worst at {where}: got "
        f"{wide[index]!r}, reference {want[index]!r}, error {error[index]:.3g} > allowed "
        f"{allowed[index]:.3g} = {ROUNDING_FACTOR:g} x u({reference.dtype})={u:.3g} x magnitude "
        f"{reference.magnitude[index]:.4g} (|value| plus the first-order sensitivity to every "
        f"input and weight; docs/model_import.md, 'The tolerance rule')",
    )


def vacuity(reference: Reference) -> str | None:
    """Why the rule cannot judge this floating output, or None when it can.

    Over the whole output: an all-zero output is off by |reference| and the doubled one too,
    so where every finite nonzero element's allowance covers its own size the comparison would
    accept both (and, at twice that, the negated one). Single elements near zero (a
    cancellation) are fine as long as one element of the output is judged."""
    if reference.discrete:
        return None
    want = reference.value
    finite = np.isfinite(want) & (want != 0)
    if not finite.any():
        return None
    allowed = reference.allowed_error()[finite]
    sizes = np.abs(want[finite])
    if (sizes > allowed).any():
        return None
    negated = bool((2 * sizes <= allowed).all())
    return (
        f"the allowance covers every element's own size (median allowance "
        f"{float(np.median(allowed / sizes)):.3g} x |reference| over {int(finite.sum())} "
        f"nonzero elements), so an all-zero output and the doubled one would pass"
        + (", and the negated one" if negated else "")
        + "; the computation is too ill-conditioned at this input for the rule to tell right "
        "from wrong"
    )


def judgeable(refs: Sequence[Reference]) -> list[str]:
    """Why each output the rule cannot judge is not judgeable ([] when it judges them all)."""
    return [f"output {i}: {why}" for i, ref in enumerate(refs) if (why := vacuity(ref)) is not None]


def _near_tie(got: np.ndarray, want: np.ndarray, scores: Scores) -> np.ndarray:
    """Per element: True where TVM's choice and the reference's are within rounding of each
    other (their float64 scores differ by no more than the allowance of the difference)."""
    u = ROUNDING_FACTOR * scores.roundoff
    if scores.kind == "compare":
        (a, b), (ma, mb) = scores.values, scores.magnitudes
        return np.abs(a - b) <= u * np.sqrt(ma**2 + mb**2)
    (values,), (magnitudes,) = scores.values, scores.magnitudes
    if scores.dim is None:
        values, magnitudes = values.reshape(1, -1), magnitudes.reshape(1, -1)
        axis = 1
        got_index = np.asarray(got).reshape(1, 1)
        want_index = np.asarray(want).reshape(1, 1)
    else:
        axis = scores.dim % values.ndim
        got_index = got if scores.keepdim else np.expand_dims(got, axis)
        want_index = want if scores.keepdim else np.expand_dims(want, axis)
    size = values.shape[axis]
    valid = (got_index >= 0) & (got_index < size)
    safe = np.where(valid, got_index, 0).astype(np.int64)
    picked = np.take_along_axis(values, safe, axis)
    picked_m = np.take_along_axis(magnitudes, safe, axis)
    best = np.take_along_axis(values, want_index.astype(np.int64), axis)
    best_m = np.take_along_axis(magnitudes, want_index.astype(np.int64), axis)
    ok = valid & (np.abs(best - picked) <= u * np.sqrt(best_m**2 + picked_m**2))
    return ok.reshape(np.shape(got))


def check_outputs(actual: Sequence[Any], refs: Sequence[Reference], *, where: str = "") -> None:
    """Raise AssertionError naming every output that breaks the rule (count, shape, dtype,
    values)."""
    suffix = f" ({where})" if where else ""
    if len(actual) != len(refs):
        raise AssertionError(
            f"the reference has {len(refs)} output(s), the result {len(actual)}{suffix}"
        )
    comparisons = [
        compare(got, ref, label=f"output {i}")
        for i, (got, ref) in enumerate(zip(actual, refs, strict=True))
    ]
    failures = [c.message for c in comparisons if not c.ok]
    if failures:
        # Any output the rule cannot judge makes the whole check one it cannot pass.
        error = AssertionError if all(c.judgeable for c in comparisons) else NotJudgeable
        raise error("; ".join(failures) + suffix)


def matches(actual: Sequence[Any], refs: Sequence[Reference]) -> bool:
    """True when every output is within the rule (what a deviation detector asks)."""
    return len(actual) == len(refs) and all(
        compare(got, ref).ok for got, ref in zip(actual, refs, strict=True)
    )


def distinguishable(first: Sequence[Reference], second: Sequence[Reference]) -> bool:
    """True when no result can be within rounding of both computations: they differ in output
    count, shape or dtype, or somewhere by more than both allowances together (what a deviation
    detector asks before it names the computation TVM did instead)."""
    if len(first) != len(second):
        return True
    for a, b in zip(first, second, strict=True):
        if a.value.shape != b.value.shape or a.dtype != b.dtype or a.discrete != b.discrete:
            return True
        if a.discrete:
            if (a.value != b.value).any():
                return True
        elif (np.abs(a.value - b.value) > a.allowed_error() + b.allowed_error()).any():
            return True
    return False


def assert_close(actual: Any, fn: Callable[..., Any], *inputs: Any, where: str = "") -> None:
    """Check a single result against ``fn(*inputs)`` evaluated in float64 (torch ops)."""
    check_outputs([actual], references(fn, inputs), where=where)
