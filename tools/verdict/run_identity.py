"""A run's identity and whether it is partial: what ran (lane, wheels, config, patterns, the
options that select targets or cases), and what keeps it from being the whole suite.

Its one job is that policy, as functions of a run that results.py read (plain data: RunData);
judging it is verdict.py's. Two runs with equal identity keys tested the same thing and may be
compared; a partial run is labelled partial wherever it shows. What made a run (run.json's
`runner`: ./bazelw or a GPU-runner bundle) decides how it is read, never a key's absence.
Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Protocol

# run_record.RUNNERS (kept in step by run_identity_test.py; this module imports nothing).
BAZEL = "bazel"
GPU_RUNNER_BUNDLE = "gpu_runner_bundle"


class Target(Protocol):
    """What the policy reads of a target (results.TargetResult)."""

    label: str
    producers: list[str]
    suite_properties: dict[str, str]


class RunData(Protocol):
    """What the policy reads of a run (results.Run)."""

    targets: Mapping[str, Any]
    flags: dict[str, str]
    lane: str
    meta: dict[str, object]
    runner: str


Run = RunData

# Build settings the lanes and configs are made of (`--//tools/config:<name>=<value>`; from a
# workspace using the kit, `--@tvm_conformance//tools/config:...`).
_CONFIG_FLAG = re.compile(
    r"^--(?P<no>no)?(@(tvm_conformance)?)?//tools/config:(?P<name>[A-Za-z0-9_]+)"
    r"(=(?P<value>.*))?$"
)
# run.json's record of the suite: the tests `//...` expands to under the run's own flags
# (archive.py's cquery): {"source": "...", "targets": [labels], "seconds": N} or "error".
SUITE_KEY = "suite"
# Options that change which targets or cases a `bazel test` runs, and so a run's identity.
# EXCLUDING_OPTIONS leave part of the suite out (the run is partial); --runs_per_test and
# --flaky_test_attempts run the same cases differently.
EXCLUDING_OPTIONS = (
    "test_tag_filters",
    "test_filter",
    "test_lang_filters",
    "test_size_filters",
    "test_timeout_filters",
    "test_arg",
)
SELECTION_OPTIONS = (*EXCLUDING_OPTIONS, "runs_per_test", "flaky_test_attempts")
# Test environment variables that select cases inside a test process: pytest's own options
# (`-k`, `-m`, `--deselect` through PYTEST_ADDOPTS), googletest's filter, and the targets a
# test runs (TVM_TEST_TARGETS, which each variant sets itself). `--test_env=NAME[=value]` of
# these is an excluding option (`--test_env` of any other name is not a selection).
SELECTING_TEST_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "GTEST_FILTER", "TVM_TEST_TARGETS")
# JUnit properties of what a test process left out (tvm_conformance.selection_record, the kit's
# gtest main; in step).
COLLECTED_PROPERTY = "tvm_collected"
DESELECTED_PROPERTY = "tvm_deselected"
SELECTION_PROPERTY = "tvm_selection"
GTEST_FILTER_PROPERTY = "gtest_filter"


def config_flags(options: list[str]) -> dict[str, str]:
    """`//tools/config:<name>` build settings in an (expanded) option list, by name."""
    flags: dict[str, str] = {}
    for option in options:
        match = _CONFIG_FLAG.match(option)
        if match:
            value = match["value"]
            flags[match["name"]] = "false" if match["no"] else ("true" if value is None else value)
    return flags


def lane_of(flags: dict[str, str]) -> str:
    """The lane a run belongs to: `--//tools/config:lane`, "default" when absent."""
    return flags.get("lane") or "default"


def flag_on(flags: dict[str, str], name: str) -> bool:
    """True when the boolean build setting `name` is set (absent, false, 0: off)."""
    return flags.get(name, "false") not in ("false", "0", "")


def config_name(flags: dict[str, str]) -> str:
    """cpu, cuda or cuda_gpu (`--config=cuda_gpu` sets require_gpu), plus +asan / +ubsan."""
    name = "cuda" if flag_on(flags, "cuda") else "cpu"
    if flag_on(flags, "require_gpu"):
        name = "cuda_gpu"
    return name + "".join(f"+{s}" for s in ("asan", "ubsan") if flag_on(flags, s))


def _option_name(option: str) -> str:
    return option.lstrip("-").partition("=")[0]


def selection_options(options: list[str]) -> list[str]:
    """The options among `options` that select targets or cases (SELECTION_OPTIONS), the last
    of each name (as Bazel applies them; every `--test_arg`, which repeats), `--name=value`
    each, sorted; an empty value (the default) is left out."""
    found: dict[str, list[str]] = {}
    pending = ""
    for option in options:
        name, value = pending, option
        if not pending:
            name = _option_name(option)
            if not option.startswith("--") or name not in (*SELECTION_OPTIONS, "test_env"):
                continue
            if "=" not in option:
                pending = name  # `--test_filter VALUE`
                continue
            value = option.partition("=")[2]
        pending = ""
        if name == "test_env":
            if value.partition("=")[0] not in SELECTING_TEST_ENV:
                continue
            # The last value of each variable wins, as Bazel applies them.
            kept = [
                v for v in found.get(name, []) if v.partition("=")[0] != value.partition("=")[0]
            ]
            found[name] = [*kept, value]
            continue
        found[name] = [*found.get(name, []), value] if name == "test_arg" else [value]
    return sorted(f"--{name}={v}" for name, values in found.items() for v in values if v)


def venv_identity(run: Run) -> dict[str, object]:
    """The venv identity the run tested (run.json `identity`), or the lane alone."""
    found = run.meta.get("identity")
    if isinstance(found, dict) and found:
        return found
    return {"lane": run.lane}


def config(run: Run) -> str:
    """What the run asked for (config_name of its flags): cpu, cuda or cuda_gpu, +asan..."""
    return config_name(run.flags)


def _strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def pattern_list(run: Run) -> list[str]:
    """The target patterns the invocation asked for, negative ones (`-//pkg:x`) included,
    in order: from run.json's bazel_args (after `--` every word is a pattern), else from
    the build events' pattern event (a run read from its build event file alone). A bundle's
    run asked for none."""
    if run.runner == GPU_RUNNER_BUNDLE:
        return []
    if "bazel_args" not in run.meta:
        return _strings(run.meta.get("bep_patterns"))
    args = _strings(run.meta.get("bazel_args"))
    found: list[str] = []
    after_dashes = False
    for arg in args[1:]:
        if arg == "--" and not after_dashes:
            after_dashes = True
        elif after_dashes or not arg.startswith("-"):
            found.append(arg)
    return found


def patterns(run: Run) -> str:
    """The target patterns, negative ones included (`//... -//pkg:b_test`); a GPU-runner
    bundle's run has none: its bundle's label stands for them (run.json `bundle`)."""
    return " ".join(pattern_list(run)) or str(run.meta.get("bundle") or "(unknown)")


def selection(run: Run) -> list[str]:
    """The options that change which targets or cases ran (SELECTION_OPTIONS), as given,
    from the build events' canonical command line (rc files and --config expanded), else
    from run.json's bazel_args."""
    found = run.meta.get("selection_options")
    if not isinstance(found, list):
        args = _strings(run.meta.get("bazel_args"))
        found = selection_options(args[: args.index("--")] if "--" in args else args)
    return [str(o) for o in found]


def deselected(run: Run) -> list[str]:
    """The targets whose test process left cases out beyond the design (a variant's own
    targets and Bazel's sharding are the design), each named with what did it: pytest's
    selection (tvm_conformance.selection_record) or googletest's filter (the kit's gtest
    main); a pytest or googletest target that did not record its selection counts too.
    Files of other writers (Bazel's own XML for a test that wrote none) record nothing."""
    why = []
    for label in sorted(run.targets):
        target = run.targets[label]
        props = target.suite_properties
        if "pytest" in target.producers:
            if COLLECTED_PROPERTY not in props:
                why.append(f"{label}: selection not recorded (pytest without the kit's plugin)")
                continue
            selection = props.get(SELECTION_PROPERTY, "")
            count = _int(props.get(DESELECTED_PROPERTY))
            if count or "TVM_TEST_TARGETS=" in selection:
                why.append(
                    f"{label}: {count} of {_int(props[COLLECTED_PROPERTY])} cases deselected"
                    + (f" ({selection})" if selection else "")
                )
        if "googletest" in target.producers:
            found = props.get(GTEST_FILTER_PROPERTY)
            if found is None:
                why.append(f"{label}: selection not recorded (googletest without the kit's main)")
            elif found not in ("*", ""):
                why.append(f"{label}: googletest filter {found!r}")
    return why


def _int(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0


def partial(run: Run) -> list[str]:
    """What keeps `run` from being the whole suite: the tests of the suite (run.json
    SUITE_KEY, what `//...` expands to under the run's flags) it did not run, whatever
    option caused it, or that the suite is not recorded; also negative patterns, other
    patterns, the options that filter cases within a target, and the targets whose test
    process deselected cases (deselected()). [] for a whole-suite run. A GPU-runner bundle's
    run (runner GPU_RUNNER_BUNDLE) is judged by its own record (`partial`: what its bundle
    leaves out, computed from the build's suite list) and what its targets recorded."""
    if run.runner == GPU_RUNNER_BUNDLE:
        return _strings(run.meta.get("partial")) + deselected(run)
    asked = pattern_list(run)
    why = [p for p in asked if p.startswith("-")]
    if "//..." not in asked:
        why.insert(0, "not //...")
    why += [o for o in selection(run) if _option_name(o) in (*EXCLUDING_OPTIONS, "test_env")]
    suite = run.meta.get(SUITE_KEY)
    labels = suite.get("targets") if isinstance(suite, dict) else None
    if not isinstance(labels, list):
        error = suite.get("error") if isinstance(suite, dict) else None
        why.append(f"suite not recorded ({error})" if error else "suite not recorded")
    else:
        missing = sorted(set(map(str, labels)) - set(run.targets))
        if missing:
            shown = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
            why.append(f"{len(missing)} of {len(labels)} suite tests not run ({shown})")
    return why + deselected(run)


def identity_key(run: Run) -> str:
    """Lane + the sha256 of the installed TVM and tvm-ffi + Python + torch + config + target
    patterns (negative ones too) + the options that select targets or cases: runs with
    equal keys tested the same thing and may be compared; others never merge (so a later
    run of one target, or of the suite minus one target, cannot stand for an earlier run of
    `//...`)."""
    ident = venv_identity(run)
    parts = [str(ident.get("lane", run.lane))]
    for dist in ("tvm", "tvm_ffi"):
        entry = ident.get(dist)
        sha = entry.get("sha256", "") if isinstance(entry, dict) else ""
        parts.append(f"{dist}={sha[:16] or 'unknown'}")
    # The Python and torch build, where the run recorded them (older runs did not).
    torch = ident.get("torch")
    parts += [f"py={ident['python']}"] if ident.get("python") else []
    parts += [f"torch={torch.get('version')}"] if isinstance(torch, dict) else []
    parts += [config_name(run.flags), patterns(run)]
    return "/".join(parts) + "".join(f" {o}" for o in selection(run))
