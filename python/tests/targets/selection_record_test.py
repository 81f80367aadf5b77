"""The plugin records in the JUnit file what the session deselected beyond the design.

Inner pytest sessions with the plugin (pytester, in-process) run one file under each way of
narrowing a session: `-k`, `-m`, `--deselect`, PYTEST_ADDOPTS, a TVM_TEST_TARGETS other than
the variant's own. Each records `tvm_collected`, `tvm_deselected` and `tvm_selection` in the
`<testsuite>` properties, which tools/verdict reads (a deselection makes the run partial). A
variant's own filter (`--tvm-variant`) and Bazel's sharding (the runner's Shard) are the
design: they deselect without being counted.
"""

from __future__ import annotations

import importlib.util
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tvm_conformance.runfiles import rlocation

pytest_plugins = ["pytester"]

SOURCE = """
import pytest

@pytest.mark.parametrize("target", ["llvm", "cuda"])
def test_both(target):
    pass

@pytest.mark.slow
def test_slow():
    pass

def test_plain():
    pass
"""


def record(result: pytest.RunResult, xml: Path) -> dict[str, str]:
    """The selection properties of the inner session's JUnit file."""
    assert xml.exists(), result.stdout.str()
    props = ET.parse(xml).getroot().find("testsuite").find("properties")
    found = {p.get("name"): p.get("value") for p in props.iter("property")} if props else {}
    return {k: v for k, v in found.items() if k.startswith("tvm_")}


@pytest.mark.parametrize(
    ("args", "addopts", "expected"),
    [
        ((), None, {"tvm_collected": "4", "tvm_deselected": "0"}),
        (
            ("-k", "plain or slow"),
            None,
            {"tvm_collected": "4", "tvm_deselected": "2", "tvm_selection": "-k 'plain or slow'"},
        ),
        (
            ("-m", "not slow", "--strict-markers"),
            None,
            {"tvm_collected": "4", "tvm_deselected": "1", "tvm_selection": "-m 'not slow'"},
        ),
        (
            ("--deselect", "test_inner.py::test_plain"),
            None,
            {
                "tvm_collected": "4",
                "tvm_deselected": "1",
                "tvm_selection": "--deselect test_inner.py::test_plain",
            },
        ),
        (
            (),
            "-k plain",
            {
                "tvm_collected": "4",
                "tvm_deselected": "3",
                "tvm_selection": "-k plain; PYTEST_ADDOPTS=-k plain",
            },
        ),
    ],
)
def test_each_way_of_deselecting_is_recorded(
    run_inner, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, args, addopts, expected
) -> None:
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow\n")
    if addopts is not None:
        monkeypatch.setenv("PYTEST_ADDOPTS", addopts)
    else:
        monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    xml = pytester.path / "junit.xml"
    result = run_inner(SOURCE, f"--junitxml={xml}", *args, targets="llvm")
    assert record(result, xml) == {
        **expected,
        # The process got TVM_TEST_TARGETS=llvm and is no variant: that is a selection too.
        "tvm_selection": "; ".join(
            s for s in (expected.get("tvm_selection"), "TVM_TEST_TARGETS=llvm") if s
        ),
    }


def test_the_variants_own_targets_and_filter_are_not_counted(
    run_inner, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    xml = pytester.path / "junit.xml"
    # As the `_llvm` variant runs: TVM_TEST_TARGETS=llvm and --tvm-variant=llvm; the cuda
    # case and the two target-independent ones are the variant's design to drop.
    result = run_inner(SOURCE, f"--junitxml={xml}", "--tvm-variant=llvm", targets="llvm")
    result.assert_outcomes(passed=1, deselected=3)
    assert record(result, xml) == {"tvm_collected": "4", "tvm_deselected": "0"}
    # The same variant run with another target list is narrowed beyond the design.
    result = run_inner(SOURCE, f"--junitxml={xml}", "--tvm-variant=llvm", targets="llvm;cuda")
    assert record(result, xml)["tvm_selection"] == "TVM_TEST_TARGETS=llvm;cuda"


def test_sharding_is_not_counted(
    run_inner, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    spec = importlib.util.spec_from_file_location(
        "pytest_runner", rlocation("tools/build_defs/pytest_runner.py")
    )
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    xml = pytester.path / "junit.xml"
    pytester.makepyfile(test_inner=SOURCE)
    result = pytester.runpytest_inprocess(
        "-p",
        "tvm_conformance.pytest_plugin",
        f"--junitxml={xml}",
        "--tvm-variant=llvm",
        plugins=[runner.Shard(0, 2)],
    )
    result.assert_outcomes(passed=1, deselected=3)
    assert record(result, xml) == {"tvm_collected": "4", "tvm_deselected": "0"}
