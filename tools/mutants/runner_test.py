"""The runner: how a check-my-wheel run of a mutant is classified, the check command it runs,
the pinned wheel it mutates, the table and the results file."""

from __future__ import annotations

import json
from pathlib import Path

import catalogue
import fake_runs
import runner
import strength

LABEL = "//python/tests/ffi:container_test"


def _run(tmp_path: Path, outcome: str, **kwargs: object) -> str:
    junit = fake_runs.junit([fake_runs.case_xml("test_a"), fake_runs.case_xml("test_b", outcome)])
    return fake_runs.archive(tmp_path, {LABEL: junit}, **kwargs)


def test_a_failed_case_is_a_kill_naming_the_case(tmp_path: Path) -> None:
    run_dir = _run(tmp_path, "failed", exit_code=3)
    assert runner.classify(run_dir, 1, "verdict: FAIL") == {
        "outcome": "killed",
        "killed_by": [f"{LABEL} :: test_b"],
    }


def test_a_passing_run_is_a_survivor(tmp_path: Path) -> None:
    assert runner.classify(_run(tmp_path, "passed"), 0, "verdict: PASS")["outcome"] == "survived"


def test_a_strict_xpass_kills(tmp_path: Path) -> None:
    result = runner.classify(_run(tmp_path, "xpass", exit_code=3), 1, "verdict: FAIL")
    assert result["outcome"] == "killed"


def test_runs_that_broke_for_another_reason_are_never_kills(tmp_path: Path) -> None:
    assert runner.classify(None, 1, "")["outcome"] == "inconclusive"
    assert runner.classify(None, 2, "check_my_wheel: bad")["outcome"] == "inconclusive"
    untested = runner.classify(_run(tmp_path, "failed"), 1, "check_my_wheel: NOT TESTED: x.whl")
    assert untested["outcome"] == "inconclusive"
    # Bazel failed (a build error), no case failed: not a kill.
    broken = runner.classify(_run(tmp_path, "passed", exit_code=1), 1, "verdict: FAIL")
    assert broken["outcome"] == "inconclusive" and "bazel exit 1" in broken["reason"]


def test_check_command_gives_both_wheels_the_targets_and_fail_fast() -> None:
    wheels = {"apache-tvm": "/w/tvm.whl", "apache-tvm-ffi": "/w/ffi.whl"}
    command = runner.check_command(wheels, "default", ["//python/tests/ffi/..."], "/o", True)
    assert command[1].endswith("tools/verdict/check_my_wheel.py")
    assert command[2:] == [
        "--tvm-wheel", "/w/tvm.whl", "--tvm-ffi-wheel", "/w/ffi.whl", "--lane", "default",
        "--out", "/o", "--targets", "//python/tests/ffi/...", "--fail-fast",
    ]  # fmt: skip
    whole = runner.check_command(wheels, "ffi_next", ["//..."], "/o", False)
    assert "--targets" not in whole and "--fail-fast" not in whole


def test_lock_entry_is_the_hashed_pin_of_that_distribution_only() -> None:
    lock = (
        "apache-tvm==0.27.0.post1 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb\n"
        "apache-tvm-ffi==0.1.14.post0 \\\n    --hash=sha256:cc\n"
    )
    assert runner.lock_entry(lock, "apache-tvm") == (
        "apache-tvm==0.27.0.post1 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb"
    )
    assert runner.lock_entry(lock, "apache-tvm-ffi").endswith("--hash=sha256:cc")


def test_table_counts_each_outcome_per_area_and_times_kills_only() -> None:
    cat = catalogue.load()
    records = [
        {"id": "a", "area": "ffi", "outcome": "killed", "seconds": 10.0},
        {"id": "b", "area": "ffi", "outcome": "killed", "seconds": 30.0},
        {"id": "c", "area": "ffi", "outcome": "killed", "seconds": 50.0},
        {"id": "d", "area": "ffi", "outcome": "survived", "seconds": 200.0},
        {"id": "e", "area": "deploy", "outcome": "inconclusive", "seconds": 5.0},
    ]
    lines = runner.table(records, cat).splitlines()
    ffi_size = sum(1 for m in cat.mutants if m.area == "ffi")
    assert f"| ffi | {ffi_size} | 4 | 3 | 1 | 0 | 0 | 30 | 50 |" in lines
    assert f"| all | {len(cat.mutants)} | 5 | 3 | 1 | 1 | 0 | 30 | 50 |" in lines
    assert lines[-1] == "Total time: 295 s for 5 mutant(s)."


def test_table_and_report_section_count_the_same_records_alike() -> None:
    # One tally (strength.tally) behind both: the runner's table of a run and the report's
    # strength section of the recorded results give each area the same cells.
    cat = catalogue.load()
    outcomes = [*strength.MUTANT_OUTCOMES, "killed", "killed"]
    records = [
        {"id": m.id, "area": m.area, "outcome": outcomes[n % len(outcomes)], "seconds": 7.0 * n}
        for n, m in enumerate(cat.mutants[::3])
    ]
    assert {r["area"] for r in records} == set(cat.areas)  # every area has results

    def cells(lines: list[str]) -> dict[str, list[str]]:
        """The first markdown table of `lines` (the per-area one): its cells by area."""
        start = next(n for n, line in enumerate(lines) if line.startswith("| area |"))
        end = lines.index("", start)
        rows = [line.strip("|").split("|") for line in lines[start + 2 : end]]
        return {row[0].strip(): [c.strip() for c in row[1:]] for row in rows}

    table = cells(runner.table(records, cat).splitlines())
    data = json.loads(Path(catalogue.CATALOGUE).read_text())
    section = strength.build(data, {"results": {r["id"]: r for r in records}})
    report = cells(strength.markdown_lines(section))
    assert list(report) == list(cat.areas) and list(table) == [*cat.areas, "all"]
    for area in cat.areas:
        # area: mutants, run, killed, survived, inconclusive, equivalent, median s to kill
        assert report[area] == table[area][:7], area
    everything = table["all"]
    assert everything[0] == str(section["catalogue_size"]) == str(len(cat.mutants))
    assert everything[1:3] == [str(section["scored"]), str(section["killed"])]
    assert everything[4] == str(section["inconclusive"])
    assert sum(map(int, everything[2:6])) == len(records)  # each result counted once


def test_record_merges_by_id_newest_wins(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    runner.record(str(path), [{"id": "b", "outcome": "survived", "log": "x"}], {"lane": "default"})
    runner.record(
        str(path), [{"id": "a", "outcome": "killed"}, {"id": "b", "outcome": "killed"}], {}
    )
    data = json.loads(path.read_text())
    assert data["lane"] == "default"
    assert data["results"]["a"] == {"id": "a", "outcome": "killed"}
    # b survived the first run and was killed by the second: closed, and the file says so.
    assert data["results"]["b"] == {"id": "b", "outcome": "killed", "was_survivor": True}


# --- Issue 44: an honest score ----------------------------------------------------------------
def _timeout_run(tmp_path: Path) -> str:
    junit = fake_runs.junit([fake_runs.case_xml("test_a")])
    run_dir = fake_runs.archive(tmp_path, {LABEL: junit}, statuses={LABEL: "TIMEOUT"}, exit_code=3)
    # Bazel writes no test.xml for a test it killed: the archive has none either.
    Path(run_dir, "tests", "python", "tests", "ffi", "container_test", "test.xml").unlink()
    return run_dir


def test_a_timeout_without_a_failed_case_is_inconclusive_until_reproduced(tmp_path: Path) -> None:
    first = runner.classify(_timeout_run(tmp_path), 1, "verdict: FAIL")
    assert first["outcome"] == "inconclusive" and first["crashed"] == [LABEL]
    assert "not yet rerun alone" in first["reason"]
    reruns: list[str] = []

    def passes_alone(label: str) -> tuple[int, str, str | None]:
        reruns.append(label)
        return 0, "verdict: PASS", _run(tmp_path, "passed")

    load = runner.confirm_crashes(dict(first), passes_alone)
    assert reruns == [LABEL]
    assert load["outcome"] == "inconclusive" and "not reproduced alone" in load["reason"]
    assert "crashed" not in load
    again = runner.confirm_crashes(
        dict(first), lambda label: (1, "verdict: FAIL", _timeout_run(tmp_path))
    )
    assert again == {"outcome": "killed", "killed_by": [f"crashed (reproduced alone): {LABEL}"]}


def test_record_keeps_each_results_own_run_metadata(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    first = {
        "lane": "default",
        "scope": "rows",
        "kit_commit": "aaa",
        "baseline": {"verdict": "PASS"},
    }
    runner.record(str(path), [{"id": "a", "outcome": "killed"}], first)
    later = {
        "lane": "ffi_next",
        "scope": "all",
        "kit_commit": "bbb",
        "baseline": {"verdict": "not run"},
    }
    runner.record(str(path), [{"id": "b", "outcome": "killed"}], later)
    results = json.loads(path.read_text())["results"]
    assert (results["a"]["lane"], results["a"]["scope"], results["a"]["kit_commit"]) == (
        "default", "rows", "aaa",
    )  # fmt: skip
    assert results["a"]["baseline"] == {"verdict": "PASS"}
    assert (results["b"]["lane"], results["b"]["kit_commit"]) == ("ffi_next", "bbb")


def test_merge_reads_a_dict_shaped_results_file(tmp_path: Path, monkeypatch) -> None:
    shaped = tmp_path / "dict.json"
    shaped.write_text(
        json.dumps(
            {"lane": "default", "kit_commit": "ccc",
             "results": {"a": {"id": "a", "outcome": "killed", "lane": "default"}}}
        )
    )  # fmt: skip
    monkeypatch.setattr(runner, "ROOT", str(tmp_path))
    assert runner.main(["--merge", str(shaped), "--record", "merged.json"]) == 0
    merged = json.loads((tmp_path / "merged.json").read_text())["results"]
    assert merged["a"]["outcome"] == "killed" and merged["a"]["kit_commit"] == "ccc"


def test_merge_and_table_read_paths_from_the_workspace(tmp_path: Path, monkeypatch) -> None:
    # `bazel run` starts the runner in its runfiles tree, not in the workspace.
    runs = tmp_path / "mutation-runs" / "r"
    runs.mkdir(parents=True)
    (runs / "results.json").write_text(
        json.dumps({"kit_commit": "ddd", "results": [{"id": "a", "outcome": "killed",
                                                      "area": "ffi", "seconds": 1.0}]})
    )  # fmt: skip
    monkeypatch.setattr(runner, "ROOT", str(tmp_path))
    monkeypatch.chdir(tmp_path / "mutation-runs")
    relative = "mutation-runs/r/results.json"
    assert runner.main(["--merge", relative, "--record", "merged.json"]) == 0
    assert json.loads((tmp_path / "merged.json").read_text())["results"]["a"]["kit_commit"] == "ddd"
    assert runner.main(["--table", relative]) == 0


# --- Subcommands (issue 53): run, list, table, merge; the flags of before still work ---------
CI_ARGS = [
    "--baseline", "--scope", "rows", "--out", "mutation-runs/ci",
    "--only", "vm-get-outputs-reversed", "ffi-traceback-frames-reversed",
]  # fmt: skip


def test_the_command_lines_of_before_name_their_subcommand() -> None:
    assert runner.legacy_argv(CI_ARGS) == ["run", *CI_ARGS]
    assert runner.legacy_argv([]) == ["run"]
    assert runner.legacy_argv(["--list"]) == ["list"]
    assert runner.legacy_argv(["--table", "a.json", "b.json"]) == ["table", "a.json", "b.json"]
    assert runner.legacy_argv(["--merge", "a.json", "--record", "r.json"]) == [
        "merge", "a.json", "--record", "r.json",
    ]  # fmt: skip
    assert runner.legacy_argv(["--record", "r.json", "--merge", "a.json", "b.json"]) == [
        "merge", "a.json", "b.json", "--record", "r.json",
    ]  # fmt: skip
    # A command line that names its subcommand is kept as it is.
    for argv in (["run", *CI_ARGS], ["list"], ["table", "x"], ["--help"]):
        assert runner.legacy_argv(argv) == argv


def test_ci_command_line_parses_to_run_in_both_forms() -> None:
    for argv in (CI_ARGS, ["run", *CI_ARGS]):
        args = runner.build_parser().parse_args(runner.legacy_argv(argv))
        assert args.command == "run" and args.func is runner.cmd_run
        assert (args.scope, args.out, args.baseline, args.no_fail_fast) == (
            "rows", "mutation-runs/ci", True, False,
        )  # fmt: skip
        assert args.only == ["vm-get-outputs-reversed", "ffi-traceback-frames-reversed"]


def test_bad_command_lines_are_usage_errors(capsys) -> None:
    for argv in (
        ["merge", "a.json"],  # no --record
        ["--merge", "a.json"],
        ["run", "--scope", "nowhere"],
        ["table"],
        ["list", "--only", "x"],
        ["frobnicate"],
    ):
        try:
            runner.main(argv)
        except SystemExit as err:
            assert err.code == 2, argv
        else:
            raise AssertionError(f"{argv} parsed")
    assert "--record" in capsys.readouterr().err


def test_each_subcommand_calls_its_function(monkeypatch) -> None:
    called = []
    for name in ("cmd_run", "cmd_list", "cmd_table", "cmd_merge"):
        monkeypatch.setattr(
            runner, name, lambda args, n=name: called.append((n, args.command)) or 7
        )
    assert runner.main(["--only", "x"]) == 7
    assert runner.main(["list"]) == 7
    assert runner.main(["table", "r.json"]) == 7
    assert runner.main(["--merge", "r.json", "--record", "o.json"]) == 7
    assert called == [
        ("cmd_run", "run"), ("cmd_list", "list"), ("cmd_table", "table"), ("cmd_merge", "merge"),
    ]  # fmt: skip


def test_list_prints_every_mutant(capsys) -> None:
    assert runner.main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == f"{len(catalogue.load().mutants)} mutants"


def test_choose_by_id_and_area_and_refuse_unknown_ones() -> None:
    cat = catalogue.load()
    assert [m.id for m in runner.choose(cat, ["vm-get-outputs-reversed"], [])] == [
        "vm-get-outputs-reversed"
    ]
    ffi = runner.choose(cat, [], ["ffi"])
    assert ffi and {m.area for m in ffi} == {"ffi"}
    assert runner.choose(cat, ["vm-get-outputs-reversed"], ["ffi"]) == []
    for only, areas in ((["no-such-mutant"], []), ([], ["no-such-area"])):
        try:
            runner.choose(cat, only, areas)
        except ValueError as err:
            assert "no-such" in str(err)
        else:
            raise AssertionError((only, areas))


def test_scope_targets_follow_the_scope() -> None:
    cat = catalogue.load()
    mutant = cat.by_id("vm-get-outputs-reversed")
    assert runner.scope_targets(cat, mutant, "all") == ["//..."]
    assert runner.scope_targets(cat, mutant, "rows") == cat.row_targets_of(mutant)
    assert runner.scope_targets(cat, mutant, "area") == cat.targets_of(mutant)


def _fake_checks(monkeypatch, tmp_path: Path, checks: list[tuple[int, str, str | None]]) -> list:
    """run with no wheel fetched, written or checked: each check answers the next of `checks`;
    returns the check commands run."""
    commands: list[list[str]] = []
    monkeypatch.setattr(runner, "ROOT", str(tmp_path))
    monkeypatch.setattr(runner, "kit_commit", lambda: "abc")
    monkeypatch.setattr(runner, "pinned_wheel", lambda lane, dist: f"/w/{dist}.whl")

    def write_mutant(original: str, wheel: str, file: str, edit: object) -> str:
        Path(wheel).parent.mkdir(parents=True, exist_ok=True)
        Path(wheel).write_text("mutant")
        return "sha"

    def run_check(command: list[str], log: str) -> tuple[int, str, str | None, float]:
        commands.append(command)
        code, output, run_dir = checks.pop(0)
        return code, output, run_dir, 3.0

    monkeypatch.setattr(runner.mutant_wheel, "write_mutant", write_mutant)
    monkeypatch.setattr(runner, "run_check", run_check)
    return commands


def test_run_stops_when_the_baseline_fails(monkeypatch, tmp_path: Path) -> None:
    commands = _fake_checks(monkeypatch, tmp_path, [(1, "verdict: FAIL", None)])
    assert runner.main(CI_ARGS) == 1
    assert len(commands) == 1 and "/w/apache-tvm.whl" in commands[0]  # the unmutated wheels
    data = json.loads((tmp_path / "mutation-runs" / "ci" / "results.json").read_text())
    assert data["baseline"]["verdict"] == "FAIL" and data["results"] == []
    assert data["command"] == "./bazelw run //tools/mutants -- " + " ".join(CI_ARGS)


def test_run_scores_a_survivor_and_reports_an_equivalent(monkeypatch, tmp_path: Path) -> None:
    passing = _run(tmp_path, "passed")
    commands = _fake_checks(
        monkeypatch, tmp_path, [(0, "verdict: PASS", passing), (0, "verdict: PASS", passing)]
    )
    argv = ["run", "--scope", "rows", "--out", "o", "--record", "rec.json", "--only"]
    argv += ["vm-get-outputs-reversed", "ffi-numpy-uint16-maps-to-int16"]
    assert runner.main(argv) == 1  # a mutant survived
    assert len(commands) == 2  # the baseline and one mutant: the equivalent one is not run
    results = json.loads((tmp_path / "o" / "results.json").read_text())["results"]
    assert [r["outcome"] for r in results] == ["survived", "equivalent"]
    assert results[0]["sha256"] == "sha" and "--fail-fast" in commands[1]
    # The 100 MB mutant wheel is not kept, only its sha256.
    assert list((tmp_path / "o" / "wheels" / "vm-get-outputs-reversed").glob("*.whl")) == []
    recorded = json.loads((tmp_path / "rec.json").read_text())["results"]
    assert recorded["vm-get-outputs-reversed"]["outcome"] == "survived"


def test_run_refuses_an_unknown_mutant_before_any_check(monkeypatch, tmp_path: Path) -> None:
    commands = _fake_checks(monkeypatch, tmp_path, [])
    assert runner.main(["run", "--only", "no-such-mutant"]) == 2
    assert runner.main(["--area", "no-such-area"]) == 2
    assert commands == []


def test_a_fail_verdict_for_the_tvms_own_problem_kills_without_a_failed_case(
    tmp_path: Path,
) -> None:
    """A REGRESSION against a pinned expectation is a kill, named by its line; a problem of
    the machine's or the kit's is not."""
    regression = (
        f"verdict: REGRESSION: {LABEL} :: test_b: op|neg|float32|fx|0: correct -> refused\n"
        "verdict: FAIL (...): 1 targets (1 FAILED), 2 cases (2 passed), 1 problems"
    )
    result = runner.classify(_run(tmp_path, "passed", exit_code=3), 1, regression)
    assert result["outcome"] == "killed"
    assert result["killed_by"][0].startswith(f"REGRESSION: {LABEL} :: test_b")
    assert catalogue.target_of_kill(result["killed_by"][0]) == LABEL
    stale = "verdict: STALE EXPECTATION: x\nverdict: BAZEL EXIT 3: the invocation did not succeed"
    again = runner.classify(_run(tmp_path, "passed", exit_code=3), 1, stale)
    assert again["outcome"] == "inconclusive"


def _fix(improves: tuple[str, ...] = ("op|H|float32|fx|0",)) -> catalogue.Mutant:
    return catalogue.Mutant(
        "fix-h", "frontend", "apache-tvm", "tvm/x.py", "a", "b", "", rows=(), improves=improves,
        fixes="H translated",
    )  # fmt: skip


def test_a_fix_improves_exactly_its_cases_in_a_passing_run(monkeypatch) -> None:
    line = "//p:t :: op_corpus_op_1of7: op|H|float32|fx|0: deviating corpus-x -> correct"
    records = {"pass": {"verdict": {"status": "PASS", "improvements": [line]}}}
    monkeypatch.setattr(runner.run_record, "read", lambda run_dir: records[run_dir])
    assert runner.judge_fix(_fix(), 0, "pass")["outcome"] == "improved"
    # Another case improved, or more than the fix's: not what the entry says.
    assert runner.judge_fix(_fix(("op|T|float32|fx|0",)), 0, "pass")["outcome"] == "not improved"
    # A fix that fails the run is no fix, whatever it improved.
    records["fail"] = {"verdict": {"status": "FAIL", "improvements": [line]}}
    failed = runner.judge_fix(_fix(), 1, "fail")
    assert failed["outcome"] == "not improved" and "FAIL" in failed["reason"]
    assert runner.judge_fix(_fix(), 1, None)["outcome"] == "not improved"
    assert runner.improved_cases([line]) == ["op|H|float32|fx|0"]
