"""run_identity.py: which options make a run's identity (lane, config flags, selection)."""

import results
import run_identity
import run_record


def test_config_flags_read_generically_and_lane_defaults() -> None:
    flags = run_identity.config_flags(
        [
            "--default_override=2:build:cuda=--//tools/config:cuda",  # an rc line, not in force
            "--//tools/config:cuda=true",
            "--@//tools/config:cuda_gpu",
            "--no//tools/config:other",
            "--@tvm_conformance//tools/config:require_gpu",  # from examples/downstream
            "--@elsewhere//tools/config:lane=x",  # not the kit's setting
            "--jobs=2",
        ]
    )
    assert flags == {"cuda": "true", "cuda_gpu": "true", "other": "false", "require_gpu": "true"}
    assert run_identity.lane_of(flags) == "default"
    assert run_identity.lane_of({"lane": "ffi_next"}) == "ffi_next"


def test_selection_options_are_the_ones_that_choose_targets_or_cases() -> None:
    options = ["--test_arg=-k", "--test_arg", "x", "--test_filter", "a", "--test_filter=b"]
    options += ["--keep_going", "--runs_per_test=3", "--test_tag_filters=", "--config=ci"]
    assert run_identity.selection_options(options) == [
        "--runs_per_test=3",
        "--test_arg=-k",
        "--test_arg=x",
        "--test_filter=b",  # the last one counts, as in Bazel; an empty filter is the default
    ]


def _run(
    meta: dict[str, object],
    targets: tuple[str, ...] = ("//pkg:a_test",),
    runner: str = run_record.BAZEL,
) -> results.Run:
    """A run of `targets` (each passed, no case) with run.json `meta` and no config flag."""
    found = {label: results.TargetResult(label, "PASSED", False, 0.0) for label in targets}
    return results.Run("run", found, {}, "default", meta, runner)


def test_partial_names_each_reason_the_run_is_not_the_whole_suite() -> None:
    suite = {"source": "query", "targets": ["//pkg:a_test", "//pkg:b_test", "//pkg:c_test"]}
    whole = _run(
        {"bazel_args": ["test", "--", "//..."], "suite": suite},
        ("//pkg:a_test", "//pkg:b_test", "//pkg:c_test"),
    )
    assert run_identity.partial(whole) == []
    cut = _run(
        {"bazel_args": ["test", "--test_filter=x", "--", "//...", "-//pkg:b_test"], "suite": suite}
    )
    assert run_identity.partial(cut) == [
        "-//pkg:b_test",
        "--test_filter=x",
        "2 of 3 suite tests not run (//pkg:b_test, //pkg:c_test)",
    ]
    assert run_identity.partial(_run({"bazel_args": ["test", "//pkg:a_test"]})) == [
        "not //...",
        "suite not recorded",
    ]
    # A GPU-runner bundle's run is judged by its own record, because the record says it is one.
    bundle = _run({"partial": ["bundle of 3"]}, runner=run_record.GPU_RUNNER_BUNDLE)
    assert run_identity.partial(bundle) == ["bundle of 3"]
    # The same record from ./bazelw is not trusted for it: no arguments, no suite, partial.
    assert run_identity.partial(_run({"partial": []})) == ["not //...", "suite not recorded"]


def test_the_policy_names_the_runners_the_record_does() -> None:
    assert (run_identity.BAZEL, run_identity.GPU_RUNNER_BUNDLE) == run_record.RUNNERS


def test_identity_key_tells_apart_patterns_options_and_wheels() -> None:
    meta = {"bazel_args": ["test", "--", "//..."], "identity": {"lane": "x", "python": "3.11"}}
    key = run_identity.identity_key(_run(meta))
    assert key == "x/tvm=unknown/tvm_ffi=unknown/py=3.11/cpu///..."
    filtered = run_identity.identity_key(_run({**meta, "selection_options": ["--runs_per_test=2"]}))
    assert filtered == key + " --runs_per_test=2"
    wheel = {"tvm": {"sha256": "ab" * 32}}
    other = run_identity.identity_key(_run({**meta, "identity": {**meta["identity"], **wheel}}))
    assert other != key and "tvm=" + "ab" * 8 in other
