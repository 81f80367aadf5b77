"""Weights bind by their PyTorch name; wrong names, shapes or values make verify_model fail."""

import numpy as np
import pytest
import torch
import tvm

from tvm_conformance.model_import import bind_weights, import_model, verify_model
from tvm_conformance.seed_models import ConvSoftmax


def _model_and_input() -> tuple[ConvSoftmax, torch.Tensor]:
    torch.manual_seed(0)
    return ConvSoftmax().eval(), torch.rand(1, 3, 10, 10)


@pytest.mark.parametrize("frontend", ["exported_program", "fx"])
def test_weights_are_named_as_in_pytorch(frontend: str) -> None:
    model, data = _model_and_input()
    imported = import_model(model, [data], frontend=frontend)
    assert list(imported.weights) == ["conv.weight"]
    np.testing.assert_array_equal(
        imported.weights["conv.weight"].numpy(), model.conv.weight.detach().numpy()
    )
    bound = bind_weights(imported)
    assert len(bound["main"].params) == imported.num_inputs == 1


def test_state_dict_binds_by_name(target: str, dev: tvm.runtime.Device) -> None:
    model, data = _model_and_input()
    verify_model(
        model,
        [data],
        expected_ops=["relax.nn.conv2d"],
        params=dict(model.named_parameters()),
        exec_modes=("bytecode",),
        target=target,
        dev=dev,
    )


def test_perturbed_weight_fails_on_values(target: str, dev: tvm.runtime.Device) -> None:
    model, data = _model_and_input()
    weight = model.conv.weight.detach().clone()
    weight[0, 0, 0, 0] += 0.5
    with pytest.raises(
        AssertionError,
        match=r"differ from the float64 reference by more than float32 rounding allows",
    ):
        verify_model(
            model,
            [data],
            expected_ops=["relax.nn.conv2d"],
            params={"conv.weight": weight},
            exec_modes=("bytecode",),
            target=target,
            dev=dev,
        )


def test_unknown_weight_name_is_listed(target: str, dev: tvm.runtime.Device) -> None:
    model, data = _model_and_input()
    with pytest.raises(
        ValueError,
        match=r"unknown name\(s\) \['conv\.wieght'\], missing name\(s\) \['conv\.weight'\]; "
        r"the model's weight names are \['conv\.weight'\]",
    ):
        verify_model(
            model,
            [data],
            expected_ops=["relax.nn.conv2d"],
            params={"conv.wieght": model.conv.weight},
            target=target,
            dev=dev,
        )


def test_missing_weight_name_is_listed() -> None:
    model, data = _model_and_input()
    imported = import_model(model, [data])
    with pytest.raises(
        ValueError, match=r"unknown name\(s\) \[\], missing name\(s\) \['conv\.weight'\]"
    ):
        bind_weights(imported, {})


def test_weight_of_wrong_shape_is_rejected() -> None:
    model, data = _model_and_input()
    imported = import_model(model, [data])
    with pytest.raises(
        ValueError,
        match=r"weight 'conv\.weight' is float32\[6, 3, 5, 5\], the model expects "
        r"float32\[6, 3, 7, 7\]",
    ):
        bind_weights(imported, {"conv.weight": np.zeros((6, 3, 5, 5), dtype="float32")})
