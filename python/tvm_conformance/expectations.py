"""Expected outcomes, pinned per case and per lane (docs/deviations.md, "Expectations").

Each lane's file, ``expectations/<lane>/<suite>.json``, holds one entry per generated case:
the outcome the lane's pinned wheels gave it when the file was written by
``./bazelw run [--config=<lane>] //tools/expectations -- --write`` (``tools/expectations``).
A run compares every case with it:

* the same outcome: pass;
* worse (correct -> refused / deviating / failing, refused -> deviating / failing, one
  deviation or refusal for another, a case that ran now excluded): a **regression**, one line
  per case, and the run fails;
* better (deviating -> correct / refused, refused -> correct): an **improvement**, good news on
  a user's wheel; on a lane's pinned wheels the file is held exactly, so it fails as stale;
* a case the file does not list, or a listed case of the run's names that gave no result:
  stale (the corpus or the kit changed), the run fails until the file is regenerated.

An outcome is a short string: ``correct``, ``refused <step>: <exception type>``, ``deviating
<recorded deviation id> @ <its message's figures>``, ``excluded <why>`` or ``failing``; a
deviation whose figures leave their bounds (:func:`number_drift`) is a regression too.
Standard library only: the op corpus's shard processes import neither torch nor TVM.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tvm_conformance import op_corpus_outcomes

FORMAT = 1
ROOT = Path(__file__).with_name("expectations")
# Outcomes from best to worst; `excluded` is the kit's choice, not TVM's, and stands apart.
_RANK = {"correct": 0, "unscored": 0.5, "refused": 1, "deviating": 2, "failing": 3}
REGENERATE = "./bazelw run [--config=<lane>] //tools/expectations -- --write"


# A numeric deviation's figures (its message's numbers, which its record leaves open) are
# pinned with it. Integers (element counts, positions, output indices, dtype widths) stay
# exact; any other number (an error, a value, an allowance) within this factor either way:
# the same deviation varies with rounding, a thousandfold error is another behaviour.
NUMBER_FACTOR = 10.0
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")
_FIGURES = " @ "
# Every pinned outcome's form (the writer's and the tests' check of the files).
OUTCOME_FORM = re.compile(
    r"correct|failing|refused [^@]+|excluded [^@]+|deviating \S+( @ ~?[-+.e\d]+( ~?[-+.e\d]+)*)?"
)


def figures(detail: str) -> str:
    """The numbers of a message, space-separated, as written."""
    return " ".join(_NUMBER.findall(detail))


def number_drift(seen: str, now: str) -> list[str]:
    """Each figure of ``now`` (space-separated, as :func:`figures` writes them) out of the
    bounds of ``seen``'s: `was -> now`; [] when every figure holds. A pinned figure marked
    ``~`` varied between the runs it was written from (a count over ties): within the factor,
    like a float."""
    was_all, now_all = seen.split(), now.split()
    if len(was_all) != len(now_all):
        return [f"{len(was_all)} figures -> {len(now_all)}"]
    drift = []
    for marked, got in zip(was_all, now_all, strict=True):
        was = marked.removeprefix("~")
        if was == got:
            continue
        exact = not marked.startswith("~") and not any(c in was for c in ".e")
        a, b = float(was), float(got)
        if exact or a == 0 or b == 0 or not 1 / NUMBER_FACTOR <= b / a <= NUMBER_FACTOR:
            drift.append(f"{was} -> {got}")
    return drift


def _exact_float(figure: str) -> bool:
    """A figure written as a float (bounded by the factor already: no mark needed)."""
    return any(c in figure for c in ".e")


def merge_runs(pinned: str, other: str) -> str:
    """``pinned`` with each figure that ``other`` (the same case's outcome in another run)
    gives otherwise marked ``~``; ``pinned`` itself where the two are no one deviation."""
    head, _, numbers = pinned.partition(_FIGURES)
    other_head, _, other_numbers = other.partition(_FIGURES)
    mine, theirs = numbers.split(), other_numbers.split()
    if head != other_head or len(mine) != len(theirs) or not mine:
        return pinned
    merged = [
        a if _exact_float(a) or (a.removeprefix("~") == b.removeprefix("~") and b[:1] != "~")
        else "~" + a.removeprefix("~")
        for a, b in zip(mine, theirs, strict=True)
    ]  # fmt: skip
    return f"{head}{_FIGURES}{' '.join(merged)}"


def outcome_of(result: Any) -> str:
    """The pinned form of one op-corpus result (an ``op_corpus_outcomes.Result``)."""
    if result.outcome == "deviating":
        numbers = figures(result.detail) if result.detail.split(":", 1)[0] != "not run" else ""
        return f"deviating {result.deviation}" + (f"{_FIGURES}{numbers}" if numbers else "")
    if result.outcome == "refused":
        # "import: AssertionError: Unsupported ..." -> "import: AssertionError": the step and
        # the exception type; the text names the op, which the case's key names already.
        step, _, rest = result.detail.partition(": ")
        return f"refused {step}: {rest.split(':', 1)[0].strip()}"
    if result.outcome == "excluded":
        return f"excluded {result.detail.split(':', 1)[0].strip()}"
    return str(result.outcome)


def case_key(result: Any) -> str:
    """One case of the op corpus: kind, name, dtype, frontend and sample index."""
    return f"{result.kind}|{result.name}|{result.dtype}|{result.frontend}|{result.index}"


def venv_record() -> dict[str, Any]:
    """The venv's record (third_party/python/venv_tool.py): its lane and any user's wheels."""
    try:
        return json.loads((Path(sys.prefix) / "tvm_conformance_venv.json").read_text())
    except (OSError, ValueError):
        return {}


def lane_of(record: Mapping[str, Any]) -> str:
    """The lane whose expectations apply: the venv's lane (a user's wheel replaces one)."""
    return str(record.get("lane") or "default")


def pinned(record: Mapping[str, Any]) -> bool:
    """Whether the venv runs the lane's pinned wheels (no wheel of the user's in it)."""
    return not record.get("user_wheels")


def path(lane: str, suite: str) -> Path:
    return ROOT / lane / f"{suite}.json"


def load(lane: str, suite: str) -> dict[str, str]:
    """{case key: expected outcome} of ``suite`` on ``lane``; a missing file is an error
    naming the command that writes it."""
    file = path(lane, suite)
    if not file.exists():
        raise FileNotFoundError(
            f"no expectations for {suite} on lane {lane!r} ({file}): write them with {REGENERATE}"
        )
    data = json.loads(file.read_text(encoding="utf-8"))
    if data.get("format") != FORMAT or data.get("suite") != suite:
        raise ValueError(f"{file}: not a format-{FORMAT} expectations file of {suite}")
    return dict(data["cases"])


def dumps(lane: str, suite: str, tvm: str, cases: Mapping[str, str]) -> str:
    """The file's text: sorted, one case per line, so a regeneration reads as a diff."""
    head = {"format": FORMAT, "suite": suite, "lane": lane, "tvm": tvm, "written_by": REGENERATE}
    lines = [f"  {json.dumps(k)}: {json.dumps(cases[k])}" for k in sorted(cases)]
    body = ",\n".join(lines)
    head_text = json.dumps(head, indent=1)[:-2]
    return f'{head_text},\n "cases": {{\n{body}\n }}\n}}\n'


# Excluded for a reason of the reference's own (op_corpus: TVM ran the case, its result is
# not scored): ranked between correct and refused, since TVM imported, built and ran it.
_UNSCORED = ("excluded no_reference", "excluded unjudgeable")


def _kind(outcome: str) -> str:
    return "unscored" if outcome.startswith(_UNSCORED) else outcome.split(" ", 1)[0]


def change(expected: str, actual: str) -> str:
    """``same``, ``regression`` or ``improvement``: how ``actual`` compares with ``expected``."""
    if expected == actual:
        return "same"
    exp_head, _, exp_numbers = expected.partition(_FIGURES)
    act_head, _, act_numbers = actual.partition(_FIGURES)
    if exp_head == act_head and exp_head.startswith("deviating "):
        # The same recorded deviation: its figures decide.
        return "regression" if number_drift(exp_numbers, act_numbers) else "same"
    exp_kind, act_kind = _kind(expected), _kind(actual)
    if "excluded" in (exp_kind, act_kind):
        # A case the kit stopped running is lost coverage; one it now runs is judged by its
        # outcome, and anything but correct from a case never run is no known behaviour.
        return "improvement" if exp_kind == "excluded" and act_kind == "correct" else "regression"
    if _RANK[act_kind] < _RANK[exp_kind]:
        return "improvement"
    # Worse, or another refusal or deviation of the same rank: not the behaviour pinned.
    return "regression"


@dataclasses.dataclass
class Judgement:
    """A run's cases against the expectations: lines of ``key: expected -> actual (detail)``."""

    same: int = 0
    regressions: list[str] = dataclasses.field(default_factory=list)
    improvements: list[str] = dataclasses.field(default_factory=list)
    stale: list[str] = dataclasses.field(default_factory=list)

    def problems(self, pinned_wheels: bool) -> list[str]:
        """The lines that fail the run: regressions and stale entries, and on the lane's
        pinned wheels (held exactly) the improvements too."""
        lines = [f"regression: {line}" for line in self.regressions]
        lines += [f"stale expectation: {line}" for line in self.stale]
        if pinned_wheels:
            lines += [f"stale expectation (improved on the pinned wheels): {line}" for line in
                      self.improvements]  # fmt: skip
        return lines

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def judge(results: Iterable[Any], names: Iterable[str], expected: Mapping[str, str]) -> Judgement:
    """Every result against ``expected``; ``names`` are the ops or modules the run held, or
    ``name@dtype`` (``name@dtype#kofm``) units of them (an expected case of one of them without
    a result is stale)."""
    verdict = Judgement()
    seen: set[str] = set()
    crashed: set[str] = set()
    for r in results:
        if r.frontend == "*" and r.index == -1:
            # A name whose child died stands for all of its cases (op_corpus_outcomes._split).
            crashed.add(r.name)
        key = case_key(r)
        seen.add(key)
        actual = outcome_of(r)
        want = expected.get(key)
        if want is None:
            if r.outcome == "failing":
                verdict.regressions.append(f"{key}: not listed -> failing ({r.detail[:300]})")
            else:
                verdict.stale.append(f"{key}: not listed -> {actual}")
            continue
        how = change(want, actual)
        if how == "same":
            verdict.same += 1
            continue
        want_head, _, want_numbers = want.partition(_FIGURES)
        actual_head, _, actual_numbers = actual.partition(_FIGURES)
        if want_head == actual_head:  # the same deviation, figures out of bounds
            drift = ", ".join(number_drift(want_numbers, actual_numbers))
            line = f"{key}: {want_head}: figures out of bounds ({drift})"
        else:
            line = f"{key}: {want_head} -> {actual_head}"
        line += f" ({r.detail[:300]})" if r.detail else ""
        (verdict.regressions if how == "regression" else verdict.improvements).append(line)
    # A name held whole, or in some dtypes (the whole corpus's ``name@dtype`` units), or some
    # of a dtype's samples (``name@dtype#kofm``: index k modulo m).
    held = set(names)
    parts: dict[str, set[tuple[int, int]]] = {}
    for unit in held:
        part = op_corpus_outcomes.unit_part(unit)
        if part is not None:
            name_dtype = f"{op_corpus_outcomes.unit_name(unit)}{op_corpus_outcomes.UNIT_SEP}"
            parts.setdefault(name_dtype + op_corpus_outcomes.unit_dtype(unit), set()).add(part)
    for key, want in sorted(expected.items()):
        _, name, dtype, _, index = key.split("|", 4)
        unit = f"{name}{op_corpus_outcomes.UNIT_SEP}{dtype}"
        in_part = any(int(index) % m == k for k, m in parts.get(unit, ()))
        if key not in seen and (name in held or unit in held or in_part) and name not in crashed:
            verdict.stale.append(f"{key}: {want} -> no result")
    return verdict


def judge_outcomes(actual: Mapping[str, str], expected: Mapping[str, str]) -> Judgement:
    """Every case's outcome (already in its pinned form) against ``expected``, for a suite
    that computes each case itself (the Relax op walk): a case on one side only is stale, a
    `failing` case not listed a regression."""
    verdict = Judgement()
    for key in sorted(actual):
        now, want = actual[key], expected.get(key)
        if want is None:
            line = f"{key}: not listed -> {now}"
            (verdict.regressions if now == "failing" else verdict.stale).append(line)
        elif (how := change(want, now)) == "same":
            verdict.same += 1
        else:
            line = f"{key}: {want} -> {now}"
            (verdict.regressions if how == "regression" else verdict.improvements).append(line)
    gone = [f"{k}: {w} -> no result" for k, w in sorted(expected.items()) if k not in actual]
    verdict.stale += gone
    return verdict


def assert_as_pinned(
    judgement: Judgement, lane: str, pinned_wheels: bool, suite: str, record_as: str, what: str
) -> None:
    """A test's end: its judgement written where the verdict reads it (the test's undeclared
    outputs, ``expectations_<record_as>.json``: improvements), each improvement printed (good
    news on a user's wheel), and an AssertionError with one line per problem (`regression:
    <case>: <expected> -> <actual>`, which the verdict reads as REGRESSION problems)."""
    out = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
    if out:
        with open(os.path.join(out, f"expectations_{record_as}.json"), "w", encoding="utf-8") as f:
            json.dump({"lane": lane, "pinned": pinned_wheels, **judgement.as_dict()}, f, indent=1)
    for line in judgement.improvements:
        print(f"improvement: {line}")
    problems = judgement.problems(pinned_wheels)
    assert not problems, (
        f"{len(problems)} {what}(s) of the {lane} lane's expectations changed "
        f"({path(lane, suite).name}; regenerate: {REGENERATE}):\n" + "\n".join(problems)
    )
