"""A Linear + ReLU MLP imported into Relax matches PyTorch in both exec modes."""

import pytest
import torch
import tvm

from tvm_conformance.model_import import seed_parameters, verify_model
from tvm_conformance.seed_models import Mlp


@pytest.mark.parametrize("frontend", ["exported_program", "fx"])
def test_mlp_matches_pytorch(frontend: str, target: str, dev: tvm.runtime.Device) -> None:
    torch.manual_seed(0)
    verify_model(
        seed_parameters(Mlp()).eval(),
        # Scaled so that the ReLU sees inputs on both sides of 0 and beyond 6.
        [torch.randn(2, 16) * 4.0],
        expected_ops=["relax.matmul", "relax.nn.relu", "relax.add"],
        frontend=frontend,
        target=target,
        dev=dev,
    )
