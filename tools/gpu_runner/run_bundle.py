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
reports. The exit status is 0 only when every test passed.
"""

import argparse
import datetime
import hashlib
import json
import os
import shlex
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
WORKSPACE = os.path.join(HERE, "tvm_conformance")
PY_TAG = f"cp{sys.version_info[0]}{sys.version_info[1]}"
# The venv record of the lane the bundle was built in (make_bundle.py): its identity.
VENV_RECORD = os.path.join(HERE, "tvm_conformance_venv.json")
# The bundle's tests: label, kind, argv, env and the GPU runner config's additions per test.
MANIFEST = os.path.join(HERE, "tests.json")
sys.path.insert(0, os.path.join(WORKSPACE, "tools", "verdict"))
import archive  # noqa: E402
import event_writer  # noqa: E402
import results  # noqa: E402  (the bundle's copies: standard library only)


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
        if f"-{PY_TAG}-" in w or (w.endswith("-py3-none-any.whl") and PY_TAG == "cp310")
    )
    if not any(f"-{PY_TAG}-" in w for w in wheels):
        sys.exit(
            f"run.sh: no tvm-ffi wheel for Python {sys.version.split()[0]} ({PY_TAG}); "
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
        open(stamp, "w").close()
    return site


def manifest_tests(manifest: dict, require_gpu: bool) -> list:
    """(label, argv, extra env) of the bundle's tests, from the build's manifest.

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
        elif gpu_config and test["kind"] == "cc":
            env["TVM_CONFORMANCE_REQUIRE_GPU"] = "0"
        if test["kind"] == "py":
            argv = [sys.executable, os.path.join(WORKSPACE, main), *argv]
        else:
            argv = [os.path.join(WORKSPACE, main), *argv]
        out.append((test["label"], argv, env))
    return out


def tests(require_gpu: bool) -> list:
    """(label, argv, extra env) of every test, as its Bazel target runs it (tests.json)."""
    if not os.path.isfile(MANIFEST):
        sys.exit(f"run.sh: {MANIFEST} is missing; this bundle is incomplete (rebuild it)")
    with open(MANIFEST, encoding="utf-8") as stream:
        return manifest_tests(json.load(stream), require_gpu)


def xml_path(out: str, label: str) -> str:
    """`tests/<pkg>/<name>/test.xml` of a run archive (tools/verdict/results.py)."""
    package, _, name = label.lstrip("/").partition(":")
    return os.path.join(out, "tests", *package.split("/"), name, "test.xml")


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


def main() -> int:
    """Run the tests; 0 when all passed."""
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
    args = parser.parse_args()
    require_gpu = (
        not args.no_require_gpu and os.environ.get("TVM_CONFORMANCE_REQUIRE_GPU", "1") != "0"
    )
    start = time.time()
    ident = identity()
    lane = str(ident.get("lane", "default"))
    stamp = datetime.datetime.fromtimestamp(start, datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = os.path.abspath(args.out or os.path.join(HERE, "results", f"{stamp}-gpu_runner"))
    site = site_dir()
    tvm_lib = os.path.join(HERE, "pylib", "tvm", "lib")
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
        LD_LIBRARY_PATH=os.pathsep.join(
            [os.path.join(site, "tvm_ffi", "lib"), tvm_lib, os.environ.get("LD_LIBRARY_PATH", "")]
        ).rstrip(os.pathsep),
    )
    events = [
        {"id": {"started": {}}, "started": {"startTimeMillis": str(int(start * 1000))}},
        {
            "id": {"structuredCommandLine": {"commandLineLabel": "canonical"}},
            "structuredCommandLine": {
                "commandLineLabel": "canonical",
                "sections": [
                    {
                        "sectionLabel": "command options",
                        "optionList": {
                            "option": [
                                {"combinedForm": "--//tools/config:cuda"},
                                {"combinedForm": f"--//tools/config:lane={lane}"},
                                {
                                    "combinedForm": "--//tools/config:require_gpu"
                                    if require_gpu
                                    else "--no//tools/config:require_gpu"
                                },
                            ]
                        },
                    }
                ],
            },
        },
    ]
    failed = []
    print(f"run.sh: Python {sys.version.split()[0]}, GPU required: {require_gpu}, results: {out}")
    preflight_json = os.path.join(out, "preflight.json")
    if not args.skip_preflight:
        status = preflight(base_env, tvm_lib, preflight_json, warn_only=not require_gpu)
        if status != 0 or args.preflight_only:
            if status != 0:
                print(
                    "run.sh: the preflight found what this GPU runner lacks (its MISSING lines "
                    f"above, facts in {preflight_json}); no test ran"
                )
            return status
    for label, argv, env in tests(require_gpu):
        xml = xml_path(out, label)
        os.makedirs(os.path.dirname(xml), exist_ok=True)
        is_gtest = label.startswith("//cpp/")
        run_env = dict(base_env, **env)
        # As Bazel runs a test: runfiles, XML_OUTPUT_FILE, a temp dir.
        tmp = os.path.join(os.path.dirname(xml), "tmp")
        os.makedirs(tmp, exist_ok=True)
        run_env.update(
            TEST_SRCDIR=HERE,
            RUNFILES_DIR=HERE,  # what py_test's stub sets; bazel-runfiles reads it
            TEST_WORKSPACE="tvm_conformance",
            XML_OUTPUT_FILE=xml,
            TEST_TMPDIR=tmp,
            TEST_TARGET=label,
        )
        if is_gtest:  # Bazel's test setup points googletest at XML_OUTPUT_FILE the same way
            run_env["GTEST_OUTPUT"] = f"xml:{xml}"
        began = time.time()
        proc = subprocess.run(
            argv,
            cwd=WORKSPACE,
            env=run_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        millis = int((time.time() - began) * 1000)
        with open(os.path.join(os.path.dirname(xml), "test.log"), "w") as log:
            log.write(proc.stdout)
        status = "PASSED" if proc.returncode == 0 else "FAILED"
        c = counts(xml)
        print(
            f"  {status:6} {label}: {c['tests']} cases, {c['failed']} failed, "
            f"{c['skipped']} skipped, {c['xfailed']} xfailed ({millis / 1000:.1f} s)"
        )
        if proc.returncode != 0:
            failed.append(label)
            print("\n".join("      " + line for line in proc.stdout.splitlines()[-15:]))
        events.append(event_writer.test_result_event(label, status, [("test.xml", xml)], millis))
        events.append(event_writer.test_summary_event(label, status))
    end = time.time()
    events.append(event_writer.build_finished_event(int(end * 1000), 1 if failed else 0))
    event_writer.write_events(os.path.join(out, "build_events.json"), events)
    meta = {
        "runner": "gpu_runner bundle",
        "python": sys.version.split()[0],
        "require_gpu": require_gpu,
        "exit_code": 1 if failed else 0,
        "start": start,
        "end": end,
        "wall_s": round(end - start, 3),
        "lane": lane,
        "identity": ident,
        "machine": archive.machine_facts(),
        "config": "cuda_gpu" if require_gpu else "cuda",
        "cuda": True,
        "cuda_gpu": require_gpu,
        "targets": len(tests(True)),
        # What this GPU run had to run: every test of the bundle's tests.json (the verdict
        # fails a cuda_gpu run that did not run one; tools/verdict/verdict.py).
        "gpu_suite": {"source": "tests.json", "targets": sorted(t[0] for t in tests(True))},
    }
    with open(os.path.join(out, "run.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    if os.path.isfile(preflight_json):  # its facts into run.json and the report's machine line
        subprocess.run(
            [sys.executable, PREFLIGHT, "--json", preflight_json, "--attach", out], check=True
        )
    print(
        f"run.sh: {len(tests(True)) - len(failed)} of {len(tests(True))} tests passed "
        f"in {end - start:.1f} s" + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
