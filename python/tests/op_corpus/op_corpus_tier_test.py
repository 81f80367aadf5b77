"""The //... tier of the op corpus: every OpInfo op and ModuleInfo module of the installed
torch, a fixed subset of their samples (tvm_conformance.op_corpus: the float32 samples that
give an argument in a new way, omitted, None or empty, or explicit; one other listed dtype
for one name in three), through the tier's frontends, each built and run in bytecode and, on a
share (every op's first case in each frontend that bytecode did not fail), in compiled mode,
each chunk in a child process (TVM may kill it).

Every case of a chunk is compared with the lane's pinned expectation
(tvm_conformance.expectations, python/tvm_conformance/expectations/<lane>/op_corpus_tier.json):
a case worse than pinned is a regression and one the file does not hold is stale, each a line
of the failure; a case better than pinned is an improvement (good news on a user's wheel,
stale on the lane's pinned ones). The whole corpus (TVM_OP_CORPUS=all) is judged the same way
against op_corpus_all.json once that is written (hours of CPU per run); until then it fails on a
failing case and on a recorded deviation now fixed. The
results, the chunk's scoreboard and its judgement are written to the test's undeclared outputs.
"""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

# The outcomes side only: this process imports neither torch nor TVM (its chunk's child does).
from tvm_conformance import expectations
from tvm_conformance import op_corpus_outcomes as outcomes

# TVM_OP_CORPUS=all (set by the targets of :op_corpus_all, or by hand under plain pytest):
# every sample in every listed dtype, through every frontend, in both exec modes (outside CI:
# hours; docs/op_corpus.md).
FULL = os.environ.get("TVM_OP_CORPUS", "") == "all"
# Chunks per kind: each is one pytest case; in the tier sized so that none runs longer than
# 60 s on 2 cores, two to a Bazel shard (BUILD.bazel's shard_count is half their total), run
# in one child: a child spends about 6 s importing torch and TVM and building PyTorch's
# corpus. The whole corpus takes 128 (each child has 3,000 s), for a pool of workers; its
# chunks deal (name, dtype) units, so a heavy op's dtypes land in different chunks.
CHUNKS = outcomes.FULL_CHUNKS if FULL else outcomes.TIER_CHUNKS
# The expectations file of the tier (of the whole corpus: op_corpus_all, once written), per
# lane (tvm_conformance/expectations/<lane>/).
SUITE = "op_corpus_all" if FULL else "op_corpus_tier"
CASES = [(kind, i, n) for kind, n in CHUNKS.items() for i in range(n)]
# The whole corpus's 128 chunks are four Bazel targets of 32 shards (Bazel allows 50 a target):
# TVM_OP_CORPUS_PART=p/4 keeps every fourth chunk from the p-th; TVM_OP_CORPUS_CHUNKS names
# chunks (`op-3of120,module-0of8`: a slice, docs/remote.md). BUILD.bazel sets both.
CASES = outcomes.select_chunks(
    CASES,
    os.environ.get("TVM_OP_CORPUS_PART", "") if FULL else "",
    os.environ.get("TVM_OP_CORPUS_CHUNKS", "") if FULL else "",
)
# Bazel runs the tier's chunks as shards of //... (BUILD.bazel). Plain pytest of python/tests
# leaves it out, visibly, unless asked for: its ten chunks cost three to four CPU minutes, which
# CI spends in each lane's Bazel run already (TEST_TARGET is set when Bazel runs it).
pytestmark = pytest.mark.skipif(
    not (FULL or os.environ.get("TEST_TARGET") or os.environ.get("TVM_OP_CORPUS") == "tier"),
    reason="the op-corpus tier runs under Bazel (//python/tests/op_corpus:op_corpus_tier_test, "
    "5 shards, 3-4 CPU minutes); run it here with TVM_OP_CORPUS=tier",
)


# The tier's runs of this session's chunks not yet judged, by chunk: the first chunk's case
# runs them all in one child (outcomes.run_shards_isolated).
_TIER_RUNS: dict[tuple[str, int, int], outcomes.ShardRun] = {}
# Under Bazel, PyTorch's side of each tier chunk (its cases, exclusions, references and
# pickled models) comes from a build action every lane shares (BUILD.bazel:
# op_corpus_tier_torch_side; op_corpus.torch_side), this runfiles directory; plain pytest
# makes it in the chunk's child.
TORCH_SIDES = "" if FULL else os.environ.get("TVM_OP_CORPUS_TORCH_SIDE", "")


def _torch_sides(chunks: list[tuple[str, int, int]]) -> str | None:
    """The directory of the chunks' torch_side files; each must be there (the BUILD file's
    list of chunks is the tier's)."""
    if not TORCH_SIDES:
        return None
    from tvm_conformance import runfiles

    found = []
    for chunk in chunks:
        try:
            found.append(runfiles.rlocation(f"{TORCH_SIDES}/{outcomes.chunk_id(*chunk)}.pt"))
        except FileNotFoundError as err:
            raise AssertionError(
                f"{outcomes.chunk_id(*chunk)}: no torch_side file; add the chunk to "
                f"op_corpus_tier_torch_side's `chunks` (BUILD.bazel): {err}"
            ) from None
    return os.path.dirname(found[0])


def _tier_run(chunk: tuple[str, int, int], session: pytest.Session) -> outcomes.ShardRun:
    """The chunk's run. The tier's chunks this session holds (a Bazel shard holds two: one
    child's imports and PyTorch's corpus, about 6 s, for both) run in one child when the first
    of them is reached; each case then judges its own chunk's results."""
    if chunk not in _TIER_RUNS:
        held = [
            (item.callspec.params["kind"], item.callspec.params["shard"],
             item.callspec.params["shards"])
            for item in session.items
            if getattr(item, "originalname", "") == "test_tier_chunk"
        ]  # fmt: skip
        pending = [chunk] + [c for c in held if c != chunk and c not in _TIER_RUNS]
        runs = outcomes.run_shards_isolated(pending, torch_sides=_torch_sides(pending))
        _TIER_RUNS.update(zip(pending, runs, strict=True))
    return _TIER_RUNS.pop(chunk)


@pytest.mark.parametrize(
    ("kind", "shard", "shards"), CASES, ids=[outcomes.chunk_id(*c) for c in CASES]
)
def test_tier_chunk(kind: str, shard: int, shards: int, request: pytest.FixtureRequest) -> None:
    cpu_before = outcomes.children_cpu()
    if FULL:
        run = outcomes.run_shard_isolated(
            kind, shard, shards, tier=False, exec_modes=outcomes.EXEC_MODES,
            timeout=outcomes.FULL_TIMEOUT, by_dtype=True,
        )  # fmt: skip
    else:
        run = _tier_run((kind, shard, shards), request.session)
    results = run.results
    out = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
    if out:
        stem = os.path.join(out, f"op_corpus_{kind}_{shard}of{shards}")
        with open(stem + ".json", "w", encoding="utf-8") as f:
            json.dump([dataclasses.asdict(r) for r in results], f)
        # The chunk's board, which the report merges over chunks and diffs against the
        # previous run of its identity (tools/verdict/report_model.py, OP_CORPUS_PREFIX).
        board = {
            "kind": kind,
            "chunk": f"{kind}_{shard}of{shards}",
            "scope": "all" if FULL else "tier",
            "tvm": run.tvm,
            # Where PyTorch's side came from (a torch_side file: its CPU is the build action's,
            # not in cpu_s).
            "torch_side": run.torch_side,
            # The chunk's CPU (its children's user + system): what a worker spends on it.
            "cpu_s": (
                run.cpu_s
                if run.cpu_s is not None
                else round(outcomes.children_cpu() - cpu_before, 2)
            ),
            "scoreboard": outcomes.scoreboard(results),
            "worst": {" ".join(k): v for k, v in outcomes.worst_outcomes(results).items()},
        }
        with open(
            os.path.join(out, f"op_corpus_board_{kind}_{shard}of{shards}.json"),
            "w",
            encoding="utf-8",
        ) as f:
            json.dump(board, f, indent=1)
    assert run.names, "the chunk holds no name"
    # Each name the chunk holds gave a result; each name@dtype unit, a result in its dtype.
    gave = {(r.name, r.dtype) for r in results} | {(r.name, "") for r in results}
    held = {(outcomes.unit_name(u), outcomes.unit_dtype(u)) for u in run.names}
    assert held <= gave, f"no result for {sorted(held - gave)[:10]} of the chunk"
    # Every exec mode meets every op or module with a case that bytecode built and did not
    # fail, in each frontend (the tier runs op_corpus.TIER_SHARE_MODES on a share of its
    # cases, the whole corpus all of them).
    judged = {
        (r.name, r.frontend)
        for r in results
        if "bytecode" in r.modes.split(",") and r.outcome not in ("failing", "deviating")
    }
    unmet = {
        m: sorted(judged - {(r.name, r.frontend) for r in results if m in r.modes.split(",")})
        for m in outcomes.EXEC_MODES
    }
    assert not any(unmet.values()), f"never built in a mode: {unmet}"
    record = expectations.venv_record()
    lane, pinned = expectations.lane_of(record), expectations.pinned(record)
    if FULL and not expectations.path(lane, SUITE).exists():
        # The whole corpus is judged like the tier once its file is written (hours of CPU per
        # run: `./bazelw run --config=op_corpus //tools/expectations -- --write --suite
        # op_corpus_all`); until then it fails on a failing case and on a recorded deviation
        # now fixed.
        failing = [r for r in results if r.outcome == "failing"]
        fixed = outcomes.fixed(results, run.tvm)
        assert not failing and not fixed, (
            f"{len(failing)} failing case(s), no recorded deviation:\n"
            + "\n".join(
                f"  {r.name} {r.sample_class} {r.frontend} {r.dtype}: {r.detail}"
                for r in failing[:40]
            )
            + (f"\nfixed (remove from op_corpus_deviations.json): {fixed}" if fixed else "")
        )
        return
    judgement = expectations.judge(results, run.names, expectations.load(lane, SUITE))
    expectations.assert_as_pinned(
        judgement, lane, pinned, SUITE, record_as=f"op_corpus_{kind}_{shard}of{shards}", what="case"
    )
