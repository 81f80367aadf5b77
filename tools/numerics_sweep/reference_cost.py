"""The tolerance rule's cost: numerics.references() of the d=512 transformer MLP block.

The rule's magnitudes come from one forward propagation of rounding variances through the
model's graph (linear in the graph, not outputs x graph). This times ``references()`` of
tvm_conformance.wide_models.TransformerMlpBlock with an input of (1, 64, 512), 32,768 outputs,
on one thread (issue 51's goal: at most 20 s on 2 cores), best of ``--repeat`` runs.

    ./bazelw run //tools/numerics_sweep:reference_cost [-- --tokens 64 --repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=64, help="the input's sequence length")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=float, default=20.0, help="seconds; exit 1 above it")
    args = parser.parse_args(argv)
    if args.tokens < 1 or args.repeat < 1:
        parser.error("--tokens and --repeat must be >= 1")
    import torch

    from tvm_conformance import numerics, wide_models

    torch.set_num_threads(1)
    model, _ = wide_models.make("mlp_block_512", 0)
    x = torch.randn(1, args.tokens, 512, generator=torch.Generator().manual_seed(0))
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        (ref,) = numerics.references(model, [x])
        times.append(time.perf_counter() - start)
    best = min(times)
    print(
        f"reference_cost: references() of the d=512 block, input {tuple(x.shape)}, "
        f"{ref.value.size} outputs, 1 thread: best {best:.2f} s of {args.repeat} "
        f"({', '.join(f'{t:.2f}' for t in times)}); limit {args.limit:g} s"
    )
    return 0 if best <= args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
