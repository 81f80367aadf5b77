"""The lane's TVM registries are its snapshot (tools/registry_snapshot/<lane>.json).

The snapshot is taken in a fresh process (`snapshot.py diff`, which imports tvm, tvm.relax and
tvm.relax.frontend.torch and nothing else) and compared with the lane's file; every
difference is named, with the command that regenerates the file. A user's wheel (check my
wheel, a mutant run's mutated wheel) is judged where it carries the lane's TVM version and build
options (`tvm.support.libinfo()`): each registry entry it removed or changed is a regression;
a wheel of another version or build is not, and what it changed is information, recorded in
the run record by the archive (identity.registry_drift) and shown by the report.
The differences' names are checked on copies of the lane's own snapshot with one entry of
each registry changed.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import snapshot

from tvm_conformance import expectations, runfiles

LANE = expectations.lane_of(expectations.venv_record())


def _lane_file(lane: str = LANE) -> Path:
    return Path(runfiles.rlocation(f"tools/registry_snapshot/{lane}.json"))


def _regenerate(lane: str) -> str:
    config = "" if lane == "default" else f" --config={lane}"
    return (
        f"./bazelw run{config} //tools/registry_snapshot -- --write "
        f"(every lane: {snapshot.REGENERATE})"
    )


def _differences() -> list[dict[str, str]]:
    proc = subprocess.run(
        [sys.executable, snapshot.__file__, "diff", "--against", str(_lane_file()), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, f"snapshot.py diff failed: {proc.stderr.strip()[-2000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])["differences"]


# What a user's wheel may not change where it claims the lane's TVM: anything the lane's
# registries hold, removed or changed (added entries are information).
_WORSE = ("removed", "changed")
# Differences that say the wheel is another TVM build, not a changed registry.
_IDENTITY = ("versions", "build")


def judged_differences(found: list[dict[str, str]]) -> tuple[list[str], str]:
    """(regression lines, why none can be judged): a user's wheel with the lane's TVM version
    and build options has each removed or changed registry entry as a regression; another
    version or build is not judged (its drift is information)."""
    other = [d["text"] for d in found if d["registry"] in _IDENTITY]
    if other:
        return [], "another TVM build than the lane's (" + "; ".join(other[:3]) + ")"
    return [f"regression: registry {d['text']}" for d in found if d["kind"] in _WORSE], ""


def test_lane_tvm_matches_its_snapshot() -> None:
    found = _differences()
    user = sorted(expectations.venv_record().get("user_wheels") or {})
    if user:
        regressions, why_not = judged_differences(found)
        if why_not:
            pytest.skip(
                f"a user's wheel ({', '.join(user)}) of {why_not}: its registry drift is "
                "information, recorded in the run record (identity.registry_drift)"
            )
        # One line per entry: the verdict reads each as a REGRESSION (tools/verdict/verdict.py).
        assert not regressions, (
            f"a user's wheel ({', '.join(user)}) with the {LANE} lane's TVM version and build "
            f"options lost or changed {len(regressions)} registry entries:\n"
            + "\n".join(regressions)
        )
        return
    shown = "\n  ".join(d["text"] for d in found[:50])
    more = f"\n  ... and {len(found) - 50} more" if len(found) > 50 else ""
    assert not found, (
        f"the {LANE} lane's TVM differs from {_lane_file().name} in {len(found)} ways:\n  "
        f"{shown}{more}\nregenerate: {_regenerate(LANE)}"
    )


def test_a_same_build_wheel_is_judged_and_another_build_is_not() -> None:
    changed = {
        "registry": "target_tags",
        "kind": "changed",
        "text": "target tag x: a changed 1 -> 2",
    }
    added = {"registry": "globals", "kind": "added", "text": "global added: y"}
    removed = {"registry": "globals", "kind": "removed", "text": "global removed: z"}
    assert judged_differences([changed, added, removed]) == (
        ["regression: registry target tag x: a changed 1 -> 2", "regression: registry global "
         "removed: z"], "",
    )  # fmt: skip
    build = {"registry": "build", "kind": "changed", "text": "build option USE_CUDA changed"}
    assert judged_differences([changed, build])[0] == []
    assert "USE_CUDA" in judged_differences([changed, build])[1]


def test_snapshot_file_is_stable_sorted_json() -> None:
    text = _lane_file().read_text(encoding="utf-8")
    data = json.loads(text)
    assert snapshot.dumps(data) == text, f"not written by snapshot.dumps: {_regenerate(LANE)}"
    assert data["format"] == snapshot.FORMAT and data["rules"] == snapshot.RULES
    assert set(snapshot.SECTIONS) <= set(data)
    sizes = snapshot.sizes(data)
    assert all(sizes[k] > 0 for k in ("globals", "ops", "target_kinds", "target_tags")), sizes


def test_every_kind_of_difference_is_named() -> None:
    old = json.loads(_lane_file().read_text(encoding="utf-8"))
    new = copy.deepcopy(old)
    removed_global = new["globals"].pop(0)
    new["globals"].append("kit.added_global")
    tag = next(n for n, c in sorted(new["target_tags"].items()) if "kind" in c)
    new["target_tags"][tag]["mcpu"] = "generic"
    before = old["target_tags"][tag].get("mcpu")
    op, entry = next((n, o) for n, o in sorted(new["ops"].items()) if o["attrs"])
    attr = sorted(entry["attrs"])[0]
    del entry["attrs"][attr]
    kind = sorted(new["target_kinds"])[0]
    new["target_kinds"][kind]["kit-option"] = "bool"
    texts = [d["text"] for d in snapshot.diff(old, new)]
    mcpu = (
        f"target tag {tag}: mcpu changed {before} -> generic"
        if before
        else f"target tag {tag}: mcpu added (generic)"
    )
    assert texts == [
        f"global removed: {removed_global}",
        "global added: kit.added_global",
        f"op {op}: attribute {attr} removed ({snapshot._show(old['ops'][op]['attrs'][attr])})",
        f"target kind {kind}: option kit-option added (bool)",
        mcpu,
    ]
    counts = snapshot.counts(snapshot.diff(old, new))
    assert counts["globals"] == {"added": 1, "removed": 1, "changed": 0}
    assert snapshot.diff(old, copy.deepcopy(old)) == []


def test_row_tests_are_read_for_the_api_they_use() -> None:
    source = (
        "import tvm\nfrom tvm import relax as rx\nimport tvm_ffi\n"
        "from tvm.script import relax as R\n"
        "x = rx.build(m, target='llvm')\ny = tvm.runtime.tensor(a).numpy()\n"
        "z = tvm_ffi.convert([1])\n@R.function\ndef f(): pass\nimport numpy as np\nnp.add(1, 2)\n"
    )
    assert snapshot.api_chains(source) == {
        "tvm.relax.build",
        "tvm.runtime.tensor",
        "tvm_ffi.convert",
        "tvm.script.relax.function",
    }
