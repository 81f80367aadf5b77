"""pytest plugin: run TVM tests once per target (seed 002).

Load it with ``-p tvm_conformance.pytest_plugin`` (``tvm_py_test`` does).

* Fixtures ``target`` (the target as a string, e.g. ``"llvm"``) and ``dev``
  (its ``tvm.runtime.Device``). A test taking either is parametrized over the
  targets in force, one test id each (``[llvm]``, ``[cuda]``).
* Targets in force: ``--tvm-targets``, else ``TVM_TEST_TARGETS``, else the
  ``tvm_test_targets`` ini value, else ``tvm.testing.DEFAULT_TEST_TARGETS``
  (a ``;``-separated list; JSON objects allowed). An entry that is not a TVM
  target is a usage error naming it.
* A target that cannot run here (runtime not built in, no device) is
  reported skipped with a reason naming it. When no listed target can run,
  tests fall back to ``llvm`` (``--tvm-target-fallback=none`` turns that off).
* GPU targets get the ``gpu`` mark, so ``-m gpu`` / ``-m 'not gpu'`` select
  them. The decorators in :mod:`tvm_conformance.testing` add marks that this
  plugin evaluates; upstream's ``pytest.mark.parametrize("target", [...])``
  keeps its own list and gets the same skip and ``gpu`` marks.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from tvm_conformance import targets as _targets
from tvm_conformance import testing as _testing

_SELECTION = pytest.StashKey["_targets.TargetSelection"]()
_SOURCE = pytest.StashKey["tuple[str | None, str]"]()
_MARKERS = (
    f"{_testing.GPU_MARK}: uses a GPU if one is present (select with -m gpu / -m 'not gpu')",
    f"{_testing.TARGETS_MARK}(*targets): run once per listed target; no arguments: "
    "the targets in force (tvm_conformance.testing.parametrize_targets)",
    f"{_testing.EXCLUDE_MARK}(*targets): never generate these targets "
    "(tvm_conformance.testing.exclude_targets)",
    f"{_testing.KNOWN_FAILING_MARK}(*targets, reason=None, strict=True): xfail on these "
    "targets (tvm_conformance.testing.known_failing_targets)",
    f"{_testing.REQUIRES_MARK}(kind): skip unless the runtime can run here "
    "(tvm_conformance.testing.requires_<kind>)",
    "tvm_deviation_not_applicable(id): a listed deviation that the installed TVM does not "
    "show; the test must pass (tvm_conformance.deviations.xfail)",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--tvm-targets`` and ``--tvm-target-fallback`` with ini twins."""
    group = parser.getgroup("tvm-targets", "TVM target parametrization (seed 002)")
    group.addoption(
        "--tvm-targets",
        dest="tvm_targets",
        default=None,
        metavar="LIST",
        help=f"';'-separated TVM targets; overrides {_targets.ENV_VAR} and the ini value.",
    )
    group.addoption(
        "--tvm-target-fallback",
        dest="tvm_target_fallback",
        default=None,
        choices=("llvm", "none"),
        help="what runs when no listed target can: llvm (default) or none (all skip).",
    )
    parser.addini(
        "tvm_test_targets",
        f"';'-separated TVM targets used when {_targets.ENV_VAR} is unset.",
        default="",
    )
    parser.addini("tvm_target_fallback", "llvm (default) or none.", default="llvm")


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers and export the target list for ``tvm.testing``.

    When the list comes from the option or ini file it is written to
    ``TVM_TEST_TARGETS`` so ``tvm.testing.device_enabled`` agrees with it.
    """
    for line in _MARKERS:
        config.addinivalue_line("markers", line)
    text, source = _target_text(config)
    config.stash[_SOURCE] = (text, source)
    if text is not None:
        os.environ[_targets.ENV_VAR] = text


def _target_text(config: pytest.Config) -> tuple[str | None, str]:
    option = config.getoption("tvm_targets", None)
    if option is not None:
        return option, "--tvm-targets"
    if os.environ.get(_targets.ENV_VAR, "").strip():
        return os.environ[_targets.ENV_VAR], _targets.ENV_VAR
    ini = str(config.getini("tvm_test_targets") or "").strip()
    if ini:
        return ini, "ini tvm_test_targets"
    return None, _targets.ENV_VAR


def _fallback(config: pytest.Config) -> bool:
    value = config.getoption("tvm_target_fallback", None) or config.getini("tvm_target_fallback")
    value = str(value).strip().lower()
    if value not in ("llvm", "none"):
        raise pytest.UsageError(f"tvm_target_fallback must be 'llvm' or 'none', not {value!r}")
    return value == "llvm"


def selection(config: pytest.Config) -> _targets.TargetSelection:
    """The session's targets, resolved once; a bad entry is a usage error."""
    if _SELECTION not in config.stash:
        text, source = config.stash[_SOURCE]
        try:
            config.stash[_SELECTION] = _targets.select(text, source, _fallback(config))
        except _targets.TargetSpecError as err:
            raise pytest.UsageError(str(err)) from None
    return config.stash[_SELECTION]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Resolve the targets before collection, so a bad entry stops the run early."""
    selection(session.config)


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Show the targets in force, where they came from and which cannot run."""
    sel = selection(config)
    origin = f"{sel.source}={sel.raw!r}" if sel.raw else sel.source
    lines = [f"tvm targets: {', '.join(t.id for t in sel.active)} (from {origin})"]
    if sel.fallback is not None:
        lines.append(
            f"tvm targets: fell back to {sel.fallback.id}: none of the listed targets can run here"
        )
    for t in sel.listed:
        if not t.runnable:
            lines.append(f"tvm targets: {t.id} cannot run here: {t.reason}")
    return lines


def _direct_target_parametrize(metafunc: pytest.Metafunc) -> bool:
    """True if the test parametrizes ``target`` itself (upstream's pattern)."""
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0] if mark.args else mark.kwargs.get("argnames", ())
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",")]
        if "target" in names:
            return True
    return False


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``target`` for tests that take ``target`` or ``dev``.

    An explicit ``parametrize_targets`` list wins over the targets in force;
    ``exclude_targets`` drops entries. Marks are added per item later, in
    :func:`pytest_collection_modifyitems`.
    """
    if "target" not in metafunc.fixturenames or _direct_target_parametrize(metafunc):
        return
    mark = metafunc.definition.get_closest_marker(_testing.TARGETS_MARK)
    if mark is not None and mark.args:
        where = f"parametrize_targets of {metafunc.definition.nodeid}"
        try:
            chosen = _targets.describe_all(_targets.iter_names(mark.args), where)
        except _targets.TargetSpecError as err:
            pytest.fail(str(err), pytrace=False)
    else:
        chosen = list(selection(metafunc.config).active)
    excluded = [
        name
        for m in metafunc.definition.iter_markers(_testing.EXCLUDE_MARK)
        for name in _targets.iter_names(m.args)
    ]
    kept = [t for t in chosen if not any(t.matches(name) for name in excluded)]
    if chosen and not kept:
        names = ", ".join(t.id for t in chosen)
        reason = f"exclude_targets removes every target in force ({names})"
        metafunc.parametrize(
            "target", [pytest.param(None, marks=pytest.mark.skip(reason=reason))], ids=["no-target"]
        )
        return
    metafunc.parametrize("target", [t.entry for t in kept], ids=[t.id for t in kept])


def _item_target(item: pytest.Item) -> _targets.TestTarget | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None or "target" not in callspec.params:
        return None
    try:
        return _targets.describe(callspec.params["target"], "target parameter")
    except _targets.TargetSpecError:
        return None  # not a TVM target string: leave the test alone


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add ``gpu``, skip and xfail marks per target, and requires_* skips.

    Runs before pytest's own ``-m`` filtering so the ``gpu`` mark counts.
    """
    sel = selection(config)
    for item in items:
        target = _item_target(item)
        if target is not None:
            if target.is_gpu and item.get_closest_marker(_testing.GPU_MARK) is None:
                item.add_marker(_testing.GPU_MARK)
            if not target.runnable:
                item.add_marker(pytest.mark.skip(reason=target.skip_reason))
            for mark in item.iter_markers(_testing.KNOWN_FAILING_MARK):
                if any(target.matches(n) for n in _targets.iter_names(mark.args)):
                    reason = mark.kwargs.get("reason") or "known failing"
                    item.add_marker(
                        pytest.mark.xfail(
                            reason=f"{reason} (target {target.id!r})",
                            strict=mark.kwargs.get("strict", True),
                        )
                    )
        for mark in item.iter_markers(_testing.REQUIRES_MARK):
            why = _targets.requirement_skip_reason(str(mark.args[0]), sel)
            if why:
                item.add_marker(pytest.mark.skip(reason=why))
                break


@pytest.fixture
def target(request: pytest.FixtureRequest) -> str:
    """The target under test as a string (``"llvm"``, ``"cuda"``, a JSON object).

    Normally replaced by the per-target parameter; a test that reaches this body
    was not parametrized and gets the first runnable target in force.
    """
    runnable = selection(request.config).runnable
    if not runnable:
        pytest.skip("no target in force can run here")
    return runnable[0].entry


@pytest.fixture
def dev(target: str) -> Any:
    """``tvm.runtime.Device`` for ``target`` (device 0)."""
    import tvm

    return tvm.device_from_target(target)
