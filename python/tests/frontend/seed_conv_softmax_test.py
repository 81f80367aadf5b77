"""Seed 003's model (Conv2d + Softmax) imported into Relax matches PyTorch within rounding
(seed 003 compared at rtol = atol = 1e-5; the kit's rule: docs/model_import.md)."""

import pytest
import torch
import tvm

from tvm_conformance.model_import import seed_parameters, verify_model
from tvm_conformance.seed_models import ConvSoftmax


@pytest.mark.parametrize("exec_mode", ["bytecode", "compiled"])
@pytest.mark.parametrize("frontend", ["exported_program", "fx"])
def test_conv_softmax_matches_pytorch(
    frontend: str, exec_mode: str, target: str, dev: tvm.runtime.Device
) -> None:
    torch.manual_seed(0)
    model = seed_parameters(ConvSoftmax().float()).eval()
    data = torch.rand([1, 3, 10, 10])
    verify_model(
        model,
        [data],
        expected_ops=["relax.nn.conv2d"],
        frontend=frontend,
        exec_modes=(exec_mode,),
        target=target,
        dev=dev,
    )
