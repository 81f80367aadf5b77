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


@pytest.mark.parametrize("causal_mask", [None, "TopLeft", "BottomRight"])
def test_attention_var_len_reference_attends_each_sequence_alone(causal_mask: str | None) -> None:
    """R.nn.attention_var_len's reference, one masked attention over the concatenated rows,
    holds torch's float32 scaled_dot_product_attention of each sequence alone (its
    docstring's reading) within the kit's rounding rule (the float64 reference and its
    allowance), with the keys cut apart from the queries; its causal masks are
    R.nn.attention's, in each sequence's own lengths (np.tril with offset 0 or |kv length -
    length|)."""
    import torch

    from tvm_conformance import numerics

    generator = torch.Generator().manual_seed(0)
    queries, keys, values = (torch.randn(1, n, 2, 4, generator=generator) for n in (7, 6, 6))
    starts_q, starts_k = [0, 3, 4, 7], [0, 1, 4, 6]
    offsets = [torch.tensor(s, dtype=torch.int32) for s in (starts_q, starts_k)]
    reference = relax_signatures.REFERENCES["relax.nn.attention_var_len"]

    def attend(q: Any, k: Any, v: Any, seqstart_q: Any, seqstart_k: Any) -> Any:
        return reference(
            q, k, v, seqstart_q, seqstart_k, torch.tensor(3), torch.tensor(3),
            causal_mask=causal_mask,
        )  # fmt: skip

    refs = numerics.references(attend, [queries, keys, values, *offsets])
    pieces = []
    for q0, q1, k0, k1 in zip(starts_q, starts_q[1:], starts_k, starts_k[1:], strict=False):
        q, k, v = (t.permute(0, 2, 1, 3) for t in
                   (queries[:, q0:q1], keys[:, k0:k1], values[:, k0:k1]))  # fmt: skip
        mask = None
        if causal_mask is not None:
            offset = 0 if causal_mask == "TopLeft" else abs((k1 - k0) - (q1 - q0))
            mask = torch.ones(q1 - q0, k1 - k0, dtype=torch.bool).tril(offset)
        attended = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        pieces.append(attended.permute(0, 2, 1, 3))
    numerics.check_outputs([torch.cat(pieces, dim=1).numpy()], refs, where=str(causal_mask))
    # The rule can tell: attention over every key (no sequence mask) breaks it.
    unmasked = torch.nn.functional.scaled_dot_product_attention(
        *(t.permute(0, 2, 1, 3) for t in (queries[:, :6], keys, values))
    ).permute(0, 2, 1, 3)
    with pytest.raises(AssertionError):
        numerics.check_outputs(
            [torch.cat([unmasked, queries[:, 6:7]], dim=1).numpy()], refs, where="unmasked"
        )


def test_sequence_offsets_domain() -> None:
    """The "seqstart" domain gives offsets of whole sequences (0 first, the concatenated
    length last, each sequence one row or more), and "longest_of_<position>" the longest of
    the offsets at that position."""
    import numpy as np

    rng = np.random.default_rng(0)
    for total, count in ((5, 2), (7, 3), (4, 4), (6, 1)):
        raw = rng.integers(-4, 5, count + 1).astype(np.int32)
        starts = relax_signatures._in_domain("seqstart", raw, (1, total, 2, 4))
        assert starts.dtype == np.int32 and starts[0] == 0 and starts[-1] == total
        assert len(starts) == count + 1 and (np.diff(starts) >= 1).all(), starts
        longest = relax_signatures._in_domain(
            "longest_of_0", np.zeros((), np.int32), (1, total, 2, 4), [starts]
        )
        assert longest.dtype == np.int32 and longest == np.diff(starts).max()


def test_layout_transform_reference_moves_each_element_where_the_map_says() -> None:
    """R.layout_transform's reference, the index map evaluated in Python, is numpy's own
    NCHW -> NCHW4c packing (reshape the channels into blocks of 4, move the block last) and a
    transpose; a map that would pad (8 channels in blocks of 3) is refused as not modelled."""
    import numpy as np
    import torch
    from tvm import tirx

    x = np.arange(48, dtype=np.float32).reshape(1, 8, 2, 3)
    reference = relax_signatures.REFERENCES["relax.layout_transform"]
    packed = reference(
        torch.from_numpy(x), tirx.IndexMap.from_func(lambda n, c, h, w: (n, c // 4, h, w, c % 4))
    )
    np.testing.assert_array_equal(packed.numpy(), x.reshape(1, 2, 4, 2, 3).transpose(0, 1, 3, 4, 2))
    swapped = reference(
        torch.from_numpy(x), tirx.IndexMap.from_func(lambda n, c, h, w: (w, h, c, n))
    )
    np.testing.assert_array_equal(swapped.numpy(), x.transpose(3, 2, 1, 0))
    with pytest.raises(relax_signatures.FormNotModelled):
        reference(
            torch.from_numpy(x),
            tirx.IndexMap.from_func(lambda n, c, h, w: (n, c // 3, h, w, c % 3)),
        )


# ONNX's own NonMaxSuppression test cases (onnx/backend/test/case/node/nonmaxsuppression.py,
# as its operator documentation lists them): six boxes of one class, three clusters.
_ONNX_NMS_BOXES = [
    [0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1], [0.0, -0.1, 1.0, 0.9],
    [0.0, 10.0, 1.0, 11.0], [0.0, 10.1, 1.0, 11.1], [0.0, 100.0, 1.0, 101.0],
]  # fmt: skip
_ONNX_NMS_FLIPPED = [
    [1.0, 1.0, 0.0, 0.0], [0.0, 0.1, 1.0, 1.1], [0.0, 0.9, 1.0, -0.1],
    [0.0, 10.0, 1.0, 11.0], [1.0, 10.1, 0.0, 11.1], [1.0, 101.0, 0.0, 100.0],
]  # fmt: skip
_ONNX_NMS_SCORES = [0.9, 0.75, 0.6, 0.95, 0.5, 0.3]


@pytest.mark.parametrize(
    ("case", "boxes", "limit", "score_threshold", "selected"),
    [
        ("suppress_by_IOU", _ONNX_NMS_BOXES, 3, 0.0, [3, 0, 5]),
        ("flipped_coordinates", _ONNX_NMS_FLIPPED, 3, 0.0, [3, 0, 5]),
        ("limit_output_size", _ONNX_NMS_BOXES, 2, 0.0, [3, 0]),
        ("suppress_by_IOU_and_scores", _ONNX_NMS_BOXES, 3, 0.4, [3, 0]),
        ("identical_boxes", [[0.0, 0.0, 1.0, 1.0]] * 6, 3, 0.0, [0]),
    ],
)
def test_all_class_nms_reference_gives_onnx_selections(
    case: str, boxes: list[list[float]], limit: int, score_threshold: float,
    selected: list[int],
) -> None:  # fmt: skip
    """R.vision.all_class_non_max_suppression's reference selects what ONNX's own test cases
    expect (IoU threshold 0.5), as (batch, class, box) rows and their count."""
    import torch

    reference = relax_signatures.REFERENCES["relax.vision.all_class_non_max_suppression"]
    scores = [0.9] * 6 if case == "identical_boxes" else _ONNX_NMS_SCORES
    rows, count = reference(
        torch.tensor([boxes]), torch.tensor([[scores]]), torch.tensor(limit),
        torch.tensor(0.5), torch.tensor(score_threshold),
    )  # fmt: skip
    assert rows.tolist() == [[0, 0, b] for b in selected], case
    assert count.tolist() == [len(selected)]


def test_all_class_nms_domains_make_its_arithmetic_exact() -> None:
    """The walk's NMS inputs: whole-number corners and distinct whole scores (float16 holds
    them), a limit of one box, thresholds in eighths in [0, 1)."""
    import numpy as np

    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float16):
        boxes = relax_signatures._in_domain(
            "integral", rng.standard_normal((2, 6, 4)).astype(dtype)
        )
        assert (boxes == np.round(boxes)).all() and np.abs(boxes).max() <= 16
        scores = relax_signatures._in_domain(
            "distinct", rng.standard_normal((2, 2, 6)).astype(dtype)
        )
        assert len(np.unique(scores)) == scores.size
        eighths = relax_signatures._in_domain("eighths", rng.standard_normal(64).astype(dtype))
        assert ((eighths * 8) == np.round(eighths * 8)).all()
        assert eighths.min() >= 0 and eighths.max() < 1 and len(np.unique(eighths)) > 4
    limit = relax_signatures._in_domain("one", np.array(-3, np.int64))
    assert limit.dtype == np.int64 and limit == 1


def test_multibox_transform_loc_reference_decodes_tflite_boxes() -> None:
    """R.vision.multibox_transform_loc's reference: a zero encoding gives the anchor itself
    (as ymin, xmin, ymax, xmax); a unit encoding moves the centre by variance x size and
    scales the size by exp(variance), each coordinate by its own variance (TFLite's
    DecodeCenterSizeBoxes with scales 1 / variances); the scores a softmax over the classes,
    those under the threshold zero, class 0 zero without keep_background; clip to [0, 1]."""
    import numpy as np
    import torch

    reference = relax_signatures.REFERENCES["relax.vision.multibox_transform_loc"]
    anchor = torch.tensor([[[0.25, 0.5, 0.75, 1.5], [-1.0, -1.0, 1.0, 3.0]]], dtype=torch.float64)
    logits = torch.tensor([[[0.0, 2.0], [1.0, 0.0], [-1.0, 0.0]]], dtype=torch.float64)
    variances = (0.1, 0.2, 0.3, 0.4)
    boxes, scores = reference(logits, torch.zeros(1, 8, dtype=torch.float64), anchor)
    np.testing.assert_allclose(boxes[0].numpy(), [[0.5, 0.25, 1.5, 0.75], [-1.0, -1.0, 3.0, 1.0]])
    np.testing.assert_allclose(scores.sum(dim=1).numpy(), 1.0)
    unit = torch.ones(1, 8, dtype=torch.float64)
    boxes, _ = reference(logits, unit, anchor, variances=variances)
    # Anchor 0: centre (y 1.0, x 0.5), size (h 1.0, w 0.5).
    yc, xc = 1.0 + 0.2 * 1.0, 0.5 + 0.1 * 0.5
    h, w = np.exp(0.4) * 1.0, np.exp(0.3) * 0.5
    np.testing.assert_allclose(
        boxes[0, 0].numpy(), [yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2]
    )
    clipped, _ = reference(logits, unit, anchor, clip=True, variances=variances)
    assert clipped.min() >= 0 and clipped.max() <= 1 and clipped[0, 1, 2] == 1.0
    expected = torch.softmax(logits, dim=1).numpy()
    _, scores = reference(logits, unit, anchor, threshold=0.3, keep_background=False)
    kept = np.where(expected >= 0.3, expected, 0.0)
    kept[:, 0, :] = 0.0
    np.testing.assert_allclose(scores.numpy(), kept)
    _, raw = reference(logits, unit, anchor, threshold=0.5, apply_softmax=False)
    np.testing.assert_array_equal(raw.numpy(), np.where(logits.numpy() >= 0.5, logits.numpy(), 0))


def _box_nms_rows(classes: list[int], scores: list[float], boxes: list[list[float]]) -> Any:
    """MXNet box_nms rows (class id, score, x1, y1, x2, y2), one batch."""
    import torch

    rows = [[c, s, *b] for c, s, b in zip(classes, scores, boxes, strict=True)]
    return torch.tensor([rows], dtype=torch.float32)


def test_non_max_suppression_reference_follows_box_nms() -> None:
    """R.vision.non_max_suppression's reference (MXNet's box_nms): on ONNX's suppress-by-IoU
    boxes, one class, it selects what ONNX's case expects (boxes 3, 0, 5); the limit and
    top_k cut the selection, valid_count the rows, classes keep each other unless
    force_suppress; an IoU equal to the threshold suppresses only with ``at_equal_iou``; the
    data output keeps the selected rows in score order, -1 elsewhere (at the top with
    invalid_to_bottom); the returned indices are ``indices``' values."""
    import torch

    reference = relax_signatures.REFERENCES["relax.vision.non_max_suppression"]
    data = _box_nms_rows([0] * 6, _ONNX_NMS_SCORES, _ONNX_NMS_BOXES)
    everything = torch.tensor([6], dtype=torch.int32)
    identity = torch.arange(6, dtype=torch.int32).reshape(1, 6)

    def selected(*args: Any, **kwargs: Any) -> list[int]:
        indices, count = reference(*args, **kwargs)
        return indices[0, : int(count[0, 0])].tolist()

    assert selected(data, everything, identity) == [3, 0, 5]
    assert selected(data, everything, identity, max_output_size=2) == [3, 0]
    assert selected(data, everything, identity, top_k=2) == [3, 0]
    assert selected(data, torch.tensor([3], dtype=torch.int32), identity) == [0]
    assert selected(data, everything, identity.flip(-1)) == [2, 5, 0]
    two_classes = _box_nms_rows([0, 1, 0, 0, 1, 0], _ONNX_NMS_SCORES, _ONNX_NMS_BOXES)
    assert selected(two_classes, everything, identity) == [3, 0, 1, 4, 5]
    assert selected(two_classes, everything, identity, force_suppress=True) == [3, 0, 5]
    assert selected(two_classes, everything, identity, id_index=-1) == [3, 0, 5]
    # Box 1 is half of box 0: an IoU of exactly 0.5.
    halves = _box_nms_rows([0, 0], [2.0, 1.0], [[0, 0, 2, 2], [0, 0, 1, 2]])
    pair, pair_indices = torch.tensor([2], dtype=torch.int32), identity[:, :2]
    assert selected(halves, pair, pair_indices) == [0, 1]
    assert selected(halves, pair, pair_indices, at_equal_iou=True) == [0]
    out = reference(data, everything, identity, return_indices=False)
    expected = torch.full_like(data, -1)
    for position, row in ((0, 3), (1, 0), (5, 5)):  # score order 3, 0, 1, 2, 4, 5
        expected[0, position] = data[0, row]
    assert torch.equal(out, expected)
    top = reference(data, everything, identity, return_indices=False, invalid_to_bottom=True)
    assert torch.equal(top[0, :3], data[0, [3, 0, 5]]) and (top[0, 3:] == -1).all()
