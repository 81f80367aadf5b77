"""The tolerance rule measured: every model-import check over many seeds and CPU code variants.

Each check of python/tests/frontend that compares a TVM result with PyTorch (the same models,
inputs, frontends and import path as verify_model) runs for ``--seeds`` seeds (seeded
parameters and inputs) and for each llvm code variant the host can run (TVM 0.27's JSON target
``{"kind": "llvm", "mcpu": ...}``; one child process per variant, so an instruction the host
lacks ends that child only). Every TVM output is judged twice:

  before: the element-wise rtol = atol = 1e-5 against PyTorch's float32 output (the old check);
  after:  tvm_conformance.numerics (against float64, allowance from the computation).

The table gives, per check, the seed-variant runs that fail each rule and, for the rule, the
allowed error divided by the largest error observed (the headroom; an output computed exactly
in every run has no finite headroom and reads "exact"). `--quick` is the CI step.

    ./bazelw run //tools/numerics_sweep -- --seeds 30 --out sweep.json   # the whole sweep
    ./bazelw run //tools/numerics_sweep -- --quick                       # CI: about a minute
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Variants: the label, then the llvm mcpu (None: TVM's default llvm target), then the CPU
# features the host needs to run that code.
VARIANTS: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "default": (None, ()),
    "generic": ("generic", ()),
    "x86-64-v2": ("x86-64-v2", ("sse4.2", "popcnt")),
    "x86-64-v3": ("x86-64-v3", ("avx2", "fma", "bmi2")),
    "x86-64-v4": ("x86-64-v4", ("avx512f", "avx512bw", "avx512dq", "avx512vl")),
    "host": ("host", ()),
}
QUICK_CHECKS = (
    "mlp/exported_program",
    "layer_norm/fx",
    "op:activations/exported_program",
    "op:softmax_axes/fx",
    "op:conv2d_arguments/exported_program_undecomposed",
)


def _frontend_dir() -> Path:
    """python/tests/frontend beside this file's package: in the runfiles tree (./bazelw run)
    or, through the link, in the source tree."""
    for start in (Path(__file__).absolute(), Path(__file__).resolve()):
        candidate = start.parent.parent.parent / "python" / "tests" / "frontend"
        if candidate.is_dir():
            return candidate
    raise SystemExit("sweep: python/tests/frontend not found (run it with ./bazelw run)")


def _load(name: str) -> Any:
    path = _frontend_dir() / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"sweep_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def checks() -> dict[str, tuple[Callable[[], Any], Callable[[], list[Any]], str]]:
    """name -> (make model, make inputs, frontend): the tests' own models and inputs."""
    import torch

    from tvm_conformance.seed_models import ConvSoftmax, Mlp

    norm = _load("normalization_test")
    ops = _load("op_translation_test")
    multi = _load("multi_output_test")
    keywords = _load("functional_keywords_test")
    table: dict[str, tuple[Callable[[], Any], Callable[[], list[Any]], str]] = {}
    for frontend in ("exported_program", "fx"):
        table[f"mlp/{frontend}"] = (Mlp, lambda: [torch.randn(2, 16) * 4.0], frontend)
        table[f"seed_conv_softmax/{frontend}"] = (
            lambda: ConvSoftmax().float(),
            lambda: [torch.rand(1, 3, 10, 10)],
            frontend,
        )
        table[f"multi_output/{frontend}"] = (
            multi.MultiOutput,
            lambda: [torch.randn(3, 8)],
            frontend,
        )
    for frontend in ("exported_program", "exported_program_undecomposed", "fx"):
        table[f"layer_norm/{frontend}"] = (
            norm.LinearLayerNorm,
            lambda: [torch.randn(2, 5, 8)],
            frontend,
        )
    # The frontends that read eval-mode BatchNorm's running statistics (the others deviate).
    table["batch_norm/exported_program"] = (
        norm.ConvBatchNorm,
        lambda: [torch.rand(1, 3, 8, 8)],
        "exported_program",
    )
    for case, (make, inputs, _) in ops.CASES.items():
        table[f"op:{case}/exported_program"] = (make, inputs, "exported_program")
        if case != "batch_norm_eval":
            table[f"op:{case}/exported_program_undecomposed"] = (
                make,
                inputs,
                "exported_program_undecomposed",
            )
    for case, (make, inputs, _) in ops.FX_CASES.items():
        table[f"op:{case}/fx"] = (make, inputs, "fx")
    for case, (call, shapes, shape, scale, as_read) in keywords.CASES.items():
        if as_read is None:  # the cases from_fx reads in full
            table[f"keywords:{case}/fx"] = (
                lambda call=call, shapes=shapes: keywords.Functional(call, **shapes),
                lambda shape=shape, scale=scale: [torch.randn(*shape) * scale],
                "fx",
            )
    return table


def _host_features() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return {f.replace("_", ".") for f in line.split(":", 1)[1].split()}
    return set()


def runnable_variants(names: list[str]) -> tuple[list[str], dict[str, str]]:
    """The variants the host can run, and why each other one was left out."""
    have = _host_features()
    keep, left = [], {}
    for name in names:
        if name not in VARIANTS:
            raise ValueError(f"unknown variant {name!r}; known: {', '.join(VARIANTS)}")
        missing = [f for f in VARIANTS[name][1] if f not in have]
        if missing:
            left[name] = f"host lacks {', '.join(missing)}"
        else:
            keep.append(name)
    return keep, left


def _target(variant: str) -> Any:
    import tvm

    mcpu = VARIANTS[variant][0]
    if mcpu is None:
        return tvm.target.Target("llvm")
    if mcpu == "host":
        mcpu = tvm.target.codegen.llvm_get_system_cpu()
    return tvm.target.Target({"kind": "llvm", "mcpu": mcpu})


def prepare(names: list[str], seeds: int, cache: Path) -> None:
    """In this process: import, bind and evaluate the references of every check x seed once,
    for every variant to build from (the import does not depend on the code variant)."""
    import pickle

    import torch
    import tvm

    from tvm_conformance import numerics
    from tvm_conformance.model_import import bind_weights, import_model, seed_parameters

    table = checks()
    for name in names:
        make, make_inputs, frontend = table[name]
        for seed in range(seeds):
            torch.manual_seed(seed)
            model = seed_parameters(make(), seed=seed).eval()
            inputs = make_inputs()
            with torch.no_grad():
                expected32 = [
                    t.numpy() for t in numerics._flatten(model(*[t.clone() for t in inputs]))
                ]
            refs = numerics.references(model, inputs)
            bound = bind_weights(import_model(model, inputs, frontend=frontend))
            record = {
                "module": tvm.ir.save_json(bound),
                "inputs": [t.numpy() for t in inputs],
                "expected32": expected32,
                "refs": refs,
            }
            (cache / f"{_slug(name)}-{seed}.pkl").write_bytes(pickle.dumps(record))
        print(f"sweep: prepared {name}", file=sys.stderr, flush=True)


def _slug(name: str) -> str:
    return name.replace("/", "__").replace(":", "_")


def run_variant(variant: str, names: list[str], seeds: int, cache: Path) -> dict[str, Any]:
    """In this process: every prepared check x seed built for one code variant and run; per
    check the two rules' failure counts and the rule's largest observed/allowed ratio."""
    import pickle

    import numpy as np
    import tvm
    from tvm import relax

    from tvm_conformance import numerics

    target = _target(variant)
    dev = tvm.cpu(0)
    results: dict[str, Any] = {}
    for name in names:
        row: dict[str, Any] = {"runs": 0, "before_fail": 0, "after_fail": 0, "worst_ratio": 0.0}
        start = time.monotonic()
        for seed in range(seeds):
            record = pickle.loads((cache / f"{_slug(name)}-{seed}.pkl").read_bytes())
            bound = tvm.ir.load_json(record["module"])
            vm = relax.VirtualMachine(relax.build(bound, target, exec_mode="bytecode"), dev)
            out = vm["main"](*[tvm.runtime.tensor(a, dev) for a in record["inputs"]])
            actual = _flatten_tvm(out)
            expected32, refs = record["expected32"], record["refs"]
            row["runs"] += 1
            before_ok = len(actual) == len(expected32) and all(
                a.shape == e.shape
                and np.allclose(a, e, rtol=1e-5, atol=1e-5)  # the old rule, measured
                for a, e in zip(actual, expected32, strict=True)
            )
            comparisons = [numerics.compare(a, r) for a, r in zip(actual, refs, strict=True)]
            after_ok = len(actual) == len(refs) and all(c.ok for c in comparisons)
            row["before_fail"] += not before_ok
            row["after_fail"] += not after_ok
            if not after_ok:
                row.setdefault("after_messages", []).append(
                    f"seed {seed}: " + "; ".join(c.message for c in comparisons if not c.ok)
                )
            for c in comparisons:
                if np.isfinite(c.worst_ratio):
                    row["worst_ratio"] = max(row["worst_ratio"], c.worst_ratio)
        row["seconds"] = round(time.monotonic() - start, 1)
        results[name] = row
        print(
            f"sweep: {variant} {name}: {row['before_fail']}/{row['runs']} before, "
            f"{row['after_fail']}/{row['runs']} after, worst {row['worst_ratio']:.3g} of allowed",
            file=sys.stderr,
            flush=True,
        )
    return results


def _flatten_tvm(output: Any) -> list[Any]:
    import tvm

    if isinstance(output, tvm.runtime.Tensor):
        return [output.numpy()]
    return [a for o in output for a in _flatten_tvm(o)]


def _child(mode: list[str], names: list[str], seeds: int, cache: Path) -> dict[str, Any]:
    cmd = [
        sys.executable,
        __file__,
        *mode,
        "--cache",
        str(cache),
        "--seeds",
        str(seeds),
        "--checks",
        *names,
    ]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=False)
    if proc.returncode != 0:
        return {"error": f"child {' '.join(mode)} exited {proc.returncode}"}
    lines = proc.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {}


def table_markdown(by_variant: dict[str, dict[str, Any]]) -> str:
    """The per-check table: failures before / after (runs = seeds x variants), headroom."""
    names = sorted({n for v in by_variant.values() for n in v if n != "error"})
    lines = [
        "| check | runs | fail at rtol=atol=1e-5 | fail by the rule | allowed / largest error |",
        "|---|---|---|---|---|",
    ]
    totals = [0, 0, 0]
    for name in names:
        rows = [v[name] for v in by_variant.values() if name in v]
        runs = sum(r["runs"] for r in rows)
        before = sum(r["before_fail"] for r in rows)
        after = sum(r["after_fail"] for r in rows)
        worst = max(r["worst_ratio"] for r in rows)
        headroom = "exact" if worst == 0 else f"{1 / worst:.1f}"
        lines.append(f"| {name} | {runs} | {before} | {after} | {headroom} |")
        totals = [totals[0] + runs, totals[1] + before, totals[2] + after]
    lines.append(f"| **all {len(names)} checks** | {totals[0]} | {totals[1]} | {totals[2]} | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS))
    parser.add_argument("--checks", nargs="+", help="check names (default: all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--quick", action="store_true", help="CI: 2 seeds, 2 variants, 5 checks")
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.jobs < 1:
        parser.error("--seeds and --jobs must be >= 1")
    if args.prepare:
        prepare(args.checks, args.seeds, Path(args.cache))
        print("{}")
        return 0
    if args.child:
        print(json.dumps(run_variant(args.child, args.checks, args.seeds, Path(args.cache))))
        return 0
    known = checks()
    if args.quick:
        args.seeds, args.variants, args.checks = 2, ["default", "host"], list(QUICK_CHECKS)
    names = args.checks or list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"unknown check(s) {unknown}; known: {', '.join(known)}")
    try:
        variants, left_out = runnable_variants(args.variants)
    except ValueError as err:
        parser.error(str(err))
    for name, why in left_out.items():
        print(f"sweep: variant {name} left out: {why}", file=sys.stderr)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="numerics_sweep") as tmp:
        cache = Path(tmp)
        chunks = [names[i :: args.jobs] for i in range(args.jobs) if names[i :: args.jobs]]
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            prepared = list(pool.map(lambda c: _child(["--prepare"], c, args.seeds, cache), chunks))
            failed = [p["error"] for p in prepared if "error" in p]
            if failed:
                print(f"sweep: preparing failed: {failed}", file=sys.stderr)
                return 1
            futures = {
                v: pool.submit(_child, ["--child", v], names, args.seeds, cache) for v in variants
            }
            by_variant = {v: f.result() for v, f in futures.items()}
    elapsed = time.monotonic() - start
    errors = {v: r["error"] for v, r in by_variant.items() if "error" in r}
    print(table_markdown(by_variant))
    after = sum(r["after_fail"] for v in by_variant.values() for k, r in v.items() if k != "error")
    print(
        f"sweep: {len(names)} checks x {args.seeds} seeds x {len(variants)} variants "
        f"({', '.join(variants)}) in {elapsed:.0f} s: {after} failures by the rule"
        + (f"; children failed: {errors}" if errors else "")
    )
    if args.out:
        Path(args.out).write_text(
            json.dumps(
                {
                    "seeds": args.seeds,
                    "variants": variants,
                    "left_out": left_out,
                    "seconds": round(elapsed),
                    "results": by_variant,
                },
                indent=1,
            )
        )
    return 1 if after or errors else 0


if __name__ == "__main__":
    sys.exit(main())
