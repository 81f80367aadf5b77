"""Find workspace files at test time, under Bazel and under plain pytest.

Under Bazel (``TEST_SRCDIR`` or a runfiles manifest in the environment) a file is looked up in
the test's runfiles only, with rules_python's runfiles library (``bazel-runfiles``), as
``$TEST_WORKSPACE/<path>``: the workspace name comes from Bazel, never from this code. A file
that the test's ``data`` does not declare is an error naming it, even if it exists in the
source tree or ``bazel-bin``: declared data is the only data. Under plain pytest from a
checkout, a source file is found in the repo and a built one in ``bazel-bin/``.
"""

from __future__ import annotations

import os
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parents[2]
_BAZEL_ENV = ("TEST_SRCDIR", "RUNFILES_DIR", "RUNFILES_MANIFEST_FILE")


def under_bazel() -> bool:
    """True when Bazel runs this process with a runfiles tree or manifest."""
    return any(os.environ.get(name) for name in _BAZEL_ENV)


_THIS = "python/tvm_conformance/runfiles.py"


def _run_workspace() -> str:
    """The workspace's name where Bazel sets no TEST_WORKSPACE (`bazel run` of a tool): the
    runfiles entry of this very file names it (``<workspace>/python/...``)."""
    manifest = os.environ.get("RUNFILES_MANIFEST_FILE", "")
    if manifest and os.path.isfile(manifest):
        with open(manifest, encoding="utf-8") as lines:
            for line in lines:
                key = line.split(" ", 1)[0]
                if key.endswith("/" + _THIS):
                    return key[: -len(_THIS) - 1]
    tree = os.environ.get("RUNFILES_DIR", "")
    if tree and os.path.isdir(tree):
        for name in sorted(os.listdir(tree)):
            if os.path.exists(os.path.join(tree, name, _THIS)):
                return name
    return ""


def _bazel_rlocation(path: str) -> str:
    from runfiles import runfiles  # bazel-runfiles, in the pinned venv

    workspace = os.environ.get("TEST_WORKSPACE", "") or _run_workspace()
    resolver = runfiles.Create()
    found = resolver.Rlocation(f"{workspace}/{path}") if resolver and workspace else None
    if found and os.path.exists(found):
        return found
    where = found or f"TEST_SRCDIR={os.environ.get('TEST_SRCDIR', '')!r}"
    raise FileNotFoundError(
        f"{path} not found in this test's runfiles ({where}); list the target that makes it "
        "in the test's `data` (BUILD file): under Bazel only declared data is visible"
    )


def rlocation(path: str) -> str:
    """Return the absolute path of workspace-relative `path` (e.g. "cpp/ext/libhello.so").

    Raises FileNotFoundError naming the path and where it was looked for.
    """
    if os.path.isabs(path):
        raise ValueError(f"rlocation takes a workspace-relative path, got {path!r}")
    if under_bazel():
        return _bazel_rlocation(path)
    candidates = [_REPO_ROOT / path, _REPO_ROOT / "bazel-bin" / path]
    for candidate in candidates:
        if candidate.exists():
            return str(candidate)
    looked = "\n  ".join(str(c) for c in candidates)
    raise FileNotFoundError(
        f"{path} not found; looked in:\n  {looked}\n"
        "Under plain pytest, build it first (./bazelw build //...)."
    )
