"""pytest plugin: run TVM tests once per target (seed 002).

In this repo ``-p tvm_conformance.pytest_plugin`` loads it (pyproject.toml's addopts). Where
the package is installed (pip, the wheel of ``//python:wheel``) its ``pytest11`` entry point
loads it in every pytest session, under the same name, so ``-p tvm_conformance.pytest_plugin``
is then a no-op and ``-p no:tvm_conformance.pytest_plugin`` turns it off. That is safe for
suites that do not use it: importing it imports no TVM; it only registers options (all
``--tvm-*``), markers and the ``target``/``dev`` fixtures; it parametrizes a test only when the
test takes the plugin's own ``target``/``dev`` (a suite's own ``target`` fixture wins and is
left alone) or parametrizes ``target`` with TVM targets itself; and it changes the environment
only when given ``--tvm-targets`` or the ``tvm_test_targets`` ini value.

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
* An explicit list (``parametrize_targets("llvm", "cuda")``, or upstream's
  ``pytest.mark.parametrize("target", [...])``) runs only the targets in force
  when the list in force was given explicitly (seed 002): the others skip,
  "cuda tests disabled by TVM_TEST_TARGETS environment variable".
* ``--tvm-variant=<target>`` (set by the Bazel ``<name>_<target>`` variants)
  keeps only that target's cases and deselects the rest, so each variant's
  JUnit XML holds its own target only; ``--tvm-variant=independent`` keeps only
  the cases that take no target. Each targeted case records the JUnit
  properties ``tvm_target`` (and ``exec_mode`` when it has one); a case skipped because
  its target's runtime or device is absent also records ``tvm_unavailable_target`` (the
  kind), which the verdict reads: a skip of a target the config requires is a problem.
* What the session deselected beyond the variant's own filter and Bazel's sharding (``-k``,
  ``-m``, ``--deselect``, ``PYTEST_ADDOPTS``, another ``TVM_TEST_TARGETS``) is recorded in the
  JUnit file (:mod:`tvm_conformance.selection_record`): the verdict labels the run partial.
* ``--tvm-require-gpu`` (the GPU runner config, ``--config=cuda_gpu``): a GPU case that
  would skip fails instead, and the summary counts them by reason.
* GPU targets get the ``gpu`` mark, so ``-m gpu`` / ``-m 'not gpu'`` select
  them. The decorators in :mod:`tvm_conformance.testing` add marks that this
  plugin evaluates; upstream's ``pytest.mark.parametrize("target", [...])``
  keeps its own list and gets the same skip and ``gpu`` marks.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from tvm_conformance import deviations as _deviations
from tvm_conformance import legacy as _legacy
from tvm_conformance import selection_record as _selection_record
from tvm_conformance import targets as _targets
from tvm_conformance import testing as _testing

_SELECTION = pytest.StashKey["_targets.TargetSelection"]()
_SOURCE = pytest.StashKey["tuple[str | None, str]"]()
_SAVED_ENV = pytest.StashKey["str | None"]()
_GPU_MISSES = pytest.StashKey["list[tuple[str, str]]"]()
_HEADER_SHOWN = pytest.StashKey[bool]()
# --tvm-variant value of the target-independent Bazel variant.
INDEPENDENT = "independent"
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
    f"{_testing.VARIANT_MARK}(target): the case takes no target but belongs to target's Bazel "
    "variant (tvm_conformance.testing.compiles_for; a case whose every target is excluded)",
    "tvm_deviation_not_applicable(id): a listed deviation that the installed TVM does not "
    "show; the test must pass (tvm_conformance.deviations.xfail)",
    f"{_deviations.ON_TARGETS_MARK}(*targets, mark=): a listed deviation's xfail for the cases "
    "on these targets only (tvm_conformance.deviations.xfail(id, targets=...))",
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
    group.addoption(
        "--tvm-variant",
        dest="tvm_variant",
        default=None,
        metavar="TARGET",
        help="keep only this target's cases (a Bazel <name>_<target> variant), or with "
        f"'{INDEPENDENT}' only the cases that take no target; the rest are deselected.",
    )
    group.addoption(
        "--tvm-independent-cases",
        dest="tvm_independent_cases",
        default="deselect",
        choices=("deselect", "error"),
        help="in a per-target variant, what target-independent cases do: deselect (another "
        "variant runs them) or error (no variant would run them).",
    )
    group.addoption(
        "--tvm-require-gpu",
        dest="tvm_require_gpu",
        action="store_true",
        default=False,
        help="GPU runner config: a GPU case that would skip (no device, runtime missing) fails.",
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
    for name, text in _legacy.FEATURE_MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    _selection_record.remember_targets_at_start(config)
    config.pluginmanager.register(
        _selection_record.SelectionRecord(
            config, config.getoption("tvm_variant", None), INDEPENDENT
        ),
        "tvm_conformance.selection_record",
    )
    text, source = _target_text(config)
    config.stash[_SOURCE] = (text, source)
    config.stash[_SAVED_ENV] = os.environ.get(_targets.ENV_VAR)
    config.stash[_GPU_MISSES] = []
    if text is not None:
        os.environ[_targets.ENV_VAR] = text


def pytest_unconfigure(config: pytest.Config) -> None:
    """Give ``TVM_TEST_TARGETS`` back the value it had before :func:`pytest_configure`."""
    if _SAVED_ENV not in config.stash:
        return
    saved = config.stash[_SAVED_ENV]
    if saved is None:
        os.environ.pop(_targets.ENV_VAR, None)
    else:
        os.environ[_targets.ENV_VAR] = saved


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
    """Resolve a given target list before collection, so a bad entry stops the run early.

    TVM's default list is resolved only when a collected test needs it: parsing targets
    imports TVM (seconds per process), which a session of tests that take no target (the
    kit's own tools) never pays.
    """
    text, _ = session.config.stash[_SOURCE]
    if text is not None:
        selection(session.config)


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Show the targets in force, where they came from and which cannot run (if resolved)."""
    if _SELECTION not in config.stash:
        return []
    config.stash[_HEADER_SHOWN] = True
    return _selection_lines(selection(config))


def pytest_report_collectionfinish(config: pytest.Config) -> list[str]:
    """The same lines, after collection, for a default list that a collected test resolved."""
    if config.stash.get(_HEADER_SHOWN, False) or _SELECTION not in config.stash:
        return []
    return _selection_lines(selection(config))


def _selection_lines(sel: _targets.TargetSelection) -> list[str]:
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


def _own_target_fixture(metafunc: pytest.Metafunc) -> bool:
    """True unless a conftest or module overrides ``target`` with a fixture of its own.

    The plugin is active wherever the package is installed (its pytest11 entry point), so a
    suite with an unrelated ``target`` fixture must keep its own: that suite is left alone.
    pytest has no public API for the fixture in effect; ``_arg2fixturedefs`` is what other
    plugins read too, and without it the plugin parametrizes as before.
    """
    fixturedefs = getattr(metafunc, "_arg2fixturedefs", {}).get("target")
    if not fixturedefs:
        return True
    func = getattr(fixturedefs[-1], "func", None)
    return getattr(func, "__module__", __name__) == __name__


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``target`` for tests that take ``target`` or ``dev``.

    An explicit ``parametrize_targets`` list wins over the targets in force;
    ``exclude_targets`` drops entries. Marks are added per item later, in
    :func:`pytest_collection_modifyitems`.
    """
    if "target" not in metafunc.fixturenames or _direct_target_parametrize(metafunc):
        return
    if not _own_target_fixture(metafunc):
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
        # The skip belongs to the excluded targets' variant, not the target-independent one.
        variant_mark = getattr(pytest.mark, _testing.VARIANT_MARK)(chosen[0].id)
        metafunc.parametrize(
            "target",
            [pytest.param(None, marks=[pytest.mark.skip(reason=reason), variant_mark])],
            ids=["no-target"],
            indirect=True,
        )
        return
    metafunc.parametrize("target", [t.entry for t in kept], ids=[t.id for t in kept], indirect=True)


def _item_target(item: pytest.Item) -> _targets.TargetInfo | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None or "target" not in callspec.params:
        return None
    try:
        return _targets.describe(callspec.params["target"], "target parameter")
    except _targets.TargetSpecError:
        return None  # not a TVM target string: leave the test alone


def _variant_target(item: pytest.Item) -> str | None:
    """The target whose variant runs ``item``: its ``target`` parameter, else the runtime
    of a ``requires_<runtime>`` mark (``requires_gpu``: ``cuda``), else the kind of a
    ``tvm_variant`` mark (``compiles_for``, every target excluded), else None (independent).
    """
    target = _item_target(item)
    if target is not None:
        return target.id
    mark = item.get_closest_marker(_testing.REQUIRES_MARK)
    if mark is not None:
        kind = str(mark.args[0])
        return "cuda" if kind == "gpu" else kind
    mark = item.get_closest_marker(_testing.VARIANT_MARK)
    return str(mark.args[0]) if mark is not None else None


def _every_target_excluded(item: pytest.Item) -> bool:
    """The ``no-target`` case of a test whose ``exclude_targets`` removed every target in force
    (:func:`pytest_generate_tests`)."""
    callspec = getattr(item, "callspec", None)
    return (
        callspec is not None
        and "target" in callspec.params
        and callspec.params["target"] is None
        and item.get_closest_marker(_testing.VARIANT_MARK) is not None
    )


def _in_force(target: _targets.TargetInfo, sel: _targets.TargetSelection) -> bool:
    return any(target.matches(t.entry) for t in (*sel.listed, *sel.active))


def _select_variant(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep only the cases of ``--tvm-variant``'s target (or the target-independent ones)."""
    variant = config.getoption("tvm_variant", None)
    if not variant:
        return
    wanted = None
    if variant != INDEPENDENT:
        try:
            wanted = _targets.describe(variant, "--tvm-variant")
        except _targets.TargetSpecError as err:
            raise pytest.UsageError(str(err)) from None
    kept, dropped, orphans = [], [], []
    for item in items:
        owner = _variant_target(item)
        if variant == INDEPENDENT:
            keep = owner is None
        elif owner is None:
            keep = False
            orphans.append(item.nodeid)
        elif _every_target_excluded(item):
            # exclude_targets removed this variant's target: the case is not the variant's, as
            # the docs say ("never generated"), so no per-target variant (a GPU runner's
            # `_cuda` one included) reports it as skipped. Plain pytest still shows the skip.
            keep = False
        else:
            keep = owner == variant or (wanted is not None and wanted.matches(owner))
        (kept if keep else dropped).append(item)
    if orphans and config.getoption("tvm_independent_cases") == "error":
        names = ", ".join(orphans[:5]) + (" ..." if len(orphans) > 5 else "")
        raise pytest.UsageError(
            f"{len(orphans)} case(s) take no target and would run in no Bazel variant "
            f"({names}); set target_independent = True on this tvm_py_test"
        )
    if dropped:
        _selection_record.deselect_by_design(config, dropped)
        items[:] = kept


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Select the variant's cases; add ``gpu``, skip and xfail marks per target, requires_*
    skips, and the ``tvm_target`` / ``exec_mode`` JUnit properties.

    Runs before pytest's own ``-m`` filtering so the ``gpu`` mark counts.
    """
    _select_variant(config, items)
    for item in items:
        owner = _variant_target(item)
        if owner is not None:
            item.user_properties.append(("tvm_target", owner))
        callspec = getattr(item, "callspec", None)
        if callspec is not None and isinstance(callspec.params.get("exec_mode"), str):
            item.user_properties.append(("exec_mode", callspec.params["exec_mode"]))
        target = _item_target(item)
        if target is not None:
            if target.is_gpu and item.get_closest_marker(_testing.GPU_MARK) is None:
                item.add_marker(_testing.GPU_MARK)
            sel = selection(config)
            if sel.raw and not _in_force(target, sel):
                item.add_marker(
                    pytest.mark.skip(
                        reason=f"{target.kind} tests disabled by {sel.source} environment variable"
                        if sel.source == _targets.ENV_VAR
                        else f"{target.kind} tests disabled by {sel.source}"
                    )
                )
            elif not target.runnable:
                item.add_marker(pytest.mark.skip(reason=target.skip_reason))
                item.user_properties.append((_targets.UNAVAILABLE_TARGET_PROPERTY, target.kind))
            for mark in item.iter_markers(_deviations.ON_TARGETS_MARK):
                if any(target.matches(n) for n in _targets.iter_names(mark.args)):
                    item.add_marker(mark.kwargs["mark"])
            for mark in item.iter_markers(_testing.KNOWN_FAILING_MARK):
                if any(target.matches(n) for n in _targets.iter_names(mark.args)):
                    reason = mark.kwargs.get("reason") or "known failing"
                    strict = mark.kwargs.get("strict", True)
                    # strict=None: the ini's xfail_strict decides (legacy.known_failing_targets).
                    extra = {} if strict is None else {"strict": strict}
                    item.add_marker(
                        pytest.mark.xfail(reason=f"{reason} (target {target.id!r})", **extra)
                    )
        for mark in item.iter_markers(_testing.REQUIRES_MARK):
            why = _targets.requirement_skip_reason(
                str(mark.args[0]), selection(config), mark.kwargs.get("compile_only", False)
            )
            if why:
                item.add_marker(pytest.mark.skip(reason=why))
                missing = _targets.unavailable_requirement(
                    str(mark.args[0]), mark.kwargs.get("compile_only", False)
                )
                if missing:
                    item.user_properties.append((_targets.UNAVAILABLE_TARGET_PROPERTY, missing))
                break


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Under ``--tvm-require-gpu``, a GPU case that skips is reported failed, with why."""
    outcome = yield
    report = outcome.get_result()
    if (
        report.skipped
        and not hasattr(report, "wasxfail")
        and item.config.getoption("tvm_require_gpu", False)
        and item.get_closest_marker(_testing.GPU_MARK) is not None
    ):
        reason = _skip_reason(report)
        item.config.stash[_GPU_MISSES].append((item.nodeid, reason))
        report.outcome = "failed"
        report.longrepr = (
            f"GPU runner config (--tvm-require-gpu): this GPU case could not run here: {reason}"
        )


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Count the GPU cases that could not run in the GPU runner config, by reason."""
    misses = config.stash.get(_GPU_MISSES, [])
    if not misses:
        return
    by_reason: dict[str, int] = {}
    for _, reason in misses:
        by_reason[reason] = by_reason.get(reason, 0) + 1
    terminalreporter.section("GPU runner config", sep="=", red=True)
    terminalreporter.line(
        f"GPU runner config: {len(misses)} GPU case(s) could not run here and fail "
        "(--tvm-require-gpu, --config=cuda_gpu):"
    )
    for reason, count in sorted(by_reason.items(), key=lambda kv: -kv[1]):
        terminalreporter.line(f"  {count:4d}  {reason}")


@pytest.fixture
def target(request: pytest.FixtureRequest) -> str:
    """The target under test as a string (``"llvm"``, ``"cuda"``, a JSON object).

    The plugin parametrizes it (indirectly) for every test that takes it.
    """
    return request.param


@pytest.fixture
def dev(target: str) -> Any:
    """``tvm.runtime.Device`` for ``target`` (device 0); runtime-only TVM included.

    A cuda target's device is a CUDA device, or the case fails here: no cuda case may run on
    the CPU under a cuda name.
    """
    device = _targets.runtime_device(target)
    if _targets.kind_of(target) == "cuda":
        import tvm

        if device.dlpack_device_type() != tvm.cuda(0).dlpack_device_type():
            raise AssertionError(f"target {target!r} got device {device}, not a CUDA device")
    return device
