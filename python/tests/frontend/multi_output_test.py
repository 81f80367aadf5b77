"""Models with nested tuple outputs and constant buffers imported into Relax match PyTorch."""

import pytest
import torch
import tvm

from tvm_conformance.model_import import import_model, seed_parameters, verify_model


class MultiOutput(torch.nn.Module):
    """Linear scaled by buffers and a plain tensor attribute; returns (y, (sum, argmax))."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 6)
        self.register_buffer("scale", torch.linspace(0.5, 1.5, 6))
        self.register_buffer("shift", torch.arange(6.0), persistent=False)
        self.offset = torch.full((6,), 0.25)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        y = self.fc(x) * self.scale + self.shift + self.offset
        return y, (y.sum(dim=1), torch.argmax(y, dim=1))


@pytest.mark.parametrize("frontend", ["exported_program", "fx"])
def test_nested_tuple_outputs_match_pytorch(
    frontend: str, target: str, dev: tvm.runtime.Device
) -> None:
    torch.manual_seed(0)
    verify_model(
        seed_parameters(MultiOutput()).eval(),
        [torch.randn(3, 8)],
        expected_ops=["relax.matmul", "relax.sum", "relax.argmax"],
        frontend=frontend,
        target=target,
        dev=dev,
    )


@pytest.mark.parametrize("frontend", ["exported_program", "fx"])
def test_buffers_are_constants_not_weights(frontend: str) -> None:
    torch.manual_seed(0)
    imported = import_model(MultiOutput().eval(), [torch.randn(3, 8)], frontend=frontend)
    assert sorted(imported.weights) == ["fc.bias", "fc.weight"]
    assert imported.num_inputs == 1
    assert len(imported.mod["main"].params) == 3
