"""What a run left out, wherever it was left out, and the gates that refuse a partial run.

A run is partial when Bazel's options narrow it (the suite, patterns, filters, and the test
environment variables that select cases: `--test_env=PYTEST_ADDOPTS=...`, `GTEST_FILTER`,
`TVM_TEST_TARGETS`) and when a test process deselected cases itself, as its JUnit file records
(tvm_conformance.selection_record for pytest, the kit's gtest main for googletest). Bazel's
sharding and a variant's own targets are the design, never deselection. `--require-whole`
turns a partial PASS into exit 1 naming what was left out; `--allow-partial=<why>` lets it
pass, saying why.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import fake_runs
import pytest
import results
import run_identity
import verdict
from fake_runs import case_xml, junit

REGISTRY = fake_runs.Registry()
THREE = [case_xml("test_a"), case_xml("test_b"), case_xml("test_c")]


def gtest_xml(filter_: str | None) -> str:
    """A googletest report of one passing case, with the filter its main recorded (None: a
    main that records none)."""
    attr = "" if filter_ is None else f' gtest_filter="{filter_}"'
    return (
        f'<?xml version="1.0"?><testsuites tests="1" name="AllTests"{attr}>'
        '<testsuite name="Ffi" tests="1"><testcase name="Runs" status="run" result="completed"'
        ' classname="Ffi"/></testsuite></testsuites>'
    )


def _run(tmp_path: Path, tests: dict[str, str], **kwargs) -> results.Run:
    return results.read_run(fake_runs.archive(tmp_path, tests, **kwargs))


def test_a_pytest_addopts_k_run_is_partial_naming_the_target(tmp_path: Path) -> None:
    # What the plugin records for `--test_env=PYTEST_ADDOPTS=-k test_a` (2 of 3 deselected),
    # and the option itself on the command line.
    recorded = {
        "tvm_collected": "3",
        "tvm_deselected": "2",
        "tvm_selection": "-k test_a; PYTEST_ADDOPTS=-k test_a",
    }
    run = _run(
        tmp_path,
        {"//pkg:a_test": junit([THREE[0]], recorded)},
        flags=["--test_env=PYTEST_ADDOPTS=-k test_a"],
    )
    assert run_identity.partial(run) == [
        "--test_env=PYTEST_ADDOPTS=-k test_a",
        "//pkg:a_test: 2 of 3 cases deselected (-k test_a; PYTEST_ADDOPTS=-k test_a)",
    ]
    assert "--test_env=PYTEST_ADDOPTS=-k test_a" in run_identity.identity_key(run)
    result = verdict.verdict_of(run, REGISTRY)
    assert result.passed and result.line().startswith("verdict: PARTIAL PASS (PARTIAL: ")


def test_a_deselection_inside_the_process_alone_is_seen(tmp_path: Path) -> None:
    # No option on Bazel's command line (a conftest, an ini, an environment Bazel inherits):
    # the JUnit record alone makes the run partial.
    recorded = {"tvm_collected": "3", "tvm_deselected": "1", "tvm_selection": "-m not slow"}
    run = _run(tmp_path, {"//pkg:a_test": junit(THREE[:2], recorded)})
    assert run_identity.partial(run) == ["//pkg:a_test: 1 of 3 cases deselected (-m not slow)"]


def test_another_tvm_test_targets_is_partial_even_without_deselection(tmp_path: Path) -> None:
    # Cases of the other targets skip rather than deselect; the record names the variable.
    recorded = {
        "tvm_collected": "3",
        "tvm_deselected": "0",
        "tvm_selection": "TVM_TEST_TARGETS=cuda",
    }
    run = _run(
        tmp_path,
        {"//pkg:a_test": junit(THREE, recorded)},
        flags=["--test_env=TVM_TEST_TARGETS=cuda"],
    )
    assert run_identity.partial(run) == [
        "--test_env=TVM_TEST_TARGETS=cuda",
        "//pkg:a_test: 0 of 3 cases deselected (TVM_TEST_TARGETS=cuda)",
    ]


@pytest.mark.parametrize(
    ("filter_", "partial"),
    [
        ("Ffi.*", ["//cpp:ffi_test: googletest filter 'Ffi.*'"]),
        ("*", []),
        (None, ["//cpp:ffi_test: selection not recorded (googletest without the kit's main)"]),
    ],
)
def test_a_googletest_filter_is_partial_naming_the_target(
    tmp_path: Path, filter_: str | None, partial: list[str]
) -> None:
    run = _run(tmp_path, {"//cpp:ffi_test": gtest_xml(filter_)})
    assert run_identity.partial(run) == partial


def test_gtest_filter_on_the_command_line_is_a_selection(tmp_path: Path) -> None:
    run = _run(
        tmp_path,
        {"//cpp:ffi_test": gtest_xml("Ffi.*")},
        flags=["--test_env=GTEST_FILTER=Ffi.*", "--test_env=HOME=/x"],
    )
    # Only the selecting variable: another --test_env is not a selection.
    assert run_identity.selection(run) == ["--test_env=GTEST_FILTER=Ffi.*"]
    assert run_identity.partial(run)[0] == "--test_env=GTEST_FILTER=Ffi.*"


def test_sharding_and_the_variants_own_filter_are_not_deselection(tmp_path: Path) -> None:
    # What the plugin writes for a shard of a variant: everything collected, nothing of its
    # own deselected (the shard's and the variant's deselection are the design).
    recorded = {"tvm_collected": "9", "tvm_deselected": "0"}
    run = _run(tmp_path, {"//pkg:a_test_llvm": junit(THREE, recorded)})
    assert run_identity.partial(run) == []


def test_a_pytest_target_without_the_record_is_partial(tmp_path: Path) -> None:
    run = _run(tmp_path, {"//pkg:a_test": junit(THREE, recorded=False)})
    assert run_identity.partial(run) == [
        "//pkg:a_test: selection not recorded (pytest without the kit's plugin)"
    ]


def test_a_file_bazel_wrote_records_nothing_and_needs_nothing(tmp_path: Path) -> None:
    bazels_own = (
        '<?xml version="1.0"?><testsuites><testsuite name="//tools:lint_test" tests="1">'
        '<testcase name="//tools:lint_test" status="run"/></testsuite></testsuites>'
    )
    assert run_identity.partial(_run(tmp_path, {"//tools:lint_test": bazels_own})) == []


# --- the gates ------------------------------------------------------------------------------
PARTIAL_RUN = {"//pkg:a_test": junit([THREE[0]], {"tvm_collected": "3", "tvm_deselected": "2"})}


def _cli(
    run_dir: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """verdict.py as ./bazelw runs it: standard library only."""
    script = Path(verdict.__file__).with_name("verdict.py")
    environ = {k: v for k, v in os.environ.items() if k != verdict.REQUIRE_WHOLE_ENV}
    return subprocess.run(
        [sys.executable, "-E", "-S", str(script), *args, run_dir],
        capture_output=True,
        text=True,
        env={**environ, **(env or {})},
    )


def test_require_whole_turns_a_partial_pass_into_exit_1_with_the_reason(tmp_path: Path) -> None:
    run_dir = fake_runs.archive(tmp_path, PARTIAL_RUN)
    plain = _cli(run_dir)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert plain.stdout.strip().splitlines()[-1].startswith("verdict: PARTIAL PASS (")
    for how in (("--require-whole",), ()):
        env = {} if how else {verdict.REQUIRE_WHOLE_ENV: "1"}
        gated = _cli(run_dir, *how, env=env)
        assert gated.returncode == 1, gated.stdout
        assert (
            "verdict: PARTIAL: the run is not the whole suite and the whole suite is required "
            "(--require-whole): //pkg:a_test: 2 of 3 cases deselected"
        ) in gated.stdout
        assert gated.stdout.strip().splitlines()[-1].startswith("verdict: FAIL (")


def test_allow_partial_lets_it_pass_saying_why(tmp_path: Path) -> None:
    run_dir = fake_runs.archive(tmp_path, PARTIAL_RUN)
    allowed = _cli(
        run_dir, "--allow-partial=a subset, for time", env={verdict.REQUIRE_WHOLE_ENV: "1"}
    )
    assert allowed.returncode == 0, allowed.stdout
    assert "verdict: partial run allowed (--allow-partial): a subset, for time" in allowed.stdout
    # A reason is required; the two options exclude each other: usage errors, exit 2.
    assert _cli(run_dir, "--allow-partial=").returncode == 2
    assert _cli(run_dir, "--allow-partial=x", "--require-whole").returncode == 2


def test_a_whole_run_passes_the_gate(tmp_path: Path) -> None:
    run_dir = fake_runs.archive(tmp_path, {"//pkg:a_test": junit(THREE)})
    whole = _cli(run_dir, "--require-whole")
    assert whole.returncode == 0, whole.stdout
    assert whole.stdout.strip().splitlines()[-1].startswith("verdict: PASS (")


def test_a_run_that_cannot_be_read_is_one_line_and_exit_2(tmp_path: Path) -> None:
    missing = _cli(str(tmp_path / "no-such-run"))
    assert missing.returncode == 2
    assert missing.stderr.strip().startswith("verdict: cannot read the run: ")
    assert len(missing.stderr.strip().splitlines()) == 1 and "Traceback" not in missing.stderr
