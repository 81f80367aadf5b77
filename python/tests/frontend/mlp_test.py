"""A Linear + ReLU MLP imported into Relax matches PyTorch in both exec modes."""

import pytest
import torch
import tvm

from tvm_conformance.model_import import seed_parameters, verify_model


class Mlp(torch.nn.Module):
    """Two Linear layers with a ReLU between them."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.relu = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.relu(self.fc1(x)))


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
