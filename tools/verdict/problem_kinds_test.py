"""docs/results.md's "Reading a FAIL" table has one row per problem kind the verdict raises.

The kinds come from verdict.py's own source, read with `ast` (never imported for it): every
string or f-string that reaches a problems list (`problems.append(...)`, `.extend(...)`,
`problems += ...`, and what the functions called there return), its text up to the first `:`
or the first word that is not upper case. A formatted value inside the kind becomes
`<name>` (`f"TARGET {target.status}: ..."` is `TARGET <status>`); a local f-string a problem
starts with (`where = f"VARIANT ISOLATION: ..."; problems.append(f"{where} ...")`) is read
through. A kind the table lacks fails, and so does a row for a kind the verdict no longer
raises. The table's second part, the other lines that fail a run, names for each line the file
that prints it, and the line's fixed text must be in that file.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tvm_conformance.runfiles import rlocation

VERDICT = "tools/verdict/verdict.py"
RESULTS_DOC = "docs/results.md"
# The header cells that start the two tables of docs/results.md this test reads.
KINDS_HEADER = "problem kind"
OTHER_LINES_HEADER = "line"
# Kind-shaped strings of verdict.py that are not problems: the verdict line's own
# `PARTIAL: <what it left out>` label (Verdict.line). By (function, kind).
NOT_PROBLEMS = frozenset({("line", "PARTIAL")})

_WORD = re.compile(r"[A-Z][A-Z0-9_]*|<[A-Za-z_][A-Za-z0-9_]*>")
_KIND_SHAPED = re.compile(r"^[A-Z][A-Z0-9_]+(?: [A-Z][A-Z0-9_]*)*:")


class KindError(Exception):
    """A problem string whose kind cannot be read: the test says where, never guesses."""


def kind_of(text: str) -> str:
    """The kind a problem's text starts with: its upper-case words (and `<placeholders>`) up to
    the first `:` or the first other word. `TARGET <status>: //x` -> `TARGET <status>`."""
    words = []
    for token in text.split(" "):
        word, colon = (token[:-1], True) if token.endswith(":") else (token, False)
        if not _WORD.fullmatch(word):
            break
        words.append(word)
        if colon:
            break
    if not words or words[0].startswith("<"):
        raise KindError(f"no upper-case kind at the start of {text[:60]!r}")
    return " ".join(words)


@dataclass
class _Scope:
    """One function: its local assignments by name."""

    name: str
    assigned: dict[str, list[ast.expr]] = field(default_factory=dict)


def _is_problems(node: ast.AST) -> bool:
    """A problems list: a local or attribute whose name says so (`problems`, `self.problems`)."""
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return isinstance(name, str) and "problems" in name


class ProblemKinds:
    """The problem kinds of one module's source, and where each is raised."""

    def __init__(self, source: str) -> None:
        self.tree = ast.parse(source)
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.functions.setdefault(node.name, node)
        # kind -> the lines that raise it; every string node reached (by id) with its function.
        self.kinds: dict[str, list[int]] = {}
        self.reached: set[int] = set()
        self._visiting: set[str] = set()
        for function in self.functions.values():
            scope = self._scope(function)
            for source in self._sinks(function):
                self._collect(source, scope)

    @staticmethod
    def _scope(function: ast.FunctionDef | ast.AsyncFunctionDef) -> _Scope:
        scope = _Scope(function.name)
        for node in ast.walk(function):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None:
                targets, value = [node.target], node.value
            for target in targets:
                if isinstance(target, ast.Name):
                    scope.assigned.setdefault(target.id, []).append(value)
        return scope

    @staticmethod
    def _sinks(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
        """What goes into a problems list in this function's own body."""
        sinks: list[ast.expr] = []
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and _is_problems(node.func.value)
            ):
                method, args = node.func.attr, node.args
                if method == "append" and args:
                    sinks.append(ast.List(elts=[args[0]]))
                elif method == "insert" and len(args) > 1:
                    sinks.append(ast.List(elts=[args[1]]))
                elif method == "extend" and args:
                    sinks.append(args[0])
            elif isinstance(node, ast.AugAssign) and _is_problems(node.target):
                sinks.append(node.value)
            elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(_is_problems(t) for t in targets):
                    sinks.append(node.value)
        return sinks

    def _collect(self, node: ast.expr, scope: _Scope) -> None:
        """Every problem string `node` (a collection of problems) can give."""
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    self._collect(element.value, scope)
                else:
                    self._record(element, scope)
        elif isinstance(node, ast.ListComp | ast.GeneratorExp | ast.SetComp):
            self._record(node.elt, scope)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            self._collect(node.left, scope)
            self._collect(node.right, scope)
        elif isinstance(node, ast.IfExp):
            self._collect(node.body, scope)
            self._collect(node.orelse, scope)
        elif isinstance(node, ast.Name):
            if not _is_problems(node):  # another problems list: its own sinks count it
                for value in self._assigned(node, scope):
                    self._collect(value, scope)
        elif isinstance(node, ast.Call):
            called = node.func.id if isinstance(node.func, ast.Name) else None
            if called in self.functions:
                self._returns(called)
            else:  # list(...), sorted(...), dict.fromkeys(...): what they are given
                for arg in node.args:
                    self._collect(arg, scope)
        elif not (isinstance(node, ast.Attribute) and _is_problems(node)):
            raise KindError(
                f"{scope.name}, line {node.lineno}: cannot tell what problems "
                f"{ast.unparse(node)!r} holds"
            )

    def _returns(self, name: str) -> None:
        """The problems a module function returns (it is called where problems are added)."""
        if name in self._visiting:
            return
        self._visiting.add(name)
        function = self.functions[name]
        scope = self._scope(function)
        for node in ast.walk(function):
            if isinstance(node, ast.Return) and node.value is not None:
                self._collect(node.value, scope)
        self._visiting.discard(name)

    def _assigned(self, name: ast.Name, scope: _Scope) -> list[ast.expr]:
        values = scope.assigned.get(name.id)
        if not values:
            raise KindError(f"{scope.name}, line {name.lineno}: {name.id!r} is not assigned here")
        return values

    def _record(self, node: ast.expr, scope: _Scope) -> None:
        """One problem string: its kind (each branch of a conditional its own)."""
        if isinstance(node, ast.IfExp):
            self._record(node.body, scope)
            self._record(node.orelse, scope)
            return
        self.reached.add(id(node))
        for text in self._texts(node, scope):
            self.kinds.setdefault(kind_of(text), []).append(node.lineno)

    def _texts(self, node: ast.expr, scope: _Scope, depth: int = 0) -> list[str]:
        """The text a string expression starts with; formatted values as `<name>`, a local
        string read through (each of its assignments)."""
        if depth > 10:
            raise KindError(f"{scope.name}, line {node.lineno}: strings nested too deep")
        self.reached.add(id(node))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.JoinedStr):
            texts = [""]
            for part in node.values:
                if isinstance(part, ast.Constant):
                    pieces = [str(part.value)]
                else:
                    pieces = self._formatted(part, scope, depth)
                texts = [t + p for t in texts for p in pieces]
            return texts
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self._texts(node.left, scope, depth + 1)
            right = self._texts(node.right, scope, depth + 1)
            return [a + b for a in left for b in right]
        if isinstance(node, ast.Name) and node.id in scope.assigned:
            return [
                t for v in self._assigned(node, scope) for t in self._texts(v, scope, depth + 1)
            ]
        raise KindError(
            f"{scope.name}, line {node.lineno}: a problem that is not a string or f-string: "
            f"{ast.unparse(node)!r}"
        )

    def _formatted(self, part: ast.expr, scope: _Scope, depth: int) -> list[str]:
        value = part.value if isinstance(part, ast.FormattedValue) else part
        if isinstance(value, ast.Name) and value.id in scope.assigned:
            strings = [
                v
                for v in scope.assigned[value.id]
                if isinstance(v, ast.JoinedStr)
                or (isinstance(v, ast.Constant) and isinstance(v.value, str))
            ]
            if strings:
                return [t for v in strings for t in self._texts(v, scope, depth + 1)]
        while isinstance(value, ast.Subscript | ast.Call):
            value = value.value if isinstance(value, ast.Subscript) else value.func
        name = value.attr if isinstance(value, ast.Attribute) else getattr(value, "id", "value")
        return [f"<{name}>"]

    def kind_shaped_unreached(self) -> list[tuple[str, str, int]]:
        """(function, kind, line) of every string in the module that starts like a problem
        (`WORDS IN CAPITALS:`) but reaches no problems list."""
        found = []
        for function in self.functions.values():
            nested = {
                id(v) for n in ast.walk(function) if isinstance(n, ast.JoinedStr) for v in n.values
            }
            for node in ast.walk(function):
                if id(node) in self.reached or id(node) in nested:
                    continue
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    text = node.value
                elif isinstance(node, ast.JoinedStr) and isinstance(
                    first := (node.values or [None])[0], ast.Constant
                ):
                    text = str(first.value)
                else:
                    continue
                if _KIND_SHAPED.match(text):
                    found.append((function.name, kind_of(text), node.lineno))
        return found


def _table(markdown: str, header: str) -> list[list[str]]:
    """The rows (cells, stripped) of the table whose first header cell is `header`."""
    rows: list[list[str]] = []
    inside = False
    for line in markdown.splitlines():
        line = line.strip()
        cells = [c.strip() for c in line.strip("|").split("|")] if line.startswith("|") else []
        if not inside:
            inside = bool(cells) and cells[0] == header
            continue
        if not cells:
            break
        if set(cells[0]) <= set("-: "):
            continue
        rows.append(cells)
    return rows


def table_kinds(markdown: str) -> list[str]:
    """The kinds of the problem-kind table (first cell, in backticks)."""
    kinds = []
    for cells in _table(markdown, KINDS_HEADER):
        match = re.fullmatch(r"`([^`]+)`", cells[0])
        if not match:
            raise AssertionError(f"{RESULTS_DOC}: a problem kind not in backticks: {cells[0]}")
        kinds.append(match[1])
    return kinds


def drift(raised: set[str], table: list[str]) -> list[str]:
    """What is wrong between the kinds raised and the table's rows, one line each."""
    wrong = [
        f"`{k}`: raised by {VERDICT}, no row in {RESULTS_DOC}" for k in sorted(raised - set(table))
    ]
    wrong += [
        f"`{k}`: a row in {RESULTS_DOC}, not raised by {VERDICT}"
        for k in sorted(set(table) - raised)
    ]
    wrong += [
        f"`{k}`: {RESULTS_DOC} has {table.count(k)} rows"
        for k in sorted(set(table))
        if table.count(k) > 1
    ]
    return wrong


def _verdict() -> ProblemKinds:
    return ProblemKinds(Path(rlocation(VERDICT)).read_text(encoding="utf-8"))


def _doc() -> str:
    return Path(rlocation(RESULTS_DOC)).read_text(encoding="utf-8")


def test_every_kind_the_verdict_raises_has_one_row_and_every_row_is_raised() -> None:
    kinds = _verdict()
    wrong = drift(set(kinds.kinds), table_kinds(_doc()))
    assert not wrong, "the problem kinds and docs/results.md's table differ:\n" + "\n".join(wrong)


def test_the_kinds_read_from_verdict_py() -> None:
    """A floor, so that a reader that finds nothing cannot pass: kinds of every shape."""
    kinds = set(_verdict().kinds)
    assert {"FAILED", "TARGET <status>", "EMPTY RUN", "UNREADABLE", "VARIANT ISOLATION"} <= kinds
    assert {"XPASS", "GPU TARGET NOT RUN", "BAZEL EXIT UNKNOWN", "MISSING"} <= kinds


def test_no_kind_shaped_string_of_verdict_py_escapes_the_reader() -> None:
    """A problem added some way the reader does not follow (a list of another name) fails."""
    unreached = [
        f"{function}, line {line}: {kind}"
        for function, kind, line in _verdict().kind_shaped_unreached()
        if (function, kind) not in NOT_PROBLEMS
    ]
    assert not unreached, "kind-shaped strings that reach no problems list:\n" + "\n".join(
        unreached
    )


def test_each_other_line_is_printed_by_the_file_it_names() -> None:
    rows = _table(_doc(), OTHER_LINES_HEADER)
    assert rows, f"{RESULTS_DOC}: no table of the other lines that fail a run"
    wrong = []
    for cells in rows:
        line, where = re.fullmatch(r"`([^`]+)`", cells[0]), re.search(r"`([^`]+)`", cells[1])
        if not line or not where:
            wrong.append(f"row without a `line` or a `file`: {cells[:2]}")
            continue
        fixed = re.split(r"<|\.\.\.", line[1])[0]
        if fixed.strip() not in Path(rlocation(where[1])).read_text(encoding="utf-8"):
            wrong.append(f"{where[1]} does not print {fixed.strip()!r}")
    assert not wrong, "\n".join(wrong)


# The reader itself, on planted sources: each way the table and the code can drift is caught.

PLANTED = textwrap.dedent(
    """
    def verdict_of(run):
        problems = []
        problems.append("EMPTY RUN: nothing")
        problems.append(f"TARGET {target.status}: {label}")
        problems.extend(f"UNREADABLE: {e}" for e in errors)
        problems += other_problems(run)
        problems.append(f"BAZEL EXIT {code}: failed" if code else "BAZEL EXIT UNKNOWN: none")
        problems = list(dict.fromkeys(problems))
        return problems

    def other_problems(run):
        where = f"VARIANT ISOLATION: {run.label}"
        if run.x:
            return [f"{where} records something"]
        return [f"GPU TARGET NOT RUN: {t}" for t in run.targets] + helper(run)

    def helper(run):
        return ["NOTHING PASSED: not one"]
    """
)


def test_the_reader_follows_every_way_a_problem_is_added() -> None:
    assert set(ProblemKinds(PLANTED).kinds) == {
        "EMPTY RUN",
        "TARGET <status>",
        "UNREADABLE",
        "BAZEL EXIT <code>",
        "BAZEL EXIT UNKNOWN",
        "VARIANT ISOLATION",
        "GPU TARGET NOT RUN",
        "NOTHING PASSED",
    }


def test_a_new_kind_and_a_removed_kind_are_both_caught() -> None:
    planted = PLANTED.replace('"EMPTY RUN: nothing"', 'f"NEW KIND: {run}"')
    raised = set(ProblemKinds(planted).kinds)
    table = sorted(set(ProblemKinds(PLANTED).kinds))
    assert drift(raised, table) == [
        f"`NEW KIND`: raised by {VERDICT}, no row in {RESULTS_DOC}",
        f"`EMPTY RUN`: a row in {RESULTS_DOC}, not raised by {VERDICT}",
    ]
    assert drift(raised, [*table, "NEW KIND", "NEW KIND"]) == [
        f"`EMPTY RUN`: a row in {RESULTS_DOC}, not raised by {VERDICT}",
        f"`NEW KIND`: {RESULTS_DOC} has 2 rows",
    ]


def test_the_real_table_fails_on_a_planted_kind() -> None:
    source = Path(rlocation(VERDICT)).read_text(encoding="utf-8")
    planted = source.replace('"EMPTY RUN: no test target', '"PLANTED DRIFT: no test target', 1)
    assert planted != source
    wrong = drift(set(ProblemKinds(planted).kinds), table_kinds(_doc()))
    assert wrong == [
        f"`PLANTED DRIFT`: raised by {VERDICT}, no row in {RESULTS_DOC}",
        f"`EMPTY RUN`: a row in {RESULTS_DOC}, not raised by {VERDICT}",
    ]


@pytest.mark.parametrize(
    "source",
    [
        "def f():\n    problems.append(f'{label} failed')\n",  # no kind
        "def f():\n    problems.append(message)\n",  # not a string the reader can read
        "def f():\n    problems.extend(elsewhere.found)\n",
    ],
)
def test_a_problem_without_a_readable_kind_fails(source: str) -> None:
    with pytest.raises(KindError):
        ProblemKinds(source)


def test_a_kind_shaped_string_outside_problems_is_found() -> None:
    source = "def f():\n    issues.append(f'LOST KIND: {x}')\n    problems.append('KEPT: y')\n"
    assert ProblemKinds(source).kind_shaped_unreached() == [("f", "LOST KIND", 2)]


def test_kind_of() -> None:
    assert kind_of("TARGET <status>: //a:b") == "TARGET <status>"
    assert kind_of("SKIPPED ON A GPU RUNNER: //a:b :: c") == "SKIPPED ON A GPU RUNNER"
    assert kind_of("XPASS: //a:b :: c passed") == "XPASS"
    assert kind_of("NO CASES: //a passed") == "NO CASES"
    assert kind_of("NOT RUN: //a :: b (a row)") == "NOT RUN"
    with pytest.raises(KindError):
        kind_of("<where> records x")
