"""Fixed deviations are good news (issue 50, point 4): on a TVM no lane pins, a recorded
deviation whose strict xfail now passes is reported as fixed and the run can PASS; on a pinned
TVM, or whenever anything else is wrong, the XPASS still fails the verdict.

Each test plants one case; the last one runs a real strict xfail that passes in an inner
pytest, archives its JUnit file with the repo's event writer and reads the real verdict.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import archive
import fake_runs
import report_model
import results
import run_identity
import verdict
from fake_runs import case_xml, junit

LLVM = {"tvm_target": "llvm"}
LABEL = "//pkg:a_test_llvm"
REGISTRY = fake_runs.Registry(
    fake_runs.deviation("ffi-listed", (f"{LABEL} :: test_known[llvm]",)),
    fake_runs.deviation("ffi-elsewhere", (f"{LABEL} :: test_other_case[llvm]",)),
)
OK = case_xml("test_ok[llvm]", properties=LLVM)
XPASS = case_xml("test_known[llvm]", "xpass", "deviation ffi-listed: x", properties=LLVM)
FIXED_RUN = {LABEL: junit([OK, XPASS])}
# A wheel no lane's lock hashes (fake_runs' default sha256s), as check_my_wheel installs it.
UNPINNED = fake_runs.venv_record(user_tvm="apache_tvm-0.28.dev0-py3-none-any.whl")


def _pinned_record() -> dict:
    """A venv record of the default lane's own pinned wheels (sha256s from its lock)."""
    with open(os.path.join(archive.WORKSPACE, archive.lane_locks()[0]), encoding="utf-8") as f:
        hashes = archive.lock_hashes(f.read())
    return fake_runs.venv_record(
        tvm_sha=sorted(hashes["apache-tvm"])[0], ffi_sha=sorted(hashes["apache-tvm-ffi"])[0]
    )


def _verdict(tmp_path: Path, tests: dict[str, str], **kwargs: object) -> verdict.Verdict:
    kwargs.setdefault("exit_code", 3)  # Bazel's: a test failed
    run = results.read_run(fake_runs.archive(tmp_path, tests, **kwargs))
    return verdict.verdict_of(run, REGISTRY)


def test_a_fixed_deviation_on_an_unpinned_tvm_passes_and_is_listed(tmp_path: Path) -> None:
    result = _verdict(tmp_path, FIXED_RUN, venv_record=UNPINNED)
    assert result.passed, result.problems
    assert result.fixed == {"ffi-listed": [f"{LABEL} :: test_known[llvm]"]}
    assert result.to_json()["fixed"] == result.fixed
    line = result.line()
    assert line.startswith("verdict: PASS: 1 targets (1 FAILED), 2 cases (1 passed, 1 failed)")
    assert "bazel exit 3, 1 deviation fixed: ffi-listed, 0 problems" in line


def test_archive_records_whether_the_wheels_are_a_lanes_pin(tmp_path: Path) -> None:
    unpinned = results.read_run(fake_runs.archive(tmp_path, FIXED_RUN, venv_record=UNPINNED))
    assert run_identity.venv_identity(unpinned)["pinned"] is False and not verdict.pinned_run(
        unpinned
    )
    pinned = results.read_run(fake_runs.archive(tmp_path, FIXED_RUN, venv_record=_pinned_record()))
    assert run_identity.venv_identity(pinned)["pinned"] is True
    assert run_identity.venv_identity(pinned)["pinned_by"] == "third_party/python/requirements.lock"
    # The pinned TVM with another tvm-ffi (or the reverse) is no lane's pair.
    mixed = _pinned_record()
    mixed["installed"]["apache-tvm-ffi"]["sha256"] = "c" * 64
    assert archive.pinned_of(archive.identity_of(mixed, "default")) == {"pinned": False}


def test_the_same_xpass_on_a_pinned_tvm_fails_as_a_stale_registry(tmp_path: Path) -> None:
    result = _verdict(tmp_path, FIXED_RUN, venv_record=_pinned_record())
    assert not result.passed and result.fixed == {}
    assert f"TARGET FAILED: {LABEL}" in result.problems
    assert "BAZEL EXIT 3: the invocation did not succeed" in result.problems
    assert any(
        p.startswith(f"XPASS: {LABEL} :: test_known[llvm] passed: deviation ffi-listed")
        and "on a lane's pinned TVM: the registry is stale" in p
        for p in result.problems
    ), result.problems


def test_a_run_that_cannot_show_its_wheels_is_held_as_pinned(tmp_path: Path) -> None:
    # No venv record at all, a record without sha256s, or no `pinned` field (an older archive).
    no_sha = fake_runs.venv_record(tvm_sha="")
    for record in (None, no_sha):
        result = _verdict(tmp_path, FIXED_RUN, venv_record=record)
        assert not result.passed and result.fixed == {}
        assert any("does not show to be unpinned" in p for p in result.problems)
    run_dir = fake_runs.archive(tmp_path, FIXED_RUN, venv_record=UNPINNED, exit_code=3)
    meta_path = Path(run_dir, results.ARCHIVE_META)
    meta = json.loads(meta_path.read_text())
    del meta["identity"]["pinned"]
    meta_path.write_text(json.dumps(meta))
    assert not verdict.verdict_of(results.read_run(run_dir), REGISTRY).passed


def test_a_fixed_xpass_beside_another_failed_case_of_its_target_fails(tmp_path: Path) -> None:
    broken = case_xml("test_ok[llvm]", "failed", "boom", properties=LLVM)
    result = _verdict(tmp_path, {LABEL: junit([broken, XPASS])}, venv_record=UNPINNED)
    assert not result.passed
    assert f"TARGET FAILED: {LABEL}" in result.problems
    assert "BAZEL EXIT 3: the invocation did not succeed" in result.problems
    assert any(p.startswith(f"FAILED: {LABEL} :: test_ok[llvm]") for p in result.problems)
    # The XPASS itself is still the deviation fixed, and no problem of its own.
    assert not any("test_known" in p for p in result.problems)


def test_an_xpass_under_a_deviation_that_does_not_list_the_case_fails(tmp_path: Path) -> None:
    for dev_id in ("ffi-elsewhere", "not-in-the-registry"):
        xpass = case_xml("test_known[llvm]", "xpass", f"deviation {dev_id}: x", properties=LLVM)
        result = _verdict(tmp_path, {LABEL: junit([OK, xpass])}, venv_record=UNPINNED)
        assert not result.passed and result.fixed == {}
        assert f"TARGET FAILED: {LABEL}" in result.problems
        assert "BAZEL EXIT 3: the invocation did not succeed" in result.problems
        assert any(
            p.startswith(f"XPASS: {LABEL} :: test_known[llvm] passed: deviation {dev_id}")
            and "is no fixed deviation" in p
            for p in result.problems
        ), result.problems


def test_a_timed_out_target_with_an_xpass_fails(tmp_path: Path) -> None:
    result = _verdict(
        tmp_path, FIXED_RUN, venv_record=UNPINNED, statuses={LABEL: "TIMEOUT"}, exit_code=3
    )
    assert not result.passed
    assert f"TARGET TIMEOUT: {LABEL}" in result.problems
    assert "BAZEL EXIT 3: the invocation did not succeed" in result.problems


def test_only_a_failed_exit_3_of_excused_targets_is_excused(tmp_path: Path) -> None:
    other = {"//pkg:b_test": junit([case_xml("test_b", "failed", "b is broken")])}
    result = _verdict(tmp_path, {**FIXED_RUN, **other}, venv_record=UNPINNED)
    assert "BAZEL EXIT 3: the invocation did not succeed" in result.problems
    assert "TARGET FAILED: //pkg:b_test" in result.problems
    assert f"TARGET FAILED: {LABEL}" not in result.problems  # that one is excused
    # Exit 1 (a build error) is never excused; nor is a suite error in the fixed target.
    built = _verdict(tmp_path, FIXED_RUN, venv_record=UNPINNED, exit_code=1)
    assert built.problems == ["BAZEL EXIT 1: the invocation did not succeed"]
    suite_error = junit([OK, XPASS]).replace(
        "</testsuite>", '<error message="fixture teardown failed"/></testsuite>'
    )
    errored = _verdict(tmp_path, {LABEL: suite_error}, venv_record=UNPINNED)
    assert f"TARGET FAILED: {LABEL}" in errored.problems and not errored.passed


def test_runs_per_test_an_xfail_in_any_run_means_not_fixed(tmp_path: Path) -> None:
    xfailed = junit(
        [OK, case_xml("test_known[llvm]", "xfailed", "deviation ffi-listed: x", properties=LLVM)]
    )
    result = _verdict(tmp_path, FIXED_RUN, venv_record=UNPINNED, extra_runs={LABEL: [xfailed]})
    assert not result.passed and result.fixed == {}
    assert any("in some of its runs only" in p for p in result.problems), result.problems


def test_the_report_shows_the_fixed_deviation_per_column(tmp_path: Path) -> None:
    import render_html
    import render_md

    run = results.read_run(
        fake_runs.archive(tmp_path, FIXED_RUN, venv_record=UNPINNED, exit_code=3)
    )
    item = report_model.Behaviour("001", "known", False, [(LABEL, "test_known[llvm]")])
    (cell,) = report_model.cells_of(run, [item], REGISTRY)
    assert cell.status == "passed" and "deviation ffi-listed fixed" in cell.outcomes[0].detail
    built = report_model.build([run], [], REGISTRY, every=True)
    (column,) = built["columns"]
    assert built["passed"] and column["verdict"]["fixed"] == {
        "ffi-listed": [f"{LABEL} :: test_known[llvm]"]
    }
    assert column["fixed"]["ffi-listed"]["cases"] == [f"{LABEL} :: test_known[llvm]"]
    assert "| `ffi-listed` | ffi-listed happens |" in render_md.render(built)
    assert "<th>fixed deviation</th>" in render_html.render(built)
    # The same run on a pinned TVM: the cell fails and no column lists it as fixed.
    pinned = results.read_run(
        fake_runs.archive(tmp_path, FIXED_RUN, venv_record=_pinned_record(), exit_code=3)
    )
    (cell,) = report_model.cells_of(pinned, [item], REGISTRY)
    assert cell.status == "failed"
    assert report_model.build([pinned], [], REGISTRY, every=True)["columns"][0]["fixed"] == {}


# --- End to end: a real strict xfail that passes, the real registry, the real verdict -------
def _a_listed_plain_case() -> tuple[str, str, str]:
    """(deviation id, label, case) of a real registry deviation that applies to the installed
    TVM and lists a plain (unparametrized) case: the inner test takes that case's name."""
    from tvm_conformance import deviation_registry, deviations

    for dev in deviation_registry.by_id().values():
        if dev.kind != "deviation" or not deviations.applies(dev.id):
            continue
        for entry in dev.tests:
            label, case = deviation_registry.parse_test(entry)
            if case.isidentifier() and case.startswith("test_"):
                return dev.id, label, case
    raise AssertionError("no deviation of the registry lists a plain case")


def test_end_to_end_a_wheel_that_fixes_a_deviation_reads_pass(tmp_path: Path) -> None:
    from tvm_conformance import deviations

    dev_id, label, case = _a_listed_plain_case()
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "test_inner.py").write_text(
        textwrap.dedent(
            f"""
            from tvm_conformance import deviations

            def test_a_behaviour_that_holds():
                pass

            @deviations.xfail({dev_id!r})
            def {case}():
                pass  # the planted wheel keeps the promised behaviour: the deviation is fixed
            """
        )
    )
    # The inner session's own settings (not the repo's pyproject.toml, wherever tmp is).
    (inner / "pytest.ini").write_text("[pytest]\n")
    python_dir = os.path.dirname(os.path.dirname(os.path.abspath(deviations.__file__)))
    path = os.pathsep.join(p for p in (python_dir, os.environ.get("PYTHONPATH", "")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", "pytest.ini", "-p", "no:cacheprovider"]
        # The kit's plugin, as in every tvm_py_test: it records the session's selection.
        + ["-p", "tvm_conformance.pytest_plugin"]
        + ["--junitxml=junit.xml", "-q", "test_inner.py"],
        cwd=inner,
        env=dict(os.environ, PYTHONPATH=path),
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # pytest: a strict XPASS fails
    assert "XPASS(strict)" in proc.stdout, proc.stdout
    xml = (inner / "junit.xml").read_text()
    runs = tmp_path / "runs"
    runs.mkdir()
    script = Path(verdict.__file__).with_name("verdict.py")
    lines = {}
    for name, record in (("unpinned", UNPINNED), ("pinned", _pinned_record())):
        run_dir = fake_runs.archive(runs, {label: xml}, venv_record=record, exit_code=3)
        proc = subprocess.run(
            [sys.executable, "-E", "-S", str(script), run_dir],
            capture_output=True,
            text=True,
            check=False,
        )
        lines[name] = (proc.returncode, proc.stdout.strip().splitlines()[-1], proc.stdout)
    code, line, out = lines["unpinned"]
    assert code == 0 and line.startswith("verdict: PASS"), out
    assert f"1 deviation fixed: {dev_id}, 0 problems" in line, out
    code, line, out = lines["pinned"]
    assert code == 1 and line.startswith("verdict: FAIL"), out
    assert "the registry is stale" in out
