"""What a pytest session left out, recorded in its JUnit XML for the verdict.

A run's identity sees the options Bazel was given, but cases can also be deselected inside
the test process: ``-k`` / ``-m`` / ``--deselect`` through ``PYTEST_ADDOPTS``
(``--test_env=PYTEST_ADDOPTS=...``), or a ``TVM_TEST_TARGETS`` other than the one the
target's variant sets. This plugin (registered by :mod:`tvm_conformance.pytest_plugin`)
writes what the session collected and what was deselected into the JUnit file's
``<testsuite>`` properties; tools/verdict reads them and labels the run partial, naming the
target. Deselection that is part of the design is not counted: a per-target variant's own
(``--tvm-variant``) and Bazel's test sharding; each announces its items through
:func:`deselect_by_design` before pytest's ``pytest_deselected`` hook sees them.
"""

from __future__ import annotations

import os
import shlex
from typing import Any

import pytest

# JUnit <testsuite> properties (tools/verdict/results.py reads them; in step).
COLLECTED_PROPERTY = "tvm_collected"
DESELECTED_PROPERTY = "tvm_deselected"
SELECTION_PROPERTY = "tvm_selection"

_BY_DESIGN = pytest.StashKey[set]()
_TARGETS_AT_START = pytest.StashKey["str | None"]()
# pytest options that deselect cases by themselves (a change from their defaults).
_DESELECTING_OPTIONS = (("keyword", "-k"), ("markexpr", "-m"), ("deselect", "--deselect"))


def deselect_by_design(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect `items` as the kit's own design does (a variant's filter, a shard)."""
    config.stash.setdefault(_BY_DESIGN, set()).update(item.nodeid for item in items)
    config.hook.pytest_deselected(items=items)


def remember_targets_at_start(config: pytest.Config) -> None:
    """Keep ``TVM_TEST_TARGETS`` as the process got it (before the plugin writes its own)."""
    config.stash[_TARGETS_AT_START] = os.environ.get("TVM_TEST_TARGETS")


class SelectionRecord:
    """Counts the cases deselected outside the design and writes the JUnit properties."""

    def __init__(self, config: pytest.Config, variant: str | None, independent: str) -> None:
        self.config = config
        # The TVM_TEST_TARGETS a Bazel variant sets itself: its target, llvm for the
        # target-independent one; a test that is not a variant sets none.
        self.own_targets = None if not variant else ("llvm" if variant == independent else variant)
        self.deselected: list[str] = []

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        """pytest's hook: keep the items deselected outside the design."""
        by_design = self.config.stash.get(_BY_DESIGN, set())
        self.deselected += [item.nodeid for item in items if item.nodeid not in by_design]

    def selection(self) -> list[str]:
        """What narrowed the session beyond the design: pytest's deselecting options,
        PYTEST_ADDOPTS, a TVM_TEST_TARGETS other than the variant's own."""
        found = []
        for dest, flag in _DESELECTING_OPTIONS:
            value = self.config.getoption(dest, None)
            if value:
                found.append(
                    f"{flag} {shlex.join(value) if isinstance(value, list) else shlex.quote(value)}"
                )
        addopts = os.environ.get("PYTEST_ADDOPTS", "").strip()
        if addopts:
            found.append(f"PYTEST_ADDOPTS={addopts}")
        targets = self.config.stash.get(_TARGETS_AT_START, None)
        if targets is not None and targets.strip() != (self.own_targets or ""):
            found.append(f"TVM_TEST_TARGETS={targets}")
        return found

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Every deselection is done: record the counts and what caused them."""
        xml = _junit_xml(self.config)
        if xml is None:
            return
        by_design = len(self.config.stash.get(_BY_DESIGN, set()))
        xml.add_global_property(
            COLLECTED_PROPERTY, str(len(session.items) + len(self.deselected) + by_design)
        )
        xml.add_global_property(DESELECTED_PROPERTY, str(len(self.deselected)))
        selection = self.selection()
        if selection:
            xml.add_global_property(SELECTION_PROPERTY, "; ".join(selection))


def _junit_xml(config: pytest.Config) -> Any:
    """pytest's JUnit writer of this session (--junitxml), or None."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # a pytest without it writes no JUnit file the kit reads
        return None
    return config.stash.get(xml_key, None)
