"""Models at the widths users run, for measuring the tolerance rule both ways.

Used by tools/numerics_sweep (every model x 30 seeds x the llvm code variants) and by the
floor checks of python/tests/frontend/tolerance_floors_test.py. Parameters keep PyTorch's own
initialisation (seeded by the caller), so activations have the sizes real networks have.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.nn import functional as F  # noqa: N812


class TransformerMlpBlock(torch.nn.Module):
    """A pre-LayerNorm transformer MLP block with its residual: x + down(gelu(up(norm(x))))."""

    def __init__(self, width: int = 512, hidden: int = 2048) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, hidden)
        self.down = torch.nn.Linear(hidden, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(F.gelu(self.up(self.norm(x))))


class CausalSelfAttention(torch.nn.Module):
    """One attention head with a causal mask, written out (q k^T / sqrt(d), masked softmax)."""

    def __init__(self, width: int = 128) -> None:
        super().__init__()
        self.width = width
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.out = torch.nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).split(self.width, dim=-1)
        scores = q @ k.transpose(-2, -1) / self.width**0.5
        length = x.shape[-2]
        mask = torch.ones(length, length, dtype=torch.bool).triu(1)
        weights = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        return self.out(weights @ v)


class TanhMlp(torch.nn.Module):
    """Six Linear(256, 256) + tanh layers."""

    def __init__(self, width: int = 256, depth: int = 6) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x


class ConvBatchNorm(torch.nn.Module):
    """Conv2d(16, 32, 3) + eval-mode BatchNorm2d + ReLU."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.norm = torch.nn.BatchNorm2d(32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.norm(self.conv(x)))


class DepthwiseConv(torch.nn.Module):
    """A depthwise 3x3 convolution (groups = channels) then a pointwise one."""

    def __init__(self, channels: int = 32) -> None:
        super().__init__()
        self.depthwise = torch.nn.Conv2d(channels, channels, 3, padding=1, groups=channels)
        self.pointwise = torch.nn.Conv2d(channels, 64, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pointwise(self.depthwise(x))


class GroupNormConv(torch.nn.Module):
    """Conv2d(32, 64, 3) then GroupNorm(8, 64)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(32, 64, 3, padding=1)
        self.norm = torch.nn.GroupNorm(8, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.conv(x))


class Classifier(torch.nn.Module):
    """Linear(256, 100) then log-softmax: a 100-class head."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(256, 100)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(self.fc(x), dim=-1)


class Centered(torch.nn.Module):
    """(y - y.mean()) * 8 with y = Linear(256, 64)(x) + 50: a result that cancels."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(256, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x) + 50.0
        return (y - y.mean(dim=-1, keepdim=True)) * 8.0


class Linear(torch.nn.Module):
    """One Linear layer (the sweep's widths 512-4096)."""

    def __init__(self, width: int, out: int) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(width, out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


# name -> (make the model, the input's shape)
MODELS: dict[str, tuple[Callable[[], torch.nn.Module], tuple[int, ...]]] = {
    "linear_512": (lambda: Linear(512, 512), (16, 512)),
    "linear_1024": (lambda: Linear(1024, 256), (16, 1024)),
    "linear_4096": (lambda: Linear(4096, 64), (8, 4096)),
    "mlp_block_512": (TransformerMlpBlock, (1, 16, 512)),
    "attention_causal_64": (lambda: CausalSelfAttention(64), (1, 32, 64)),
    "attention_causal_256": (lambda: CausalSelfAttention(256), (1, 32, 256)),
    "tanh_mlp_6x256": (TanhMlp, (8, 256)),
    "conv_batch_norm": (ConvBatchNorm, (1, 16, 16, 16)),
    "depthwise_conv": (DepthwiseConv, (1, 32, 16, 16)),
    "group_norm": (GroupNormConv, (2, 32, 8, 8)),
    "log_softmax_100": (Classifier, (16, 256)),
    "centered": (Centered, (16, 256)),
}


def make(name: str, seed: int) -> tuple[torch.nn.Module, torch.Tensor]:
    """Model ``name`` with PyTorch's initialisation under ``seed``, in eval mode, and an input
    of N(0, 1) values from the same seed."""
    factory, shape = MODELS[name]
    torch.manual_seed(seed)
    model = factory().eval()
    return model, torch.randn(*shape)
