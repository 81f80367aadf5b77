"""TVM's own target helpers that the plugin relies on, called the ways users write them.

`tvm.testing.device_enabled`, `enabled_targets`, `tvm.runtime.enabled` and `TVM_TEST_TARGETS`
parsing take a kind name, a string with options (`device_enabled("llvm -mcpu=generic")`; TVM
0.27's `Target` no longer parses that form), a `tvm.target.Target` or a JSON-object entry.
Each form must give the same answer as the plain kind, and "runnable" must mean "runtime built
and a device present": the expected values come from the definition (`tvm.runtime.enabled(kind)
and tvm.device_from_target(kind).exist`), not from the
helper under test.
"""

import pytest
import tvm
import tvm.testing

LLVM_WITH_OPTIONS = {"kind": "llvm", "mcpu": "generic"}


def _runnable(kind: str) -> bool:
    return bool(tvm.runtime.enabled(kind)) and bool(tvm.device_from_target(kind).exist)


@pytest.mark.parametrize("kind", ["llvm", "cuda", "opencl", "vulkan", "metal"])
def test_runtime_enabled_agrees_for_every_form(kind: str) -> None:
    plain = tvm.runtime.enabled(kind)
    assert tvm.runtime.enabled({"kind": kind}) == plain
    assert tvm.runtime.enabled({"kind": kind, "device": "mali"}) == plain
    if kind in ("llvm", "cuda"):
        assert tvm.runtime.enabled(tvm.target.Target(kind)) == plain


def test_llvm_runtime_is_enabled_in_every_form() -> None:
    assert tvm.runtime.enabled("llvm")
    assert tvm.runtime.enabled({"kind": "llvm"})
    assert tvm.runtime.enabled(tvm.target.Target(LLVM_WITH_OPTIONS))


@pytest.mark.parametrize("kind", ["llvm", "cuda", "opencl", "vulkan"])
def test_device_enabled_means_runtime_built_and_device_present(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TVM_TEST_TARGETS", f"llvm;{kind}")
    want = _runnable(kind)
    assert tvm.testing.device_enabled(kind) == want
    assert tvm.testing.device_enabled({"kind": kind}) == want
    if kind == "llvm":
        assert want
        assert tvm.testing.device_enabled("llvm -mcpu=generic")
        assert tvm.testing.device_enabled(tvm.target.Target(LLVM_WITH_OPTIONS))
    paired = {str(t) for t, _ in tvm.testing.enabled_targets()}
    assert ("llvm" in paired) and ((kind in paired) == want)


def test_json_object_entries_are_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TVM_TEST_TARGETS", 'llvm; {"kind": "llvm", "mcpu": "generic"}; llvm')
    targets = tvm.testing.enabled_targets()
    assert [t for t, _ in targets] == ["llvm", LLVM_WITH_OPTIONS]
    assert all(dev.dlpack_device_type() == tvm.cpu().dlpack_device_type() for _, dev in targets)
