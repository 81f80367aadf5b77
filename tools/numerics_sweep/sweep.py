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
# The make-model marker of a check whose model comes from tvm_conformance.wide_models (PyTorch's
# own initialisation, seeded; built once per variant with the weights as inputs).
WIDE = "wide"
# The seeds on which the previous rule (previous_rule.py, a per-element Jacobian whose cost
# grows with outputs x graph) is also evaluated for a wide check.
PREVIOUS_RULE_SEEDS = 3
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
    from tvm_conformance import wide_models

    for model_name in wide_models.MODELS:
        table[f"wide:{model_name}/exported_program"] = (
            WIDE,
            lambda model_name=model_name: [model_name],
            "exported_program",
        )
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
        if make == WIDE:
            _prepare_wide(name, make_inputs()[0], frontend, seeds, cache)
            continue
        # A model without floating buffers is imported once with its weights as parameters
        # (built once per variant); one with buffers (bound into the IR as constants by the
        # importers) is imported and bound per seed.
        order: list[str] | None = None
        for seed in range(seeds):
            torch.manual_seed(seed)
            model = seed_parameters(make(), seed=seed).eval()
            inputs = make_inputs()
            with torch.no_grad():
                expected32 = [
                    t.numpy() for t in numerics._flatten(model(*[t.clone() for t in inputs]))
                ]
            refs = numerics.references(model, inputs)
            record = {
                "inputs": [t.numpy() for t in inputs],
                "expected32": expected32,
                "refs": refs,
                "previous": _previous_allowances(model, inputs),
            }
            if seed == 0 and not any(b.is_floating_point() for b in model.buffers()):
                imported = import_model(model, inputs, frontend=frontend)
                main = imported.mod["main"]
                order = [var.name for var in list(main.params)[imported.num_inputs :]]
                by_var = {v: k for k, v in imported.var_names.items()}
                module_file = cache / f"{_slug(name)}-module.json"
                module_file.write_text(tvm.ir.save_json(imported.mod))
            if order is not None:
                state = dict(model.named_parameters())
                record["inputs"] += [state[by_var[v]].detach().numpy() for v in order]
            else:
                bound = bind_weights(import_model(model, inputs, frontend=frontend))
                record["module"] = tvm.ir.save_json(bound)
            (cache / f"{_slug(name)}-{seed}.pkl").write_bytes(pickle.dumps(record))
        print(f"sweep: prepared {name}", file=sys.stderr, flush=True)


def _previous_allowances(model: Any, inputs: list[Any]) -> list[Any]:
    """Per output: the previous rule's allowed error (None for a discrete output)."""
    import previous_rule

    return [
        None if r.discrete else r.allowed_error() for r in previous_rule.references(model, inputs)
    ]


def _prepare_wide(name: str, model_name: str, frontend: str, seeds: int, cache: Path) -> None:
    """A wide check: the module imported once with its weights as parameters; per seed the
    input, the weights in the module's parameter order, the references of both rules."""
    import pickle

    import torch
    import tvm

    from tvm_conformance import numerics, wide_models
    from tvm_conformance.model_import import import_model

    model, x = wide_models.make(model_name, 0)
    imported = import_model(model, [x], frontend=frontend)
    main = imported.mod["main"]
    order = [var.name for var in list(main.params)[imported.num_inputs :]]
    by_var = {v: k for k, v in imported.var_names.items()}
    (cache / f"{_slug(name)}-module.json").write_text(tvm.ir.save_json(imported.mod))
    for seed in range(seeds):
        model, x = wide_models.make(model_name, seed)
        state = dict(model.named_parameters()) | dict(model.named_buffers())
        weights = [state[by_var[v]].detach().numpy() for v in order]
        with torch.no_grad():
            expected32 = [t.numpy() for t in numerics._flatten(model(x.clone()))]
        record = {
            "inputs": [x.numpy(), *weights],
            "expected32": expected32,
            "refs": numerics.references(model, [x]),
            "previous": _previous_allowances(model, [x]) if seed < PREVIOUS_RULE_SEEDS else None,
        }
        (cache / f"{_slug(name)}-{seed}.pkl").write_bytes(pickle.dumps(record))


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
        headrooms: list[np.ndarray] = []
        previous_headrooms: list[np.ndarray] = []
        exact = [0, 0]  # elements computed exactly, elements compared
        wide_vm = None
        module_file = cache / f"{_slug(name)}-module.json"
        if module_file.exists():
            wide = tvm.ir.load_json(module_file.read_text())
            wide_vm = relax.VirtualMachine(relax.build(wide, target, exec_mode="bytecode"), dev)
        for seed in range(seeds):
            record = pickle.loads((cache / f"{_slug(name)}-{seed}.pkl").read_bytes())
            if wide_vm is not None:
                vm = wide_vm
            else:
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
            previous = record.get("previous")
            for i, (a, r) in enumerate(zip(actual, refs, strict=False)):
                if r.discrete or a.shape != r.value.shape:
                    continue
                error = np.abs(a.astype(np.float64) - r.value)
                nonzero = error > 0
                exact[0] += int((~nonzero).sum())
                exact[1] += error.size
                headrooms.append((r.allowed_error()[nonzero] / error[nonzero]).astype(np.float32))
                if previous is not None and previous[i] is not None:
                    previous_headrooms.append(
                        (previous[i][nonzero] / error[nonzero]).astype(np.float32)
                    )
        np.save(cache / f"headroom-{variant}-{_slug(name)}.npy", _joined(headrooms))
        np.save(cache / f"previous-{variant}-{_slug(name)}.npy", _joined(previous_headrooms))
        row["exact_elements"], row["elements"] = exact
        row["seconds"] = round(time.monotonic() - start, 1)
        results[name] = row
        print(
            f"sweep: {variant} {name}: {row['before_fail']}/{row['runs']} before, "
            f"{row['after_fail']}/{row['runs']} after, worst {row['worst_ratio']:.3g} of allowed",
            file=sys.stderr,
            flush=True,
        )
    return results


def _joined(parts: list[Any]) -> Any:
    import numpy as np

    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)


def pooled_headroom(cache: Path, prefix: str, variants: list[str], name: str) -> dict[str, Any]:
    """Over the elements with a nonzero error, pooled over seeds and variants: allowed /
    error at the median, the 1st percentile and the minimum."""
    import numpy as np

    parts = []
    for variant in variants:
        path = cache / f"{prefix}-{variant}-{_slug(name)}.npy"
        if path.exists():
            parts.append(np.load(path))
    values = _joined(parts)
    if values.size == 0:
        return {"elements": 0}
    return {
        "elements": int(values.size),
        "median": float(np.median(values)),
        "p1": float(np.percentile(values, 1)),
        "min": float(values.min()),
    }


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


def table_markdown(by_variant: dict[str, dict[str, Any]], pooled: dict[str, Any]) -> str:
    """The per-check table: failing runs (runs = seeds x variants) by the old element-wise
    1e-5 and by the rule; per element with a nonzero error, pooled over seeds and variants,
    the rule's headroom (allowed / error) at the median, 1st percentile and minimum, and the
    previous rule's median (issue 41's rule, for wide checks on its first seeds only)."""
    names = sorted({n for v in by_variant.values() for n in v if n != "error"})
    lines = [
        "| check | runs | fail at 1e-5 | fail by the rule | elements (exact) | headroom median "
        "| p1 | min | previous rule's median |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    totals = [0, 0, 0]
    for name in names:
        rows = [v[name] for v in by_variant.values() if name in v]
        runs = sum(r["runs"] for r in rows)
        before = sum(r["before_fail"] for r in rows)
        after = sum(r["after_fail"] for r in rows)
        elements = sum(r.get("elements", 0) for r in rows)
        exact = sum(r.get("exact_elements", 0) for r in rows)
        now, previous = pooled[name]["rule"], pooled[name]["previous"]
        cells = (
            [f"{now['median']:.1f}", f"{now['p1']:.1f}", f"{now['min']:.2f}"]
            if now.get("elements")
            else ["exact", "exact", "exact"]
        )
        before_cell = f"{previous['median']:.0f}" if previous.get("elements") else "-"
        lines.append(
            f"| {name} | {runs} | {before} | {after} | {elements} ({exact}) | "
            + " | ".join(cells)
            + f" | {before_cell} |"
        )
        totals = [totals[0] + runs, totals[1] + before, totals[2] + after]
    lines.append(
        f"| **all {len(names)} checks** | {totals[0]} | {totals[1]} | {totals[2]} | | | | | |"
    )
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
        pooled = {
            name: {
                "rule": pooled_headroom(cache, "headroom", variants, name),
                "previous": pooled_headroom(cache, "previous", variants, name),
            }
            for name in names
        }
    elapsed = time.monotonic() - start
    errors = {v: r["error"] for v, r in by_variant.items() if "error" in r}
    print(table_markdown(by_variant, pooled))
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
                    "pooled_headroom": pooled,
                },
                indent=1,
            )
        )
    return 1 if after or errors else 0


if __name__ == "__main__":
    sys.exit(main())
