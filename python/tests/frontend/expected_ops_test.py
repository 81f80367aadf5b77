"""verify_model fails naming each expected operator that the imported IR lacks."""

import pytest
import torch
import tvm

from tvm_conformance.model_import import collect_ops, import_model, verify_model
from tvm_conformance.seed_models import ConvSoftmax


def test_imported_ops_are_collected() -> None:
    torch.manual_seed(0)
    imported = import_model(ConvSoftmax().eval(), [torch.rand(1, 3, 10, 10)])
    assert collect_ops(imported.mod) == {"relax.nn.conv2d", "relax.nn.softmax"}


def test_missing_expected_op_is_named(target: str, dev: tvm.runtime.Device) -> None:
    torch.manual_seed(0)
    with pytest.raises(
        AssertionError,
        match=r"does not contain expected ops \['relax\.nn\.max_pool2d'\]; ops present: "
        r"\['relax\.nn\.conv2d', 'relax\.nn\.softmax'\]",
    ):
        verify_model(
            ConvSoftmax().eval(),
            [torch.rand(1, 3, 10, 10)],
            expected_ops=["relax.nn.conv2d", "relax.nn.max_pool2d"],
            target=target,
            dev=dev,
        )


def test_unregistered_op_name_is_rejected() -> None:
    torch.manual_seed(0)
    with pytest.raises(ValueError, match=r"names no registered operator: \['nn\.conv2d'\]"):
        verify_model(ConvSoftmax().eval(), [torch.rand(1, 3, 10, 10)], expected_ops=["nn.conv2d"])
