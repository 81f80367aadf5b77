"""Build step: compile one deployment model with the full TVM and export it as a shared library.

Run by a `tvm_exported_module` genrule (tools/build_defs/tvm.bzl) as
`artefact_builder --model MODEL --target TARGET OUT.so`; it writes OUT.so and nothing else.
The runtime-only tests (runtime_only_test.py) load the result with TVM_USE_RUNTIME_LIB=1.

Models (each checked against numpy in the tests):
  mul_add   main(x, y) = x * y + 1 on float32[2, 3] (the Relax VM tests' model)
  mlp       a PyTorch Linear-ReLU-Linear MLP imported with tvm_conformance.model_import, its
            weights (tvm_conformance.deploy.mlp_weights) bound as constants
  callback  main(x) = 2 * f(x + 1), f being the Python global CALLBACK_GLOBAL that the
            deployed process registers (R.call_dps_packed)

CUDA artefacts hold one fatbin with a cubin per architecture in deploy.CUDA_ARCHS and the PTX of
deploy.CUDA_PTX_ARCH (the oldest), compiled by nvcc (TVM's default would be one architecture
through NVRTC).
"""

import argparse
import os
import tempfile
from typing import Any

import tvm
import tvm_ffi
from tvm.script import ir as I
from tvm.script import relax as R

from tvm_conformance import deploy

MODELS = ("mul_add", "mlp", "callback")
TARGETS = ("llvm", "cuda")


@I.ir_module
class MulAdd:
    """main(x, y) = x * y + 1."""

    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
        z = R.add(R.multiply(x, y), R.const(1.0, "float32"))
        return z


@I.ir_module
class Callback:
    """main(x) = 2 * f(x + 1), f a Python global of the deployed process."""

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        y = R.add(x, R.const(1.0, "float32"))
        # TVMScript takes a literal here; a test checks it equals deploy.CALLBACK_GLOBAL.
        # Destination passing: the callback writes f into a tensor the VM allocates. The output
        # type is positional (its keyword is out_sinfo before TVM 0.27, out_ty since).
        f = R.call_dps_packed("testing.deploy_scale_and_shift", (y,), R.Tensor((4,), "float32"))
        z = R.multiply(f, R.const(2.0, "float32"))
        return z


def mlp_module() -> tvm.IRModule:
    """The PyTorch MLP through the model-import path, weights bound as constants."""
    import torch

    from tvm_conformance.model_import import bind_weights, import_model

    n_in, n_hidden, n_out = deploy.MLP_SHAPE

    class Mlp(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = torch.nn.Linear(n_in, n_hidden)
            self.fc2 = torch.nn.Linear(n_hidden, n_out)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc2(torch.relu(self.fc1(x)))

    model = Mlp().eval()
    weights = deploy.mlp_weights()
    with torch.no_grad():
        for name, param in model.named_parameters():
            param.copy_(torch.from_numpy(weights[name]))
    imported = import_model(model, [torch.zeros(deploy.MLP_BATCH, n_in)])
    return bind_weights(imported, weights)


def _nvcc_fatbin(code: str, *_: Any) -> bytes:
    """tvm_callback_cuda_compile: one fatbin, a cubin per CUDA_ARCHS entry + the oldest's PTX."""
    try:
        from tvm.support import nvcc
    except ImportError:  # TVM < 0.27
        from tvm.contrib import nvcc
    gencode = []
    for arch in deploy.CUDA_ARCHS:
        number = arch.removeprefix("sm_")
        gencode += ["-gencode", f"arch=compute_{number},code=sm_{number}"]
    ptx = deploy.arch_number(deploy.CUDA_PTX_ARCH)
    gencode += ["-gencode", f"arch=compute_{ptx},code=compute_{ptx}"]
    with deploy.nvcc_tmpdir():
        return nvcc.compile_cuda(code, target_format="fatbin", arch=gencode, compiler="nvcc")


def build(model: str, target: str, output: str) -> None:
    """Compile `model` for `target` and export it to `output` (a .so path)."""
    mod = {"mul_add": MulAdd, "callback": Callback}.get(model) or mlp_module()
    if target == "cuda":
        tvm_ffi.register_global_func("tvm_callback_cuda_compile", _nvcc_fatbin, override=True)
        tvm_target = tvm.target.Target({"kind": "cuda", "arch": deploy.CUDA_ARCHS[0]})
        # nvcc.compile_cuda reads the current target (for its -arch checks); give it ours.
        with tvm_target:
            executable = tvm.compile(mod, target=tvm_target)
    else:
        executable = tvm.compile(mod, target="llvm")
    # export_library compiles and links in a workspace directory; give it one private to this
    # action and gone afterwards, so the only file left behind is `output`.
    with tempfile.TemporaryDirectory() as scratch:
        executable.export_library(output, workspace_dir=scratch)


def main() -> None:
    """Parse the arguments and build."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, choices=MODELS)
    parser.add_argument("--target", required=True, choices=TARGETS)
    parser.add_argument("output", help="path of the shared library to write")
    args = parser.parse_args()
    build(args.model, args.target, os.path.abspath(args.output))


if __name__ == "__main__":
    main()
