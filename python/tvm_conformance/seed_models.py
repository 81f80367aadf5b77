"""PyTorch models named by the seed documents, shared by the model-import checks."""

import torch


class ConvSoftmax(torch.nn.Module):
    """Conv2d(3, 6, 7, bias=False) then Softmax over channels (seed 003's model)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 6, 7, bias=False)
        self.softmax = torch.nn.Softmax(dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.softmax(self.conv(x))
