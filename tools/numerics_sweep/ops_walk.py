"""Every ATen op the tolerance rule meets in PyTorch's corpus: modelled, or refused by name.

The walk: every float32 sample the op-corpus tier takes from PyTorch's OpInfo and ModuleInfo
databases, traced as the reference traces it (numerics.reference_ops: composites decomposed as
the rule decomposes them), each op classified by numerics.rounding_model. The ops the rule
refuses must be exactly numerics.REFUSED_OPS (listed once, with why): a newly refused op (one
the corpus starts to emit, a model taken away) fails the check until it is named there, and so
does a listed op that is modelled or no longer emitted. The walk depends on torch and the kit
only, never on the TVM under test, so .ci/run runs it once, not in every lane (about 25 s).

    ./bazelw run //tools/numerics_sweep:ops_walk -- --check [--out table.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time

from tvm_conformance import numerics, op_corpus


def walk() -> tuple[dict[str, str], dict[str, list[str]], int]:
    """(op -> kind, refused op -> the samples that reach it, samples traced)."""
    kinds: dict[str, str] = {}
    users: dict[str, list[str]] = collections.defaultdict(list)
    traced = 0
    for kind in ("op", "module"):
        for name in op_corpus.names(kind):
            try:
                cases = op_corpus._cases(kind, name, True, ("float32",))
            except Exception:  # noqa: BLE001 - a database entry without samples here
                continue
            for case in cases:
                if op_corpus.exclusion(case):
                    continue
                try:
                    ops = numerics.reference_ops(case.model, [t.clone() for t in case.inputs])
                except Exception:  # noqa: BLE001 - untraceable: references() refuses it too
                    continue
                traced += 1
                for op, how in ops.items():
                    kinds[op] = how
                    if how == "refused":
                        users[op].append(f"{kind}|{case.name}|{case.index}")
    return kinds, users, traced


def problems(kinds: dict[str, str], users: dict[str, list[str]], traced: int) -> list[str]:
    """What breaks the check: too few samples, a kind not in MODEL_KINDS, a refused op not
    listed in numerics.REFUSED_OPS, a listed op the walk finds modelled or not at all."""
    found = []
    if traced < 1000:
        found.append(f"only {traced} samples traced: the walk lost the corpus")
    if odd := set(kinds.values()) - set(numerics.MODEL_KINDS):
        found.append(f"kinds outside numerics.MODEL_KINDS: {sorted(odd)}")
    refused = {op for op, how in kinds.items() if how == "refused"}
    for op in sorted(refused - numerics.REFUSED_OPS):
        found.append(f"newly refused (name it in numerics.REFUSED_OPS): {op}: {users[op][:3]}")
    for op in sorted(numerics.REFUSED_OPS - refused):
        found.append(f"listed as refused but {kinds.get(op, 'not emitted')}: {op}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ops_walk", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 on any problem")
    parser.add_argument("--out", help="write the table (op -> kind, refused -> samples) here")
    args = parser.parse_args(argv)
    start = time.monotonic()
    kinds, users, traced = walk()
    counts = collections.Counter(kinds.values())
    print(f"ops_walk: {traced} samples, {len(kinds)} ATen ops: {dict(sorted(counts.items()))}")
    for op in sorted(users):
        print(f"ops_walk: refused {op} ({len(users[op])} samples, e.g. {users[op][0]})")
    if args.out:
        table = {"kinds": dict(sorted(kinds.items())), "refused_by": dict(sorted(users.items()))}
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(table, f, indent=1)
    found = problems(kinds, users, traced)
    for line in found:
        print(f"ops_walk: PROBLEM: {line}", file=sys.stderr)
    print(f"ops_walk: {len(found)} problems, {time.monotonic() - start:.0f} s")
    return 1 if args.check and found else 0


if __name__ == "__main__":
    from tvm_conformance.op_corpus_outcomes import run_with_fixed_hash_seed

    # The corpus's samples in one order on every run (op_corpus_outcomes.HASH_SEED).
    run_with_fixed_hash_seed()
    sys.exit(main())
