"""Every module the wheel ships imports from the installed wheel, and ships what it imports.

The module list of the wheel (`[tool.tvm_conformance.wheel]` of python/pyproject.toml, passed
file by file by python/BUILD.bazel) is written by hand; a module that a shipped one imports
but the list leaves out makes the release unimportable (model_import needed numerics). Two
checks: the list is closed under the package's own imports, read from the sources (every
`import`, at module level or inside a function); and each listed module, `verify_model`
included, imports in conftest.py's fresh venv from the installed files, with torch present
(the `torch` extra that model_import and numerics need).
"""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from tvm_conformance.runfiles import rlocation

if TYPE_CHECKING:
    from conftest import FreshVenv

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

PACKAGE = "tvm_conformance"
with open(rlocation("python/pyproject.toml"), "rb") as _f:
    SHIPPED: list[str] = tomllib.load(_f)["tool"][PACKAGE]["wheel"]["modules"]


def _package_imports(source: str) -> set[str]:
    """The tvm_conformance modules `source` imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] != PACKAGE:
                continue
            # `from tvm_conformance import x` names modules; `from tvm_conformance.x import y`
            # names a module's attributes.
            found |= {a.name for a in node.names} if len(parts) == 1 else {parts[1]}
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            found |= {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith(PACKAGE + ".")}
    return found


def test_the_reader_sees_every_import_form() -> None:
    source = (
        "import tvm_conformance.a\n"
        "from tvm_conformance import b, c as d\n"
        "from tvm_conformance.e import f\n"
        "from . import g\n"
        "from .h import i\n"
        "def late():\n"
        "    from tvm_conformance import j\n"
        "import tvm, tvm_conformance_other\n"
    )
    assert _package_imports(source) == {"a", "b", "c", "e", "g", "h", "j"}


def test_the_shipped_modules_ship_what_they_import() -> None:
    package = Path(rlocation(f"python/{PACKAGE}/__init__.py")).parent
    missing = {
        module: sorted(_package_imports((package / f"{module}.py").read_text()) - set(SHIPPED))
        for module in SHIPPED
    }
    missing = {module: names for module, names in missing.items() if names}
    assert not missing, (
        f"shipped modules import modules the wheel leaves out: {missing}; add them to "
        "[tool.tvm_conformance.wheel] modules (python/pyproject.toml) and python/BUILD.bazel"
    )


# Imports each module from the installed files; prints {module: file or the error}.
_IMPORT_ALL = """
import importlib, json, sys
found = {}
for name in sys.argv[1:]:
    try:
        found[name] = importlib.import_module(name).__file__
    except BaseException as err:
        found[name] = f"{type(err).__name__}: {err}"
try:
    from tvm_conformance.model_import import verify_model
    found["verify_model"] = verify_model.__module__
except BaseException as err:
    found["verify_model"] = f"{type(err).__name__}: {err}"
print(json.dumps(found))
"""


def test_every_shipped_module_imports_from_the_installed_wheel(fresh: FreshVenv) -> None:
    names = [PACKAGE if m == "__init__" else f"{PACKAGE}.{m}" for m in SHIPPED]
    result = subprocess.run(
        [fresh.python, "-c", _IMPORT_ALL, *names],
        env=fresh.env(),
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(result.stdout.splitlines()[-1])
    installed = fresh.site / PACKAGE
    expected = {
        name: str(installed / f"{'__init__' if name == PACKAGE else name.split('.')[1]}.py")
        for name in names
    }
    assert found == {**expected, "verify_model": f"{PACKAGE}.model_import"}
