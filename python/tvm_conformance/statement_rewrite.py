"""Run a unittest method statement by statement: chosen statements checked alone or left out.

A test method written for another type (CPython's `test.seq_tests` and friends) stops at its
first failing statement, so one known deviation hides every check after it. This module
recompiles the method from its source with the statements named by :class:`Patch` changed:

* a checked patch runs its statement inside ``try``; the hook's ``accept`` decides whether a
  failure is the recorded one (the method goes on, running ``instead``: statements that give
  the later checks the effect the failed one should have had) or not (the failure propagates);
* a left-out patch (``run=False``) runs ``instead`` where the statement was, or nothing.

A statement is named by its normalized source (``ast.unparse``) inside its function, never by
line number, so one table serves every CPython version that keeps the statement. Each statement
node (at any depth, nested functions and classes included) reports when it starts, for counts
of what ran. A call to another test method, ``Base.test_x(self)`` or ``super().test_x()``, runs
that method rewritten too, so a statement of an inherited method is reached from its callers.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
import unittest
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

# Names the rewritten code binds; long so they cannot shadow a name of the method.
HOOKS = "_statement_rewrite_hooks"
_ERROR = "_statement_rewrite_error"


@dataclass(frozen=True)
class Patch:
    """One statement of one function, checked on its own or left out."""

    where: str  # function_id() of the function holding it: "mapping_tests.Cls.test_update"
    statement: str  # its source; compared after normalize()
    key: str  # the patch's name in Run.outcomes, unique within one Run
    run: bool = True  # False: left out
    instead: str = ""  # statements run after an accepted failure, or in place of a left-out one
    # A checked statement's pass is recorded after it (try's else), so one that leaves its
    # block (return, break, continue) is recorded only where it fails.


def normalize(source: str) -> str:
    """The source of one statement as ``ast.unparse`` writes it (layout and comments gone)."""
    body = ast.parse(textwrap.dedent(source)).body
    if len(body) != 1:
        raise ValueError(f"not one statement: {source!r}")
    return ast.unparse(body[0])


def function_id(func: types.FunctionType) -> str:
    """``<module's last part>.<qualname>``: seq_tests and list_tests both have CommonTest."""
    return f"{func.__module__.rpartition('.')[2]}.{func.__qualname__}"


def defining_class(cls: type, name: str, after: type | None = None) -> type | None:
    """The class of ``cls.__mro__`` (past ``after``, as super() looks) whose dict holds ``name``."""
    mro = cls.__mro__
    start = mro.index(after) + 1 if after is not None else 0
    return next((klass for klass in mro[start:] if name in vars(klass)), None)


def _parse(func: types.FunctionType) -> ast.FunctionDef:
    """The function's definition, at its own line numbers in its file."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    ast.increment_lineno(tree, inspect.unwrap(func).__code__.co_firstlineno - 1)
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise TypeError(f"{function_id(func)} is not a plain function definition")
    return node


def _walk_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body`` at any depth, in source order (pre-order)."""
    for stmt in body:
        yield stmt
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                yield from _walk_statements([child])
            elif isinstance(child, (ast.excepthandler, ast.match_case)):
                yield from _walk_statements(child.body)


def statements(func: types.FunctionType) -> list[str]:
    """The normalized source of every statement node of the function's body, at any depth."""
    return [ast.unparse(stmt) for stmt in _walk_statements(_parse(func).body)]


def _is_super_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "super"
        and not node.args
    )


def _test_method_call(node: ast.AST) -> ast.Attribute | None:
    """``X.test_y`` of a call ``X.test_y(...)`` with X a name or ``super()``, else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    func = node.func
    if func.attr.startswith("test") and (
        isinstance(func.value, ast.Name) or _is_super_call(func.value)
    ):
        return func
    return None


def called_test_methods(owner: type, func: types.FunctionType) -> list[types.FunctionType]:
    """The test methods ``func`` (defined in ``owner``) calls, and theirs, resolved statically
    as the rewritten code resolves them when it runs (a name in the function's globals)."""
    found: list[types.FunctionType] = []
    for node in ast.walk(_parse(func)):
        call = _test_method_call(node)
        if call is None:
            continue
        if isinstance(call.value, ast.Name):
            base = func.__globals__.get(call.value.id)
            klass = defining_class(base, call.attr) if isinstance(base, type) else None
        else:
            klass = defining_class(owner, call.attr, after=owner)
        callee = vars(klass)[call.attr] if klass is not None else None
        if isinstance(callee, types.FunctionType):
            found += [callee, *called_test_methods(klass, callee)]
    return found


class _RedirectTestMethodCalls(ast.NodeTransformer):
    """``X.test_y(...)`` -> ``HOOKS.method(X, 'test_y')(...)``: the callee runs rewritten."""

    def visit_Call(self, node: ast.Call) -> ast.AST:  # noqa: N802 (ast's visitor name)
        self.generic_visit(node)
        call = _test_method_call(node)
        if call is not None:
            hooks = ast.Attribute(ast.Name(HOOKS, ast.Load()), "method", ast.Load())
            node.func = ast.Call(hooks, [call.value, ast.Constant(call.attr)], [])
            ast.copy_location(node.func, call)
            ast.fix_missing_locations(node)
        return node


def _located(nodes: list[ast.stmt], where: ast.stmt) -> list[ast.stmt]:
    """``nodes`` placed at ``where``'s lines (a traceback through them names the statement)."""
    for node in nodes:
        for sub in ast.walk(node):
            if "lineno" in sub._attributes:
                sub.lineno, sub.col_offset = where.lineno, where.col_offset
                sub.end_lineno, sub.end_col_offset = where.end_lineno, where.end_col_offset
    return nodes


def _template(source: str, where: ast.stmt, **holes: list[ast.stmt]) -> list[ast.stmt]:
    """``source`` parsed, each bare name statement ``<hole>`` replaced by ``holes[hole]``."""

    class Fill(ast.NodeTransformer):
        def visit_Expr(self, node: ast.Expr) -> Any:  # noqa: N802 (ast's visitor name)
            if isinstance(node.value, ast.Name) and node.value.id in holes:
                return holes[node.value.id]
            return node

    return [Fill().visit(stmt) for stmt in _located(ast.parse(source).body, where)]


class _Rewriter:
    """Rewrites one function's body for one Run."""

    def __init__(self, fid: str, patches: dict[str, Patch]) -> None:
        self.fid = fid
        self.patches = patches  # normalized statement -> patch, for this function

    def body(self, body: list[ast.stmt], keys: dict[int, tuple[int, str]]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in body:
            index, source = keys[id(stmt)]
            patch = self.patches.get(source)
            instead = _located(ast.parse(patch.instead).body, stmt) if patch else []
            if patch is not None and not patch.run:
                out += instead  # left out: not reported as started
                continue
            self._children(stmt, keys)
            start = f"{HOOKS}.start({self.fid!r}, {index})"
            out += _located(ast.parse(start).body, stmt)
            if patch is None:
                out.append(stmt)
                continue
            out += _template(
                f"try:\n    stmt\nexcept BaseException as {_ERROR}:\n"
                f"    if not {HOOKS}.failed({patch.key!r}, {_ERROR}):\n        raise\n"
                f"    instead\nelse:\n    {HOOKS}.passed({patch.key!r})\n",
                stmt,
                stmt=[stmt],
                instead=instead or [ast.Pass()],
            )
        if not out:  # every statement left out, nothing instead
            out = _located([ast.Pass()], body[0])
        return out

    def _children(self, stmt: ast.stmt, keys: dict[int, tuple[int, str]]) -> None:
        for name in ("body", "orelse", "finalbody"):
            child = getattr(stmt, name, None)
            if isinstance(child, list) and child and isinstance(child[0], ast.stmt):
                setattr(stmt, name, self.body(child, keys))
        for holder in [*getattr(stmt, "handlers", []), *getattr(stmt, "cases", [])]:
            holder.body = self.body(holder.body, keys)


@dataclass
class Run:
    """One rewritten run of test methods: the patches in force and what happened to them.

    ``accept(patch, error)`` says whether a checked statement's failure is its recorded one.
    """

    patches: Iterable[Patch]
    accept: Callable[[Patch, BaseException], bool] = lambda patch, error: False
    # Patch key -> each time the statement ran: None where it passed, else its exception.
    outcomes: dict[str, list[BaseException | None]] = field(default_factory=dict)
    # function_id -> indices (statements() order) of the statements that started.
    started: dict[str, set[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.patches = tuple(self.patches)
        self._by_key = {patch.key: patch for patch in self.patches}
        if len(self._by_key) != len(self.patches):
            raise ValueError("patch keys repeat")
        self._by_where: dict[str, dict[str, Patch]] = {}
        for patch in self.patches:
            self._by_where.setdefault(patch.where, {})[normalize(patch.statement)] = patch
        self._compiled: dict[types.FunctionType, types.FunctionType] = {}

    def rewritten(self, func: types.FunctionType, owner: type) -> types.FunctionType:
        """``func`` (defined in class ``owner``) recompiled with this run's patches."""
        if func not in self._compiled:
            fid = function_id(func)
            node = _parse(func)
            keys = {
                id(stmt): (index, ast.unparse(stmt))
                for index, stmt in enumerate(_walk_statements(node.body))
            }
            _RedirectTestMethodCalls().visit(node)
            node.body = _Rewriter(fid, self._by_where.get(fid, {})).body(node.body, keys)
            # The hooks reach the code as a keyword-only argument whose default is this run
            # (nested functions and classes see it as a closure): the module's globals stay
            # untouched.
            node.args.kwonlyargs.append(ast.arg(HOOKS))
            node.args.kw_defaults.append(None)
            # Compiled in a class of the owner's name, so `__private` names mangle and nested
            # classes are named (`Owner.test_x.<locals>.Bad`) as in the original.
            module = ast.parse(f"class {owner.__name__}:\n    pass")
            wrapper = module.body[0]
            assert isinstance(wrapper, ast.ClassDef)
            wrapper.body = [node]
            ast.fix_missing_locations(module)
            namespace: dict[str, Any] = {}
            code = compile(module, inspect.getsourcefile(func) or fid, "exec")
            exec(code, func.__globals__, namespace)  # the method's own module globals
            new = vars(namespace[owner.__name__])[node.name]
            new.__kwdefaults__ = {**(new.__kwdefaults__ or {}), HOOKS: self}
            if "__class__" in new.__code__.co_freevars:  # super() looks up the real class
                cell = new.__closure__[new.__code__.co_freevars.index("__class__")]
                cell.cell_contents = owner
            self._compiled[func] = new
        return self._compiled[func]

    def run(self, case: unittest.TestCase) -> list[BaseException]:
        """Run ``case`` (setUp, its method rewritten, tearDown); its failures and errors."""
        name = case._testMethodName
        owner = defining_class(type(case), name)
        if owner is None:
            raise AttributeError(f"{type(case).__name__} has no method {name}")
        setattr(case, name, types.MethodType(self.rewritten(vars(owner)[name], owner), case))
        errors: list[BaseException] = []

        class Collect(unittest.TestResult):
            def addFailure(self, test: Any, err: Any) -> None:  # noqa: N802 (unittest's name)
                errors.append(err[1])

            def addError(self, test: Any, err: Any) -> None:  # noqa: N802
                errors.append(err[1])

            def addSubTest(self, test: Any, subtest: Any, err: Any) -> None:  # noqa: N802
                if err is not None:
                    errors.append(err[1])

        case.run(Collect())
        return errors

    # The hooks the rewritten code calls.

    def start(self, fid: str, index: int) -> None:
        """A statement started."""
        self.started.setdefault(fid, set()).add(index)

    def passed(self, key: str) -> None:
        """A checked statement ran through."""
        self.outcomes.setdefault(key, []).append(None)

    def failed(self, key: str, error: BaseException) -> bool:
        """A checked statement raised: True (go on) if ``accept`` takes it as recorded."""
        self.outcomes.setdefault(key, []).append(error)
        return self.accept(self._by_key[key], error)

    def method(self, owner: Any, name: str) -> Any:
        """``owner.name`` for a call in rewritten code, itself rewritten where it is a test
        method found through a class (``Base.test_x``) or ``super()``."""
        if isinstance(owner, super):
            this, obj = owner.__thisclass__, owner.__self__
            klass = defining_class(type(obj), name, after=this)
            func = vars(klass).get(name) if klass is not None else None
            if isinstance(func, types.FunctionType):
                return types.MethodType(self.rewritten(func, klass), obj)
        elif isinstance(owner, type):
            klass = defining_class(owner, name)
            func = vars(klass).get(name) if klass is not None else None
            if isinstance(func, types.FunctionType):
                return self.rewritten(func, klass)
        return getattr(owner, name)
