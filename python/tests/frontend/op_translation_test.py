"""Op translations of the PyTorch importers, checked where a wrong translation shows.

Every model has seeded random parameters and buffers (`seed_parameters`: no unit weights or
zero biases that would hide a dropped parameter), uses non-default arguments (padding, stride,
dilation, groups, a softmax axis that is not the last, keepdim) and default ones PyTorch fills
in (LayerNorm's eps, LeakyReLU's slope, exact GELU), and gets inputs that reach every branch of
its ops (ReLU inputs beyond 6, small variances where eps matters). `verify_model` compares each
output's shape, dtype (argmax is int64) and values with PyTorch, in both exec modes.

The exported-program cases run twice: decomposed into core ATen first (TVM's default) and
undecomposed (`run_ep_decomposition=False`), where `aten.layer_norm` with its weight and bias,
`aten.batch_norm` and the others reach TVM's own translators of those ops.
"""

from collections.abc import Callable

import pytest
import torch
import tvm

from tvm_conformance.model_import import seed_parameters, verify_model


class LayerNormDefaultEps(torch.nn.Module):
    """LayerNorm with PyTorch's default eps over a low-variance input (weight and bias seeded:
    undecomposed, they are `aten.layer_norm`'s third and fourth arguments)."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


class ConvBatchNorm(torch.nn.Module):
    """Conv2d then eval-mode BatchNorm2d, every parameter and statistic non-default."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.norm = torch.nn.BatchNorm2d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.conv(x))


class ConvArguments(torch.nn.Module):
    """Conv2d with stride, padding, dilation and groups all different from their defaults."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


class SoftmaxAxes(torch.nn.Module):
    """Softmax and log-softmax over axes that are not the last one."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.softmax(x, dim=1), torch.log_softmax(x, dim=0)


class Activations(torch.nn.Module):
    """ReLU, exact GELU and LeakyReLU with its default slope, as three outputs in order."""

    def __init__(self) -> None:
        super().__init__()
        self.relu = torch.nn.ReLU()
        self.gelu = torch.nn.GELU()
        self.leaky = torch.nn.LeakyReLU()

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.relu(x), self.gelu(x), self.leaky(x)


class KeepdimReductions(torch.nn.Module):
    """argmax (an int64 output) and mean, both keeping the reduced axis."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.argmax(x, dim=1, keepdim=True), torch.mean(x, dim=-1, keepdim=True)


class FunctionalForms(torch.nn.Module):
    """`F.layer_norm` (no affine, eps left to its default), `F.conv2d` with padding, `F.linear`
    with a bias: the functional forms that `from_fx` translates op by op (modules take another
    path). Arguments are positional and F.layer_norm has no weight and bias: the keyword forms
    are functional_keywords_test's (deviation frontend-fx-functional-keywords-ignored)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv_weight = torch.nn.Parameter(torch.empty(2, 3, 3, 3))
        self.conv_bias = torch.nn.Parameter(torch.empty(2))
        self.fc_weight = torch.nn.Parameter(torch.empty(4, 8))
        self.fc_bias = torch.nn.Parameter(torch.empty(4))

    def forward(self, x: torch.Tensor, image: torch.Tensor) -> tuple[torch.Tensor, ...]:
        functional = torch.nn.functional
        return (
            functional.layer_norm(x, (8,)),
            functional.conv2d(image, self.conv_weight, self.conv_bias, 2, 1),
            functional.linear(x, self.fc_weight, self.fc_bias),
        )


def _randn(*shape: int, scale: float = 1.0) -> Callable[[], list[torch.Tensor]]:
    return lambda: [torch.randn(*shape) * scale]


CASES = {
    "layer_norm_default_eps": (
        LayerNormDefaultEps,
        _randn(2, 5, 8, scale=0.02),
        ["relax.nn.layer_norm"],
    ),
    "batch_norm_eval": (ConvBatchNorm, _randn(1, 3, 8, 8), ["relax.nn.batch_norm"]),
    "conv2d_arguments": (ConvArguments, _randn(1, 4, 11, 11), ["relax.nn.conv2d"]),
    "softmax_axes": (
        SoftmaxAxes,
        _randn(3, 4, 5, scale=3.0),
        ["relax.nn.softmax", "relax.nn.log_softmax"],
    ),
    "activations": (
        Activations,
        lambda: [torch.linspace(-10.0, 10.0, 48).reshape(4, 12)],
        ["relax.nn.relu", "relax.nn.gelu", "relax.nn.leakyrelu"],
    ),
    "keepdim_reductions": (
        KeepdimReductions,
        _randn(3, 7, 5),
        ["relax.argmax", "relax.mean"],
    ),
}
FX_CASES = {
    "functional_forms": (
        FunctionalForms,
        lambda: [torch.randn(2, 5, 8) * 0.02, torch.randn(1, 3, 9, 9)],
        ["relax.nn.layer_norm", "relax.nn.conv2d", "relax.matmul"],
    ),
    "modules": (ConvArguments, _randn(1, 4, 11, 11), ["relax.nn.conv2d"]),
    "activations": CASES["activations"],
    "softmax_axes": CASES["softmax_axes"],
}


@pytest.mark.parametrize(
    ("frontend", "case"),
    [("exported_program", c) for c in CASES]
    # Undecomposed eval-mode BatchNorm deviates (normalization_test, its deviation).
    + [("exported_program_undecomposed", c) for c in CASES if c != "batch_norm_eval"]
    + [("fx", c) for c in FX_CASES],
)
def test_op_translation_matches_pytorch(
    frontend: str, case: str, target: str, dev: tvm.runtime.Device
) -> None:
    make_model, make_input, ops = (FX_CASES if frontend == "fx" else CASES)[case]
    torch.manual_seed(1)
    model = seed_parameters(make_model(), seed=7).eval()
    verify_model(model, make_input(), expected_ops=ops, frontend=frontend, target=target, dev=dev)
