"""What TVM's LLVM build costs per distinct kernel: the op corpus's floor (docs/op_corpus.md).

Builds one merged module of N small models (atan2 plus a sum, imported with
`from_exported_program`), each of its own shape so that no two kernels are the same, for N in
`--sizes`, and prints the time of `relax.build` and of the VM's first load per model. Run it
with the kit's venv on an otherwise idle machine:

    "$(./bazelw info output_base)"/external/python_venv/venv/bin/python \\
        tools/perf/compile_cost.py --sizes 50 100 200 400
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 400])
    parser.add_argument("--exec-mode", default="bytecode", choices=("bytecode", "compiled"))
    args = parser.parse_args(argv)
    if any(n < 1 for n in args.sizes):
        parser.error("sizes must be at least 1")

    import torch
    import tvm
    from tvm import relax
    from tvm.relax.frontend.torch import from_exported_program

    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return torch.atan2(x, y) + x.sum()

    def imported(width: int) -> tvm.IRModule:
        x = torch.randn(3, width)
        program = torch.export.export(Model(), (x, x))
        return from_exported_program(program, run_ep_decomposition=False)

    models = [imported(4 + i) for i in range(max(args.sizes))]
    print("| models | relax.build, s | VM load, s | per model, ms |")
    print("|---:|---:|---:|---:|")
    for n in args.sizes:
        merged = tvm.IRModule()
        for k, mod in enumerate(models[:n]):
            for gv, func in mod.functions.items():
                name = f"f{k}" if gv.name_hint == "main" else f"f{k}_{gv.name_hint}"
                if isinstance(func, relax.Function):
                    func = func.with_attr("global_symbol", name)
                merged[name] = func
        start = time.perf_counter()
        executable = relax.build(merged, "llvm", exec_mode=args.exec_mode)
        built = time.perf_counter()
        relax.VirtualMachine(executable, tvm.cpu())
        loaded = time.perf_counter()
        print(
            f"| {n} | {built - start:.2f} | {loaded - built:.2f} | "
            f"{(loaded - start) / n * 1000:.1f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
