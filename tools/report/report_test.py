"""report.py: small synthetic runs of two lanes make one matrix, header, deviations and skips."""

import json
from pathlib import Path

import conformance_check
import pytest
import report
from sample_runs import CONFORMANCE, DEVIATIONS_MD, FIDELITY_ROWS, build, runs


def test_summary_line_per_lane_counts_behaviours_not_cases(tmp_path: Path) -> None:
    lanes = build(tmp_path)["lanes"]
    assert list(lanes) == ["default", "ffi_next"]
    assert lanes["default"]["summary_line"] == (
        "4 behaviours: 2 hold, 1 deviations, 0 fail, 1 skipped on lane default"
    )
    # cuda_test not run in ffi_next; the callback's compiled case fails; save_json crashes.
    assert lanes["ffi_next"]["summary_line"] == (
        "4 behaviours: 0 hold, 2 deviations, 1 fail, 0 skipped on lane ffi_next (1 not run)"
    )
    assert lanes["default"]["summary"]["kit"]["hold"] == 1  # counted apart


def test_matrix_has_a_column_per_lane_target_and_exec_mode_with_cells(tmp_path: Path) -> None:
    built = build(tmp_path)
    cols = built["columns"]
    for col in (
        "default|llvm|bytecode",
        "default|llvm|compiled",
        "default|cuda|any",
        "ffi_next|llvm|compiled",
        "ffi_next|any|any",
    ):
        assert col in cols, cols
    rows = {r["behaviour"]: r["cells"] for r in built["matrix"]}
    assert rows["Callback returns"]["default|llvm|compiled"] == {"status": "passed", "detail": ""}
    assert rows["Callback returns"]["ffi_next|llvm|compiled"]["status"] == "failed"
    assert rows["Error keeps its type"]["default|any|any"] == {
        "status": "deviation",
        "detail": "ffi-err-type",
    }
    assert rows["save_json of an IR node"]["ffi_next|any|any"] == {
        "status": "crashed",
        "detail": "ffi-save-json-crash",
    }
    assert rows["save_json of an IR node"]["default|any|any"]["status"] == "passed"
    assert rows["CUDA runs"]["default|cuda|any"] == {
        "status": "skipped",
        "detail": "no cuda:0 device present",
    }
    assert "ffi_next|cuda|any" not in rows["CUDA runs"]  # not run there


def test_lane_header_deviations_skips_wall_time(tmp_path: Path) -> None:
    lanes = build(tmp_path)["lanes"]
    info = lanes["ffi_next"]["info"]
    assert info["tvm_ffi_version"] == "0.1.15.post2"
    assert info["tvm_wheel_sha256"] == "ab" * 32
    assert lanes["default"]["wall_s"] == 120.0  # two runs of 60 s merged into the lane
    assert lanes["default"]["cases"] == 6
    assert lanes["default"]["skips"] == {"no cuda:0 device present": 1}
    dev = lanes["ffi_next"]["deviations"]["ffi-save-json-crash"]
    assert dev["kind"] == "crash" and dev["expected"] == "save_json works"
    assert dev["cases"] == ["//py:json_test :: test_save_json"]
    assert "ffi-save-json-crash" not in lanes["default"]["deviations"]


def test_exception_fidelity_table_of_a_lane_is_shown_where_its_run_archived_one(
    tmp_path: Path,
) -> None:
    built = build(tmp_path)
    assert built["lanes"]["default"]["exception_fidelity"] == FIDELITY_ROWS
    assert built["lanes"]["ffi_next"]["exception_fidelity"] == []
    md = report.render_md(built)
    assert "## Exception fidelity on lane default" in md
    assert "Exception fidelity on lane ffi_next" not in md
    assert "| OSError | cpp | RuntimeError | NO | yes | yes |  |" in md
    assert (
        "| ValueError with __notes__ | relax_vm | ValueError | yes | yes | yes | __notes__: NO |"
        in md
    )
    page = report.render_html(built)
    assert "<h2>Exception fidelity on lane default</h2>" in page
    assert "<td>OSError</td><td>cpp</td><td>RuntimeError</td><td>NO</td>" in page


def test_one_lane_gives_one_lane_report(tmp_path: Path) -> None:
    first = runs(tmp_path)[:1]
    built = report.build(first, conformance_check.parse_rows(CONFORMANCE), {})
    assert list(built["lanes"]) == ["default"]
    assert all(c.startswith("default|") for c in built["columns"])


def test_main_writes_three_files_and_prints_summaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "conformance.md").write_text(CONFORMANCE)
    (tmp_path / "docs" / "deviations.md").write_text(DEVIATIONS_MD)
    monkeypatch.setenv("BUILD_WORKSPACE_DIRECTORY", str(tmp_path))
    assert report.main([]) == 0
    out = capsys.readouterr().out
    assert "1 skipped on lane default\n" in out and "on lane ffi_next (1 not run)" in out
    written = tmp_path / "conformance-report"
    assert sorted(p.name for p in written.iterdir()) == ["report.html", "report.json", "report.md"]
    md = (written / "report.md").read_text()
    assert "| 004 | save_json of an IR node | passed |" in md
    assert "crashed (ffi-save-json-crash)" in md
    page = (written / "report.html").read_text()
    assert "<script" not in page and "http" not in page  # self-contained, no network
    assert json.loads((written / "report.json").read_text())["lanes"]["ffi_next"]


def test_main_without_runs_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BUILD_WORKSPACE_DIRECTORY", str(tmp_path))
    assert report.main([]) == 1
    assert "run ./bazelw test first" in capsys.readouterr().err


def test_overhead_figures_are_one_table_with_a_column_per_lane(tmp_path: Path) -> None:
    built = build(tmp_path)
    lanes, rows = report.overhead_table(built)
    assert lanes == ["default", "ffi_next"]
    assert rows == [["tvm_ffi add", "ctypes add", "400 (0.80x)", "250 (0.50x)"]]
    md = report.render_md(built)
    assert "## FFI and VM overhead" in md
    assert "| tvm_ffi add | ctypes add | 400 (0.80x) | 250 (0.50x) |" in md
    assert "<th>lane ffi_next</th>" in report.render_html(built)
