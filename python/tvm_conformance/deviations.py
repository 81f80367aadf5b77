"""The pytest side of the deviation registry: the strict xfail that marks each test of one.

The registry itself (data only) is :mod:`tvm_conformance.deviation_registry`; a test that
checks a promised behaviour TVM does not keep is marked with :func:`xfail`::

    @deviations.xfail("ffi-keyerror-args")
    def test_python_key_error_through_cpp_keeps_args() -> None: ...

The mark is a strict xfail with ``raises=`` set to the exception the deviation produces, so:

* the test failing in the recorded way reports ``xfailed``;
* the test failing in another way (an import error, a compile error, a worse regression)
  reports ``failed``; a crash deviation accepts only its recorded signal
  (``crash_isolation.crashed_by(signal)``);
* the test passing (upstream fixed it) reports ``failed`` (strict XPASS): on a lane's pinned
  TVM the verdict names the deviation to remove; on a TVM no lane pins (a user's wheel) it
  reports the deviation as fixed (tools/verdict/verdict.py, ``fixed_deviations``).

The xfail reason starts with ``deviation <id>:`` so tools reading JUnit XML can tell which
deviation a case exercised (:data:`REASON_PREFIX`). Where a deviation does not apply to the
installed versions (its ``tvm`` / ``tvm_ffi`` specs), the test carries no xfail and must pass.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import cache

import pytest

from tvm_conformance import deviation_registry, pep440
from tvm_conformance.deviation_registry import KINDS, Deviation, by_id  # noqa: F401 (re-exported)

# JUnit XML carries the xfail reason; this prefix ties a case to its deviation id.
REASON_PREFIX = "deviation "
REASON_PATTERN = re.compile(r"deviation (?P<id>[a-z0-9][a-z0-9-]*):")


def __getattr__(name: str) -> object:
    """``deviations.DEVIATIONS`` reads the registry (so a patched registry is seen)."""
    if name == "DEVIATIONS":
        return deviation_registry.DEVIATIONS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class Versions:
    """Versions of the packages under test."""

    tvm: pep440.Version
    tvm_ffi: pep440.Version


@cache
def installed_versions() -> Versions:
    """Versions of the installed apache-tvm and apache-tvm-ffi distributions."""
    from importlib.metadata import version

    return Versions(
        deviation_registry.parse_version(version("apache-tvm")),
        deviation_registry.parse_version(version("apache-tvm-ffi")),
    )


def exception_class(dotted: str) -> type[BaseException]:
    """Resolve ``module.Class`` to the class; a bad name is a clear error."""
    module, _, name = dotted.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module or "builtins"), name)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"deviation raises={dotted!r} does not name a class: {err}") from None
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        raise ValueError(f"deviation raises={dotted!r} is not an exception class")
    return cls


def raises_of(dev: Deviation) -> type[BaseException]:
    """The exception the xfail accepts: ``dev.raises``, or for a crash its signal's subclass."""
    if dev.kind == "crash":
        from tvm_conformance import crash_isolation

        return crash_isolation.crashed_by(dev.signal)
    return exception_class(dev.raises)


def applies(dev_id: str) -> bool:
    """True if deviation ``dev_id`` is expected with the installed TVM / tvm-ffi."""
    versions = installed_versions()
    return deviation_registry.applies(by_id()[dev_id], versions.tvm, versions.tvm_ffi)


# The mark that carries a target-scoped deviation until the plugin knows each case's target.
ON_TARGETS_MARK = "tvm_deviation_on_targets"


def xfail(dev_id: str, *, targets: tuple[str, ...] = ()) -> pytest.MarkDecorator:
    """Strict xfail for a listed deviation, or a no-op mark where it does not apply.

    With ``targets`` (kinds or ids: ``("cuda",)``) only the cases of a test that takes the
    ``target`` fixture and runs on one of them carry the xfail; on other targets the test must
    pass. The plugin applies it per case at collection. Unknown ids fail at import time of the
    test module, naming the id.
    """
    mark = _xfail_mark(dev_id)
    if not targets:
        return mark
    return getattr(pytest.mark, ON_TARGETS_MARK)(*targets, mark=mark)


def _xfail_mark(dev_id: str) -> pytest.MarkDecorator:
    """The strict xfail of ``dev_id`` (no-op where the installed versions do not show it)."""
    table = by_id()
    if dev_id not in table:
        raise KeyError(
            f"unknown deviation id {dev_id!r}; list it in tvm_conformance.deviation_registry"
        )
    dev = table[dev_id]
    versions = installed_versions()
    if not deviation_registry.applies(dev, versions.tvm, versions.tvm_ffi):
        return pytest.mark.tvm_deviation_not_applicable(dev_id)
    return pytest.mark.xfail(
        strict=True,
        raises=raises_of(dev),
        reason=f"{REASON_PREFIX}{dev.id}: {dev.actual}",
    )
