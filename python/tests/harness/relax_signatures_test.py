"""The Relax walk's reading of TVM's docstrings for a string argument's modes, and which
reference refusals set a point aside as unchecked (issue 69, point 2)."""

from __future__ import annotations

from typing import Any

import pytest
from tvm import relax

from tvm_conformance import relax_signatures
from tvm_conformance.relax_signatures import Point, documented_modes, reference_refusal


def _quoted(data: Any, pad_mode: str = "constant") -> None:
    """Pad.

    Parameters
    ----------
    data : relax.Expr
        The data, "not" a mode of pad_mode.

    pad_mode : str
        "constant", "reflect" or 'edge'; "constant" again.

    Returns
    -------
    result : relax.Expr
        It is "ignored".
    """


def _listed(data: Any, mode: str = "fast", method: str = "linear", reduction: str = "x") -> None:
    """Listed.

    Parameters
    ----------
    mode : str
        How out-of-bounds indices behave.
        - fast (default): unchecked
        - wrap: wrap around

    method: str
        Scale method [nearest_neighbor, linear,
        and cubic].

    reduction: str
        Type of reduction to apply: update, add, mul.
        It is "update" by default.
    """


def test_each_way_a_docstring_names_modes() -> None:
    """Quoted, bulleted, bracketed (over a line break, with "and") and colon-listed values are
    read from the parameter's own entry, each once, in order; other entries are not read."""
    assert documented_modes(_quoted, "pad_mode") == ["constant", "reflect", "edge"]
    assert documented_modes(_listed, "mode") == ["fast", "wrap"]
    assert documented_modes(_listed, "method") == ["nearest_neighbor", "linear", "cubic"]
    assert documented_modes(_listed, "reduction") == ["update", "add", "mul"]


def _backquoted(data: Any, layout: str = "NCHW", mode: str = "avg") -> None:
    """ROI Align.

    Parameters
    ----------
    layout : str, optional
        Layout of the input data. Supported values are `NCHW` and `NHWC`.

    mode : str, optional
        Mode: ``avg`` or ``max``.
    """


def test_backquoted_modes() -> None:
    """Values in single or double backquotes (roi_align's layouts and modes) are read too."""
    assert documented_modes(_backquoted, "layout") == ["NCHW", "NHWC"]
    assert documented_modes(_backquoted, "mode") == ["avg", "max"]


def test_no_entry_no_modes() -> None:
    assert documented_modes(_quoted, "layout") == []
    assert documented_modes(lambda x: x, "x") == []


def _resize_call() -> relax.Call:
    data = relax.Var("data", relax.TensorType((1, 1, 2, 2), "float32"))
    call = relax.BlockBuilder().normalize(relax.op.image.resize2d(data, (3, 3)))
    assert isinstance(call, relax.Call)
    return call


def test_the_kits_refusal_sets_a_point_aside() -> None:
    """A form the reference refuses (resize's nearest neighbour with half_pixel coordinates)
    is unchecked with the reference's reason; a form it computes is not."""
    call = _resize_call()
    shapes = [((1, 1, 2, 2), "float32")]
    refused = Point("relax.image.resize2d", (("method", "nearest_neighbor"),), "float32")
    assert "nearest_neighbor" in (
        reference_refusal("relax.image.resize2d", call, refused, shapes) or ""
    )
    computed = Point("relax.image.resize2d", (("method", "linear"),), "float32")
    assert reference_refusal("relax.image.resize2d", call, computed, shapes) is None


def test_a_refusal_from_elsewhere_is_not_the_kits(monkeypatch: pytest.MonkeyPatch) -> None:
    """A NotImplementedError raised outside the kit's references (torch's missing kernel, here
    this file) is the point's check's to report, not a reason to leave the point unchecked."""

    def elsewhere(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("no kernel")

    references = dict(relax_signatures.REFERENCES, **{"relax.image.resize2d": elsewhere})
    monkeypatch.setattr(relax_signatures, "REFERENCES", references)
    point = Point("relax.image.resize2d", (), "float32")
    assert (
        reference_refusal(
            "relax.image.resize2d", _resize_call(), point, [((1, 1, 2, 2), "float32")]
        )
        is None
    )


def test_a_missing_torch_kernel_inside_a_kit_reference_is_not_the_kits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """torch's NotImplementedError raised from C inside a reference the kit's module defines
    (torch.median of bool, no Python frame of torch's between) is not the kit's refusal: only
    FormNotModelled is."""
    import torch

    median = relax_signatures._torch("median")
    with pytest.raises(NotImplementedError) as raised:
        median(torch.zeros(3, dtype=torch.bool))
    assert not isinstance(raised.value, relax_signatures.FormNotModelled)
    references = dict(relax_signatures.REFERENCES, **{"relax.image.resize2d": median})
    monkeypatch.setattr(relax_signatures, "REFERENCES", references)
    point = Point("relax.image.resize2d", (), "bool")
    call = _resize_call()
    assert reference_refusal("relax.image.resize2d", call, point, [((3,), "bool")]) is None
