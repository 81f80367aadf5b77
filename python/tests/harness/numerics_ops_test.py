"""Every ATen op the tolerance rule meets in PyTorch's corpus has a rounding model, or the rule
refuses it by name: no op falls through to a guessed allowance.

The walk: every float32 sample the op-corpus tier takes from PyTorch's OpInfo and ModuleInfo
databases, traced as the reference traces it (numerics.reference_ops: composites decomposed as
the rule decomposes them), each op classified by numerics.rounding_model. The ops the rule
refuses are listed once below; a newly refused op (an op the corpus starts to emit, a model
taken away) fails the test until it is named here, and so does a listed op that is modelled or
no longer emitted. The table (op -> kind, and the samples behind each refused op) is written to
the test's undeclared outputs.
"""

from __future__ import annotations

import collections
import json
import os
from pathlib import Path

import pytest

from tvm_conformance import numerics, op_corpus

# Refused: no model of their rounding (iterative linear algebra, FFTs, histograms and
# reductions that combine values by index, losses and resizes the rule does not decompose).
REFUSED = frozenset(
    """
    aten._cdist_forward.default aten._ctc_loss.default aten._embedding_bag_forward_only.default
    aten._fft_c2r.default aten._histogramdd_bin_edges.default
    aten._histogramdd_from_bin_cts.default aten._linalg_det.default aten._linalg_eigh.default
    aten._linalg_slogdet.default aten._linalg_solve_ex.default aten._linalg_svd.default
    aten._pdist_forward.default aten._softmax_backward_data.default aten._trilinear.default
    aten._unique2.default aten._unsafe_masked_index_put_accumulate.default
    aten._upsample_bilinear2d_aa.default aten.addbmm.default aten.cholesky.default
    aten.cholesky_inverse.default aten.cholesky_solve.default aten.embedding_renorm_.default
    aten.geqrf.default aten.grid_sampler_3d.default aten.histc.default aten.histogram.bin_ct
    aten.index_reduce.default aten.linalg_cholesky_ex.default
    aten.linalg_householder_product.default aten.linalg_inv_ex.default
    aten.linalg_ldl_factor_ex.default aten.linalg_ldl_solve.default aten.linalg_lstsq.default
    aten.linalg_lu.default aten.linalg_lu_factor_ex.default aten.linalg_lu_solve.default
    aten.linalg_matrix_exp.default aten.linalg_pinv.atol_rtol_tensor aten.linalg_qr.default
    aten.linalg_solve_triangular.default aten.lu_unpack.default
    aten.max_pool2d_with_indices_backward.default
    aten.multi_margin_loss.default aten.multilabel_margin_loss_forward.default
    aten.ormqr.default aten.resize_.default aten.resize_as_.default aten.scatter.reduce
    aten.scatter_add.default aten.scatter_reduce.two aten.segment_reduce.default
    aten.triangular_solve.default aten.unique_consecutive.default aten.unique_dim.default
    torch_nn._linear_cross_entropy_batch_chunked.default
    torch_nn._linear_cross_entropy_batch_chunked_no_reduction.default
    """.split()
)


@pytest.fixture(scope="module")
def walk() -> tuple[dict[str, str], dict[str, list[str]], int]:
    """(op -> kind, refused op -> the samples that reach it, samples traced)."""
    kinds: dict[str, str] = {}
    users: dict[str, list[str]] = collections.defaultdict(list)
    traced = 0
    for kind in ("op", "module"):
        for name in op_corpus.names(kind):
            try:
                cases = op_corpus._cases(kind, name, True, ("float32",))
            except Exception:  # noqa: BLE001 - a database entry without samples here
                continue
            for case in cases:
                if op_corpus.exclusion(case):
                    continue
                try:
                    ops = numerics.reference_ops(case.model, [t.clone() for t in case.inputs])
                except Exception:  # noqa: BLE001 - untraceable: references() refuses it too
                    continue
                traced += 1
                for op, how in ops.items():
                    kinds[op] = how
                    if how == "refused":
                        users[op].append(f"{kind}|{case.name}|{case.index}")
    out = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
    if out:
        table = {"kinds": dict(sorted(kinds.items())), "refused_by": dict(sorted(users.items()))}
        Path(out, "numerics_ops.json").write_text(json.dumps(table, indent=1), encoding="utf-8")
    return kinds, users, traced


def test_every_op_the_corpus_emits_has_a_model_or_is_refused(walk) -> None:  # noqa: ANN001
    kinds, _, traced = walk
    assert traced > 1000, f"only {traced} samples traced: the walk lost the corpus"
    assert set(kinds.values()) <= set(numerics.MODEL_KINDS)
    counts = collections.Counter(kinds.values())
    print(f"{traced} samples, {len(kinds)} ATen ops: {dict(sorted(counts.items()))}")


def test_the_refused_ops_are_the_ones_listed(walk) -> None:  # noqa: ANN001
    kinds, users, _ = walk
    refused = {op for op, how in kinds.items() if how == "refused"}
    new = {op: users[op][:3] for op in sorted(refused - REFUSED)}
    assert not new, f"newly refused ops (name each in REFUSED, with why): {new}"
    gone = {op: kinds.get(op, "not emitted") for op in sorted(REFUSED - refused)}
    assert not gone, f"listed as refused but modelled or no longer emitted: {gone}"


def test_a_refused_op_makes_the_reference_raise_naming_it(walk) -> None:  # noqa: ANN001
    _, users, _ = walk
    op = "aten.histc.default"
    kind, name, index = users[op][0].split("|")
    (case,) = [c for c in op_corpus._cases(kind, name, True, ("float32",)) if c.index == int(index)]
    with pytest.raises(numerics.ReferenceError, match=f"no rounding model for {op}"):
        numerics.references(case.model, [t.clone() for t in case.inputs])
