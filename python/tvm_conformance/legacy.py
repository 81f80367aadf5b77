"""Drop-in names for code written against ``tvm.testing``'s removed pytest helpers.

TVM removed ``tvm.testing.plugin``, ``parametrize_targets``, ``exclude_targets``,
``known_failing_targets``, ``uses_gpu`` and the ``requires_*`` decorators in 2026. Code that
still imports them (``from tvm.testing.utils import requires_cuda``) can import them from here
instead; see docs/migrating_from_tvm_testing.md for what differs.

Everything here is a thin layer over :mod:`tvm_conformance.testing`: it only attaches marks,
and :mod:`tvm_conformance.pytest_plugin` (loaded by the package's ``pytest11`` entry point)
turns them into parameters, skips and xfails at collection time. What this module adds is the
old calling conventions: ``requires_*`` objects that decorate bare or with
``support_required=``, and give their marks for ``pytest.param(..., marks=...)``;
``requires_package``; ``known_failing_targets`` without ``reason`` / ``strict``; and the
per-feature marks (``cuda``, ``llvm``...) that ``-m`` selected on.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import pytest

from tvm_conformance import testing as _testing
from tvm_conformance.testing import exclude_targets, parametrize_targets, uses_gpu

F = TypeVar("F", bound=Callable[..., Any])

SUPPORT_LEVELS = ("compile-and-run", "compile-only", "optional")

# The per-feature marks that the old requires_* decorators added (so `-m cuda` keeps working);
# the plugin registers them for --strict-markers.
FEATURE_MARKERS: dict[str, str] = {
    "llvm": "uses LLVM (tvm_conformance.legacy.requires_llvm)",
    "cuda": "uses CUDA (tvm_conformance.legacy.requires_cuda)",
    "nvptx": "uses NVPTX (tvm_conformance.legacy.requires_nvptx)",
    "rocm": "uses ROCm (tvm_conformance.legacy.requires_rocm)",
    "metal": "uses Metal (tvm_conformance.legacy.requires_metal)",
    "vulkan": "uses Vulkan (tvm_conformance.legacy.requires_vulkan)",
    "opencl": "uses OpenCL (tvm_conformance.legacy.requires_opencl)",
}


class Requirement:
    """A feature a test needs: usable as ``@req``, ``@req(support_required=...)`` and
    ``pytest.param(..., marks=req.marks())``.

    ``kind`` is what the plugin checks (:func:`tvm_conformance.targets.requirement_skip_reason`:
    runtime built in, device present, kind among the session's targets); ``labels`` are the
    plain marks it adds for ``-m`` selection (``gpu``, ``cuda``...).
    """

    def __init__(self, kind: str, labels: Iterable[str]) -> None:
        self.kind = kind
        self.labels = tuple(labels)
        self.__name__ = f"requires_{kind}"

    def marks(self, support_required: str = "compile-and-run") -> list[pytest.MarkDecorator]:
        """The marks this requirement applies, for ``pytest.param(marks=...)``.

        ``compile-and-run``: skip unless it can run here; ``compile-only``: skip unless TVM can
        compile for it and it is among the session's targets; ``optional``: labels only.
        """
        if support_required not in SUPPORT_LEVELS:
            raise ValueError(
                f"support_required must be one of {', '.join(SUPPORT_LEVELS)}, "
                f"not {support_required!r}"
            )
        labels = [getattr(pytest.mark, label) for label in self.labels]
        if support_required == "optional":
            return labels
        requires = getattr(pytest.mark, _testing.REQUIRES_MARK)
        if support_required == "compile-only":
            return [requires(self.kind, compile_only=True), *labels]
        return [requires(self.kind), *labels]

    def __call__(self, func: F | None = None, *, support_required: str = "compile-and-run") -> Any:
        """Mark ``func``; without ``func``, return the decorator (``@req(support_required=..)``)."""
        marks = self.marks(support_required)

        def decorate(target: F) -> F:
            for mark in marks:
                target = mark(target)
            return target

        return decorate if func is None else decorate(func)

    def __repr__(self) -> str:
        return f"<{self.__name__}: marks {', '.join(self.labels)}>"


def _requirement(kind: str, *labels: str) -> Requirement:
    return Requirement(kind, labels)


# Labels as TVM's requires_* had them: a GPU runtime also carries `gpu`; nvptx also llvm/cuda.
requires_llvm = _requirement("llvm", "llvm")
requires_gpu = _requirement("gpu", _testing.GPU_MARK)
requires_cuda = _requirement("cuda", _testing.GPU_MARK, "cuda")
requires_nvptx = _requirement("nvptx", _testing.GPU_MARK, "llvm", "cuda", "nvptx")
requires_rocm = _requirement("rocm", _testing.GPU_MARK, "rocm")
requires_metal = _requirement("metal", _testing.GPU_MARK, "metal")
requires_vulkan = _requirement("vulkan", _testing.GPU_MARK, "vulkan")
requires_opencl = _requirement("opencl", _testing.GPU_MARK, "opencl")


class PackageRequirement:
    """``requires_package(*names)``: skip unless every package imports (checked once, when
    the decorator is made, as TVM's did)."""

    def __init__(self, packages: tuple[str, ...]) -> None:
        if not packages or not all(isinstance(p, str) and p for p in packages):
            raise TypeError("requires_package takes one or more package names")
        self.packages = packages

    def marks(self) -> list[pytest.MarkDecorator]:
        """One ``skipif`` per package, skipping with ``Cannot import '<name>'``."""
        return [
            pytest.mark.skipif(not _importable(name), reason=f"Cannot import '{name}'")
            for name in self.packages
        ]

    def __call__(self, func: F) -> F:
        """Mark ``func``."""
        for mark in self.marks():
            func = mark(func)
        return func


def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def requires_package(*packages: str) -> PackageRequirement:
    """Skip the test unless each of ``packages`` can be imported."""
    return PackageRequirement(packages)


def known_failing_targets(*targets: Any) -> pytest.MarkDecorator:
    """Expect the test to fail on these targets.

    As in TVM, the xfail is not strict unless the ini sets ``xfail_strict``; use
    :func:`tvm_conformance.testing.known_failing_targets` for a reason and strict xfails.
    """
    return _testing.known_failing_targets(*targets, reason="Known failing test", strict=None)


__all__ = [
    "FEATURE_MARKERS",
    "PackageRequirement",
    "Requirement",
    "exclude_targets",
    "known_failing_targets",
    "parametrize_targets",
    "requires_cuda",
    "requires_gpu",
    "requires_llvm",
    "requires_metal",
    "requires_nvptx",
    "requires_opencl",
    "requires_package",
    "requires_rocm",
    "requires_vulkan",
    "uses_gpu",
]
