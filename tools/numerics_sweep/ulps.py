"""The error of TVM's elementary functions, in units in the last place, on every llvm variant.

The tolerance rule (tvm_conformance.numerics) counts an elementary function's rounding as
``2 k u |y|`` for a function of ``k`` ulps. ``k`` is measured here, once, on the code TVM
generates: each Relax unary op (and ``power``) compiled for every llvm code variant of the
sweep the host can run (one child process per variant), run over a dense deterministic grid of
float32 arguments across the function's domain, and compared with numpy's float64 (mpmath
where numpy has no such function); the error is counted in ulps of the float32 result. The
printed table is what numerics.ELEMENTARY_ULPS holds (the largest over variants, rounded up to
a quarter ulp); ``--check`` fails when a measured value exceeds the constant.

    ./bazelw run //tools/numerics_sweep:ulps                # the table
    ./bazelw run //tools/numerics_sweep:ulps -- --check     # fails if numerics' constants are low
    ./bazelw run //tools/numerics_sweep:ulps -- --variants cuda --check   # on a GPU: CUDA's

``cuda`` measures the code TVM builds for the GPU (``--use_fast_math``) against
numerics.CUDA_FAST_MATH_FUNCTIONS (NVIDIA's documented bounds, the measurement where larger);
ulps that grow with the argument (``exp``: per |x|) are taken off before the largest is kept.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

# Arguments: a grid dense enough to meet every branch of an approximation (2**18 points evenly
# spaced over the range where models use the function, plus 2**14 log-spaced magnitudes of both
# signs where the domain allows).
_POINTS = 2**18


def _grid(low: float, high: float, *, log: bool = False, positive: bool = False) -> np.ndarray:
    even = np.linspace(low, high, _POINTS, dtype=np.float64)
    parts = [even]
    if log:
        magnitudes = np.logspace(-30, math.log10(max(abs(low), abs(high))), 2**14)
        parts.append(magnitudes)
        if not positive:
            parts.append(-magnitudes)
    values = np.concatenate(parts).astype(np.float32)
    keep = (values >= np.float32(low)) & (values <= np.float32(high))
    return np.unique(values[keep])


def _erf(x: np.ndarray) -> np.ndarray:
    import torch

    return torch.special.erf(torch.from_numpy(x)).numpy()


# name -> (the float64 reference, the float32 arguments)
FUNCTIONS: dict[str, tuple[Any, Any]] = {
    "exp": (np.exp, lambda: _grid(-87.0, 88.0)),
    "log": (np.log, lambda: _grid(1e-30, 1e30, log=True, positive=True)),
    "tanh": (np.tanh, lambda: _grid(-20.0, 20.0, log=True)),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), lambda: _grid(-80.0, 80.0, log=True)),
    "erf": (_erf, lambda: _grid(-6.0, 6.0, log=True)),
    "sqrt": (np.sqrt, lambda: _grid(0.0, 1e30, log=True, positive=True)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), lambda: _grid(1e-30, 1e30, log=True, positive=True)),
    "sin": (np.sin, lambda: _grid(-10.0, 10.0, log=True)),
    "cos": (np.cos, lambda: _grid(-10.0, 10.0, log=True)),
    "tan": (np.tan, lambda: _grid(-1.5, 1.5, log=True)),
    "atan": (np.arctan, lambda: _grid(-100.0, 100.0, log=True)),
    "asin": (np.arcsin, lambda: _grid(-1.0, 1.0, log=True)),
    "acos": (np.arccos, lambda: _grid(-1.0, 1.0, log=True)),
    "sinh": (np.sinh, lambda: _grid(-80.0, 80.0, log=True)),
    "cosh": (np.cosh, lambda: _grid(-80.0, 80.0, log=True)),
}


def measure(variant: str) -> dict[str, float]:
    """In this process: the largest error, in ulps, of each function on one variant."""
    import tvm
    from sweep import _target as target_of
    from tvm import relax
    from tvm.script import relax as R  # noqa: N812

    if variant == CUDA:
        target, dev = tvm.target.Target("cuda"), tvm.cuda(0)
        if not dev.exist:
            raise SystemExit("ulps: cuda needs a GPU: tvm.cuda(0) does not exist here")
    else:
        target, dev = target_of(variant), tvm.cpu(0)
    slopes = _functions(variant).ulps_per_argument
    result: dict[str, float] = {}
    for name, (reference, arguments) in FUNCTIONS.items():
        x = arguments()
        op = getattr(relax.op, name)
        bb = relax.BlockBuilder()
        arg = relax.Var("x", R.Tensor(x.shape, "float32"))
        with bb.function("main", [arg]):
            bb.emit_func_output(bb.emit(op(arg)))
        vm = relax.VirtualMachine(relax.build(bb.get(), target, exec_mode="bytecode"), dev)
        got = vm["main"](tvm.runtime.tensor(x, dev)).numpy().astype(np.float64)
        want = reference(x.astype(np.float64))
        result[name] = _worst_ulps(got, want, slopes.get(name, 0.0) * np.abs(x))
    # power: x ** y over positive bases and moderate exponents.
    base = _grid(1e-3, 100.0, log=True, positive=True)
    exponent = np.resize(np.linspace(-4.0, 4.0, 257, dtype=np.float32), base.shape)
    bb = relax.BlockBuilder()
    xa = relax.Var("x", R.Tensor(base.shape, "float32"))
    ya = relax.Var("y", R.Tensor(base.shape, "float32"))
    with bb.function("main", [xa, ya]):
        bb.emit_func_output(bb.emit(relax.op.power(xa, ya)))
    vm = relax.VirtualMachine(relax.build(bb.get(), target, exec_mode="bytecode"), dev)
    got = vm["main"](tvm.runtime.tensor(base, dev), tvm.runtime.tensor(exponent, dev)).numpy()
    want = np.power(base.astype(np.float64), exponent.astype(np.float64))
    result["power"] = _worst_ulps(got.astype(np.float64), want)
    return result


def _worst_ulps(got: np.ndarray, want: np.ndarray, allowed: Any = 0.0) -> list[float]:
    """[k, c]: the error as ``k`` ulps of the float32 result plus ``c`` units of float32's
    u = 2**-24 absolute (some approximations, TVM's tanh near 0, are accurate to an absolute
    amount rather than relative). ``k`` is the largest error in ulps where |result| >= 2**-6;
    ``c`` the largest remainder anywhere, in units of u. ``allowed`` (ulps per element: what
    the table adds for the argument) is taken off each element's ulps first."""
    finite = np.isfinite(want) & (np.abs(want) < np.finfo(np.float32).max)
    if int((~np.isfinite(got[finite])).sum()):
        return [math.inf, math.inf]
    allowed = np.broadcast_to(np.asarray(allowed, dtype=np.float64), want.shape)[finite]
    got, want = got[finite], want[finite]
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    ulp = np.maximum(ulp, np.finfo(np.float32).smallest_subnormal)
    error = np.maximum(np.abs(got - want) - allowed * ulp, 0.0)
    large = np.abs(want) >= 0.5
    k = float(np.max(error[large] / ulp[large])) if large.any() else 0.5
    remainder = np.maximum(error - k * ulp, 0.0) / 2.0**-24
    return [k, float(remainder.max())]


# The GPU variant: TVM's cuda target on device 0 (run on a machine with a GPU).
CUDA = "cuda"


def _functions(variant: str) -> Any:
    """numerics' function errors for ``variant``: CUDA's table for cuda, llvm's otherwise."""
    from tvm_conformance import numerics

    return numerics.function_errors(CUDA if variant == CUDA else None)


def _quarter_up(value: float) -> float:
    # Less than 1e-9 of a quarter over is float64 noise of the measurement (rsqrt's remainder
    # of 1.6e-16 u on the GPU), not an error to round up.
    return math.ceil(value * 4 - 1e-9) / 4


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", help="llvm variants (default: all runnable)")
    parser.add_argument("--check", action="store_true", help="fail if a constant is too low")
    parser.add_argument("--out", help="write the measurement as JSON here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).absolute().parent))
    if args.child:
        print(json.dumps(measure(args.child)))
        return 0
    from sweep import VARIANTS, runnable_variants

    wanted = args.variants or list(VARIANTS)
    variants, left_out = runnable_variants([v for v in wanted if v != CUDA])
    if CUDA in wanted:
        if len(set(wanted)) > 1:
            parser.error("cuda is measured alone (its table is not llvm's)")
        variants = [CUDA]
    for name, why in left_out.items():
        print(f"ulps: variant {name} left out: {why}", file=sys.stderr)
    by_variant: dict[str, dict[str, float]] = {}
    for variant in variants:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", variant],
            stdout=subprocess.PIPE,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            print(f"ulps: variant {variant} failed (exit {proc.returncode})", file=sys.stderr)
            return 1
        by_variant[variant] = json.loads(proc.stdout.strip().splitlines()[-1])
    functions = _functions(variants[0])
    print("| function | " + " | ".join(variants) + " | constant (k ulps, c u) |")
    print("|---|" + "---|" * (len(variants) + 1))
    low = []
    for name in sorted(next(iter(by_variant.values()))):
        k = _quarter_up(max(v[name][0] for v in by_variant.values()))
        c = _quarter_up(max(v[name][1] for v in by_variant.values()))
        op = "pow" if name == "power" else name
        if op in functions.operations:
            constant = (functions.operations[op], 0.0)
        elif op in functions.elementary:
            constant = functions.elementary[op]
        else:
            # llvm: every measured function has its own constant; cuda: the documented fallback.
            constant = functions.unlisted if variants == [CUDA] else None
        cells = " | ".join(
            f"{by_variant[v][name][0]:.3f}, {by_variant[v][name][1]:.3f}" for v in variants
        )
        print(f"| {name} | {cells} | {constant} (measured {k}, {c}) |")
        if name == "sqrt" and "sqrt" not in functions.operations:  # IEEE: correctly rounded
            if k > 0.5 or c > 0:
                low.append(f"sqrt: measured ({k}, {c}), not correctly rounded")
        elif constant is None or k > constant[0] or c > constant[1]:
            low.append(f"{name}: measured ({k}, {c}), constant {constant}")
    if args.out:
        Path(args.out).write_text(json.dumps({"variants": variants, "ulps": by_variant}, indent=1))
    if low:
        print("ulps: constants below the measurement: " + "; ".join(low), file=sys.stderr)
        return 1 if args.check else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
