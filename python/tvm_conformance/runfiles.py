"""Find workspace files at test time, under Bazel and under plain pytest.

Under `bazel test`, data files sit in the runfiles tree: $TEST_SRCDIR/$TEST_WORKSPACE/<path>
(the workspace name comes from Bazel, never from this code). Under plain pytest from a
checkout, a source file is found in the repo and a built one in `bazel-bin/`.
"""

import os
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parents[2]


def _runfiles_roots() -> list[Path]:
    roots = []
    srcdir = os.environ.get("TEST_SRCDIR") or os.environ.get("RUNFILES_DIR")
    workspace = os.environ.get("TEST_WORKSPACE")
    if srcdir and workspace:
        roots.append(Path(srcdir) / workspace)
    return roots


def rlocation(path: str) -> str:
    """Return the absolute path of workspace-relative `path` (e.g. "cpp/ext/libhello.so").

    Raises FileNotFoundError naming every place looked at, with a hint for plain pytest runs.
    """
    if os.path.isabs(path):
        raise ValueError(f"rlocation takes a workspace-relative path, got {path!r}")
    candidates = [root / path for root in _runfiles_roots()]
    candidates += [_REPO_ROOT / path, _REPO_ROOT / "bazel-bin" / path]
    for candidate in candidates:
        if candidate.exists():
            return str(candidate)
    looked = "\n  ".join(str(c) for c in candidates)
    raise FileNotFoundError(
        f"{path} not found; looked in:\n  {looked}\n"
        "Under Bazel, list it in the test's `data`; under plain pytest, build it first "
        "(./bazelw build //...)."
    )
