"""GPU-runner preflight: can this machine run the cuda lane of this TVM? Checked before any test.

Gathers the facts a cuda run depends on and names every missing prerequisite on one line:

- the GPUs (``nvidia-smi``: name, compute capability) and ``CUDA_VISIBLE_DEVICES``;
- the driver's CUDA version (the ``CUDA Version`` ``nvidia-smi`` prints);
- the CUDA runtime TVM's ``libtvm_runtime_cuda.so`` needs (its ``libcudart.so.N``), and
  whether the loader finds that library;
- torch's CUDA build (``torch.version.cuda`` of the interpreter that runs the tests);
- whether the cuda artefacts carry an image each GPU runs (a cubin of its major version, or
  PTX to JIT-compile).

Run first by ``./bazelw test --config=cuda_gpu`` (before Bazel, then with the lane's venv),
by the GPU-runner bundles' ``run.sh``; the facts go into the run archive's ``run.json``
(``preflight``) and the report's machine line. Exit status: 0 when nothing is missing, 1 when
something is (each named on a ``preflight: MISSING:`` line), 2 on bad arguments.

Standard library only (the artefact check imports :mod:`tvm_conformance.deploy`, numpy), so
``python3 python/tvm_conformance/preflight.py`` runs before any venv exists. Every fact comes from
outside this process (``nvidia-smi`` and ``ldconfig`` on PATH, the interpreter given by
``--python``), so a test fakes a machine with scripts, not by patching this module.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

# The oldest driver branch for each CUDA major version (NVIDIA's CUDA toolkit release notes,
# "CUDA Toolkit and Minimum Required Driver Version"): said in the driver line.
MIN_DRIVER = {11: "450", 12: "525", 13: "580"}

# Run by the test interpreter: torch's build, TVM's location, the CUDA runtimes torch's nvidia
# wheels bring (loaded with torch, so TVM's sidecar finds libcudart there too).
_PROBE = r"""
import glob, importlib.util, json, os, sys
out = {"python": sys.version.split()[0], "executable": sys.executable}
spec = importlib.util.find_spec("tvm")
out["tvm_dir"] = list(spec.submodule_search_locations)[0] if spec else None
try:
    import torch
except Exception as err:
    out["torch_error"] = f"{type(err).__name__}: {err}"
else:
    out["torch"] = torch.__version__
    out["torch_cuda"] = torch.version.cuda
    out["torch_cuda_available"] = bool(torch.cuda.is_available())
    out["torch_devices"] = torch.cuda.device_count() if torch.version.cuda else 0
    site = os.path.dirname(os.path.dirname(torch.__file__))
    cudart = os.path.join(site, "nvidia", "*", "lib", "libcudart.so.*")
    out["torch_cudart"] = sorted(glob.glob(cudart))
print("PREFLIGHT_PROBE " + json.dumps(out))
"""


def _which(tool: str) -> str | None:
    """``tool`` on PATH (ldconfig also in the sbin directories, where Debian keeps it)."""
    found = shutil.which(tool)
    if found or tool != "ldconfig":
        return found
    return next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.access(p, os.X_OK)), None
    )


def gpu_facts() -> tuple[dict[str, Any], list[str]]:
    """The GPUs, the driver and its CUDA version from nvidia-smi; the lines of what is missing."""
    facts: dict[str, Any] = {"gpus": [], "driver": None, "driver_cuda": None}
    smi = _which("nvidia-smi")
    if smi is None:
        return facts, ["no GPU: nvidia-smi is not on PATH (no NVIDIA driver on this machine)"]
    query = [smi, "--query-gpu=index,name,compute_cap,driver_version", "--format=csv,noheader"]
    try:
        rows = subprocess.run(query, capture_output=True, text=True, timeout=60, check=True).stdout
        banner = subprocess.run(
            [smi], capture_output=True, text=True, timeout=60, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError) as err:
        detail = getattr(err, "stderr", "") or err
        return facts, [f"no GPU: nvidia-smi failed: {str(detail).strip()}"]
    for row in rows.strip().splitlines():
        fields = [f.strip() for f in row.split(",")]
        if len(fields) != 4:
            continue
        index, name, capability, driver = fields
        facts["gpus"].append({"index": index, "name": name, "compute_capability": capability})
        facts["driver"] = driver
    found = re.search(r"CUDA Version:\s*([0-9]+\.[0-9]+)", banner)
    facts["driver_cuda"] = found.group(1) if found else None
    missing = []
    if not facts["gpus"]:
        missing.append("no GPU: nvidia-smi lists no GPU")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    facts["cuda_visible_devices"] = visible
    if visible is not None and facts["gpus"]:
        wanted = [v.strip() for v in visible.split(",") if v.strip()]
        shown = [g for g in facts["gpus"] if g["index"] in wanted]
        if not shown:
            missing.append(f"no GPU: CUDA_VISIBLE_DEVICES={visible!r} hides every GPU")
        facts["gpus"] = shown
    if facts["gpus"] and facts["driver_cuda"] is None:
        missing.append("driver: nvidia-smi does not say which CUDA version the driver supports")
    return facts, missing


def _version(text: str | None) -> tuple[int, int] | None:
    found = re.match(r"(\d+)\.(\d+)", text or "")
    return (int(found.group(1)), int(found.group(2))) if found else None


def elf_needed(path: Path) -> list[str]:
    """The DT_NEEDED entries of a 64-bit little-endian ELF shared library."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{path.name}: not a 64-bit little-endian ELF file")
    shoff, _, _, _, _, shentsize, shnum, _ = struct.unpack_from("<QIHHHHHH", data, 0x28)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)
    ]
    dynamic = next((s for s in sections if s[1] == 6), None)  # SHT_DYNAMIC
    if dynamic is None:
        return []
    strtab = sections[dynamic[6]]  # sh_link: the string table of the dynamic section
    needed = []
    for pos in range(dynamic[4], dynamic[4] + dynamic[5], 16):
        tag, value = struct.unpack_from("<qQ", data, pos)
        if tag == 0:
            break
        if tag == 1:  # DT_NEEDED
            start = strtab[4] + value
            needed.append(data[start : data.index(b"\0", start)].decode())
    return needed


def _loader_finds(soname: str, extra: list[str]) -> str | None:
    """Where the dynamic loader would find ``soname`` (LD_LIBRARY_PATH, ldconfig's cache), or
    one of ``extra`` (torch's nvidia wheels, loaded into the process with torch)."""
    for directory in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
        if directory and os.path.exists(os.path.join(directory, soname)):
            return os.path.join(directory, soname)
    ldconfig = _which("ldconfig")
    if ldconfig:
        try:
            cache = subprocess.run(
                [ldconfig, "-p"], capture_output=True, text=True, timeout=60
            ).stdout
        except (OSError, subprocess.SubprocessError):
            cache = ""
        for line in cache.splitlines():
            if line.strip().startswith(soname + " ") and "=>" in line:
                return line.split("=>", 1)[1].strip()
    return next((p for p in extra if os.path.basename(p) == soname), None)


def tvm_facts(tvm_lib: Path | None, torch_cudart: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The CUDA runtime TVM's CUDA sidecar needs, and whether the loader finds it."""
    facts: dict[str, Any] = {"tvm_runtime_cuda": None, "tvm_cudart": None, "tvm_cudart_found": None}
    if tvm_lib is None:
        return facts, ["TVM: the test interpreter cannot find the tvm package"]
    sidecar = tvm_lib / "libtvm_runtime_cuda.so"
    if not sidecar.is_file():
        return facts, [f"TVM: no libtvm_runtime_cuda.so in {tvm_lib} (a TVM built without CUDA)"]
    try:
        needed = elf_needed(sidecar)
    except (OSError, ValueError, struct.error) as err:
        return facts, [f"TVM: cannot read libtvm_runtime_cuda.so: {err}"]
    cudart = next((n for n in needed if n.startswith("libcudart.so.")), None)
    facts["tvm_cudart"] = cudart
    if cudart is None:  # linked statically: nothing to find, no version to say
        return facts, []
    facts["tvm_runtime_cuda"] = cudart.rsplit(".", 1)[1] + ".0"
    found = _loader_finds(cudart, torch_cudart)
    facts["tvm_cudart_found"] = found
    if found is None:
        return facts, [
            f"CUDA runtime: {cudart} (CUDA {facts['tvm_runtime_cuda']}, which TVM's "
            "libtvm_runtime_cuda.so needs) is not found: not in ldconfig's cache, "
            "LD_LIBRARY_PATH or torch's nvidia wheels (install the CUDA runtime or a CUDA torch)"
        ]
    return facts, []


def probe_python(python: str) -> tuple[dict[str, Any], list[str]]:
    """torch's build and TVM's location as the test interpreter sees them."""
    try:
        proc = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as err:
        return {}, [f"python: {python} does not run: {err}"]
    line = next((x for x in proc.stdout.splitlines() if x.startswith("PREFLIGHT_PROBE ")), None)
    if line is None:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return {}, [f"python: {python} could not report torch and TVM ({tail[0]})"]
    facts = json.loads(line.split(" ", 1)[1])
    missing = []
    if "torch_error" in facts:
        missing.append(f"torch: import torch fails: {facts['torch_error']}")
    elif not facts.get("torch_cuda"):
        missing.append(
            f"torch: torch {facts.get('torch')} is a CPU-only build (torch.version.cuda is None): "
            "the cuda cases need a CUDA build of torch (the lane's GPU lock, "
            "--config=cuda_gpu, installs torch==2.13.0 from PyPI)"
        )
    return facts, missing


def artefact_facts(
    gpus: list[dict[str, Any]], artefacts: list[Path]
) -> tuple[dict[str, str], list[str]]:
    """Which image of each cuda artefact each GPU runs; a line per GPU an artefact cannot serve."""
    from tvm_conformance import deploy

    facts: dict[str, str] = {}
    missing = []
    for path in artefacts:
        try:
            images = deploy.fatbin_images(path.read_bytes())
        except (OSError, ValueError) as err:
            missing.append(f"artefacts: {path.name}: {err}")
            continue
        facts[path.name] = deploy.describe_images(images)
        for gpu in gpus:
            capability = _version(gpu["compute_capability"])
            if capability is None:
                missing.append(
                    f"GPU {gpu['index']}: unknown compute capability {gpu['compute_capability']!r}"
                )
                continue
            number = capability[0] * 10 + capability[1]
            how = deploy.runs_on(images, number)
            facts[f"{path.name} on GPU {gpu['index']}"] = how or "nothing"
            if not how:
                missing.append(
                    f"artefacts: {path.name} has no image for GPU {gpu['index']} ({gpu['name']}, "
                    f"sm_{number}): it carries {facts[path.name]}"
                )
    return facts, missing


def driver_missing(facts: dict[str, Any]) -> list[str]:
    """The driver's CUDA version against what TVM's runtime and torch were built with."""
    driver = _version(facts.get("driver_cuda"))
    if driver is None:
        return []
    lines = []
    for what, need in (
        ("TVM's libtvm_runtime_cuda.so", facts.get("tvm_runtime_cuda")),
        (f"torch {facts.get('torch')}", facts.get("torch_cuda")),
    ):
        wanted = _version(need)
        if wanted and wanted > driver:
            floor = MIN_DRIVER.get(wanted[0])
            lines.append(
                f"driver: driver {facts.get('driver')} supports CUDA {facts['driver_cuda']}; "
                f"{what} needs CUDA {need}" + (f" (driver {floor} or newer)" if floor else "")
            )
    return lines


def run(
    stage: str,
    python: str,
    tvm_lib: Path | None,
    artefacts: list[Path],
) -> dict[str, Any]:
    """Every fact and every missing prerequisite: ``{"facts": ..., "missing": [...]}``.

    ``stage`` "host" checks the GPU and driver only (before the venv exists: ./bazelw checks
    that much before it builds anything); "full" checks everything.
    """
    facts, missing = gpu_facts()
    facts["stage"] = stage
    if stage == "full":
        probe, lines = probe_python(python)
        facts.update(probe)
        missing += lines
        if tvm_lib is None and probe.get("tvm_dir"):
            tvm_lib = Path(probe["tvm_dir"]) / "lib"
        tvm, lines = tvm_facts(tvm_lib, probe.get("torch_cudart", []))
        facts.update(tvm)
        missing += lines
        missing += driver_missing(facts)
        coverage, lines = artefact_facts(facts["gpus"], artefacts)
        facts["artefacts"] = coverage
        missing += lines
    return {"facts": facts, "missing": missing}


def summary(facts: dict[str, Any]) -> dict[str, str]:
    """The facts as the report's machine line shows them (strings)."""
    gpus = "; ".join(
        f"{g['name']} (sm_{g['compute_capability'].replace('.', '')})"
        for g in facts.get("gpus", [])
    )
    out = {
        "gpu": gpus or "none",
        "gpu_driver": f"{facts.get('driver') or '?'} (CUDA {facts.get('driver_cuda') or '?'})",
    }
    if facts.get("stage") == "full":
        out["tvm_runtime_cuda"] = facts.get("tvm_runtime_cuda") or "?"
        out["torch_cuda"] = f"{facts.get('torch', '?')} (CUDA {facts.get('torch_cuda') or 'none'})"
    return out


def attach(run_dir: Path, result: dict[str, Any]) -> None:
    """Put a preflight result into a run archive's run.json (``preflight``; the machine line)."""
    meta_path = run_dir / "run.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["preflight"] = result
    machine = dict(meta.get("machine") or {})
    machine.update(summary(result["facts"]))
    meta["machine"] = machine
    meta_path.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def report(result: dict[str, Any], stream: Any = sys.stdout) -> None:
    """Print the facts, then one line per missing prerequisite."""
    facts = result["facts"]
    for key, value in summary(facts).items():
        print(f"preflight: {key}: {value}", file=stream)
    for name, how in sorted(facts.get("artefacts", {}).items()):
        print(f"preflight: artefact {name}: {how}", file=stream)
    for line in result["missing"]:
        print(f"preflight: MISSING: {line}", file=stream)
    if facts.get("stage") == "host":
        print(
            "preflight: checked next, with the lane's GPU venv (built only once the GPU and the "
            "driver are present): TVM's CUDA runtime, torch's CUDA build, the artefacts",
            file=stream,
        )


def main(argv: list[str] | None = None) -> int:
    """Command line: check, print, optionally write the result (``--json``) or attach it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=("host", "full"), default="full")
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the tests")
    parser.add_argument(
        "--tvm-lib",
        type=Path,
        help="TVM's lib directory (default: the tvm package the interpreter imports)",
    )
    parser.add_argument(
        "--artefact",
        type=Path,
        action="append",
        default=[],
        help="a cuda artefact whose fatbin must serve each GPU (repeatable)",
    )
    parser.add_argument("--json", type=Path, help="write the facts and missing lines here")
    parser.add_argument(
        "--attach",
        type=Path,
        metavar="RUN_DIR",
        help="put the result of --json FILE into RUN_DIR/run.json instead",
    )
    parser.add_argument(
        "--warn-only",
        action="store_true",
        help="print what is missing but exit 0 (cuda cases may skip)",
    )
    args = parser.parse_args(argv)
    if args.attach:
        if not args.json:
            parser.error("--attach needs --json FILE (a result written earlier)")
        attach(args.attach, json.loads(args.json.read_text(encoding="utf-8")))
        return 0
    result = run(args.stage, args.python, args.tvm_lib, args.artefact)
    report(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 1 if result["missing"] and not args.warn_only else 0


if __name__ == "__main__":
    # Run as a file (python3 python/tvm_conformance/preflight.py): import the package beside it.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
