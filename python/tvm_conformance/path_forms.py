"""Path arguments in the forms users write, and the path-taking functions found by their names.

The forms (:data:`FORMS`) and the temporary tree they point into (:func:`make_tree`) are shared
by ``vm_path_forms_test`` and ``path_functions_test``; a written file is checked against where
the OS resolves the path (:func:`expect_written`: the file ``open(path, "w")`` would create,
same inode, and nothing else in the tree).

:func:`discover` walks the public modules of :data:`ROOTS` (and their public submodules that
import) for every public function and method with a parameter whose name says it is a path
(:func:`is_path_parameter`). Run it in a child process (:func:`discover_in_child`): importing
every submodule registers their globals, which the test process should not inherit.

Importing ``tvm.contrib.download`` creates TVM's test-data cache, ``~/.tvm_test_data`` unless
``TEST_DATA_ROOT_PATH`` says otherwise: in Bazel's sandbox the home directory is read-only, so
the import fails on a machine where that directory does not exist yet, and a test must not
write into the user's home anyway. :func:`isolate_test_data` points it into a temporary
directory first (the walk's child inherits it).
"""

from __future__ import annotations

import atexit
import importlib
import inspect
import json
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from tvm_conformance import crash_isolation

# Each form, given the file name and the (temporary) working directory.
FORMS: dict[str, Callable[[str, Path], str | os.PathLike]] = {
    "absolute": lambda name, cwd: os.fspath(cwd / name),
    "relative": lambda name, cwd: name,
    "dot-slash": lambda name, cwd: "./" + name,
    "subdir": lambda name, cwd: "sub/" + name,
    "pathlib-relative": lambda name, cwd: Path(name),
    "pathlib-absolute": lambda name, cwd: cwd / name,
    # Outside the working directory: a wheel that writes such a file into the working directory
    # (or resolves it against another one) puts it where the OS would not.
    "sibling": lambda name, cwd: "../elsewhere/" + name,
    "parent": lambda name, cwd: "../" + name,
    "symlinked-dir": lambda name, cwd: "../link/" + name,
    "spaces": lambda name, cwd: "../dir with space/a " + name,
    "non-ascii": lambda name, cwd: "../répertoire/é" + name,
    "absolute-elsewhere": lambda name, cwd: os.fspath(cwd.parent / "elsewhere" / name),
    "pathlib-sibling": lambda name, cwd: Path("..") / "elsewhere" / name,
}
STR_FORMS = [f for f in FORMS if not f.startswith("pathlib")]
PATHLIB_FORMS = [f for f in FORMS if f.startswith("pathlib")]


def make_tree(root: Path) -> Path:
    """root/work (the working directory to be, with sub/), beside root/elsewhere, root/link (a
    symlink to elsewhere), root/dir with space and root/répertoire; returns root/work."""
    work = root / "work"
    (work / "sub").mkdir(parents=True)
    for name in ("elsewhere", "dir with space", "répertoire"):
        (root / name).mkdir()
    (root / "link").symlink_to(root / "elsewhere", target_is_directory=True)
    return work


def files(root: Path) -> set[Path]:
    """Every file under ``root``, symlinks not followed (a file reached through root/link is
    found once, in root/elsewhere)."""
    return {Path(d, f) for d, _, names in os.walk(root) for f in names}


def resolved(path: str | os.PathLike) -> Path:
    """Where the OS puts ``path``: the file ``open(path, "w")`` would create."""
    return Path(os.path.realpath(path))


def expect_written(path: str | os.PathLike, cwd: Path, before: set[Path]) -> None:
    """The call wrote exactly one file, the one ``open(path, "w")`` would have created (the
    same inode), and the working directory holds nothing else."""
    target = resolved(path)
    gained = files(cwd.parent) - before
    assert gained == {target}, f"{path!r} resolves to {target}; the tree gained {gained}"
    (found,) = gained
    assert os.stat(found).st_ino == os.stat(target).st_ino, (path, found, target)
    assert files(cwd) <= {target}, f"the working directory holds {files(cwd) - {target}}"


def expect_written_under(path: str | os.PathLike, cwd: Path, before: set[Path]) -> set[str]:
    """The call wrote files only inside the directory ``path`` resolves to (at least one);
    returns their names there."""
    target = resolved(path)
    gained = files(cwd.parent) - before
    outside = {f for f in gained if target not in f.parents}
    assert gained and not outside, f"{path!r} resolves to {target}; the tree gained {gained}"
    assert files(cwd) <= gained, f"the working directory holds {files(cwd) - gained}"
    return {os.fspath(f.relative_to(target)) for f in gained}


# --- discovery ------------------------------------------------------------------------------

# The packages walked, with their public submodules.
ROOTS = ("tvm.runtime", "tvm.relax", "tvm.contrib")
# A parameter is a path if one of its underscore-separated words (or its whole name) is one
# of these: `path`, `file_name`, `filepath`, `cache_dir`, `work_dir`, `relpath`, `files`, ...
PATH_WORDS = re.compile(
    r"(?:^|_)(?:path|paths|file|files|fname|filename|filepath|cachepath|relpath|dir|dirname|"
    r"directory)(?:$|_)"
)
# Names that match and are not file-system paths.
NOT_PATH_PARAMETERS = {
    "path_to_underline": "an ObjectPath into the printed IR (script_printer), not a file",
    "path_to_annotate": "an ObjectPath into the printed IR (script_printer), not a file",
}


def is_path_parameter(name: str) -> bool:
    return bool(PATH_WORDS.search(name)) and name not in NOT_PATH_PARAMETERS


def _public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


def _ours(obj: object) -> bool:
    return (getattr(obj, "__module__", None) or "").partition(".")[0] in ("tvm", "tvm_ffi")


def discover() -> dict[str, object]:
    """``{"parameters": ["<module>.<qualname>(<param>)", ...], "unimportable": {module:
    "<ExceptionClass>: <message>"}, "modules": <count walked>}``.

    Functions: public functions defined in a walked module, and those the root packages
    re-export. Methods: every public method (and ``__init__``) of such a class, inherited ones
    included (``tvm.runtime.Module.write_to_file`` is tvm_ffi's), named once by the class that
    defines it (``relax.VMExecutable.export_library`` is ``Executable.export_library``).
    """
    modules: dict[str, object] = {}
    unimportable: dict[str, str] = {}
    for root in ROOTS:
        package = importlib.import_module(root)
        modules[root] = package
        for info in pkgutil.walk_packages(package.__path__, root + "."):
            if not _public(info.name):
                continue
            try:
                modules[info.name] = importlib.import_module(info.name)
            except ImportError as err:
                unimportable[info.name] = f"{type(err).__name__}: {err}"
    found: set[str] = set()

    def consider(func: object) -> None:
        if isinstance(func, staticmethod | classmethod):
            func = func.__func__
        if not (inspect.isfunction(func) and _ours(func)):
            return
        for name in inspect.signature(func).parameters:
            if is_path_parameter(name):
                found.add(f"{func.__module__}.{func.__qualname__}({name})")

    for module_name, module in modules.items():
        for attr, obj in vars(module).items():
            exported = module_name in ROOTS and _ours(obj)
            if attr.startswith("_") or not (
                getattr(obj, "__module__", None) in modules or exported
            ):
                continue
            if inspect.isclass(obj):
                for member in dir(obj):
                    if not member.startswith("_") or member == "__init__":
                        consider(inspect.getattr_static(obj, member, None))
            else:
                consider(obj)
    return {"parameters": sorted(found), "unimportable": unimportable, "modules": len(modules)}


TEST_DATA_ENV = "TEST_DATA_ROOT_PATH"


def isolate_test_data() -> str:
    """Point TVM's test-data cache into a new temporary directory, unless the caller already
    chose one (``TEST_DATA_ROOT_PATH``): call before ``tvm.contrib.download`` is imported."""
    if not os.environ.get(TEST_DATA_ENV):
        os.environ[TEST_DATA_ENV] = tempfile.mkdtemp(prefix="tvm_test_data.")
        atexit.register(shutil.rmtree, os.environ[TEST_DATA_ENV], ignore_errors=True)
    return os.environ[TEST_DATA_ENV]


def discover_in_child() -> dict[str, object]:
    """:func:`discover` in a child process of this interpreter, with this ``sys.path``."""
    isolate_test_data()
    env = crash_isolation.child_env(PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    code = "import json; from tvm_conformance import path_forms; "
    code += "print(json.dumps(path_forms.discover()))"
    child = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert child.returncode == 0, f"the walk failed:\n{child.stderr}"
    return json.loads(child.stdout.splitlines()[-1])
