#!/usr/bin/env bash
# update_lock.sh [LANE] [--gpu]: regenerates a hashed lock with pip-compile (pip-tools, installed
# into a throwaway venv). Run from anywhere; needs the package index.
#   no LANE:  requirements.in -> requirements.lock   (the default lane, @python_venv)
#   LANE:     lanes/LANE.in   -> lanes/LANE.lock     (--config=LANE, @python_venv_LANE)
#   --gpu:    the lane's GPU flavour (--config=cuda_gpu, @python_venv[_LANE]_gpu):
#             requirements_gpu.lock / lanes/LANE_gpu.lock, from the same .in with torch's CUDA
#             build from the index (`torch==X` for `torch==X+cpu`), every other package held
#             at the version of the lane's CPU lock (run the CPU lock first). It resolves
#             without pip's find-links, where these machines serve the local CPU-only wheel.
#   --python 3.X: the lane's lock for a CPython its other locks cannot install on (3.10):
#             requirements_py3X.lock / lanes/LANE_py3X.lock, resolved by that Python's pip with
#             the index's torch, every package held at the lane's GPU-lock version where it
#             installs there (lock_for_python.py; a minute). List it in the lane's
#             `python_locks` (tools/config/lanes.bzl).
#             pip-compile hashes every file of torch's release (over 22 GB downloaded, 16
#             minutes here: pip-tools does not read PyPI's digests here): a lane whose CPU lock differs from
#             the default lane's in its own packages only (TVM, tvm-ffi) gets the default GPU
#             lock with those packages' entries taken from its CPU lock instead, which is what
#             pip-compile would write (--recompile forces pip-compile).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
lane="" gpu=0 recompile=0 cpu_lock="" python=""
while [[ $# -gt 0 ]]; do
  arg="$1"
  shift
  case "$arg" in
    --gpu) gpu=1 ;;
    --recompile) recompile=1 ;;
    --python)
      python="${1:-}"
      shift || true
      [[ "$python" =~ ^3\.[0-9]+$ ]] || { echo "update_lock.sh: --python takes 3.X, not '$python'" >&2; exit 2; } ;;
    -*) echo "update_lock.sh: unknown option $arg" >&2; exit 2 ;;
    *) lane="$arg" ;;
  esac
done
if [[ -z "$lane" ]]; then
  in="requirements.in" out="requirements.lock" repo="@python_venv"
else
  in="lanes/$lane.in" out="lanes/$lane.lock" repo="@python_venv_$lane"
  [[ -f "$here/$in" ]] || { echo "update_lock.sh: no $here/$in" >&2; exit 2; }
fi
if [[ -n "$python" ]]; then
  stem="${out%.lock}" gpu_lock="${out%.lock}_gpu.lock"
  interpreter=""
  for candidate in $(type -ap "python$python") "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$python".*/bin/"python$python"; do
    if [[ -x "$candidate" ]] && "$candidate" -c 'import pip' 2>/dev/null; then interpreter="$candidate"; break; fi
  done
  [[ -n "$interpreter" ]] || { echo "update_lock.sh: no working python$python (PATH, pyenv)" >&2; exit 2; }
  cd "$here"
  exec python3 lock_for_python.py "$interpreter" "$in" "$gpu_lock" "${stem}_py${python/./}.lock"
fi
if [[ $gpu == 1 && -n "$lane" && $recompile == 0 ]] &&
  python3 - "$here" "$lane" <<'PY'
import re, sys
from pathlib import Path

here, lane = Path(sys.argv[1]), sys.argv[2]
def blocks(path: Path) -> dict[str, str]:
    """{package: its lines (pin, hashes, via comments)} of a pip-compile lock."""
    out, name = {}, None
    for line in path.read_text().splitlines(keepends=True):
        head = re.match(r"^([A-Za-z0-9_.-]+)==", line)
        if head:
            name = head.group(1).lower()
            out[name] = line
        elif name and line.startswith("    "):
            out[name] += line
        else:
            name = None
    return out
default_cpu, lane_cpu = blocks(here / "requirements.lock"), blocks(here / f"lanes/{lane}.lock")
default_gpu_path = here / "requirements_gpu.lock"
if set(default_cpu) != set(lane_cpu) or not default_gpu_path.exists():
    sys.exit(1)  # not the same packages: pip-compile
own = {p for p in lane_cpu if lane_cpu[p].split("\n")[0] != default_cpu[p].split("\n")[0]}
if "torch" in own:
    sys.exit(1)
gpu = blocks(default_gpu_path)
lines = [
    f"# Pinned, hashed Python dependencies of the test venv (@python_venv_{lane}_gpu). The GPU\n",
    f"# flavour of lanes/{lane}.in: requirements_gpu.lock (torch's CUDA build) with this lane's\n",
    f"# own packages ({', '.join(sorted(own))}) from lanes/{lane}.lock. Made by update_lock.sh\n",
    f"# {lane} --gpu; pip installs it with --require-hashes --no-deps.\n",
]
for name, block in gpu.items():
    lines.append(lane_cpu[name] if name in own else block)
(here / f"lanes/{lane}_gpu.lock").write_text("".join(lines))
print(f"Wrote {here}/lanes/{lane}_gpu.lock (requirements_gpu.lock with {', '.join(sorted(own))} of lanes/{lane}.lock)")
PY
then
  exit 0
fi
tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT
python3 -m venv "$tools/venv"
"$tools/venv/bin/pip" install --quiet pip-tools
cd "$here"
compile_in="$in" flavour_note="# torch==2.13.0+cpu: the CPU-only wheel. Its hash is the one of the local CPU wheel that this
# project's machines serve through pip's find-links (see docs/lanes.md, \"torch\")."
if [[ $gpu == 1 ]]; then
  cpu_lock="$out"
  out="${out%.lock}_gpu.lock" repo="${repo}_gpu"
  [[ -f "$cpu_lock" ]] || { echo "update_lock.sh: no $here/$cpu_lock (make the CPU lock first)" >&2; exit 2; }
  grep -q '^torch==.*+cpu' "$in" || { echo "update_lock.sh: $in pins no torch==X+cpu" >&2; exit 2; }
  # The same pins: every package of the CPU lock but torch is a constraint.
  sed -n 's/^\([A-Za-z0-9_.-]*==[^ ]*\).*/\1/p' "$cpu_lock" | grep -v '^torch==' >"$tools/constraints.txt"
  sed 's/^torch==\([^+ ]*\)+cpu/torch==\1/' "$in" >"$tools/gpu.in"
  echo "-c $tools/constraints.txt" >>"$tools/gpu.in"
  compile_in="$tools/gpu.in"
  # The index pip is configured with, but not its find-links (the local CPU-only torch).
  index="$(python3 -m pip config get global.index-url 2>/dev/null || echo https://pypi.org/simple)"
  export PIP_CONFIG_FILE=/dev/null PIP_INDEX_URL="$index"
  unset PIP_FIND_LINKS
  flavour_note="# The GPU flavour of $in: torch's CUDA build (torch==2.13.0 from the index, with its nvidia-*
# wheels), every other package as in $cpu_lock. Made by update_lock.sh --gpu."
fi
"$tools/venv/bin/pip-compile" --quiet --generate-hashes --allow-unsafe --no-header \
  --strip-extras --no-emit-index-url --no-emit-find-links \
  -o "$tools/out.lock" "$compile_in"
if [[ $gpu == 1 ]] && grep -q '^torch==.*+cpu' "$tools/out.lock"; then
  echo "update_lock.sh: the GPU lock resolved a CPU-only torch" >&2
  exit 1
fi
{
  cat <<HEADER
# Pinned, hashed Python dependencies of the test venv ($repo). Generated from
# $in by update_lock.sh (pip-compile --generate-hashes); edit $in, not this.
# pip installs it with --require-hashes --no-deps, so every package is listed here.
$flavour_note
HEADER
  # pip-compile names its input by path: the GPU flavour's is a scratch file.
  sed "s|$tools/gpu.in|$in (GPU flavour)|g; s|-c $tools/constraints.txt|$cpu_lock|g" "$tools/out.lock"
} >"$here/$out"
echo "Wrote $here/$out"
