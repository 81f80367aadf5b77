"""The tolerance rule as it was until issue 51 (feef87c), kept only so the sweep can show both
rules on the same outputs: allowance sqrt(n) * sum |terms| per sum, per-element Jacobian (its
cost grows with outputs x graph). Not used by any check.

The original docstring follows.

A TVM result is compared with a float64 evaluation of the same computation (its own error is
about 2**-29 of float32's, negligible), and may differ from it by what rounding in the
computation's dtype can cause, never by a hand-picked rtol/atol:

    |tvm_i - ref_i| <= ROUNDING_FACTOR * u(dtype) * magnitude_i

``u`` is the dtype's unit roundoff (2**-24 for float32). ``magnitude_i`` models the rounding
of the computation that produced output ``i``, evaluated in float64 with autograd on the
computation's ATen graph (composite ops such as GELU, softmax and the norms decomposed, so
what they round inside counts): every value an op rounds contributes its size ``|v|``
(TRANSCENDENTAL_ULPS times for an elementary function such as exp or erf, which libraries
round to a few ulps, not to one), and every op that sums ``n`` terms (matmul, convolution,
sum, mean, a variance) also ``sqrt(n) * sum |terms|``, the accumulated rounding of that sum;
each contribution is carried to output ``i`` by its derivative, and independent roundings add
in quadrature. Cancellation (a small result of large terms) keeps the allowance of the terms,
and amplification (a LayerNorm over a low-variance row) raises it by the same derivative that
amplifies the rounding; exact operations (copies, ReLU, max, reshapes) round nothing.
docs/model_import.md ("The tolerance rule") has the reasoning and the factor's measurement.

Discrete outputs (integer dtypes: argmax, indices) must equal the reference exactly unless the
reference itself changes when every input and weight moves by a rounding-sized amount (a near
tie): then any value the perturbed references take is accepted.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch

# Multiples of u * magnitude accepted. Measured over the sweep (tools/numerics_sweep): the
# largest error seen, in these units, and why this leaves room without hiding a real break, are
# in docs/model_import.md.
ROUNDING_FACTOR = 2.0

UNIT_ROUNDOFF: dict[str, float] = {
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
    "float32": 2.0**-24,
    "float64": 2.0**-53,
}

# Perturbed float64 evaluations tried for a discrete output (random signs each).
_DISCRETE_TRIALS = 8
# Output elements whose Jacobian rows are taken in one batched backward pass.
_JACOBIAN_CHUNK = 256


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
    output dtype). For floating outputs ``magnitude`` is the per-element first-order size (see
    the module docstring); for discrete ones ``admissible`` holds the values the reference
    takes under rounding-sized perturbations of its inputs (the first is the unperturbed one).
    """

    value: np.ndarray
    dtype: np.dtype
    magnitude: np.ndarray | None
    admissible: tuple[np.ndarray, ...] = ()

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
]

# Ops whose result is one of their inputs' values, moved or selected, never rounded: their
# outputs are not counted again (the values they carry already are).
_EXACT_OPS = frozenset(
    (
        "_to_copy alias as_strided broadcast_in_dim cat clone constant_pad_nd contiguous copy "
        "detach expand flatten getitem index_select permute reshape select slice split "
        "split_with_sizes squeeze stack t transpose unsqueeze view unbind unsafe_view "
        "lift_fresh_copy abs neg relu maximum minimum amax amin max min where clamp clamp_min "
        "clamp_max max_pool2d_with_indices max_pool1d_with_indices max_pool3d_with_indices "
        "gather full zeros ones empty scalar_tensor hardtanh pad sign gt lt ge le eq ne argmax "
        "argmin"
    ).split()
)


# Elementary functions are not correctly rounded: libm, CUDA's and TVM's own approximations
# promise a few units in the last place (CUDA: expf, erff, tanhf 2 ulp; logf 1 ulp; an ulp is up
# to 2u relative). A value such an op computes counts this many times.
TRANSCENDENTAL_ULPS = 4.0
_TRANSCENDENTAL_OPS = frozenset(
    (
        "erf erfc exp exp2 expm1 log log2 log10 log1p tanh sigmoid sin cos tan atan asin acos "
        "sinh cosh pow rsqrt reciprocal sqrt"
    ).split()
)


def _decompositions() -> dict[Any, Any]:
    from torch._decomp import get_decompositions

    # Only these: torch's wider tables lower some ops to prims, which have no autograd.
    return get_decompositions(_DECOMPOSED)


def _op_name(target: Any) -> str:
    return getattr(target, "__name__", str(target)).split(".")[0]


def _flatten(output: Any, path: str = "output") -> list[torch.Tensor]:
    if isinstance(output, torch.Tensor):
        return [output]
    if isinstance(output, (tuple, list)):
        return [t for i, o in enumerate(output) for t in _flatten(o, f"{path}[{i}]")]
    raise TypeError(f"unsupported output type at {path}: {type(output).__name__}")


def _as_tensor(value: Any) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value.detach()
    return torch.as_tensor(np.asarray(value))


def _abs(value: Any) -> Any:
    return value.detach().abs() if isinstance(value, torch.Tensor) else value


def _accumulation(name: str, args: tuple[Any, ...], result: torch.Tensor) -> torch.Tensor | None:
    """For an op that sums terms: sqrt(number of terms) * the sum of the terms' magnitudes, per
    output element (the scale of the accumulated rounding, Higham and Mary's probabilistic
    bound); None for an op that sums nothing."""
    with torch.no_grad():
        if name in ("mm", "bmm"):
            return math.sqrt(args[0].shape[-1]) * getattr(torch, name)(_abs(args[0]), _abs(args[1]))
        if name == "addmm":
            terms = torch.addmm(_abs(args[0]), _abs(args[1]), _abs(args[2]))
            return math.sqrt(args[1].shape[-1] + 1) * terms
        if name == "convolution":
            weight = args[1]
            groups = args[8] if len(args) > 8 else 1
            del groups  # the weight's shape already holds in-channels per group
            count = math.prod(weight.shape[1:]) + (args[2] is not None)
            terms = torch.ops.aten.convolution(
                _abs(args[0]), _abs(weight), _abs(args[2]), *args[3:]
            )
            return math.sqrt(count) * terms
        if name in ("sum", "mean"):
            dims = args[1] if len(args) > 1 and args[1] is not None else None
            source = args[0]
            count = source.numel() // max(result.numel(), 1)
            if dims is None or dims == []:
                terms = _abs(source).sum()
            else:
                keepdim = len(args) > 2 and bool(args[2])
                terms = _abs(source).sum(dim=dims, keepdim=keepdim)
            if name == "mean":
                terms = terms / max(count, 1)
            return math.sqrt(max(count, 1)) * terms.reshape(result.shape)
        if name == "avg_pool2d":
            kernel = args[1] if isinstance(args[1], (list, tuple)) else [args[1]] * 2
            count = math.prod(kernel)
            return math.sqrt(count) * torch.ops.aten.avg_pool2d(_abs(args[0]), *args[1:])
    return None


class _Recorder(torch.fx.Interpreter):
    """Runs a traced graph, keeping every floating value an op rounds with the magnitude of
    its rounding: |value| (ULPS times for an elementary function), plus, for an op that sums
    terms, sqrt(count) * the sum of the terms' magnitudes."""

    def __init__(self, module: torch.fx.GraphModule) -> None:
        super().__init__(module)
        self.rounded: list[torch.Tensor] = []
        self.magnitudes: list[torch.Tensor] = []

    def run_node(self, n: torch.fx.Node) -> Any:
        result = super().run_node(n)
        if n.op != "call_function":
            return result
        name = _op_name(getattr(n.target, "overloadpacket", n.target))
        if name in _EXACT_OPS:
            return result
        outputs = result if isinstance(result, (tuple, list)) else (result,)
        args, _ = self.fetch_args_kwargs_from_env(n)
        for i, out in enumerate(outputs):
            if not (
                isinstance(out, torch.Tensor) and out.is_floating_point() and out.requires_grad
            ):
                continue
            weight = TRANSCENDENTAL_ULPS if name in _TRANSCENDENTAL_OPS else 1.0
            magnitude = weight * out.detach().abs()
            if name == "var_mean":  # (variance, mean): both accumulate over the reduced axes
                count = args[0].numel() // max(out.numel(), 1)
                terms = (
                    out.detach().abs()
                    if i == 0
                    else _abs(args[0])
                    .mean(
                        dim=args[1] if len(args) > 1 else None, keepdim=out.dim() == args[0].dim()
                    )
                    .reshape(out.shape)
                )
                magnitude = magnitude + math.sqrt(max(count, 1)) * terms
            elif (accumulated := _accumulation(name, tuple(args), out)) is not None:
                magnitude = magnitude + accumulated
            self.rounded.append(out)
            self.magnitudes.append(magnitude)
        return result


class _Float64Computation:
    """``fn`` (a module or a callable of tensors) evaluated in float64: its data (the floating
    inputs and, for a module, its floating parameters and buffers) as differentiable leaves, and
    every value it rounds on the way, through the ATen decompositions of composite ops."""

    def __init__(self, fn: Callable[..., Any], inputs: Sequence[Any]) -> None:
        if isinstance(fn, torch.nn.Module):
            # A copy: the mode is kept (a train-mode batch norm reads its batch's statistics).
            module = copy.deepcopy(fn).double()
            state = dict(module.named_parameters()) | dict(module.named_buffers())
            self._state = {k: v.detach() for k, v in state.items()}

            def call(state: dict[str, torch.Tensor], *args: torch.Tensor) -> Any:
                return torch.func.functional_call(module, state, args)
        else:
            self._state = {}

            def call(state: dict[str, torch.Tensor], *args: torch.Tensor) -> Any:
                return fn(*args)

        self._call = call
        self._inputs = [_as_tensor(x) for x in inputs]
        # The dtype the computation runs in: its floating data's (float32 for the models here).
        floating = [t for t in [*self._inputs, *self._state.values()] if t.is_floating_point()]
        self.dtype = floating[0].dtype if floating else torch.float32
        self._inputs = [t.double() if t.is_floating_point() else t for t in self._inputs]

    def run(self, scale: Callable[[torch.Tensor], torch.Tensor] | None = None) -> list[Any]:
        """Outputs without gradients; ``scale`` maps each floating leaf first (perturbations)."""
        inputs = [
            t if not t.is_floating_point() or scale is None else scale(t) for t in self._inputs
        ]
        state = {
            k: v if not v.is_floating_point() or scale is None else scale(v)
            for k, v in self._state.items()
        }
        with torch.no_grad(), _float64_default():
            return _flatten(self._call(state, *inputs))

    def run_with_magnitudes(self) -> list[tuple[torch.Tensor, np.ndarray | None]]:
        """Each output with its magnitude (None for a discrete output)."""
        from torch.fx.experimental.proxy_tensor import make_fx

        inputs = [t.clone().requires_grad_(t.is_floating_point()) for t in self._inputs]
        state = {k: v.clone().requires_grad_(v.is_floating_point()) for k, v in self._state.items()}
        with _float64_default():
            # Traced without gradients (ATen refuses them for a batch norm's running statistics),
            # then run op by op on the leaves: the decomposed ops are all differentiable.
            # Traced on copies: an in-place op (LeakyReLU(inplace=True)) would otherwise apply
            # itself to the leaves before the recorded run, which then applies it again.
            graph = make_fx(self._call, decomposition_table=_decompositions())(
                {k: v.detach().clone() for k, v in state.items()},
                *[t.detach().clone() for t in inputs],
            )
            recorder = _Recorder(graph)
            # Non-leaf copies go in: a train-mode batch norm updates its running statistics in
            # place, which autograd refuses on a leaf.
            outputs = _flatten(
                recorder.run({k: v.clone() for k, v in state.items()}, *[t.clone() for t in inputs])
            )
        # The inputs and weights are the same float32 values in both computations: only what
        # the computation rounds on the way counts.
        result = []
        for out in outputs:
            if not out.is_floating_point():
                result.append((out.detach(), None))
                continue
            result.append((out.detach(), _magnitude(out, recorder.rounded, recorder.magnitudes)))
        return result


def _magnitude(
    out: torch.Tensor, values: list[torch.Tensor], magnitudes: list[torch.Tensor]
) -> np.ndarray:
    """Per element of ``out``: the root sum of squares, over every element of ``values``, of
    d out / d value * that element's rounding magnitude (independent roundings add in
    quadrature; Higham and Mary's probabilistic error analysis)."""
    flat = out.reshape(-1)
    total = torch.zeros(flat.numel(), dtype=torch.float64)
    if not out.requires_grad or not values:
        return flat.detach().abs().reshape(out.shape).numpy()
    for start in range(0, flat.numel(), _JACOBIAN_CHUNK):
        rows = torch.arange(start, min(start + _JACOBIAN_CHUNK, flat.numel()))
        seeds = torch.zeros(len(rows), flat.numel(), dtype=flat.dtype)
        seeds[torch.arange(len(rows)), rows] = 1.0
        grads = torch.autograd.grad(
            flat,
            values,
            grad_outputs=seeds,
            retain_graph=True,
            allow_unused=True,
            is_grads_batched=True,
        )
        for magnitude, grad in zip(magnitudes, grads, strict=True):
            if grad is not None:
                total[rows] += ((grad * magnitude) ** 2).reshape(len(rows), -1).sum(1)
    return total.sqrt().reshape(out.shape).numpy()


def references(fn: Callable[..., Any], inputs: Sequence[Any]) -> list[Reference]:
    """Evaluate ``fn(*inputs)`` in float64: one Reference per (flattened) output.

    ``fn`` is a ``torch.nn.Module`` (its floating parameters and buffers count as data) or a
    callable of torch tensors; ``inputs`` are tensors or arrays, in the computation's dtype.
    """
    computation = _Float64Computation(fn, inputs)
    with torch.no_grad():
        # The dtypes the checked implementation must produce: the computation's own (a copy
        # runs it: a train-mode module updates its running statistics).
        own = copy.deepcopy(fn) if isinstance(fn, torch.nn.Module) else fn
        # On copies: an in-place op must not change the caller's inputs.
        own_dtypes = [t.dtype for t in _flatten(own(*[_as_tensor(x).clone() for x in inputs]))]
    results = computation.run_with_magnitudes()
    refs = []
    alternatives: list[list[torch.Tensor]] | None = None
    for i, ((value, magnitude), dtype) in enumerate(zip(results, own_dtypes, strict=True)):
        np_dtype = np.dtype(str(dtype).removeprefix("torch."))
        if magnitude is not None:
            refs.append(Reference(value.numpy(), np_dtype, magnitude))
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
        if ok.all():
            return Comparison(True, 0.0, f"{label}: equal")
        index = tuple(int(i) for i in np.argwhere(~ok)[0])
        return Comparison(
            False,
            np.inf,
            f"{label}: {int((~ok).sum())} of {got.size} elements differ from the float64 "
            f"reference (a discrete output: exact unless a rounding-sized change of the inputs "
            f"changes it); first at {list(index)}: got {got[index]}, expected "
            f"{sorted({int(c[index]) for c in reference.admissible})}",
        )
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


def check_outputs(actual: Sequence[Any], refs: Sequence[Reference], *, where: str = "") -> None:
    """Raise AssertionError naming every output that breaks the rule (count, shape, dtype,
    values)."""
    suffix = f" ({where})" if where else ""
    if len(actual) != len(refs):
        raise AssertionError(
            f"the reference has {len(refs)} output(s), the result {len(actual)}{suffix}"
        )
    failures = [
        c.message
        for i, (got, ref) in enumerate(zip(actual, refs, strict=True))
        if not (c := compare(got, ref, label=f"output {i}")).ok
    ]
    if failures:
        raise AssertionError("; ".join(failures) + suffix)


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
