"""verify_model fails with a clear message when TVM's outputs differ from PyTorch's in shape."""

import pytest
import torch
import tvm

from tvm_conformance.model_import import verify_model


class ChannelsDropWhenExported(torch.nn.Module):
    """Conv + Softmax that keeps 3 of 6 channels while torch.export traces it.

    It stands in for a frontend that mis-imports an output shape: eager PyTorch returns
    [1, 6, 4, 4], the imported Relax function [1, 3, 4, 4].
    """

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 6, 7, bias=False)
        self.softmax = torch.nn.Softmax(dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.softmax(self.conv(x))
        if torch.compiler.is_exporting():
            return y[:, :3]
        return y


class SecondOutputDropsWhenExported(torch.nn.Module):
    """Returns (y, y * 2) eagerly but only (y,) while torch.export traces it."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = torch.relu(x)
        if torch.compiler.is_exporting():
            return (y,)
        return y, y * 2


def test_wrong_output_shape_is_reported(target: str, dev: tvm.runtime.Device) -> None:
    torch.manual_seed(0)
    with pytest.raises(
        AssertionError,
        match=r"Output shapes \(1, 6, 4, 4\) \(PyTorch\) and \(1, 3, 4, 4\) \(TVM\) don't match "
        r"\(output 0, frontend 'exported_program', exec mode 'bytecode'",
    ):
        verify_model(
            ChannelsDropWhenExported().eval(),
            [torch.rand(1, 3, 10, 10)],
            expected_ops=["relax.nn.conv2d"],
            target=target,
            dev=dev,
        )


def test_wrong_output_count_is_reported(target: str, dev: tvm.runtime.Device) -> None:
    torch.manual_seed(0)
    with pytest.raises(AssertionError, match=r"PyTorch returned 2 output\(s\), TVM returned 1"):
        verify_model(
            SecondOutputDropsWhenExported().eval(),
            [torch.randn(2, 3)],
            expected_ops=["relax.nn.relu"],
            exec_modes=("bytecode",),
            target=target,
            dev=dev,
        )
