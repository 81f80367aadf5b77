"""report.py: one column per run identity and config, never merged; cells aggregate targets and
modes; rows that differ; a diff against the previous run of the same identity; the verdict."""

import json
from pathlib import Path

import conformance_check
import fake_runs
import pytest
import render_html
import render_md
import report
import report_model
import results
import sample_runs
import verdict
from fake_runs import case_xml, junit
from sample_runs import CONFORMANCE, FIDELITY_ROWS, GPU_NAME, REGISTRY, USER_WHEEL, build, runs

TITLES = [
    "lane default · cpu",
    "lane default · cuda",
    "lane ffi_next · cpu",
    f"lane default · cpu · {USER_WHEEL}",
    f"lane default · cuda_gpu · {GPU_NAME}",
]


def _rows(built: dict) -> dict[str, list[dict]]:
    return {r["behaviour"]: r["cells"] for r in built["matrix"]}


def test_one_column_per_identity_and_config_newest_run_each(tmp_path: Path) -> None:
    built = build(tmp_path)
    assert [c["title"] for c in built["columns"]] == TITLES
    # The default lane's cpu column is its newer run (the callback fixed), not a merge.
    assert built["columns"][0]["run"].endswith("-default") and built["columns"][0]["diff"]
    assert len({c["key"] for c in built["columns"]}) == len(TITLES)


def test_a_users_wheel_is_its_own_column_labelled_by_file_and_sha(tmp_path: Path) -> None:
    col = build(tmp_path)["columns"][3]
    assert col["identity"]["tvm"] == {
        "file": USER_WHEEL,
        "sha256": "f" * 64,
        "source": "user wheel",
        "version": "0.27.0.post1",
    }
    assert "your wheel " + USER_WHEEL in report_model.scoreboard_rows({"columns": [col]})[0]["TVM"]


def test_a_later_run_of_another_wheel_cannot_relabel_a_column(tmp_path: Path) -> None:
    earlier = runs(tmp_path)
    # A later run that only re-ran one target, with yet another wheel.
    other = fake_runs.venv_record(tvm_sha="9" * 64, user_tvm="apache_tvm-other.whl")
    later = results.read_run(
        fake_runs.archive(
            tmp_path,
            {"//cpp:kit_test": sample_runs.GTEST},
            venv_record=other,
            start_ms=1_796_000_000_000,
        )
    )
    built = report_model.build(
        [*earlier, later], conformance_check.parse_rows(CONFORMANCE), REGISTRY
    )
    titles = [c["title"] for c in built["columns"]]
    assert titles == [*TITLES, "lane default · cpu · apache_tvm-other.whl"]
    user = _rows(built)["Callback returns"][3]
    assert user["text"] == "2/2"  # still the 0.26.0 wheel's own results
    assert _rows(built)["Callback returns"][5]["status"] == "not run"


def test_cells_aggregate_targets_and_modes(tmp_path: Path) -> None:
    rows = _rows(build(tmp_path))
    assert [c["text"] for c in rows["Callback returns"]] == [
        "2/2",
        "2/2",
        "1/2 failed",
        "2/2",
        "not run",
    ]
    assert rows["Error keeps its type"][0]["text"] == "ffi-err-type"
    assert rows["save_json of an IR node"][2] | {"outcomes": []} == {
        "status": "crashed",
        "text": "crashed: ffi-save-json-crash",
        "outcomes": [],
    }
    assert [c["status"] for c in rows["CUDA runs"]] == [
        "not run",
        "skipped",
        "not run",
        "not run",
        "passed",
    ]
    compiled = rows["Callback returns"][2]["outcomes"][1]
    assert (compiled["target"], compiled["mode"], compiled["status"]) == (
        "llvm",
        "compiled",
        "failed",
    )


def test_rows_that_differ_between_columns(tmp_path: Path) -> None:
    built = build(tmp_path)
    differ = [r["behaviour"] for r in built["matrix"] if r["differs"]]
    assert differ == ["Callback returns", "CUDA runs", "save_json of an IR node"]
    md = render_md.render(built)
    section = md.split("## Rows that differ between columns")[1].split("## Matrix")[0]
    assert "Callback returns" in section and "Error keeps its type" not in section


def test_diff_against_the_previous_run_of_the_same_identity(tmp_path: Path) -> None:
    columns = build(tmp_path)["columns"]
    assert columns[0]["diff"]["fixed"] == ["001: Callback returns (now 2/2)"]
    assert columns[0]["diff"]["newly failing"] == [] and columns[0]["diff"]["added"] == []
    assert columns[2]["diff"] is None  # ffi_next ran once


def test_each_column_has_its_own_verdict_and_the_report_fails_when_one_fails(
    tmp_path: Path,
) -> None:
    built = build(tmp_path)
    verdicts = [c["verdict"]["passed"] for c in built["columns"]]
    assert verdicts == [True, True, False, True, True]
    assert not built["passed"]
    assert any(
        "FAILED: //py:cb_test_llvm :: test_cb[llvm-compiled]" in p
        for p in built["columns"][2]["verdict"]["problems"]
    )


def test_results_sources_and_machine_are_shown_per_column(tmp_path: Path) -> None:
    earlier = runs(tmp_path)
    cached = results.read_run(
        fake_runs.archive(
            tmp_path,
            sample_runs._default(),
            venv_record=fake_runs.venv_record(),
            start_ms=1_797_000_000_000,
            cached=("//py:err_test",),
            remote_cached=("//py:json_test",),
        )
    )
    built = report_model.build(
        [*earlier, cached], conformance_check.parse_rows(CONFORMANCE), REGISTRY
    )
    col = built["columns"][0]
    assert col["sources"]["targets"] == {"executed": 2, "action cache": 1, "disk cache": 1}
    board = report_model.scoreboard_rows(built)
    assert board[0]["results from"] == "2 executed, 1 action cache, 1 disk cache"
    assert f"GPU {GPU_NAME}" in board[4]["machine"]


def test_deviation_cells_carry_the_reason_and_upstream_link(tmp_path: Path) -> None:
    page = render_html.render(build(tmp_path))
    assert "https://github.com/apache/tvm-ffi/issues/123" in page
    assert "arrives as RuntimeError" in page  # the reason, on hover and in the table


def test_exception_fidelity_and_overhead_tables(tmp_path: Path) -> None:
    built = build(tmp_path)
    assert built["columns"][0]["exception_fidelity"] == FIDELITY_ROWS
    assert built["columns"][2]["exception_fidelity"] == []
    md = render_md.render(built)
    assert "| OSError | cpp | RuntimeError | NO | yes | yes |  |" in md
    names, rows = report_model.overhead_table(built)
    assert names == ["lane default · cpu", "lane ffi_next · cpu"]
    assert rows == [["tvm_ffi add", "ctypes add", "400 (0.80x)", "250 (0.50x)"]]


def test_main_writes_three_files_prints_verdicts_and_exits_with_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "conformance.md").write_text(CONFORMANCE)
    monkeypatch.setenv("BUILD_WORKSPACE_DIRECTORY", str(tmp_path))
    monkeypatch.setattr(verdict, "load_registry", lambda *_: REGISTRY)
    assert report.main([]) == 1  # the ffi_next column fails
    out = capsys.readouterr().out
    assert "verdict: FAIL (lane ffi_next · cpu)" in out
    assert (
        "4 behaviours: 2 hold, 1 deviations, 0 fail, 0 skipped on lane default · cpu (1 not run)\n"
        in out
    )
    written = tmp_path / "conformance-report"
    assert sorted(p.name for p in written.iterdir()) == ["report.html", "report.json", "report.md"]
    page = (written / "report.html").read_text()
    assert "<script" not in page
    assert json.loads((written / "report.json").read_text())["columns"][2]["lane"] == "ffi_next"
    # Only the passing runs, named: exit 0.
    passing = sorted((tmp_path / "conformance-runs").iterdir())[1]
    assert report.main([str(passing)]) == 0


def test_main_without_runs_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BUILD_WORKSPACE_DIRECTORY", str(tmp_path))
    assert report.main([]) == 1
    assert "run ./bazelw test first" in capsys.readouterr().err


def test_an_unmapped_failing_case_fails_the_column(tmp_path: Path) -> None:
    tests = {
        **sample_runs._default(),
        "//py:other_test": junit([case_xml("test_nobody_maps", "failed")]),
    }
    run = results.read_run(fake_runs.archive(tmp_path, tests, venv_record=fake_runs.venv_record()))
    built = report_model.build([run], conformance_check.parse_rows(CONFORMANCE), REGISTRY)
    assert not built["passed"]
    assert built["columns"][0]["summary"]["tvm"]["fail"] == 0  # no row shows it ...
    assert "FAIL" in report_model.scoreboard_rows(built)[0]["verdict"]  # ... the verdict does


def test_the_gpu_runner_preflight_facts_end_the_machine_cell(tmp_path: Path) -> None:
    # A GPU column whose run.json carries the preflight's facts (tvm_conformance/preflight.py
    # --attach) says them; a column without them says nothing more.
    built = build(tmp_path)
    built["columns"][4]["machine"].update(
        gpu_driver="580.82.07 (CUDA 13.0)", tvm_runtime_cuda="13.0", torch_cuda="2.13.0 (CUDA 13.0)"
    )
    board = report_model.scoreboard_rows(built)
    assert board[4]["machine"].endswith(
        f"GPU {GPU_NAME}, driver 580.82.07 (CUDA 13.0), TVM needs CUDA 13.0, "
        "torch 2.13.0 (CUDA 13.0)"
    )
    assert board[0]["machine"].endswith(f"GPU {built['columns'][0]['machine']['gpu']}")


def test_a_users_wheel_shows_its_registry_drift_as_information() -> None:
    drift = {
        "against": "tools/registry_snapshot/default.json",
        "differences": [
            "global removed: vm.builtin.debug_print",
            "target tag arm/rasp4b64: mcpu changed cortex-a72 -> generic",
        ],
        "counts": {
            "globals": {"added": 0, "removed": 1, "changed": 0},
            "target_tags": {"added": 0, "removed": 0, "changed": 1},
        },
    }
    lines = report_model.drift_lines({"identity": {"registry_drift": drift}})
    assert lines[0] == (
        "Registry drift against tools/registry_snapshot/default.json "
        f"({report_model.DRIFT_NOTE}): 2 differences "
        "(globals: 1 removed; target_tags: 1 changed)"
    )
    assert lines[1:] == drift["differences"]
    assert report_model.drift_lines({"identity": {"lane": "default"}}) == []
    failed = {"against": "x.json", "error": "exit status 1: boom"}
    assert report_model.drift_lines({"identity": {"registry_drift": failed}}) == [
        "Registry drift against x.json: not taken (exit status 1: boom)"
    ]


def _board(chunk: str, worst: dict[str, str]) -> dict[str, str]:
    """One op-corpus chunk's board (the tier test's undeclared output), counted from `worst`."""
    scoreboard: dict[str, dict[str, dict[str, int]]] = {}
    for key, outcome in worst.items():
        kind, _, frontend, dtype = key.split(" ")
        cell = scoreboard.setdefault(
            f"{kind}/{frontend}/{dtype}",
            {p: dict.fromkeys(report_model.OP_CORPUS_OUTCOMES, 0) for p in ("names", "samples")},
        )
        cell["names"][outcome] += 1
        cell["samples"][outcome] += 2
    board = {
        "kind": "op",
        "chunk": chunk,
        "scope": "tier",
        "scoreboard": scoreboard,
        "worst": worst,
    }
    return {f"{report_model.OP_CORPUS_PREFIX}{chunk}.json": json.dumps(board)}


def test_op_corpus_scoreboard_merges_chunks_and_names_what_changed(tmp_path: Path) -> None:
    tests = {"//py:tier_test": junit([case_xml("test_tier_chunk[op-0of2]")])}
    first = {"op addmm fx float32": "correct", "op mean fx float32": "correct"}
    second = {"op abs fx float32": "refused", "op abs fx int64": "correct"}
    archives = []
    for index, addmm in enumerate(("correct", "refused")):
        outputs = {
            **_board("op_0of2", {**first, "op addmm fx float32": addmm}),
            **_board("op_1of2", second),
        }
        archives.append(
            fake_runs.archive(
                tmp_path,
                tests,
                venv_record=fake_runs.venv_record(),
                start_ms=1_795_000_000_000 + 100_000 * index,
                outputs={"//py:tier_test": outputs},
            )
        )
    built = report_model.build(
        [results.read_run(a) for a in archives], conformance_check.parse_rows(CONFORMANCE), REGISTRY
    )
    col = built["columns"][0]
    assert col["op_corpus"]["chunks"] == ["op_0of2", "op_1of2"]
    assert col["op_corpus"]["names"] == 4
    fx32 = col["op_corpus"]["scoreboard"]["op/fx/float32"]
    assert fx32["names"] == {
        "correct": 1,
        "deviating": 0,
        "failing": 0,
        "refused": 2,
        "excluded": 0,
    }
    assert fx32["samples"]["refused"] == 4
    # The op that stopped translating is named.
    assert col["op_corpus_diff"] == ["op addmm fx float32: correct -> refused"]
    md = render_md.render(built)
    assert "| op/fx/float32 | 1 / 0 / 0 / 2 / 0 | 2 / 0 / 0 / 4 / 0 |" in md
    assert "op addmm fx float32: correct -> refused" in md
    assert "op addmm fx float32: correct -&gt; refused" in render_html.render(built)
    # A run without the tier has no board.
    other = tmp_path / "other"
    other.mkdir()
    assert build(other)["columns"][0]["op_corpus"] is None
