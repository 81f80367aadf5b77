#!/usr/bin/env python3
"""Collect the Relax ops the frontend tests and the op corpus emit into op_corpus.json.

    ./bazelw run //tools/relax_op_corpus -- --write     # rewrite the file
    ./bazelw run //tools/relax_op_corpus                # print it

The models and inputs of the frontend tests that compare with PyTorch are imported through the
frontends their tests use (``model_import.import_model``), then the op corpus's tier cases
(PyTorch's OpInfo samples and ModuleInfo modules, float32, ``op_corpus.op_cases`` /
``module_cases``) through the tier's frontends; every op of the imported modules is collected
(``model_import.collect_ops``) and the first call of each with static arguments is kept as the
op's base call (``relax_signatures.call_record``; the frontend tests' calls come first). An op
with no such call is listed under ``unwalked`` with the reason (the walk synthesizes it one from
its signature where it can: tvm_conformance.relax_registry). Importing them costs ~70 s, so
//python/tests/relax:op_signatures_test reads the file instead, and checks that it is current
by its ``sources`` digest: the sha256 of the files that decide the corpus (SOURCES below). A
change to any of them makes that test fail until the file is regenerated; a change of TVM's
frontends (another lane, a user's wheel) does not: the walk's base calls are the default lane's.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# The files whose content decides the corpus, relative to the workspace root.
SOURCES = (
    "python/tests/frontend/functional_keywords_test.py",
    "python/tests/frontend/multi_output_test.py",
    "python/tests/frontend/normalization_test.py",
    "python/tests/frontend/op_translation_test.py",
    "python/tvm_conformance/op_corpus.py",
    "python/tvm_conformance/seed_models.py",
    "tools/relax_op_corpus/collect.py",
)
OUTPUT = "python/tests/relax/op_corpus.json"


def sources_digest(read: Callable[[str], bytes]) -> str:
    """sha256 over SOURCES (each path and its bytes), ``read(path)`` giving a file's bytes."""
    digest = hashlib.sha256()
    for path in SOURCES:
        data = read(path)
        digest.update(f"{path}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


Model = tuple[str, Callable[[], Any], Callable[[], list[Any]], str]


def _frontend_test(name: str) -> Any:
    from tvm_conformance import runfiles

    path = runfiles.rlocation(f"python/tests/frontend/{name}.py")
    spec = importlib.util.spec_from_file_location(f"corpus_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def frontend_test_models() -> Iterator[Model]:
    """The models and inputs of the frontend tests that compare with PyTorch, each through the
    frontends its test imports it with."""
    import torch

    from tvm_conformance.seed_models import ConvSoftmax, Mlp

    ops = _frontend_test("op_translation_test")
    norm = _frontend_test("normalization_test")
    multi = _frontend_test("multi_output_test")
    keywords = _frontend_test("functional_keywords_test")
    for frontend in ("exported_program", "fx"):
        yield "mlp", Mlp, lambda: [torch.randn(2, 16)], frontend
        yield (
            "conv_softmax",
            lambda: ConvSoftmax().float(),
            lambda: [torch.rand(1, 3, 10, 10)],
            frontend,
        )
        yield "multi_output", multi.MultiOutput, lambda: [torch.randn(3, 8)], frontend
    for frontend in ("exported_program", "exported_program_undecomposed", "fx"):
        yield "layer_norm", norm.LinearLayerNorm, lambda: [torch.randn(2, 5, 8)], frontend
    yield "batch_norm", norm.ConvBatchNorm, lambda: [torch.rand(1, 3, 8, 8)], "exported_program"
    for case, (make, inputs, _) in ops.CASES.items():
        for frontend in ("exported_program", "exported_program_undecomposed"):
            yield f"op:{case}", make, inputs, frontend
    for case, (make, inputs, _) in ops.FX_CASES.items():
        yield f"op:{case}", make, inputs, "fx"
    for case, (call, shapes, shape, scale, _) in keywords.CASES.items():
        yield (
            f"keywords:{case}",
            lambda call=call, shapes=shapes: keywords.Functional(call, **shapes),
            lambda shape=shape, scale=scale: [torch.randn(*shape) * scale],
            "fx",
        )


def op_corpus_cases() -> Iterator[tuple[Any, str]]:
    """The op corpus's tier cases in float32 (the tier's own subset of PyTorch's samples), each
    with every tier frontend it is imported through; excluded cases left out."""
    from tvm_conformance import op_corpus

    for kind, cases_of in (("op", op_corpus.op_cases), ("module", op_corpus.module_cases)):
        for name in op_corpus.names(kind):
            for case in cases_of(name, dtypes=("float32",), tier=True):
                if case.model is None or op_corpus.exclusion(case):
                    continue
                for frontend in case.frontends:
                    if frontend in op_corpus.TIER_FRONTENDS:
                        yield case, frontend


def collect() -> dict[str, Any]:
    """The corpus: every op name the models' imported modules call, and each op's base call."""
    import torch
    import tvm

    from tvm_conformance import relax_signatures, runfiles
    from tvm_conformance.model_import import collect_ops, import_model, seed_parameters

    modules, names = [], set()
    torch.manual_seed(0)
    for _, make, inputs, frontend in frontend_test_models():
        mod = import_model(seed_parameters(make()).eval(), inputs(), frontend=frontend).mod
        modules.append(mod)
        names |= collect_ops(mod)
    frontend_names = set(names)
    from tvm_conformance import op_corpus

    for case, frontend in op_corpus_cases():
        try:
            mod = op_corpus.import_case(case, frontend)
        except Exception:  # noqa: BLE001 - the tier records its import failures; no ops here
            continue
        modules.append(mod)
        names |= collect_ops(mod)
    calls = relax_signatures.corpus_calls(modules)
    ops, unwalked = {}, {}
    for op in sorted(names - set(calls)):
        unwalked[op] = "no call with static arguments (tensors, shapes, constants, tuples)"
    for op, call in sorted(calls.items()):
        # No legalization is no reason to skip an op: the default pipeline dispatches sort and
        # scan ops itself, and an op it cannot build is TVM's answer, pinned by the walk.
        record = relax_signatures.call_record(call)
        # The file must give the walk the same points as the call itself.
        rebuilt = relax_signatures.call_from_record(op, record)
        walked = relax_signatures.walk(op, call) if op in relax_signatures.REFERENCES else []
        again = relax_signatures.walk(op, rebuilt) if walked else []
        if walked != again:
            raise AssertionError(f"{op}: the record {record} walks differently from its call")
        ops[op] = record
    return {
        "about": "Generated by tools/relax_op_corpus/collect.py; do not edit. The Relax ops the "
        "frontend tests' and the op corpus's imported modules call (names), each op's "
        "first call with static arguments (ops), the ops the frontend tests emit (frontend_ops: "
        "their walk crosses the axis forms with keepdims) and why any op is not walked "
        "(unwalked), for //python/tests/relax:op_signatures_test.",
        "tvm": tvm.__version__,
        "sources": sources_digest(lambda p: Path(runfiles.rlocation(p)).read_bytes()),
        "names": sorted(names),
        "frontend_ops": sorted(frontend_names),
        "ops": ops,
        "unwalked": unwalked,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {OUTPUT}")
    args = parser.parse_args(argv)
    text = json.dumps(collect(), indent=1, sort_keys=True) + "\n"
    if not args.write:
        sys.stdout.write(text)
        return 0
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
    if not workspace:
        print("collect: --write needs `./bazelw run //tools/relax_op_corpus`", file=sys.stderr)
        return 2
    Path(workspace, OUTPUT).write_text(text)
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    from tvm_conformance.op_corpus_outcomes import run_with_fixed_hash_seed

    # The corpus's samples in one order on every run (op_corpus_outcomes.HASH_SEED).
    run_with_fixed_hash_seed()
    sys.exit(main())
