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


class Mlp(torch.nn.Module):
    """Linear(16, 32), ReLU, Linear(32, 4): the model-import checks' MLP."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.relu = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.relu(self.fc1(x)))
