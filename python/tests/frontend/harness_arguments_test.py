"""verify_model rejects bad arguments with a clear error before importing anything."""

from typing import Any

import pytest
import torch
import tvm

from tvm_conformance.model_import import verify_model


def _verify(**overrides: Any) -> None:
    torch.manual_seed(0)
    kwargs: dict[str, Any] = {
        "model": torch.nn.ReLU().eval(),
        "inputs": [torch.randn(2, 3)],
        "expected_ops": ["relax.nn.relu"],
    }
    kwargs.update(overrides)
    model = kwargs.pop("model")
    inputs = kwargs.pop("inputs")
    verify_model(model, inputs, **kwargs)


def test_unknown_frontend() -> None:
    with pytest.raises(
        ValueError,
        match=r"unknown frontend 'torchscript'; expected one of "
        r"\['exported_program', 'exported_program_undecomposed', 'fx'\]",
    ):
        _verify(frontend="torchscript")


def test_unknown_exec_mode() -> None:
    with pytest.raises(
        ValueError,
        match=r"unknown exec mode\(s\) \['graph'\]; expected some of \['bytecode', 'compiled'\]",
    ):
        _verify(exec_modes=("bytecode", "graph"))


def test_exec_modes_given_as_string() -> None:
    with pytest.raises(TypeError, match=r"exec_modes must be a sequence of mode names"):
        _verify(exec_modes="bytecode")


def test_empty_exec_modes() -> None:
    with pytest.raises(ValueError, match=r"exec_modes is empty"):
        _verify(exec_modes=())


def test_model_not_a_module() -> None:
    with pytest.raises(
        TypeError, match=r"model must be a torch\.nn\.Module, got builtin_function_or_method"
    ):
        _verify(model=torch.relu)


def test_model_in_training_mode() -> None:
    with pytest.raises(ValueError, match=r"model ReLU is in training mode; call model\.eval\(\)"):
        _verify(model=torch.nn.ReLU())


def test_input_not_a_tensor() -> None:
    with pytest.raises(TypeError, match=r"inputs\[0\] must be a torch\.Tensor, got list"):
        _verify(inputs=[[1.0, 2.0]])


def test_no_inputs() -> None:
    with pytest.raises(TypeError, match=r"non-empty sequence of torch\.Tensor"):
        _verify(inputs=[])


def test_negative_tolerance() -> None:
    with pytest.raises(ValueError, match=r"rtol and atol must be >= 0, got rtol=-1e-05"):
        _verify(rtol=-1e-5)


@pytest.mark.parametrize("override", [{"rtol": 1e-3}, {"atol": 1e-3}])
def test_tolerance_override_is_deprecated(override: dict[str, float]) -> None:
    """rtol/atol replace the tolerance rule (docs/model_import.md) and say so; the wrong device
    stops the call right after the warning, before anything is built."""
    with pytest.warns(DeprecationWarning, match=r"rtol/atol are deprecated: the tolerance follows"):
        with pytest.raises(ValueError, match=r"does not match target 'cuda'"):
            _verify(target="cuda", dev=tvm.cpu(0), **override)


def test_device_of_another_target() -> None:
    with pytest.raises(ValueError, match=r"device cpu:0 does not match target 'cuda'"):
        _verify(target="cuda", dev=tvm.cpu(0))


def test_absent_device() -> None:
    with pytest.raises(RuntimeError, match=r"device cuda:99 for target 'cuda' is not available"):
        _verify(target="cuda", dev=tvm.cuda(99))
