"""run_bundle.py's runner: parallel or in order the same outcome per test, a hang ends as
TIMEOUT (its children killed too), one line per finished target, and a bundle run held to the
suite's `_cuda` list (partial bundles labelled, a missing target named)."""

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "verdict"))
import results  # noqa: E402
import run_bundle  # noqa: E402
import verdict  # noqa: E402

PY = sys.executable
PLANTED = {
    "//pkg:pass_test": ([PY, "-c", "print('ok')"], 30),
    "//pkg:fail_test": ([PY, "-c", "import sys; sys.exit(3)"], 30),
    # Sleeps in a child it starts: the timeout must kill the whole group, not only the parent.
    "//pkg:hang_test": (
        [
            PY,
            "-c",
            "import subprocess, sys; subprocess.run([sys.executable, '-c', "
            "'import time; time.sleep(120)'])",
        ],
        1,
    ),
    "//pkg:slow_pass_test": ([PY, "-c", "import time; time.sleep(0.5)"], 30),
}


def planned() -> list:
    return [(label, argv, {}, timeout) for label, (argv, timeout) in PLANTED.items()]


@pytest.mark.parametrize("jobs", [1, 4])
def test_each_target_gets_its_status_and_a_line_when_it_finishes(tmp_path: Path, jobs: int) -> None:
    lines: list[str] = []
    began = time.monotonic()
    done = run_bundle.run_tests(
        planned(), str(tmp_path), {}, jobs, report=lines.append, cwd=str(tmp_path)
    )
    assert time.monotonic() - began < 60, "the hang was not cut at its timeout"
    assert {label: status for label, (status, _) in done.items()} == {
        "//pkg:pass_test": "PASSED",
        "//pkg:fail_test": "FAILED",
        "//pkg:hang_test": "TIMEOUT",
        "//pkg:slow_pass_test": "PASSED",
    }
    progress = [line for line in lines if line.lstrip().startswith("[")]
    assert len(progress) == len(PLANTED)
    assert sorted(line.split()[2] for line in progress) == sorted(f"{label}:" for label in PLANTED)
    log = tmp_path / "tests" / "pkg" / "hang_test" / "test.log"
    assert "killed after its 1 s timeout" in log.read_text()


def test_a_test_gets_its_own_temp_dir_and_the_xml_path(tmp_path: Path) -> None:
    show = "import os; print(os.environ['TEST_TMPDIR'], os.environ['XML_OUTPUT_FILE'])"
    tests = [(f"//pkg:t{i}_test", [PY, "-c", show], {}, 30) for i in range(2)]
    run_bundle.run_tests(tests, str(tmp_path), {}, 2, report=lambda line: None, cwd=str(tmp_path))
    seen = set()
    for i in range(2):
        log = (tmp_path / "tests" / "pkg" / f"t{i}_test" / "test.log").read_text().split()
        assert log[1] == run_bundle.xml_path(str(tmp_path), f"//pkg:t{i}_test")
        seen.add(log[0])
    assert len(seen) == 2


SUITE = {"source": "build graph: //a:cuda_tests", "targets": ["//a:x_test_cuda", "//a:y_test_cuda"]}


def test_a_whole_suite_bundle_is_held_to_the_suite_not_to_its_own_list() -> None:
    manifest = {
        "bundle": "//tools/gpu_runner:lane_bundle",
        "tests": [{"label": "//a:x_test_cuda"}],  # y went missing from tests.json
        "cuda_suite": SUITE,
        "whole_suite": True,
    }
    record, partial = run_bundle.suite_record(manifest)
    assert record["targets"] == ["//a:x_test_cuda", "//a:y_test_cuda"]
    assert partial == []


def test_a_bundle_carrying_part_of_the_suite_is_labelled_partial() -> None:
    manifest = {
        "bundle": "//tools/gpu_runner:bundle",
        "tests": [{"label": "//a:x_test_cuda"}, {"label": "//a:x_test_llvm"}],
        "cuda_suite": SUITE,
        "whole_suite": False,
    }
    record, partial = run_bundle.suite_record(manifest)
    assert record["targets"] == ["//a:x_test_cuda"]
    assert partial == ["//tools/gpu_runner:bundle carries 1 of the suite's 2 _cuda targets"]


def test_a_manifest_without_the_suite_proves_nothing() -> None:
    assert run_bundle.suite_record({"tests": []}) == (None, [])


# A test main that writes one JUnit case of the cuda variant, passing or skipped (CASE_OUTCOME).
_FAKE_TEST = """
import os
skip = '<skipped message="no device"/>' if os.environ.get("CASE_OUTCOME") == "skipped" else ""
with open(os.environ["XML_OUTPUT_FILE"], "w") as f:
    f.write('<testsuites><testsuite name="pytest" tests="1"><properties>'
            '<property name="tvm_collected" value="1"/><property name="tvm_deselected" value="0"/>'
            '</properties><testcase classname="x_test" name="test_run'
            + os.environ.get("TEST_SHARD_INDEX", "") + '[cuda]">'
            '<properties><property name="tvm_target" value="cuda"/></properties>'
            + skip + '</testcase></testsuite></testsuites>')
"""


def fake_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outcome: str, shards: int = 1
) -> Path:
    """A bundle directory with one `_cuda` test (`shards` of it), the runner pointed at it."""
    import json

    here = tmp_path / "gpu_runner"
    workspace = here / "tvm_conformance"
    (workspace / "pkg").mkdir(parents=True)
    (here / "wheels").mkdir()
    (workspace / "pkg" / "x_test.py").write_text(_FAKE_TEST)
    label = "//pkg:x_test_cuda"
    manifest = {
        "bundle": "//tools/gpu_runner:fake_bundle",
        "tests": [
            {
                "label": label,
                "kind": "py",
                "target": "cuda",
                "argv": ["pkg/x_test.py"],
                "env": {"CASE_OUTCOME": outcome},
                "timeout_s": 60,
                "shard_count": shards,
                "gpu_runner_config": None,
            }
        ],
        "cuda_suite": {"source": "build graph: //pkg:cuda_tests", "targets": [label]},
        "whole_suite": True,
    }
    (here / "tests.json").write_text(json.dumps(manifest))
    monkeypatch.setattr(run_bundle, "HERE", str(here))
    monkeypatch.setattr(run_bundle, "WORKSPACE", str(workspace))
    monkeypatch.setattr(run_bundle, "MANIFEST", str(here / "tests.json"))
    monkeypatch.setattr(run_bundle, "VENV_RECORD", str(here / "none.json"))
    monkeypatch.setattr(run_bundle, "site_dir", lambda: str(tmp_path / "site"))
    return here


@pytest.mark.parametrize(
    ("outcome", "status", "line"),
    [
        ("passed", 0, "verdict: PASS (default/tvm=unknown/tvm_ffi=unknown/cuda_gpu///tools/"),
        ("skipped", 1, "verdict: SKIPPED ON A GPU RUNNER: //pkg:x_test_cuda :: test_run[cuda]"),
    ],
)
def test_the_exit_status_is_the_verdict(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    outcome: str,
    status: int,
    line: str,
) -> None:
    # The process exits 0 either way: a skipped case on a GPU runner fails by the verdict alone.
    fake_bundle(tmp_path, monkeypatch, outcome)
    out = tmp_path / "results"
    monkeypatch.setattr(sys, "argv", ["run.sh", "--skip-preflight", "--out", str(out)])
    assert run_bundle.main() == status
    printed = capsys.readouterr().out
    assert line in printed, printed
    assert (
        printed.strip()
        .splitlines()[-1]
        .startswith("verdict: " + ("PASS" if status == 0 else "FAIL"))
    )


@pytest.mark.parametrize("argv", [["-j", "0"], ["--bogus"]])
def test_bad_arguments_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    fake_bundle(tmp_path, monkeypatch, "passed")
    monkeypatch.setattr(sys, "argv", ["run.sh", *argv])
    try:
        status = run_bundle.main()
    except SystemExit as exit_:  # argparse's own error exit
        status = exit_.code
    assert status == 2


def test_a_bundle_without_its_manifest_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    here = fake_bundle(tmp_path, monkeypatch, "passed")
    (here / "tests.json").unlink()
    monkeypatch.setattr(sys, "argv", ["run.sh", "--skip-preflight"])
    assert run_bundle.main() == 2
    assert "tests.json" in capsys.readouterr().err


@pytest.mark.parametrize("field", sorted(run_bundle.MANIFEST_FIELDS))
def test_a_manifest_entry_without_a_field_is_one_line_and_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    field: str,
) -> None:
    import json

    here = fake_bundle(tmp_path, monkeypatch, "passed")
    manifest = json.loads((here / "tests.json").read_text())
    del manifest["tests"][0][field]
    (here / "tests.json").write_text(json.dumps(manifest))
    monkeypatch.setattr(sys, "argv", ["run.sh", "--skip-preflight"])
    assert run_bundle.main() == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "tests[0]" in err and f"has no `{field}`" in err, err


def test_without_a_required_gpu_the_verdict_is_labelled_partial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_bundle(tmp_path, monkeypatch, "passed")
    monkeypatch.delenv(verdict.REQUIRE_WHOLE_ENV, raising=False)
    base = ["run.sh", "--skip-preflight", "--no-require-gpu"]
    monkeypatch.setattr(sys, "argv", [*base, "--out", str(tmp_path / "a")])
    assert run_bundle.main() == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("verdict: PARTIAL PASS (") and "GPU not required" in last, last
    # With the whole suite required it fails, saying why; --allow-partial lets it pass.
    monkeypatch.setattr(sys, "argv", [*base, "--require-whole", "--out", str(tmp_path / "b")])
    assert run_bundle.main() == 1
    assert "verdict: PARTIAL: " in capsys.readouterr().out
    monkeypatch.setattr(sys, "argv", [*base, "--allow-partial=smoke", "--out", str(tmp_path / "c")])
    assert run_bundle.main() == 0


def test_a_sharded_target_runs_each_shard_and_the_verdict_reads_them_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_bundle(tmp_path, monkeypatch, "passed", shards=3)
    out = tmp_path / "results"
    monkeypatch.setattr(sys, "argv", ["run.sh", "--skip-preflight", "--out", str(out)])
    assert run_bundle.main() == 0
    printed = capsys.readouterr().out
    assert "PASSED  //pkg:x_test_cuda: 3 cases, 0 failed" in printed and "3 shards" in printed
    run = results.read_run(str(out))
    (target,) = run.targets.values()
    # Each shard got Bazel's TEST_SHARD_INDEX (its case is named by it) and its own file.
    assert sorted(c.name for c in target.cases) == [f"test_run{i}[cuda]" for i in range(3)]
    assert len(target.xml_paths) == 3


def test_one_failing_shard_fails_its_target(tmp_path: Path) -> None:
    fails_in_shard_1 = "import os, sys; sys.exit(int(os.environ['TEST_SHARD_INDEX'] == '1'))"
    shard_results: dict = {}
    done = run_bundle.run_tests(
        [run_bundle.PlannedTest("//pkg:s_test", [PY, "-c", fails_in_shard_1], {}, 30, False, 3)],
        str(tmp_path),
        {},
        3,
        report=lambda line: None,
        cwd=str(tmp_path),
        shard_results=shard_results,
    )
    assert done["//pkg:s_test"][0] == "FAILED"
    assert {k: v[0] for k, v in shard_results.items()} == {
        ("//pkg:s_test", 1): "PASSED",
        ("//pkg:s_test", 2): "FAILED",
        ("//pkg:s_test", 3): "PASSED",
    }


@pytest.mark.parametrize("shards", [0, "2", True])
def test_a_bad_shard_count_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], shards
) -> None:  # noqa: ANN001
    import json

    here = fake_bundle(tmp_path, monkeypatch, "passed")
    manifest = json.loads((here / "tests.json").read_text())
    manifest["tests"][0]["shard_count"] = shards
    (here / "tests.json").write_text(json.dumps(manifest))
    monkeypatch.setattr(sys, "argv", ["run.sh", "--skip-preflight"])
    assert run_bundle.main() == 2
    assert "`shard_count` must be an integer >= 1" in capsys.readouterr().err
