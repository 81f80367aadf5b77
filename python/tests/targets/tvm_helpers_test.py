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


# Kinds whose device is absent wherever this kit runs with a wheel that does not build their
# runtime; the test below needs one of them.
_ABSENT_DEVICE_CANDIDATES = ("metal", "rocm", "vulkan", "opencl")


def test_a_runtime_without_its_device_is_enabled_but_not_runnable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`runnable` is `enabled and the device exists`, not `enabled` alone.

    A machine with a driver but no device (a CUDA driver with `CUDA_VISIBLE_DEVICES=` empty, an
    OpenCL ICD with no platform) has the runtime built and the device absent. This wheel builds
    no GPU runtime and this machine may have no driver, so the runtime's presence is stated
    here (`tvm.runtime.enabled` answers True) while the device query stays TVM's own: the
    helpers must then call the target enabled and not runnable, and the plugin must skip it
    naming the absent device. The GPU runner's real case is the next test.
    """
    from tvm.testing import utils

    from tvm_conformance import targets

    absent = [k for k in _ABSENT_DEVICE_CANDIDATES if not tvm.device_from_target(k).exist]
    assert absent, f"every one of {_ABSENT_DEVICE_CANDIDATES} has a device here"
    kind = absent[0]
    monkeypatch.setattr(tvm.runtime, "enabled", lambda target: True)
    monkeypatch.setenv("TVM_TEST_TARGETS", f"llvm;{kind}")
    records = {r["target_kind"]: r for r in utils._get_targets()}
    assert records[kind]["is_enabled"] is True
    assert records[kind]["is_runnable"] is False
    assert not tvm.testing.device_enabled(kind)
    assert [str(t) for t, _ in tvm.testing.enabled_targets()] == ["llvm"]
    targets._describe.cache_clear()
    try:
        info = targets.describe(kind)
    finally:
        targets._describe.cache_clear()
    assert not info.runnable
    assert info.reason == f"no {tvm.device_from_target(kind)} device present"
