"""`from_fx` and the arguments of PyTorch's functional ops, positional and keyword.

torch.fx records a call as it was made: positional arguments in `node.args`, keywords in
`node.kwargs`. Some functional ops record keywords even when written positionally, because fx
traces them through their torch-function dispatch (`F.layer_norm` passes weight, bias and eps
on as keywords; `F.max_pool2d` its stride and padding). An importer must read both. Each case
seeds its parameters and uses arguments that change the result (a stride, a padding, a bias,
an eps over a low-variance input), and compares the imported output's shape, dtype and values
with PyTorch's.

TVM 0.27's `from_fx` reads some ops' arguments by position only (deviation
`frontend-fx-functional-keywords-ignored`): the test then checks that the output is exactly the
call's output without those keywords (what TVM read) before calling it that deviation; any
other wrong output is a plain failure.
"""

import copy
from collections.abc import Callable

import numpy as np
import pytest
import torch
import tvm
from tvm import relax

from tvm_conformance import deviations, numerics
from tvm_conformance.model_import import seed_parameters
from tvm_conformance.observed import KeywordArgumentsIgnored
from tvm_conformance.testing import assert_on_device

F = torch.nn.functional
Call = Callable[[torch.nn.Module, torch.Tensor], torch.Tensor]


class Functional(torch.nn.Module):
    """One functional call with its own parameters (seeded by the test)."""

    def __init__(self, call: Call, **parameter_shapes: tuple[int, ...]) -> None:
        super().__init__()
        self.call = call
        for name, shape in parameter_shapes.items():
            self.register_parameter(name, torch.nn.Parameter(torch.empty(*shape)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.call(self, x)


CONV = {"weight": (2, 3, 3, 3), "bias": (2,)}
LINEAR = {"weight": (4, 8), "bias": (4,)}
NORM = {"weight": (8,), "bias": (8,)}
IMAGE = (1, 3, 9, 9)
ROWS = (3, 8)


# name -> (the call, its parameter shapes, the input shape, the input scale,
#          the same call without the arguments TVM 0.27 drops, or None where it reads them all)
CASES: dict[str, tuple[Call, dict, tuple[int, ...], float, Call | None]] = {
    "conv2d_positional_stride_padding": (
        lambda m, x: F.conv2d(x, m.weight, m.bias, 2, 1),
        CONV,
        IMAGE,
        1.0,
        None,
    ),
    "conv2d_keyword_stride_padding": (
        lambda m, x: F.conv2d(x, m.weight, m.bias, stride=2, padding=1),
        CONV,
        IMAGE,
        1.0,
        lambda m, x: F.conv2d(x, m.weight, m.bias),
    ),
    "conv2d_keyword_bias": (
        lambda m, x: F.conv2d(x, m.weight, bias=m.bias),
        CONV,
        IMAGE,
        1.0,
        lambda m, x: F.conv2d(x, m.weight),
    ),
    "linear_positional_bias": (
        lambda m, x: F.linear(x, m.weight, m.bias),
        LINEAR,
        ROWS,
        1.0,
        None,
    ),
    "linear_keyword_bias": (
        lambda m, x: F.linear(x, m.weight, bias=m.bias),
        LINEAR,
        ROWS,
        1.0,
        lambda m, x: F.linear(x, m.weight),
    ),
    "layer_norm_weight_bias": (
        lambda m, x: F.layer_norm(x, (8,), m.weight, m.bias),
        NORM,
        ROWS,
        1.0,
        lambda m, x: F.layer_norm(x, (8,)),
    ),
    "layer_norm_eps": (
        lambda m, x: F.layer_norm(x, (8,), eps=0.1),
        {},
        ROWS,
        0.05,
        lambda m, x: F.layer_norm(x, (8,)),
    ),
    "max_pool2d_stride_padding": (
        lambda m, x: F.max_pool2d(x, 3, 2, 1),
        {},
        IMAGE,
        1.0,
        lambda m, x: F.max_pool2d(x, 3),
    ),
    "softmax_keyword_dim": (lambda m, x: F.softmax(x, dim=0), {}, ROWS, 3.0, None),
    "leaky_relu_keyword_slope": (
        lambda m, x: F.leaky_relu(x, negative_slope=0.3),
        {},
        ROWS,
        1.0,
        None,
    ),
    "mean_keyword_dim_keepdim": (
        lambda m, x: torch.mean(x, dim=0, keepdim=True),
        {},
        ROWS,
        1.0,
        None,
    ),
}
DEVIATING = [name for name, case in CASES.items() if case[4] is not None]


def _same(got: np.ndarray, refs: list[numerics.Reference]) -> bool:
    """``got`` is the reference's output within rounding (shape and dtype included)."""
    return numerics.matches([got], refs)


def _with_call(model: Functional, call: Call) -> Functional:
    """The same parameters, another call."""
    other = copy.deepcopy(model)
    other.call = call
    return other


def _from_fx_output(
    model: torch.nn.Module, x: torch.Tensor, target: str, dev: tvm.runtime.Device
) -> np.ndarray:
    from tvm.relax.frontend.torch import from_fx

    # Not model_import.import_model: it refuses an import that drops a parameter (a keyword
    # bias), and here that output is what tells the deviation from a worse failure.
    mod = from_fx(torch.fx.symbolic_trace(model), [(tuple(x.shape), "float32")])
    vm = relax.VirtualMachine(relax.build(mod, target), dev)
    output = vm["main"](tvm.runtime.tensor(x.numpy(), dev))
    assert_on_device(output, dev)
    return output.numpy()


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(name, marks=deviations.xfail("frontend-fx-functional-keywords-ignored"))
        if name in DEVIATING
        else name
        for name in CASES
    ],
)
def test_functional_arguments_are_read(case: str, target: str, dev: tvm.runtime.Device) -> None:
    call, shapes, input_shape, scale, as_read = CASES[case]
    model = seed_parameters(Functional(call, **shapes), seed=3).eval()
    torch.manual_seed(5)
    x = torch.randn(*input_shape) * scale
    want = numerics.references(model, [x])
    got = _from_fx_output(model, x, target, dev)
    if _same(got, want):
        return
    if as_read is not None:
        without_keywords = numerics.references(_with_call(model, as_read), [x])
        # The deviation only where TVM's output is exactly the call without those arguments
        # (and that call differs from the one made: the case can tell them apart).
        if _same(got, without_keywords) and numerics.distinguishable(without_keywords, want):
            raise KeywordArgumentsIgnored(
                f"{case}: from_fx's output {got.shape} is the call's without its keyword "
                f"arguments; PyTorch's is {want[0].value.shape}"
            )
    numerics.check_outputs([got], want, where=case)
