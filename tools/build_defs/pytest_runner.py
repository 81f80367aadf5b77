"""Entry point of every tvm_py_test: runs pytest on the files given as arguments.

pytest's settings (plugin, --strict-markers, test file pattern) come from the repo's
pyproject.toml, found beside the test files in runfiles, so Bazel and plain pytest agree.
This runner only adds what Bazel asks of a test:
  * JUnit XML into $XML_OUTPUT_FILE, so skips and xfails are visible per case;
  * no bytecode written into runfiles or the venv;
  * a non-zero exit for every failure, including pytest's 5 (nothing collected), so a target
    whose files lost their tests does not pass silently;
  * torch kept out of the process unless the target declares ``uses_torch = True``
    (``TVM_CONFORMANCE_TORCH=0``, set by ``tvm_py_test``): tvm_ffi imports torch eagerly
    when it is installed, which costs every test process seconds that only the torch
    interop and model-import tests need. TVM and tvm_ffi see torch as absent (their own
    optional-import path, as on a machine without torch); any other import of torch is an
    error naming the fix, so a test never loses torch silently (``importorskip`` included;
    ``tvm_conformance.torch_guard``);
  * Bazel's test sharding (``shard_count``): shard i of n keeps the collected cases i, i+n,
    i+2n, ... (after the variant's own deselection), so a long target's cases spread over
    the cores; every case runs in exactly one shard, and the verdict merges the shards;
  * Python's cyclic collector held back while the process starts (pytest, the plugin, TVM,
    torch and the test modules: several hundred thousand objects that live as long as the
    process) and set back to its default thresholds once collection is over, so every case
    runs under the interpreter's defaults (``StartupGc``).
"""

import gc
import os
import sys

sys.dont_write_bytecode = True

# With the default thresholds the collector walks the growing heap again and again while the
# stack loads: about 0.7 s of `import tvm` with torch and 0.25 s without (docs/performance.md).
# Nothing at startup depends on when cycles are freed; the thresholds go back before any case.
STARTUP_GC_THRESHOLD = (100_000, 50, 100)
_DEFAULT_GC_THRESHOLD = gc.get_threshold()
gc.set_threshold(*STARTUP_GC_THRESHOLD)

# A remote executor may run the action with its input root at "/" (tools/remote_exec), and
# Bazel's test setup then makes the runfiles paths "//bazel-out/...": POSIX lets a leading "//"
# name another root, so pathlib sees those files outside the working directory (pytest's
# bestrelpath fails). They are the same files: one leading slash, before anything is imported,
# and the same for what child processes and the runfiles library read.


def _one_root(path: str) -> str:
    return "/" + path.lstrip("/") if path.startswith("//") else path


sys.path[:] = [_one_root(p) for p in sys.path]
for _name in ("PYTHONPATH", "RUNFILES_DIR", "TEST_SRCDIR", "RUNFILES_MANIFEST_FILE"):
    if _name in os.environ:
        os.environ[_name] = os.pathsep.join(map(_one_root, os.environ[_name].split(os.pathsep)))

from tvm_conformance import torch_guard  # noqa: E402

torch_guard.install_from_environment()

import pytest  # noqa: E402


class StartupGc:
    """Sets the collector's thresholds back to what they were before the runner started."""

    def __init__(self, threshold: tuple[int, ...]) -> None:
        self.threshold = threshold

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Every test module is imported: the cases run with the default thresholds."""
        gc.set_threshold(*self.threshold)


class Shard:
    """Keeps this shard's share of the collected cases (Bazel's TEST_SHARD_* protocol)."""

    def __init__(self, index: int, total: int) -> None:
        self.index = index
        self.total = total

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list) -> None:
        """After every other deselection: keep cases index, index + total, ... of the rest."""
        kept = items[self.index :: self.total]
        others = [
            item for position, item in enumerate(items) if position % self.total != self.index
        ]
        if others:
            # Sharding is part of the design: not a deselection that makes the run partial.
            from tvm_conformance import selection_record

            selection_record.deselect_by_design(config, others)
        items[:] = kept


def shard_from_environment(environ: dict[str, str]) -> Shard | None:
    """The Shard Bazel asks for (and its status file touched, saying the runner shards), or
    None when the target is not sharded."""
    total = int(environ.get("TEST_TOTAL_SHARDS", "1") or "1")
    if total <= 1:
        return None
    index = int(environ["TEST_SHARD_INDEX"])
    status = environ.get("TEST_SHARD_STATUS_FILE")
    if status:
        with open(status, "a", encoding="utf-8"):
            pass
    return Shard(index, total)


def main(argv: list[str]) -> int:
    """Run pytest with Bazel's conventions; return the process exit code."""
    args = ["-p", "no:cacheprovider", "-rsxX"]
    xml_output = os.environ.get("XML_OUTPUT_FILE")
    if xml_output:
        args.append("--junitxml=" + xml_output)
    shard = shard_from_environment(dict(os.environ))
    plugins: list[object] = [StartupGc(_DEFAULT_GC_THRESHOLD)]
    if shard:
        plugins.append(shard)
    try:
        code = int(pytest.main(args + argv, plugins=plugins))
    finally:
        # A session that ends before collection finishes (a usage error) restores them too.
        gc.set_threshold(*_DEFAULT_GC_THRESHOLD)
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        print("tvm_py_test: pytest collected no tests; failing the target.", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
