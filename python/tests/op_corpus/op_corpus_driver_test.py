"""The op corpus driver (tvm_conformance.op_corpus) itself: which samples the tier takes,
the exclusion rules, how a failure is recorded and matched, the generated doc."""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tvm_conformance import op_corpus
from tvm_conformance.relax_vm import EXEC_MODES
from tvm_conformance.runfiles import rlocation


@pytest.fixture(autouse=True)
def _progress_file_of_its_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # op_corpus.main's `chunks`, which some tests run in this process, names its progress file
    # in the environment: each test's is its own, and gone with it.
    monkeypatch.setenv("OP_CORPUS_PROGRESS", str(tmp_path / "progress"))


def _kinds(calls: list[tuple], keywords: set) -> set[tuple]:
    """Each argument's form in one sample, a keyword other samples give counted as omitted."""
    return {
        (namespace, key, op_corpus._argument_kind(value))
        for namespace, args, kwargs in calls
        for key, value in [*enumerate(args), *kwargs.items()]
    } | {("", key, "omitted") for key in keywords - set(calls[0][2])}


def _op_samples(name: str) -> list:
    op = next(o for o in op_corpus.op_db() if op_corpus.op_name(o) == name)
    torch.manual_seed(0)
    return list(op.sample_inputs("cpu", torch.float32))


def _op_subset(samples: list) -> list[int]:
    return op_corpus._tier_subset(samples, lambda s: [("", s.args, s.kwargs)], lambda s: s.input)


def test_the_tier_gives_each_argument_every_way_the_samples_do() -> None:
    # avg_pool2d's samples give its stride explicitly, as () (the default) and omitted.
    samples = _op_samples("nn.functional.avg_pool2d")
    keywords = set().union(*(s.kwargs for s in samples))
    calls = [[("", s.args, s.kwargs)] for s in samples]
    chosen = _op_subset(samples)
    assert chosen[0] == 0
    taken = set().union(*(_kinds(calls[i], keywords) for i in chosen))
    assert taken == set().union(*(_kinds(c, keywords) for c in calls))
    assert {len(samples[i].args) for i in chosen} == {len(s.args) for s in samples}
    assert ("", 1, "empty") in taken


@pytest.mark.parametrize("name", ["mean", "sum", "argmax", "amax"])
def test_the_tier_takes_each_default_with_inputs_of_0_1_and_several_axes(name: str) -> None:
    """A reduction's ``dim`` left out means every axis: only an input of two axes or more
    tells that from one axis (the first sample of each is 0-d)."""
    samples = _op_samples(name)
    chosen = _op_subset(samples)
    no_dim = {
        min(samples[i].input.dim(), 2)
        for i in chosen
        if samples[i].kwargs.get("dim") is None and not samples[i].args
    }
    every = {min(s.input.dim(), 2) for s in samples if s.kwargs.get("dim") is None and not s.args}
    assert no_dim == every and 2 in every


def test_every_listed_dtype_appears_in_the_tier() -> None:
    seen = collections.Counter()
    for op in op_corpus.op_db():
        listed = op_corpus._listed_dtypes(op.supported_dtypes("cpu"), op_corpus.DTYPES)
        seen.update(op_corpus.tier_dtypes(op_corpus.op_name(op), listed))
    assert set(seen) == set(op_corpus.DTYPES), seen


def test_every_op_listing_a_scored_dtype_has_tier_cases() -> None:
    """An op that lists no float32 gets its main dtype from its own list: before, the integer
    and bool ops below had no tier case at all (issue 69)."""
    without = []
    for op in op_corpus.op_db():
        listed = op_corpus._listed_dtypes(op.supported_dtypes("cpu"), op_corpus.DTYPES)
        if listed and not op_corpus.tier_dtypes(op_corpus.op_name(op), listed):
            without.append(op_corpus.op_name(op))
    assert not without
    for name in (
        "lcm",
        "gcd",
        "bitwise_and",
        "bitwise_or",
        "bitwise_not",
        "bitwise_left_shift",
        "bitwise_right_shift",
        "__rand__",
        "__ror__",
        "__rxor__",
        "bincount",
        "unravel_index",
        "nn.functional.one_hot",
    ):
        cases = op_corpus.op_cases(name)
        assert cases and all(c.dtype in ("int32", "int64", "bool") for c in cases), name


def test_a_bool_the_samples_never_vary_is_varied_from_the_schema() -> None:
    """topk's samples give ``largest`` only as True (issue 69): its ATen schema names it, with
    its default, and the tier adds the sample with the most elements with it False."""
    op = next(o for o in op_corpus.op_db() if op_corpus.op_name(o) == "topk")
    schema = torch.ops.aten.topk.default._schema
    want = {a.name: a.default_value for a in schema.arguments if str(a.type) == "bool"}
    got = op_corpus._bool_parameters(op)
    assert {k: d for k, (_, d) in got.items()} == want
    assert {k: p for k, (p, _) in got.items()} == {
        a.name: i for i, a in enumerate(schema.arguments) if a.name in want
    }
    samples = _op_samples("topk")
    assert not any(s.kwargs.get("largest") is False for s in samples)
    cases = [c for c in op_corpus.op_cases("topk") if "v[" in c.sample_class]
    # `sorted` is not varied (UNVARIED_PARAMETERS: no element-wise reference for False).
    assert [c.sample_class.split("v[")[1] for c in cases] == ["largest=False]"]
    (case,) = cases
    assert case.index >= len(samples)  # after the samples' own indices
    sizes = [s.input.numel() for s in samples]
    assert case.inputs[0].numel() == max(sizes)
    # The case computes the k smallest (torch.sort's, ascending): largest=False took effect.
    args = [op_corpus._fill(a, case.inputs) for a in case.model.args]
    kwargs = {k: op_corpus._fill(v, case.inputs) for k, v in case.model.kwargs.items()}
    assert kwargs.get("largest") is False
    x, k = args[0], args[1]
    dim = args[2] if len(args) > 2 else kwargs.get("dim", -1)
    smallest = torch.sort(x, dim=dim).values.narrow(dim, 0, k)
    assert not torch.equal(
        smallest, torch.sort(x, dim=dim, descending=True).values.narrow(dim, 0, k)
    )
    assert torch.equal(case.model(*case.inputs)[0], smallest)


def test_a_bool_variant_pytorch_rejects_in_every_sample_is_left_out() -> None:
    """max.binary's schema packet (aten.max) names ``keepdim`` for another overload: torch.max
    of two tensors rejects it, so no variant; an op whose samples give both values gets none."""
    for name in ("max.binary", "nn.functional.avg_pool2d"):
        assert not [c for c in op_corpus.op_cases(name) if "v[" in c.sample_class], name
    op = next(o for o in op_corpus.op_db() if op_corpus.op_name(o) == "max.binary")
    assert "keepdim" in op_corpus._bool_parameters(op)


def test_variants_are_the_same_in_every_process() -> None:
    first = [(c.index, c.sample_class) for c in op_corpus.op_cases("isin")]
    assert first == [(c.index, c.sample_class) for c in op_corpus.op_cases("isin")]
    assert any("v[invert=True]" in k for _, k in first)


def test_the_other_dtype_keeps_the_first_and_the_largest_sample() -> None:
    small, large, empty = torch.ones(2), torch.ones(3, 4), torch.ones(0)
    assert op_corpus._first_and_largest([[small], [large, small], [large]]) == [0, 1]
    assert op_corpus._first_and_largest([[large], [small], [empty]]) == [0]
    assert op_corpus._first_and_largest([[small, 2.0], [small, "x"]]) == [0]
    assert op_corpus._first_and_largest([]) == []


@pytest.mark.parametrize(
    ("name", "rule"),
    # OpInfo runs the first two through wrapper_set_seed and marks the empty ops' results not
    # comparable; a bool empty is as likely to hold True (the filled value) as not.
    [
        ("randn_like", "random"),
        ("bernoulli", "random"),
        ("empty_like", "undefined"),
        ("new_empty_strided", "undefined"),
    ],
)
def test_exclusion_rules_are_measured_on_pytorch(name: str, rule: str) -> None:
    cases = op_corpus.op_cases(name, dtypes=("float32", "bool"))
    assert cases and {op_corpus.exclusion(c) for c in cases} == {rule}


def test_a_deterministic_op_is_not_excluded() -> None:
    assert {op_corpus.exclusion(c) for c in op_corpus.op_cases("abs", dtypes=("float32",))} == {""}


def test_behaviour_pattern_leaves_only_numbers_open() -> None:
    seen = "bytecode: AssertionError: output 0: 243 of 243 elements differ; got 3.9e-05"
    pattern = op_corpus.behaviour_pattern(seen)
    import re

    assert re.fullmatch(pattern, seen.replace("243", "12").replace("3.9e-05", "7.5"))
    assert not re.fullmatch(pattern, seen.replace("output 0", "output x"))
    assert not re.fullmatch(pattern, seen.replace("bytecode", "compiled"))


def test_lazy_device_seeds_are_queued_without_stack_text() -> None:
    """While the corpus seeds, a device that has not started still queues each seed (the
    generator it would seed is seeded as before); only the stack text it keeps is a fixed
    line, and ``traceback`` is the device module's own again afterwards."""
    import traceback

    import torch.cuda

    if torch.cuda.is_initialized():
        pytest.skip("CUDA has started in this process: torch seeds it at once, queues nothing")
    with op_corpus._unrecorded_lazy_seeds():
        assert torch.cuda.traceback is not traceback
        torch.manual_seed(1234)
        _, stack = torch.cuda._lazy_seed_tracker.manual_seed_all_cb
        assert stack == op_corpus._NoStackText.format_stack()
    assert torch.cuda.traceback is traceback
    torch.manual_seed(1234)
    _, stack = torch.cuda._lazy_seed_tracker.manual_seed_all_cb
    assert any("test_lazy_device_seeds" in line for line in stack)


def test_a_supported_op_is_correct_through_every_frontend() -> None:
    results = op_corpus.run_cases(op_corpus.op_cases("abs", dtypes=("float32",))[:1])
    assert {r.frontend: r.outcome for r in results} == dict.fromkeys(
        op_corpus.OP_FRONTENDS, "correct"
    )


def test_an_op_only_the_decomposition_imports_is_decomposed_once_for_its_cases(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # rot90: the undecomposed import refuses aten.rot90, the decomposed one takes it. Its
    # cases share one decomposition after the first case's own (run_cases' import_probed),
    # and each comes out as it does alone.
    cases = op_corpus.op_cases("rot90", dtypes=("float32",), tier=False)[:6]
    frontends = ("exported_program_undecomposed", "exported_program")
    calls = []
    decompose = torch.export.ExportedProgram.run_decompositions

    def counted(self: torch.export.ExportedProgram, *args: object, **kwargs: object) -> object:
        calls.append(1)
        return decompose(self, *args, **kwargs)

    monkeypatch.setattr(torch.export.ExportedProgram, "run_decompositions", counted)
    together = op_corpus.run_cases(cases, frontends)
    assert len(calls) == 2, f"{len(calls)} decompositions for {len(cases)} cases"
    alone = [r for case in cases for r in op_corpus.run_cases([case], frontends)]
    assert [dataclasses.astuple(r) for r in together] == [dataclasses.astuple(r) for r in alone]
    assert {(r.frontend, r.outcome) for r in together} == {
        ("exported_program_undecomposed", "refused"),
        ("exported_program", "correct"),
    }


def test_a_case_split_out_of_a_batch_comes_out_as_it_does_alone() -> None:
    # nanmean in bfloat16, decomposed: two cases the import refuses (the batch's import is
    # halved), the others imported as one batch whose compiled build fails (the batch's
    # function is split per case, run_cases' resplit), each case as it comes out alone.
    cases = op_corpus.op_cases("nanmean", dtypes=("bfloat16",), tier=False)[:6]
    frontends, modes = ("exported_program_undecomposed", "exported_program"), EXEC_MODES
    together = op_corpus.run_cases(cases, frontends, exec_modes=modes)
    alone = [r for case in cases for r in op_corpus.run_cases([case], frontends, exec_modes=modes)]
    assert [dataclasses.astuple(r) for r in together] == [dataclasses.astuple(r) for r in alone]
    assert any(r.detail.startswith("build (compiled)") for r in together), (
        "no case failed to build: the split is not exercised (pick another op)"
    )


def test_a_compiled_build_holds_a_bounded_number_of_cases_a_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # tril in float32, decomposed: its first five cases are one batch, one Relax function. The
    # compiled mode builds it as functions of at most COMPILED_CASES cases (here 2: halves of
    # halves, in order), and every result is the one the whole batch gives.
    cases = op_corpus.op_cases("tril", dtypes=("float32",), tier=False)[:5]
    frontends = ("exported_program",)
    whole = op_corpus.run_cases(cases, frontends, exec_modes=EXEC_MODES)
    sizes: list[list[int]] = []
    bounded = op_corpus._bounded

    def seen(unit: op_corpus._Unit, most: int) -> list[op_corpus._Unit]:
        parts = bounded(unit, most)
        sizes.append([len(part.items) for part in parts])
        return parts

    monkeypatch.setattr(op_corpus, "COMPILED_CASES", 2)
    monkeypatch.setattr(op_corpus, "_bounded", seen)
    split = op_corpus.run_cases(cases, frontends, exec_modes=EXEC_MODES)
    assert sizes[-1] == [2, 1, 2], f"the batch was built as {sizes}"
    assert [dataclasses.astuple(r) for r in split] == [dataclasses.astuple(r) for r in whole]
    assert {(r.outcome, r.modes) for r in split} == {("correct", "bytecode,compiled")}


def test_a_share_mode_builds_each_names_first_case_not_already_failed() -> None:
    # The tier's compiled share (op_corpus.TIER_SHARE_MODES): unbind's sample 4 fails to build
    # in bytecode (TVM 0.27: a reshape of an empty input), so it keeps that outcome and the
    # name's next case is the one built in compiled mode, and abs's first case is; unbind's
    # third case is built in bytecode only, and the outcomes are those of a bytecode-only run.
    unbind = op_corpus.op_cases("unbind", dtypes=("float32",), tier=False)
    cases = [unbind[4], unbind[0], unbind[1]]
    cases += op_corpus.op_cases("abs", dtypes=("float32",), tier=False)[:1]
    shared = op_corpus.run_cases(cases, ("fx",), share_modes=("compiled",))
    plain = op_corpus.run_cases(cases, ("fx",))
    assert shared[0].outcome == "failing" and "(bytecode)" in shared[0].detail, (
        "unbind's sample 4 no longer fails in bytecode: pick another case"
    )
    assert [r.modes for r in shared] == [
        "bytecode",
        "bytecode,compiled",
        "bytecode",
        "bytecode,compiled",
    ]
    assert [(r.outcome, r.detail) for r in shared] == [(r.outcome, r.detail) for r in plain]


def test_the_scoreboard_counts_a_name_once_under_its_worst_sample() -> None:
    make = lambda outcome, i: op_corpus.Result("op", "x", "float32", "fx", i, "c", outcome)  # noqa: E731
    board = op_corpus.scoreboard([make("correct", 0), make("failing", 1), make("refused", 2)])
    cell = board["op/fx/float32"]
    assert cell["names"]["failing"] == 1 and sum(cell["names"].values()) == 1
    assert cell["samples"] == {**dict.fromkeys(op_corpus.OUTCOMES, 0), "correct": 1,
                               "failing": 1, "refused": 1}  # fmt: skip


def test_the_deviations_doc_is_generated_from_the_record() -> None:
    with open(rlocation("docs/op_corpus_deviations.md"), encoding="utf-8") as f:
        doc = f.read()
    assert doc == op_corpus.deviations_doc(op_corpus.recorded_deviations()), (
        "docs/op_corpus_deviations.md is stale: python -m tvm_conformance.op_corpus doc "
        "docs/op_corpus_deviations.md"
    )


def test_every_recorded_deviation_names_a_name_of_the_corpus() -> None:
    known = {"op": set(op_corpus.names("op")), "module": set(op_corpus.names("module"))}
    unknown = [
        e["id"] for e in op_corpus.recorded_deviations() if e["name"] not in known[e["kind"]]
    ]
    assert not unknown


def test_the_scoreboards_in_the_doc_are_the_recorded_runs() -> None:
    with open(rlocation("docs/op_corpus_scoreboard.json"), encoding="utf-8") as f:
        runs = json.load(f)["runs"]
    with open(rlocation("docs/op_corpus.md"), encoding="utf-8") as f:
        doc = f.read()
    assert runs
    for lane, run in runs.items():
        assert op_corpus.scoreboard_markdown(run["scoreboard"]) in doc, lane


def test_the_readme_states_the_recorded_runs() -> None:
    with open(rlocation("docs/op_corpus_scoreboard.json"), encoding="utf-8") as f:
        runs = json.load(f)["runs"]
    with open(rlocation("README.md"), encoding="utf-8") as f:
        readme = " ".join(f.read().split())
    for lane in ("default", "tvm_prev"):
        assert op_corpus.headline(lane, runs[lane]) in readme, lane


def test_a_case_pytorch_itself_breaks_the_rule_for_is_left_out() -> None:
    # full_like's fill value is a Python float, which the rule rounds to the computation's dtype
    # as TVM writes a constant; PyTorch fills a float64 output (its `dtype` keyword) with the
    # unrounded value, outside the rule there, and inside it where the output keeps float32.
    from tvm_conformance import numerics

    seen = {}
    for case in op_corpus.op_cases("full_like", dtypes=("float32",)):
        refs = numerics.references(case.model, [t.clone() for t in case.inputs])
        seen[case.sample_class] = op_corpus._pytorch_within_rule(case, refs)
    assert seen.pop("r[1]k[dtype]") is False
    assert seen and all(seen.values()), seen


def test_a_record_is_fixed_only_when_no_case_of_its_class_still_deviates() -> None:
    # A sample class (ranks and keywords given) can hold several samples, some correct.
    dev = next(
        e
        for e in op_corpus.recorded_deviations()
        if op_corpus._tvm_version() in e["tvm_versions"]
        and e["frontend"] != "*"
        and not e.get("unsafe")
    )

    def result(outcome: str, deviation: str = "") -> op_corpus.Result:
        return op_corpus.Result(
            dev["kind"], dev["name"], dev["dtype"], dev["frontend"], 0, dev["sample_class"],
            outcome, "", deviation,
        )  # fmt: skip

    assert op_corpus.fixed([result("correct"), result("deviating", dev["id"])]) == []
    assert dev["id"] in op_corpus.fixed([result("correct")])


def test_a_record_binds_a_build_of_the_same_release_by_its_whole_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A user's build of a recorded release (another version string): its known deviations
    # stay deviations, so its expectations compare them; another release's do not bind.
    from tvm_conformance import op_corpus_outcomes

    dev = next(
        e
        for e in op_corpus.recorded_deviations()
        if op_corpus._tvm_version() in e["tvm_versions"] and not e.get("unsafe")
    )
    failing = op_corpus.Result(
        dev["kind"], dev["name"], dev["dtype"],
        dev["frontend"] if dev["frontend"] != "*" else "fx", 0,
        dev["sample_class"] if dev["sample_class"] != "*" else "r[0]", "failing", dev["seen"],
    )  # fmt: skip
    release = ".".join(map(str, op_corpus_outcomes.release_of(op_corpus._tvm_version())[1:]))
    for version, binds in ((f"{release}.post7+g1a2b3c4", True), ("99.0.0", False)):
        monkeypatch.setattr(op_corpus_outcomes, "_tvm_version", lambda v=version: v)
        assert (op_corpus_outcomes.match_deviation(failing) == dev["id"]) is binds, version
    # The whole message is still compared: another behaviour of the case is no match.
    monkeypatch.setattr(op_corpus_outcomes, "_tvm_version", lambda: f"{release}.post7")
    other = dataclasses.replace(failing, detail="build: TVMError: something else")
    assert op_corpus_outcomes.match_deviation(other) == ""
    assert op_corpus_outcomes.release_of("0.27.0.post1+g1") == op_corpus_outcomes.release_of("0.27")


def test_an_unsafe_record_binds_on_a_tvm_of_another_version_string(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A user's wheel of the same release with another version string: the crasher is still
    # not run in the shared process (an ordinary record binds by version; this one may not).
    from tvm_conformance import op_corpus_outcomes

    unsafe = next(e for e in op_corpus.recorded_deviations() if e.get("unsafe"))
    result = op_corpus.Result(
        unsafe["kind"], unsafe["name"], unsafe["dtype"],
        unsafe["frontend"] if unsafe["frontend"] != "*" else "fx", 0,
        unsafe["sample_class"] if unsafe["sample_class"] != "*" else "r[0]", "",
    )  # fmt: skip
    monkeypatch.setattr(op_corpus_outcomes, "_tvm_version", lambda: "0.27.0.dev999+g0000000")
    assert op_corpus_outcomes.unsafe_record(result)["id"] == unsafe["id"]
    assert not op_corpus_outcomes._binds(unsafe, result)  # an ordinary record would not bind


def test_an_unsafe_record_is_not_run_and_names_its_pin() -> None:
    # A case where TVM corrupts memory (argsort of a 0-d tensor) is not run in a shared process:
    # it counts as its record, which names the registry deviation that runs it alone.
    from tvm_conformance import deviation_registry

    unsafe = [e for e in op_corpus.recorded_deviations() if e.get("unsafe")]
    assert unsafe, "no record carries 'unsafe' (the argsort 0-d records did)"
    for e in unsafe:
        assert e["pinned_by"] in deviation_registry.by_id(), e["id"]
        assert e["id"] not in op_corpus.fixed([
            op_corpus.Result(e["kind"], e["name"], e["dtype"], e["frontend"], 0,
                             e["sample_class"], "correct")
        ], e["tvm_versions"][0])  # fmt: skip
    version = op_corpus._tvm_version()
    mine = [e for e in unsafe if version in e["tvm_versions"] and e["kind"] == "op"]
    assert mine, f"no unsafe op record for TVM {version}"
    e = mine[0]
    cases = [
        c
        for c in op_corpus.op_cases(e["name"], dtypes=(e["dtype"],))
        if c.sample_class == e["sample_class"]
    ]
    assert cases, e["id"]
    results = op_corpus.run_cases(cases[:1], [e["frontend"]])
    assert [(r.outcome, r.deviation) for r in results] == [("deviating", e["id"])]
    assert results[0].detail.startswith("not run: ")


def test_a_shard_process_imports_neither_torch_nor_tvm() -> None:
    # The tier's test process holds only the outcomes side; its chunk's child imports the rest.
    code = (
        "import sys; from tvm_conformance import op_corpus_outcomes; "
        "print(sorted(m for m in ('torch', 'tvm', 'numpy') if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert out.strip() == "[]", out


def test_a_shard_outside_its_range_is_refused_before_any_child() -> None:
    from tvm_conformance import op_corpus_outcomes

    with pytest.raises(ValueError, match=r"shard 7 is not in \[0, 7\)"):
        op_corpus_outcomes.run_shard_isolated("op", 7, 7)


@pytest.mark.parametrize("kind", ["op", "module"])
def test_the_whole_corpus_deals_each_listed_dtype_of_each_name_to_one_chunk(kind: str) -> None:
    # The reference: the dtypes OpInfo / ModuleInfo list for CPU, among the scored ones.
    from tvm_conformance import op_corpus_outcomes

    db = op_corpus.op_db() if kind == "op" else op_corpus.module_db()
    listed: dict[str, list[str]] = {}
    for entry in db:
        name = op_corpus.op_name(entry) if kind == "op" else entry.name
        have = {str(d).removeprefix("torch.") for d in entry.supported_dtypes("cpu")}
        listed.setdefault(name, [d for d in op_corpus.DTYPES if d in have])
    shards = op_corpus_outcomes.FULL_CHUNKS[kind]
    dealt = [(i, unit) for i in range(shards) for unit in op_corpus.shard_units(kind, i, shards)]
    units = [unit for _, unit in dealt]
    assert len(units) == len(set(units))
    parts = {n: op_corpus.SAMPLE_PARTS.get((kind, n), 1) for n in listed}
    tails = {n: [f"#{k}of{m}" for k in range(m)] if m > 1 else [""] for n, m in parts.items()}
    want = {f"{n}@{d}{t}" for n, ds in listed.items() for d in ds for t in tails[n]} | {
        n for n, ds in listed.items() if not ds
    }
    assert set(units) == want
    # A name's units are in as many chunks as it has units (shards permitting).
    chunks = collections.defaultdict(set)
    for i, unit in dealt:
        chunks[op_corpus.unit_name(unit)].add(i)
    assert all(
        len(chunks[n]) == min(max(1, len(ds) * parts[n]), shards) for n, ds in listed.items()
    )


def test_a_unit_is_its_names_cases_in_its_dtype() -> None:
    whole = op_corpus.op_cases("abs", tier=False)
    unit = op_corpus._unit_cases("op", "abs@int32", False, op_corpus.DTYPES)
    assert unit and {c.dtype for c in unit} == {"int32"}
    assert [(c.index, c.sample_class) for c in unit] == [
        (c.index, c.sample_class) for c in whole if c.dtype == "int32"
    ]
    assert len(op_corpus._unit_cases("op", "abs", False, op_corpus.DTYPES)) == len(whole)


def test_a_heavy_names_parts_are_its_samples_modulo_the_parts() -> None:
    (kind, name), m = next(iter(op_corpus.SAMPLE_PARTS.items()))
    dtype = "float32"
    whole = op_corpus._unit_cases(kind, f"{name}@{dtype}", False, op_corpus.DTYPES)
    parts = [op_corpus._unit_cases(kind, f"{name}@{dtype}#{k}of{m}", False, ()) for k in range(m)]
    assert all(c.index % m == k for k, part in enumerate(parts) for c in part)
    assert sorted(c.index for part in parts for c in part) == sorted(c.index for c in whole)
    assert all(parts), "a part without a sample"
    for bad in (f"{name}@{dtype}#4of4", f"{name}@{dtype}#xof4"):
        with pytest.raises(ValueError, match="expected name@dtype#kofm"):
            op_corpus.unit_part(bad)


def test_a_units_dtype_without_a_sample_is_one_no_sample_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(op_corpus, "_unit_cases", lambda kind, unit, tier, dtypes: [])
    monkeypatch.setattr(op_corpus, "run_cases", lambda cases, frontends, **modes: [])
    assert op_corpus.run_names("op", ["x@float16", "y"]) == [
        op_corpus.Result("op", "x", "*", "float16", -1, "*", "excluded", "no_sample"),
        op_corpus.Result("op", "y", "*", "*", -1, "*", "excluded", "no_sample"),
    ]


def _fake_shard(kind: str, batch: list[str], **_: object) -> list[op_corpus.Result]:
    return [op_corpus.Result(kind, n, "float32", "fx", 0, "r[0]", "correct") for n in batch]


def test_shards_in_one_child_each_get_their_own_names_and_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The child's protocol end to end, its process replaced by op_corpus.main in this one.
    from tvm_conformance import op_corpus_outcomes

    monkeypatch.setattr(op_corpus, "_run_here", _fake_shard)
    commands = []
    real_run = subprocess.run

    def child(command: list[str], **kw: object) -> subprocess.CompletedProcess:
        if "chunks" not in command:  # another process (platform's uname)
            return real_run(command, **kw)
        commands.append(command)
        code = op_corpus.main(command[command.index("chunks") :])
        return subprocess.CompletedProcess(command, code, "", "")

    monkeypatch.setattr(subprocess, "run", child)
    chunks = [("op", 2, 7), ("module", 0, 3)]
    runs = op_corpus_outcomes.run_shards_isolated(chunks)
    assert len(commands) == 1, "one child for both shards"
    for (kind, shard, shards), run in zip(chunks, runs, strict=True):
        assert run.names == op_corpus.shard_names(kind, shard, shards)
        assert run.results == _fake_shard(kind, run.names)
        assert run.tvm == op_corpus._tvm_version()
        assert run.cpu_s is not None and run.cpu_s >= 0


@pytest.mark.parametrize("ending", ["signal", "error", "time limit"])
def test_a_child_of_several_shards_that_ends_badly_leaves_each_shard_to_its_own_child(
    ending: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing it wrote is kept, even shards it finished: each runs as a lone shard, which
    # splits a failing one to find its culprit.
    from tvm_conformance import op_corpus_outcomes

    monkeypatch.setattr(op_corpus, "_run_here", _fake_shard)
    real_run = subprocess.run

    def child(command: list[str], **kw: object) -> subprocess.CompletedProcess:
        if "chunks" not in command:  # another process (platform's uname)
            return real_run(command, **kw)
        op_corpus.main(command[command.index("chunks") :])  # every shard's files written
        if ending == "time limit":
            raise subprocess.TimeoutExpired(command, float(kw["timeout"]))  # type: ignore[arg-type]
        return subprocess.CompletedProcess(command, -11 if ending == "signal" else 1, "", "")

    alone = []
    monkeypatch.setattr(subprocess, "run", child)
    monkeypatch.setattr(
        op_corpus_outcomes,
        "run_shard_isolated",
        lambda *chunk, **kw: alone.append(chunk) or op_corpus_outcomes.ShardRun([], "", []),
    )
    chunks = [("op", 0, 7), ("op", 5, 7)]
    assert len(op_corpus_outcomes.run_shards_isolated(chunks)) == 2
    assert alone == chunks


def test_a_shard_by_dtype_names_its_units(tmp_path: Path) -> None:
    meta = tmp_path / "meta.json"
    argv = ["run", "op", "--shard", "65/120", "--by-dtype", "--list-only", "--meta", str(meta)]
    assert op_corpus.main(argv) == 0
    assert json.loads(meta.read_text())["names"] == op_corpus.shard_units("op", 65, 120)


def test_a_failed_childs_units_of_the_named_op_run_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # The progress file names the case's op; the batch holds units: that op's units run alone,
    # each in its own child, and the rest again.
    from tvm_conformance import op_corpus_outcomes

    calls = []
    monkeypatch.setattr(
        op_corpus_outcomes, "run_isolated", lambda kind, batch, **kw: calls.append(batch) or []
    )
    proc = subprocess.CompletedProcess([], -11, "", "")
    end = op_corpus_outcomes._ChildEnd(proc, None, {}, "case x")
    kw = {"tier": False, "exec_modes": ("bytecode",), "timeout": 1.0}
    op_corpus_outcomes._split("op", ["x@float32", "y@float32", "x@int32"], end, **kw)
    assert calls == [["x@float32"], ["x@int32"], ["y@float32"]]
    # A unit that fails alone is one crash result in its dtype.
    calls.clear()
    alone = op_corpus_outcomes._split("op", ["x@int32"], end, **kw)
    assert alone == [
        op_corpus.Result("op", "x", "*", "int32", -1, "*", "failing", "crash: killed by SIGSEGV")
    ]


def test_a_recorded_crasher_runs_in_a_child_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The chunk's child (what a shard runs) runs the other names in-process and the crasher
    # in a child, after them (as gradient's SIGFPE record, corpus-crash-b8abeeb0f7, makes it
    # on TVM 0.27: here on any lane's TVM).
    calls = []

    def in_process(kind: str, batch: list[str], **kw: object) -> list:
        calls.append(("in process", list(batch)))
        return []

    def in_child(kind: str, batch: list[str], **kw: object) -> list:
        calls.append(("child", list(batch)))
        return []

    monkeypatch.setattr(op_corpus, "run_names", in_process)
    monkeypatch.setattr(op_corpus, "run_isolated", in_child)
    monkeypatch.setattr(op_corpus, "crashers", lambda kind, version: {"gradient"})
    out = tmp_path / "results.json"
    assert op_corpus.main(["run", "op", "gradient", "abs", "neg", "--json", str(out)]) == 0
    assert calls == [("in process", ["abs", "neg"]), ("child", ["gradient"])]
    assert json.loads(out.read_text()) == []
    # The child runs it in its own process (it is that child), not in a child again.
    calls.clear()
    assert op_corpus.main(["run", "op", "gradient", "--json", str(out)]) == 0
    assert calls == [("in process", ["gradient"])]


def test_a_corpus_process_hashes_strings_with_the_fixed_seed() -> None:
    # PyTorch's meshgrid samples iterate a set of strings: their order, and so which sample a
    # case index names, follows string hashing. Started under any seed, a tool that makes the
    # corpus's cases re-executes itself with the fixed one, as _run_child's children start.
    from tvm_conformance import op_corpus_outcomes

    code = (
        "from tvm_conformance.op_corpus_outcomes import run_with_fixed_hash_seed; "
        "run_with_fixed_hash_seed(); import os; print(os.environ['PYTHONHASHSEED'], hash('ij'))"
    )
    said = set()
    for seed in ("1", "2", op_corpus_outcomes.HASH_SEED):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYTHONHASHSEED": seed}
        said.add(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
            ).stdout.strip()
        )
    assert len(said) == 1 and said.pop().startswith(op_corpus_outcomes.HASH_SEED + " "), said
    assert op_corpus_outcomes.fixed_hash_seed_env()["PYTHONHASHSEED"] == "0"


def _raised_in(path: str, source: str) -> BaseException:
    """The exception `f()` raises, `f` defined by `source` as if in the file `path`."""
    import linecache

    lines = source.splitlines(keepends=True)
    linecache.cache[path] = (len(source), None, lines, path)
    scope: dict = {"torch": torch}
    exec(compile(source, path, "exec"), scope)  # noqa: S102
    try:
        scope["f"]()
    except Exception as err:  # noqa: BLE001
        return err
    raise AssertionError("f() raised nothing")


_FRONTEND_FILE = "/site-packages/tvm/relax/frontend/torch/base_fx_graph_translator.py"


@pytest.mark.parametrize(
    ("path", "source", "refusal"),
    [
        (
            _FRONTEND_FILE,
            "def f():\n    assert not ['x'], 'Unsupported function types [x]'\n",
            True,
        ),
        (_FRONTEND_FILE, "def f():\n    raise NotImplementedError('GRU')\n", True),
        (_FRONTEND_FILE, "def f():\n    raise ValueError('Unsupported rounding_mode: x')\n", True),
        # torch's own error, raised in C from a frontend line: not the frontend's refusal.
        (_FRONTEND_FILE, "def f():\n    torch.ones(1, dtype=torch.bfloat16).numpy()\n", False),
        # The frontend's own raise, without a word of refusal: a failure.
        (_FRONTEND_FILE, "def f():\n    raise ValueError('shape mismatch')\n", False),
        # The refusal's words from below the frontend: a failure.
        ("/site-packages/tvm/ir/op.py", "def f():\n    raise NotImplementedError('x')\n", False),
    ],
    ids=["assert", "not-implemented", "value-error", "torch-c-error", "no-refusal", "below"],
)
def test_a_refusal_is_the_frontends_own(path: str, source: str, refusal: bool) -> None:
    assert op_corpus.frontend_refusal(_raised_in(path, source)) is refusal


# PyTorch's side of the tier, made once by a build action every lane reads (op_corpus.torch_side,
# BUILD.bazel's op_corpus_tier_torch_side): a lane's results from its file must be the results of
# the cases made in the lane's own process.
@pytest.fixture(scope="module")
def abs_torch_side() -> dict:
    return op_corpus.torch_side("op", ["abs"])


def _saved(data: dict, tmp_path: Path) -> Path:
    path = tmp_path / "op-0of1.pt"
    torch.save(data, path)
    return path


@pytest.mark.parametrize(("kind", "names"), [("op", ["abs"]), ("module", ["nn.ReLU"])])
def test_cases_from_the_torch_side_give_the_results_made_here(
    kind: str, names: list[str], tmp_path: Path
) -> None:
    path = _saved(op_corpus.torch_side(kind, names), tmp_path)
    read, prepared, why = op_corpus.load_torch_side(path)
    assert (read, sorted(prepared), why) == (names, sorted(names), "")
    assert all(c.facts is not None for cases in prepared.values() for c in cases)
    here = op_corpus.run_names(kind, names)
    there = op_corpus.run_names(kind, names, prepared=prepared)
    assert [dataclasses.asdict(r) for r in there] == [dataclasses.asdict(r) for r in here]


@pytest.mark.parametrize("package", ["torch", "numpy", "format"])
def test_a_torch_side_of_another_torch_or_numpy_is_not_read(
    package: str, abs_torch_side: dict, tmp_path: Path
) -> None:
    path = _saved(dict(abs_torch_side, **{package: "0.0"}), tmp_path)
    names, prepared, why = op_corpus.load_torch_side(path)
    assert (names, prepared) == ([], {})
    assert f"'{package}': '0.0'" in why


def test_a_unit_whose_model_did_not_pickle_is_made_by_the_reader(
    abs_torch_side: dict, tmp_path: Path
) -> None:
    records = [dict(r) for r in abs_torch_side["units"]["abs"]]
    records[-1]["model"] = None
    path = _saved(dict(abs_torch_side, units={"abs": records}), tmp_path)
    assert op_corpus.load_torch_side(path) == (["abs"], {}, "1 unit(s) made here")


def test_a_unit_whose_model_does_not_come_back_is_made_by_the_reader(
    abs_torch_side: dict, tmp_path: Path
) -> None:
    # A pickle naming a class this process lacks (format 2's files named __main__._Input,
    # which only another `python -m` of op_corpus had): the unit is made here, not a crash.
    records = [dict(r) for r in abs_torch_side["units"]["abs"]]
    records[0]["model"] = b"c__main__\n_NoSuchInput\n."
    path = _saved(dict(abs_torch_side, units={"abs": records}), tmp_path)
    assert op_corpus.load_torch_side(path) == (["abs"], {}, "1 unit(s) made here")


def test_a_chunk_child_says_where_pytorchs_side_came_from(
    abs_torch_side: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The chunk's names come from the file (no corpus walk); a shard without a file is made
    # here, as before.
    monkeypatch.setattr(op_corpus, "_run_here", _fake_shard)
    sides = tmp_path / "sides"
    sides.mkdir()
    torch.save(dict(abs_torch_side, names=["abs"]), sides / "op-0of7.pt")
    out = tmp_path / "out"
    out.mkdir()
    assert op_corpus.main(["chunks", "--dir", str(out), "--torch-sides", str(sides),
                           "op:0/7", "op:1/7"]) == 0  # fmt: skip
    said = [json.loads((out / f"{j}.meta.json").read_text()) for j in range(2)]
    assert [s["torch_side"] for s in said] == ["op-0of7.pt", "here"]
    assert said[0]["names"] == ["abs"]
    assert said[1]["names"] == op_corpus.shard_names("op", 1, 7)
