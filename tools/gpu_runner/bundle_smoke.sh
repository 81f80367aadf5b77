#!/bin/bash
# Proves the GPU-runner bundle stands alone: unpacks it in a scratch directory, makes a fresh
# venv with only numpy and torch (and what torch needs), installed from the repo's hashed lock
# (third_party/python/requirements.lock, --require-hashes), and runs
# run.sh twice: with the GPU requirement off (llvm cases pass, cuda cases skip with a reason:
# exit 0 expected on a GPU-less machine) and on (the cuda cases fail, named: exit 1 expected).
#   tools/gpu_runner/bundle_smoke.sh [BUNDLE.tar.gz] [PYTHON]
set -euo pipefail
bundle=$(realpath "${1:-bazel-bin/tools/gpu_runner/gpu_runner_bundle.tar.gz}")
python=${2:-python3}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
echo "bundle: $bundle ($(stat -c %s "$bundle") bytes); scratch: $scratch"
tar xzf "$bundle" -C "$scratch"
"$python" -m venv "$scratch/venv"
# The lock's entries for numpy, torch and what they pull in ("# via" annotations), hashes kept.
lock="$(dirname "$0")/../../third_party/python/requirements.lock"
python3 - "$lock" >"$scratch/requirements.txt" <<'PY'
import re, sys
blocks, current = {}, None
for line in open(sys.argv[1], encoding="utf-8"):
    head = re.match(r"^([A-Za-z0-9_.-]+)==", line)
    if head:
        current = head.group(1).lower()
        blocks[current] = {"lines": [line], "via": set()}
    elif current and line.startswith("    --hash"):
        blocks[current]["lines"].append(line)
    elif current and line.startswith("    #"):
        for via in re.findall(r"([A-Za-z0-9_.-]+)", line.split("#", 1)[1]):
            blocks[current]["via"].add(via.lower())
wanted, grew = {"numpy", "torch"}, True
while grew:
    grew = False
    for name, block in blocks.items():
        if name not in wanted and block["via"] & wanted:
            wanted.add(name)
            grew = True
for name in sorted(wanted):
    sys.stdout.write("".join(blocks[name]["lines"]).rstrip(" \\\n") + "\n")
PY
"$scratch/venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes --no-deps \
  -r "$scratch/requirements.txt"
"$scratch/venv/bin/python" -m pip list --disable-pip-version-check --format=freeze
export PYTHON="$scratch/venv/bin/python"
set +e
"$scratch/gpu_runner/run.sh" --no-require-gpu --out "$scratch/results-optional"
optional=$?
"$scratch/gpu_runner/run.sh" --out "$scratch/results-required"
required=$?
set -e
echo "GPU requirement off: exit $optional; on: exit $required"
if [ -f tools/testing/results.py ]; then  # the archives read like a ./bazelw test run
  for run in "$scratch"/results-*; do
    python3 -c 'import sys; sys.path.insert(0, "tools/testing"); import results
r = results.read_run(sys.argv[1]); cases = [c for _, c in r.cases()]
print(sys.argv[1].rsplit("/", 1)[-1] + ":", len(r.targets), "targets,",
      {o: sum(c.outcome == o for c in cases) for o in sorted({c.outcome for c in cases})})' "$run"
  done
fi
[ "$optional" = 0 ] && [ "$required" != 0 ]
