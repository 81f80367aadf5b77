"""Run every test of the GPU-runner bundle and write a run archive the report tool reads.

On a machine with Python 3.10-3.12, numpy, a CUDA build of torch and a driver for CUDA 13
(nothing else: no Bazel, no TVM, no network), `run.sh` unpacks the tvm-ffi wheel of this
interpreter into `.site/`, runs the preflight (python/tvm_conformance/preflight.py: one line per
missing prerequisite, exit 1 before any test; its facts go into run.json), then runs
each test the way its Bazel target does. The tests, with each one's argv and env, come from the
bundle's `tests.json`, which the build (tvm_test_bundle) writes from the targets as the macros
made them, so the runner cannot drift from Bazel:

  //tools/gpu_runner:bundle       the deployment tests (//python/tests/deploy:runtime_only_test_*,
                                  :runtime_only_api_test, :elf_deps_test, //cpp/tests:
                                  deploy_vm_test_*, :vm_exported_module_test), TVM runtime-only;
  //tools/gpu_runner:lane_bundle  every `_cuda` test of the suite, with the full TVM (compiler
                                  included) and the lane's one tvm-ffi wheel.

Results go to `--out` (default `results/<UTC start>-gpu_runner/`) in the layout of a
`./bazelw test` run archive (build_events.json, tests/<pkg>/<name>/test.xml, run.json), so
`tools/verdict/results.py DIR`, the conformance check and //tools/verdict:report read it.
A cuda case that cannot run (no device, no driver) fails unless `--no-require-gpu` (or
TVM_CONFORMANCE_REQUIRE_GPU=0) is given: then it skips with its reason, and the preflight only
reports.

Tests run concurrently (`-j`, default: the machine's cores), each in its own temp dir and with
the timeout Bazel gives its size (a test past it is killed and reads TIMEOUT, as in Bazel); a
line is printed as each target finishes. The run ends with the kit's verdict on the archive
(tools/verdict/verdict.py, the `verdict:` line ./bazelw prints) and its exit status: 0 on PASS,
1 on FAIL or when the preflight stops the run, 2 on bad input. The run is held to the suite's
`_cuda` list the bundle recorded at build time; a bundle that carries part of it (the
deployment bundle) is labelled partial and says which part.
"""

import argparse
import concurrent.futures
import datetime
import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable
from typing import NamedTuple

HERE = os.path.dirname(os.path.abspath(__file__))
WORKSPACE = os.path.join(HERE, "tvm_conformance")
PY_TAG = f"cp{sys.version_info[0]}{sys.version_info[1]}"
# The venv record of the lane the bundle was built in (make_bundle.py): its identity.
VENV_RECORD = os.path.join(HERE, "tvm_conformance_venv.json")
# The bundle's tests: label, kind, argv, env and the GPU runner config's additions per test.
MANIFEST = os.path.join(HERE, "tests.json")
sys.path.insert(0, os.path.join(WORKSPACE, "tools", "verdict"))
# tvm_conformance (the verdict's deviation registry) from the workspace's python/, not the
# workspace directory beside this script, which has the same name.
sys.path.insert(0, os.path.join(WORKSPACE, "python"))
import archive  # noqa: E402
import event_writer  # noqa: E402
import results  # noqa: E402  (the bundle's copies: standard library only)
import run_identity  # noqa: E402
import run_record  # noqa: E402
import verdict  # noqa: E402

# Exit status on bad input (a broken bundle, no wheel for this Python, bad arguments).
BAD_INPUT = 2
# Bazel's timeout of a test without a recorded one (size medium).
DEFAULT_TIMEOUT_S = 300


class BadInput(Exception):
    """The bundle or the command line cannot be used: one line, exit 2."""


def identity() -> dict:
    """What this runner tests: the bundle's lane and TVM (from the venv record it was built
    from) with the tvm-ffi wheel this interpreter takes from the bundle (file and sha256)."""
    record: dict = {}
    if os.path.isfile(VENV_RECORD):
        with open(VENV_RECORD, encoding="utf-8") as stream:
            record = json.load(stream)
    ident = archive.identity_of(record, record.get("lane", "default"))
    for wheel in sorted(os.listdir(os.path.join(HERE, "wheels"))):
        if f"-{PY_TAG}-" in wheel and wheel.startswith("apache_tvm_ffi-"):
            path = os.path.join(HERE, "wheels", wheel)
            with open(path, "rb") as stream:
                sha = hashlib.sha256(stream.read()).hexdigest()
            ident["tvm_ffi"] = {
                "version": wheel.split("-")[1],
                "file": wheel,
                "sha256": sha,
                "source": "bundle wheel",
            }
    return ident


def site_dir() -> str:
    """`.site/<cpXY>/`: this interpreter's wheels, unpacked once."""
    site = os.path.join(HERE, ".site", PY_TAG)
    wheels = sorted(
        w
        for w in os.listdir(os.path.join(HERE, "wheels"))
        if f"-{PY_TAG}-" in w
        or (w.endswith("-py3-none-any.whl") and PY_TAG == "cp310")
        # Tools for any CPython (NVIDIA's cuobjdump): third_party/gpu_runner/tools.lock.
        or "-py3-none-manylinux" in w
    )
    if not any(f"-{PY_TAG}-" in w for w in wheels):
        raise BadInput(
            f"no tvm-ffi wheel for Python {sys.version.split()[0]} ({PY_TAG}); "
            "the bundle has: " + ", ".join(sorted(os.listdir(os.path.join(HERE, "wheels"))))
        )
    stamp = os.path.join(site, ".unpacked")
    if not os.path.exists(stamp):
        for wheel in wheels:
            with zipfile.ZipFile(os.path.join(HERE, "wheels", wheel)) as zf:
                zf.extractall(site)
        for root, _, files in os.walk(os.path.join(site, "tvm_ffi")):
            for name in files:
                if ".so" in name:
                    os.chmod(os.path.join(root, name), 0o755)
        for tool in tool_dirs(site):
            for name in os.listdir(tool):
                os.chmod(os.path.join(tool, name), 0o755)
        open(stamp, "w").close()
    return site


def tool_dirs(site: str) -> list:
    """The bin/ directories of the unpacked tool wheels (nvidia/cu13/bin: cuobjdump)."""
    nvidia = os.path.join(site, "nvidia")
    if not os.path.isdir(nvidia):
        return []
    return sorted(
        os.path.join(nvidia, d, "bin")
        for d in os.listdir(nvidia)
        if os.path.isdir(os.path.join(nvidia, d, "bin"))
    )


class PlannedTest(NamedTuple):
    """One test to run: its label, argv, extra env, timeout, and whether it is a googletest
    binary (the manifest's `kind` is `cc`), which writes its JUnit where GTEST_OUTPUT says."""

    label: str
    argv: list
    env: dict
    timeout_s: float
    googletest: bool = False
    shards: int = 1  # Bazel's shard_count: that many processes, each its share of the cases


# The manifest's `kind` of a cc_test (a googletest binary) and of a py_test (tvm_test_bundle).
CC_KIND, PY_KIND = "cc", "py"


def manifest_tests(manifest: dict, require_gpu: bool) -> list[PlannedTest]:
    """The bundle's tests (PlannedTest each), from the build's manifest.

    Each target's args are shell-split as Bazel splits them; a py_test runs its main
    (tools/build_defs/pytest_runner.py) with this interpreter, a cc_test its binary. The GPU
    lane's additions (--tvm-require-gpu, TVM_CONFORMANCE_REQUIRE_GPU=1) are applied exactly
    when the GPU requirement is on, as --config=cuda_gpu applies them.
    """
    out = []
    for test in manifest["tests"]:
        main, *args = test["argv"]
        argv = [a for arg in args for a in shlex.split(arg)]
        env = dict(test["env"])
        gpu_config = test.get("gpu_runner_config")
        if gpu_config and require_gpu:
            argv += gpu_config["pytest_args"]
            env.update(gpu_config["env"])
        elif gpu_config and test["kind"] == CC_KIND:
            env["TVM_CONFORMANCE_REQUIRE_GPU"] = "0"
        if test["kind"] == PY_KIND:
            argv = [sys.executable, os.path.join(WORKSPACE, main), *argv]
        else:
            argv = [os.path.join(WORKSPACE, main), *argv]
        timeout_s = int(test.get("timeout_s", DEFAULT_TIMEOUT_S))
        shards = int(test.get("shard_count", 1))
        out.append(
            PlannedTest(test["label"], argv, env, timeout_s, test["kind"] == CC_KIND, shards)
        )
    return out


# The fields each tests.json entry must have, with their types (make_bundle.py writes them).
MANIFEST_FIELDS = {"label": str, "argv": list, "env": dict, "kind": str}


def read_manifest() -> dict:
    """The bundle's tests.json (BadInput when it is missing or unreadable, or an entry lacks
    a field or has one of another type: one line naming the entry and the field)."""
    try:
        with open(MANIFEST, encoding="utf-8") as stream:
            manifest = json.load(stream)
        tests = manifest["tests"]
        if not isinstance(tests, list):
            raise TypeError("`tests` is not a list")
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise BadInput(f"{MANIFEST}: {err}; this bundle is incomplete (rebuild it)") from None
    for index, test in enumerate(tests):
        where = f"{MANIFEST}: tests[{index}]"
        if not isinstance(test, dict):
            raise BadInput(f"{where} is not an object; this bundle is broken (rebuild it)")
        where += f" ({test['label']})" if isinstance(test.get("label"), str) else ""
        for name, kind in MANIFEST_FIELDS.items():
            if name not in test:
                raise BadInput(f"{where} has no `{name}`; this bundle is broken (rebuild it)")
            if not isinstance(test[name], kind):
                raise BadInput(
                    f"{where}: `{name}` is a {type(test[name]).__name__}, not a "
                    f"{kind.__name__}; this bundle is broken (rebuild it)"
                )
        if not test["argv"] or not all(isinstance(a, str) for a in test["argv"]):
            raise BadInput(f"{where}: `argv` must be a non-empty list of strings (rebuild it)")
        shards = test.get("shard_count", 1)
        if not isinstance(shards, int) or isinstance(shards, bool) or shards < 1:
            raise BadInput(f"{where}: `shard_count` must be an integer >= 1, got {shards!r}")
    return manifest


def suite_record(manifest: dict) -> tuple[dict | None, list[str]]:
    """(run.json's `gpu_suite`, why the run is partial) of a bundle's manifest.

    The build recorded the suite's every `_cuda` test (`cuda_suite`): a bundle built to carry
    them all (`whole_suite`, the lane bundle) is held to that list, so a test missing from its
    tests.json fails the verdict by name. A bundle carrying part (the deployment bundle) is held
    to its own `_cuda` tests and labelled partial with the part it covers. A manifest without
    the record (an older bundle) gives none: the verdict of a GPU run then fails as unproven.
    """
    suite = manifest.get("cuda_suite")
    if not isinstance(suite, dict) or not isinstance(suite.get("targets"), list):
        return None, []
    whole = sorted(str(t) for t in suite["targets"])
    bundle = str(manifest.get("bundle", "bundle"))
    if manifest.get("whole_suite"):
        return {"source": f"{bundle}: {suite.get('source', '?')}", "targets": whole}, []
    carried = sorted(t["label"] for t in manifest["tests"] if str(t["label"]).endswith("_cuda"))
    record = {"source": f"{bundle} tests.json", "targets": carried, "suite": whole}
    covered = len(set(carried) & set(whole))
    return record, [f"{bundle} carries {covered} of the suite's {len(whole)} _cuda targets"]


def xml_path(out: str, label: str, shard: int = 1, shards: int = 1) -> str:
    """`tests/<pkg>/<name>/test.xml` of a run archive, `.../shard_S_run_1/test.xml` for each
    shard of a sharded target (tools/verdict/results.py reads them there)."""
    return os.path.join(out, results.archived_xml(label, shard, 1, shards))


def counts(xml: str) -> dict:
    """tests / failed / skipped / xfailed of a JUnit file (pytest or gtest), each case's
    outcome as the verdict reads it (results.case_outcome)."""
    total = {"tests": 0, "failed": 0, "skipped": 0, "xfailed": 0}
    try:
        root = ET.parse(xml).getroot()
    except (OSError, ET.ParseError):
        return total
    for case in root.iter("testcase"):
        total["tests"] += 1
        outcome = results.case_outcome(case)
        if outcome in ("failed", "xfailed"):
            total[outcome] += 1
        elif outcome in ("skipped", "disabled"):
            total["skipped"] += 1
    return total


# The GPU-runner preflight (standard library only; the artefact check imports numpy).
PREFLIGHT = os.path.join(WORKSPACE, "python", "tvm_conformance", "preflight.py")


def preflight(env: dict, tvm_lib: str, out_json: str, warn_only: bool) -> int:
    """Run the preflight with this interpreter, the bundle's TVM and its cuda artefacts before
    any test; its facts go to `out_json`. Its exit status (0 with `warn_only`)."""
    deploy = os.path.join(WORKSPACE, "python", "tests", "deploy")
    artefacts = sorted(
        os.path.join(deploy, name)
        for name in (os.listdir(deploy) if os.path.isdir(deploy) else [])
        if name.endswith("_cuda.so")
    )
    os.makedirs(os.path.dirname(out_json), exist_ok=True)
    argv = [sys.executable, PREFLIGHT, "--stage", "full", "--python", sys.executable]
    argv += ["--tvm-lib", tvm_lib, "--json", out_json]
    argv += [arg for path in artefacts for arg in ("--artefact", path)]
    argv += ["--warn-only"] if warn_only else []
    sys.stdout.flush()  # our lines before the preflight's
    return subprocess.run(argv, env=env).returncode


def run_one(
    label: str,
    argv: list,
    env: dict,
    timeout_s: float,
    out: str,
    cwd: str | None = None,
    googletest: bool = False,
    shard: int = 1,
    shards: int = 1,
) -> tuple[str, int]:
    """Run one test (or shard `shard` of `shards`) as Bazel does (own temp dir,
    XML_OUTPUT_FILE, its log, Bazel's TEST_TOTAL_SHARDS / TEST_SHARD_INDEX); (status, ms).

    Status is Bazel's: PASSED, FAILED, or TIMEOUT when it ran past `timeout_s` (then its
    whole process group is killed, so a child it started cannot keep it alive)."""
    xml = xml_path(out, label, shard, shards)
    os.makedirs(os.path.dirname(xml), exist_ok=True)
    run_env = dict(env)
    tmp = os.path.join(os.path.dirname(xml), "tmp")
    os.makedirs(tmp, exist_ok=True)
    run_env.update(
        TEST_SRCDIR=HERE,
        RUNFILES_DIR=HERE,  # what py_test's stub sets; bazel-runfiles reads it
        TEST_WORKSPACE="tvm_conformance",
        XML_OUTPUT_FILE=xml,
        TEST_TMPDIR=tmp,
        TMPDIR=tmp,
        TEST_TARGET=label,
        TEST_TIMEOUT=str(int(timeout_s)),
    )
    if shards > 1:
        run_env.update(
            TEST_TOTAL_SHARDS=str(shards),
            TEST_SHARD_INDEX=str(shard - 1),
            TEST_SHARD_STATUS_FILE=os.path.join(os.path.dirname(xml), "shard_status"),
        )
    if googletest:  # Bazel's test setup points googletest at XML_OUTPUT_FILE
        run_env["GTEST_OUTPUT"] = f"xml:{xml}"
    began = time.time()
    with open(os.path.join(os.path.dirname(xml), "test.log"), "w") as log:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd or WORKSPACE,
                env=run_env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as err:
            log.write(f"run.sh: could not start {argv[0]}: {err}\n")
            return "FAILED", int((time.time() - began) * 1000)
        try:
            code = proc.wait(timeout=timeout_s)
            status = "PASSED" if code == 0 else "FAILED"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            status = "TIMEOUT"
            log.write(f"\nrun.sh: killed after its {timeout_s:g} s timeout\n")
    return status, int((time.time() - began) * 1000)


def _target_status(statuses: list[str]) -> str:
    """A sharded target's status, as Bazel sums its shards: PASSED when every shard passed,
    else TIMEOUT if one timed out, else FAILED."""
    if all(s == "PASSED" for s in statuses):
        return "PASSED"
    return "TIMEOUT" if "TIMEOUT" in statuses else "FAILED"


def run_tests(
    planned: list,
    out: str,
    base_env: dict,
    jobs: int,
    report: Callable[[str], object] = print,
    cwd: str | None = None,
    shard_results: dict | None = None,
) -> dict[str, tuple[str, int]]:
    """Run `planned` (PlannedTest, or its first four fields, each) `jobs` processes at a time
    (each shard of a sharded test one), in `cwd`; {label: (status, ms)}, a sharded target's
    status summed over its shards and its ms their total. `shard_results`, when given, gets
    {(label, shard): (status, ms)}. `report` gets one line per target as it finishes."""
    done: dict[str, tuple[str, int]] = {}
    tests = [PlannedTest(*test) for test in planned]
    by_label = {t.label: t for t in tests}
    finished: dict[str, dict[int, tuple[str, int]]] = {t.label: {} for t in tests}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {
            pool.submit(
                run_one,
                t.label,
                t.argv,
                dict(base_env, **t.env),
                t.timeout_s,
                out,
                cwd,
                t.googletest,
                shard,
                t.shards,
            ): (t.label, shard)
            for t in tests
            for shard in range(1, t.shards + 1)
        }
        for future in concurrent.futures.as_completed(futures):
            label, shard = futures[future]
            test = by_label[label]
            finished[label][shard] = future.result()
            if shard_results is not None:
                shard_results[label, shard] = finished[label][shard]
            if len(finished[label]) < test.shards:
                continue
            shard_list = [finished[label][i] for i in range(1, test.shards + 1)]
            status = _target_status([s for s, _ in shard_list])
            millis = sum(ms for _, ms in shard_list)
            done[label] = (status, millis)
            xmls = [xml_path(out, label, i, test.shards) for i in range(1, test.shards + 1)]
            c = {
                k: sum(counts(x)[k] for x in xmls)
                for k in ("tests", "failed", "skipped", "xfailed")
            }
            in_shards = f", {test.shards} shards" if test.shards > 1 else ""
            report(
                f"  [{len(done)}/{len(planned)}] {status:7} {label}: {c['tests']} cases, "
                f"{c['failed']} failed, {c['skipped']} skipped, {c['xfailed']} xfailed "
                f"({millis / 1000:.1f} s{in_shards})"
            )
            for i, (shard_status, _) in enumerate(shard_list, start=1):
                if shard_status == "PASSED":
                    continue
                log = os.path.join(
                    os.path.dirname(xml_path(out, label, i, test.shards)), "test.log"
                )
                with open(log, encoding="utf-8", errors="replace") as stream:
                    tail = stream.read().splitlines()[-15:]
                report("\n".join("      " + line for line in tail))
    return done


def main() -> int:
    """Run the tests; the verdict's exit status (0 PASS, 1 FAIL or preflight stop, 2 bad input)."""
    try:
        return _main()
    except BadInput as err:
        print(f"run.sh: {err}", file=sys.stderr)
        return BAD_INPUT


def parse_args() -> argparse.Namespace:
    """The command line (BadInput for a bad --jobs)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="results directory (a run archive)")
    parser.add_argument(
        "--no-require-gpu",
        action="store_true",
        help="cuda cases that cannot run skip (default: they fail)",
    )
    parser.add_argument(
        "--skip-preflight",
        action="store_true",
        help="run the tests without the preflight (each cuda case then fails by itself)",
    )
    parser.add_argument(
        "--preflight-only",
        action="store_true",
        help="run the preflight (tvm_conformance/preflight.py) and no test",
    )
    verdict.add_whole_options(parser)
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="tests run at once (default: the cores, %(default)s here); 1 runs them in order",
    )
    args = parser.parse_args()
    if args.jobs < 1:
        raise BadInput(f"--jobs {args.jobs}: must be at least 1")
    return args


def gpu_required(args: argparse.Namespace) -> bool:
    """Whether cuda cases must run (not --no-require-gpu, nor TVM_CONFORMANCE_REQUIRE_GPU=0)."""
    return not args.no_require_gpu and os.environ.get("TVM_CONFORMANCE_REQUIRE_GPU", "1") != "0"


def test_environment(site: str, tvm_lib: str) -> dict:
    """The environment every test starts from: this one, less Bazel's runfiles variables, with
    the bundle's wheels, TVM and tools first on the paths."""
    base_env = dict(os.environ)
    for key in ("TEST_SRCDIR", "RUNFILES_DIR", "RUNFILES_MANIFEST_FILE", "PYTHONHOME"):
        base_env.pop(key, None)
    if not os.path.isfile(os.path.join(tvm_lib, "libtvm_compiler.so")):
        # The deployment bundle's TVM has no compiler: every process loads the runtime alone.
        base_env["TVM_USE_RUNTIME_LIB"] = "1"
    base_env.update(
        # python/: tvm_conformance, which pytest_runner.py imports before pytest reads
        # pyproject.toml (under Bazel: the py_library's `imports`).
        PYTHONPATH=os.pathsep.join(
            [site, os.path.join(HERE, "pylib"), os.path.join(WORKSPACE, "python")]
        ),
        PYTHONDONTWRITEBYTECODE="1",
        # The bundle's tools (cuobjdump) first: a runner needs no CUDA toolkit.
        PATH=os.pathsep.join([*tool_dirs(site), os.environ.get("PATH", "")]).rstrip(os.pathsep),
        LD_LIBRARY_PATH=os.pathsep.join(
            [os.path.join(site, "tvm_ffi", "lib"), tvm_lib, os.environ.get("LD_LIBRARY_PATH", "")]
        ).rstrip(os.pathsep),
    )
    return base_env


def config_options(lane: str, require_gpu: bool) -> list[str]:
    """The build settings this run stands for, as the build events' command line records them."""
    return [
        "--//tools/config:cuda",
        f"--//tools/config:lane={lane}",
        "--//tools/config:require_gpu" if require_gpu else "--no//tools/config:require_gpu",
    ]


def write_events(
    out: str,
    planned: list[PlannedTest],
    done: dict,
    start: float,
    end: float,
    options: list,
    shard_results: dict | None = None,
) -> list[str]:
    """The archive's build_events.json, targets in the manifest's order (a testResult per
    shard of a sharded one, from `shard_results`); the labels that did not pass."""
    events = [
        event_writer.started_event(int(start * 1000)),
        event_writer.command_line_event(options),
    ]
    failed = []
    for test in planned:
        status, millis = done[test.label]
        if status != "PASSED":
            failed.append(test.label)
        shards = test.shards if shard_results is not None else 1
        for shard in range(1, shards + 1):
            shard_status, shard_ms = (
                shard_results[test.label, shard] if shards > 1 else (status, millis)
            )
            xml = xml_path(out, test.label, shard, shards)
            events.append(
                event_writer.test_result_event(
                    test.label, shard_status, [("test.xml", xml)], shard_ms, shard=shard
                )
            )
        events.append(event_writer.test_summary_event(test.label, status))
    events.append(event_writer.build_finished_event(int(end * 1000), 1 if failed else 0))
    event_writer.write_events(os.path.join(out, "build_events.json"), events)
    return failed


def bundle_record(
    manifest: dict,
    ident: dict,
    options: list[str],
    require_gpu: bool,
    partial: list[str],
    gpu_suite: dict | None,
    exit_code: int,
    start: float,
    end: float,
    jobs: int,
    targets: int,
) -> dict:
    """This run's record (run_record.new_record, runner GPU_RUNNER_BUNDLE)."""
    flags = run_identity.config_flags(options)
    extra = {"gpu_suite": gpu_suite} if gpu_suite is not None else {}
    return run_record.new_record(
        run_record.GPU_RUNNER_BUNDLE,
        exit_code=exit_code,
        start=start,
        end=end,
        lane=str(ident.get("lane", "default")),
        flags=flags,
        config=run_identity.config_name(flags),
        identity=ident,
        machine=archive.machine_facts(),
        targets=targets,
        python=sys.version.split()[0],
        require_gpu=require_gpu,
        cuda=True,
        cuda_gpu=require_gpu,
        jobs=jobs,
        # The bundle: its own identity (run_identity.patterns), so two bundles never share a
        # column, and what of the suite it leaves out.
        bundle=str(manifest.get("bundle", "(unknown bundle)")),
        partial=partial,
        **extra,
    )


def run_preflight(
    args: argparse.Namespace, env: dict, tvm_lib: str, out: str, require_gpu: bool
) -> int | None:
    """The preflight before any test: None to go on, else the exit status to end with."""
    if args.skip_preflight:
        return None
    preflight_json = os.path.join(out, "preflight.json")
    status = preflight(env, tvm_lib, preflight_json, warn_only=not require_gpu)
    if status != 0:
        print(
            "run.sh: the preflight found what this GPU runner lacks (its MISSING lines "
            f"above, facts in {preflight_json}); no test ran"
        )
        print("verdict: FAIL (preflight): no test ran")
        return 1
    return 0 if args.preflight_only else None


def _main() -> int:
    args = parse_args()
    whole = verdict.require_whole(args)
    require_gpu = gpu_required(args)
    manifest = read_manifest()
    planned = manifest_tests(manifest, require_gpu)
    gpu_suite, partial = suite_record(manifest)
    if not require_gpu:
        # cuda cases may skip: the run cannot stand for a GPU run of the suite.
        partial = [*partial, "GPU not required (--no-require-gpu or TVM_CONFORMANCE_REQUIRE_GPU=0)"]
    start = time.time()
    ident = identity()
    lane = str(ident.get("lane", "default"))
    stamp = datetime.datetime.fromtimestamp(start, datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = os.path.abspath(args.out or os.path.join(HERE, "results", f"{stamp}-gpu_runner"))
    tvm_lib = os.path.join(HERE, "pylib", "tvm", "lib")
    base_env = test_environment(site_dir(), tvm_lib)
    print(
        f"run.sh: Python {sys.version.split()[0]}, GPU required: {require_gpu}, "
        f"{len(planned)} tests, {args.jobs} at a time, results: {out}"
    )
    stop = run_preflight(args, base_env, tvm_lib, out, require_gpu)
    if stop is not None:
        return stop
    shard_results: dict = {}
    done = run_tests(planned, out, base_env, args.jobs, shard_results=shard_results)
    end = time.time()
    options = config_options(lane, require_gpu)
    failed = write_events(out, planned, done, start, end, options, shard_results)
    record = bundle_record(
        manifest, ident, options, require_gpu, partial, gpu_suite,
        1 if failed else 0, start, end, args.jobs, len(planned),
    )  # fmt: skip
    run_record.write(out, record)
    preflight_json = os.path.join(out, "preflight.json")
    if os.path.isfile(preflight_json):  # its facts into run.json and the report's machine line
        subprocess.run(
            [sys.executable, PREFLIGHT, "--json", preflight_json, "--attach", out], check=True
        )
    print(
        f"run.sh: {len(planned) - len(failed)} of {len(planned)} tests passed "
        f"in {end - start:.1f} s" + (f"; not passed: {', '.join(failed)}" if failed else "")
    )
    # The kit's verdict on this run's archive, as ./bazelw prints and records it.
    run = results.read_run(out)
    registry = verdict.load_registry(WORKSPACE)
    return verdict.judge(run, registry, whole, args.allow_partial, record_to=out)


if __name__ == "__main__":
    sys.exit(main())
