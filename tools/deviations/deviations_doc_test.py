"""deviations_doc: docs/deviations.md is what the registry says, and lists every field."""

from pathlib import Path

import deviations_doc

from tvm_conformance import deviation_registry
from tvm_conformance.runfiles import rlocation


def test_checked_in_doc_is_current() -> None:
    doc = Path(rlocation("docs/deviations.md")).read_text(encoding="utf-8")
    assert doc == deviations_doc.render(deviation_registry.DEVIATIONS), (
        "docs/deviations.md is stale: ./bazelw run //tools/deviations:deviations_doc"
    )


def test_rows_carry_every_field_grouped_by_area() -> None:
    entries = (
        deviation_registry.Deviation(
            id="ffi-one",
            area="ffi",
            expected="KeyError keeps its args",
            actual="args | lost on tvm-ffi 0.1.14",
            raises="builtins.AssertionError",
            tests=("//python/tests/ffi:error_test :: test_one",),
            upstream="apache/tvm-ffi#1",
        ),
        deviation_registry.Deviation(
            id="relax-two",
            area="relax",
            expected="save_json works",
            actual="segfault",
            raises="builtins.RuntimeError",
            tests=("//a:b :: c", "//a:b :: d"),
            kind="crash",
            signal="SIGSEGV",
            lanes="ffi_next",
            tvm_ffi=">=0.1.15",
        ),
    )
    text = deviations_doc.render(entries)
    assert "## ffi\n" in text and "## relax\n" in text
    assert (
        "| `ffi-one` | deviation | all | KeyError keeps its args | args \\| lost on tvm-ffi "
        "0.1.14 (raises `builtins.AssertionError`) | `//python/tests/ffi:error_test :: test_one` "
        "| apache/tvm-ffi#1 |"
    ) in text
    assert "| `relax-two` | crash | ffi_next (tvm-ffi >=0.1.15) |" in text
    assert "segfault (raises `builtins.RuntimeError` for signal `SIGSEGV`)" in text
    assert "`//a:b :: c`; `//a:b :: d` | - |" in text


def test_empty_registry_says_so() -> None:
    assert "No deviations are listed." in deviations_doc.render(())
