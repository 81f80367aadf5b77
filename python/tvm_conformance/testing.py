"""Decorators for tests that run once per TVM target (seed 002).

The decorators only attach pytest marks; ``tvm_conformance.pytest_plugin``
turns them into parameters, skips and xfails at collection time, so nothing
here imports TVM or probes devices when a test module is imported.

    @parametrize_targets("llvm", "cuda")   # explicit list
    def test_add(target: str, dev) -> None: ...

    @parametrize_targets                   # bare: TVM_TEST_TARGETS, same as no decorator
    def test_sub(target: str, dev) -> None: ...

    @exclude_targets("cuda")
    @known_failing_targets("vulkan", reason="...")
    def test_mul(target: str, dev) -> None: ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from tvm_conformance import targets as _targets

F = TypeVar("F", bound=Callable[..., Any])

# Marker names; the plugin registers them so --strict-markers accepts them.
TARGETS_MARK = "tvm_targets"
EXCLUDE_MARK = "tvm_exclude_targets"
KNOWN_FAILING_MARK = "tvm_known_failing_targets"
REQUIRES_MARK = "tvm_requires"
VARIANT_MARK = "tvm_variant"
GPU_MARK = "gpu"


def parametrize_targets(*targets: Any) -> Any:
    """Run the test once per target.

    With arguments (``"llvm"``, ``"cuda"``, JSON-style dicts), exactly those
    targets, each its own test id; one that cannot run here is skipped with a
    reason. Used bare, the targets in force (``TVM_TEST_TARGETS``), which any
    test taking ``target`` or ``dev`` gets anyway.
    """
    if len(targets) == 1 and callable(targets[0]) and not isinstance(targets[0], (str, dict)):
        return getattr(pytest.mark, TARGETS_MARK)(targets[0])
    if not targets:
        return getattr(pytest.mark, TARGETS_MARK)
    return getattr(pytest.mark, TARGETS_MARK)(*_targets.iter_names(targets))


def exclude_targets(*targets: Any) -> pytest.MarkDecorator:
    """Never generate these targets (kinds, ids or entries) for the test.

    For targets the test cannot support at all; use known_failing_targets for
    a target that should work but does not yet.
    """
    return getattr(pytest.mark, EXCLUDE_MARK)(*_targets.iter_names(targets))


def known_failing_targets(
    *targets: Any, reason: str | None = None, strict: bool | None = True
) -> pytest.MarkDecorator:
    """Expect the test to fail on these targets (xfail, strict by default).

    ``strict=None`` leaves strictness to the ini's ``xfail_strict`` (TVM's old behaviour).
    """
    return getattr(pytest.mark, KNOWN_FAILING_MARK)(
        *_targets.iter_names(targets), reason=reason, strict=strict
    )


def compiles_for(kind: str) -> pytest.MarkDecorator:
    """Mark a test that compiles for ``kind`` without running on it (codegen checks).

    It takes no ``target`` and needs no device, but belongs to ``kind``'s Bazel variant
    (``<name>_cuda``, under --config=cuda), not to the target-independent one.
    """
    return getattr(pytest.mark, VARIANT_MARK)(kind)


def uses_gpu(func: F) -> F:
    """Mark a test that uses a GPU when one is present (``-m gpu``)."""
    return getattr(pytest.mark, GPU_MARK)(func)


def requires_runtime(kind: str) -> Callable[[F], F]:
    """Skip unless the ``kind`` runtime is built in, has a device and is targeted."""

    def decorate(func: F) -> F:
        func = getattr(pytest.mark, REQUIRES_MARK)(kind)(func)
        if kind == "gpu" or kind in _targets.GPU_RUNTIMES or kind == "nvptx":
            func = uses_gpu(func)
        return func

    decorate.__name__ = f"requires_{kind}"
    decorate.__doc__ = f"Skip the test unless {kind} can run here."
    return decorate


requires_gpu = requires_runtime("gpu")
requires_llvm = requires_runtime("llvm")
requires_cuda = requires_runtime("cuda")
requires_nvptx = requires_runtime("nvptx")
requires_vulkan = requires_runtime("vulkan")
requires_opencl = requires_runtime("opencl")
requires_metal = requires_runtime("metal")
requires_rocm = requires_runtime("rocm")
requires_hexagon = requires_runtime("hexagon")


def enabled_targets() -> list[tuple[str, Any]]:
    """``(target, device)`` for each target in force that can run here.

    Old style (a loop inside one test); prefer the ``target``/``dev`` fixtures.
    """
    import tvm

    runnable = _targets.from_environment().runnable
    return [(t.entry, tvm.device_from_target(t.entry)) for t in runnable]


__all__ = [
    "compiles_for",
    "enabled_targets",
    "exclude_targets",
    "known_failing_targets",
    "parametrize_targets",
    "requires_cuda",
    "requires_gpu",
    "requires_hexagon",
    "requires_llvm",
    "requires_metal",
    "requires_nvptx",
    "requires_opencl",
    "requires_rocm",
    "requires_runtime",
    "requires_vulkan",
    "uses_gpu",
]


def device_of(tensor: Any) -> tuple[int, int] | None:
    """(DLPack device type, index) of a TVM or torch tensor; None for anything else."""
    if hasattr(tensor, "__dlpack_device__"):
        kind, index = tensor.__dlpack_device__()
        return int(kind), int(index)
    return None


def assert_on_device(value: Any, dev: Any, require_tensor: bool = True) -> None:
    """Assert that every tensor in ``value`` (a TVM or torch tensor, or nested tuples / lists of
    them, as a Relax VM returns) lives on ``dev`` (a ``tvm.runtime.Device``).

    The cuda cases call it on what they check, so a result computed or left on the CPU fails
    the case instead of passing under a cuda name. Raises AssertionError naming both devices;
    a value holding no tensor at all is an error too (nothing was checked) unless
    ``require_tensor`` is False.
    """
    want = (int(dev.dlpack_device_type()), int(dev.index))
    seen = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
            continue
        got = device_of(item)
        if got is None:
            # A Relax VM tuple is an FFI Array: a sequence, not a list.
            sequence = hasattr(item, "__len__") and hasattr(item, "__getitem__")
            if sequence and not isinstance(item, (str, bytes, dict)):
                stack.extend(item[i] for i in range(len(item)))
            continue
        seen += 1
        if got != want:
            raise AssertionError(
                f"a tensor is on device {got} (DLPack type, index), not on {dev} {want}: "
                "the case ran somewhere other than its target's device"
            )
    if seen == 0 and require_tensor:
        raise AssertionError(f"assert_on_device: no tensor in {type(value).__name__} to check")
