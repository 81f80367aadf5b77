#!/bin/bash
# Proves a GPU-runner bundle stands alone, on a machine with or without a GPU: unpacks it in a
# scratch directory, makes a fresh venv with only numpy and torch (and what torch needs),
# installed from the repo's hashed lock (third_party/python/requirements.lock,
# --require-hashes), and runs run.sh:
#   1. GPU requirement off: must exit 0 (cuda cases run on a GPU, or skip with their reason;
#      the preflight only reports);
#   2. GPU requirement on: with a GPU it must exit 0; without one the preflight must stop it
#      before any test, with its "no GPU" line;
#   3. the same without the preflight (--skip-preflight), without a GPU: it must fail, and only
#      cuda targets may fail (each is named): no cuda case passes without its device;
#   4. with a GPU only: the preflight with the device hidden (CUDA_VISIBLE_DEVICES=) must fail
#      as on a GPU-less machine, and so must the tests without it, so a GPU machine checks
#      that path too.
# The venv takes numpy and torch from the lane's lock: the GPU flavour (CUDA torch,
# requirements_gpu.lock) where a GPU is, the CPU one elsewhere.
# "A GPU" is decided as third_party/gpu/gpu_detect.bzl decides it: TVM_CONFORMANCE_GPU=0 / 1
# forces absent / present (0 also hides the device from the runs), else nvidia-smi must list
# one. Works for //tools/gpu_runner:bundle (.tar.gz, the deployment tests) and :lane_bundle
# (.tar.xz, whose tests.json names every `_cuda` target: checked against `bazel query` when
# ./bazelw is here).
#   tools/gpu_runner/bundle_smoke.sh [BUNDLE] [PYTHON]
set -euo pipefail
bundle=$(realpath "${1:-bazel-bin/tools/gpu_runner/gpu_runner_bundle.tar.gz}")
python=${2:-python3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
began=$(date +%s)
echo "bundle: $bundle ($(stat -c %s "$bundle") bytes); scratch: $scratch"
tar xf "$bundle" -C "$scratch"

gpu=absent
case "${TVM_CONFORMANCE_GPU:-}" in
  0 | false | no) gpu=absent; export CUDA_VISIBLE_DEVICES= ;;
  1 | true | yes) gpu=present ;;
  "") if command -v nvidia-smi >/dev/null \
      && [ -n "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)" ]; then
        gpu=present
      fi ;;
  *) echo "TVM_CONFORMANCE_GPU must be 0 or 1, not '$TVM_CONFORMANCE_GPU'" >&2; exit 2 ;;
esac
echo "GPU: $gpu"

manifest="$scratch/gpu_runner/tests.json"
[ -f "$manifest" ] || { echo "FAIL: the bundle has no tests.json (the build writes it)"; exit 1; }
if [[ "$bundle" == *.tar.xz ]] && [ -x "$repo/bazelw" ]; then
  # The lane bundle carries every `_cuda` test of the suite: the same set bazel query finds.
  # The one `_cuda` query of the repo (tools/verdict/archive.py), as a GPU run's verdict reads it.
  query="$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import archive
print(archive.CUDA_SUITE_QUERY)' "$repo/tools/verdict")"
  (cd "$repo" && ./bazelw query --output=label "$query" 2>/dev/null | sort) >"$scratch/query.txt"
  python3 -c 'import json, sys
print("\n".join(sorted(t["label"] for t in json.load(open(sys.argv[1]))["tests"])))' \
    "$manifest" >"$scratch/manifest.txt"
  if ! diff -u "$scratch/query.txt" "$scratch/manifest.txt"; then
    echo "FAIL: the lane bundle's tests differ from the suite's _cuda tests (- query, + bundle)"
    exit 1
  fi
  echo "manifest: $(wc -l <"$scratch/manifest.txt") tests, the suite's _cuda tests exactly"
fi

"$python" -m venv "$scratch/venv"
# The lock's entries for numpy, torch and what they pull in ("# via" annotations), hashes kept.
lock="$repo/third_party/python/requirements.lock"
[ "$gpu" = absent ] || lock="$repo/third_party/python/requirements_gpu.lock"
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

# run NAME ARGS...: run.sh into $scratch/results-NAME; its exit code in $rc, output in .log.
run() {
  local name=$1 t0
  shift
  t0=$(date +%s)
  set +e
  "$scratch/gpu_runner/run.sh" "$@" --out "$scratch/results-$name" 2>&1 | tee "$scratch/$name.log"
  rc=${PIPESTATUS[0]}
  set -e
  echo "run $name: exit $rc in $(($(date +%s) - t0)) s"
}
# failed_targets NAME: the targets run.sh reported as failed, one a line.
failed_targets() {
  sed -n 's/^  \[[0-9]*\/[0-9]*\] \(FAILED\|TIMEOUT\) *\(\/\/[^:]*:[^:]*\): .*/\2/p' "$scratch/$1.log" | sort
}
problems=()
# Without the GPU requirement the run is partial ("GPU not required"): allowed here, saying why.
run optional --no-require-gpu "--allow-partial=bundle smoke: the GPU requirement off"
[ "$rc" = 0 ] || problems+=("GPU requirement off: exit $rc, want 0")
# run.sh ends with the kit's verdict, whose status is its exit status.
grep -q '^verdict: PARTIAL PASS (.*GPU not required' "$scratch/optional.log" ||
  problems+=("GPU requirement off: no 'verdict: PARTIAL PASS (... GPU not required' line")
run required
if [ "$gpu" = present ]; then
  [ "$rc" = 0 ] || problems+=("GPU requirement on with a GPU: exit $rc, want 0")
else
  [ "$rc" != 0 ] || problems+=("GPU requirement on without a GPU: exit 0, want a failure")
  grep -q '^preflight: MISSING: no GPU: ' "$scratch/required.log" ||
    problems+=("GPU requirement on without a GPU: no 'preflight: MISSING: no GPU' line")
  ! grep -q '^  \[[0-9]*/[0-9]*\] ' "$scratch/required.log" ||
    problems+=("GPU requirement on without a GPU: tests ran after the preflight failed")
  run required_no_preflight --skip-preflight
  [ "$rc" != 0 ] || problems+=("GPU requirement on, no preflight, no GPU: exit 0, want a failure")
  failed=$(failed_targets required_no_preflight)
  [ -n "$failed" ] || problems+=("GPU requirement on without a GPU: no target named as failed")
  others=$(grep -v '_cuda$' <<<"$failed" || true)
  [ -z "$others" ] || problems+=("GPU requirement on: non-cuda targets failed: $others")
  echo "failed without a GPU (named): $(echo $failed)"
fi
if [ "$gpu" = present ] && [ -z "${CUDA_VISIBLE_DEVICES+x}" ]; then
  CUDA_VISIBLE_DEVICES= run hidden_gpu_preflight --preflight-only
  [ "$rc" != 0 ] || problems+=("preflight, device hidden: exit 0, want a failure")
  CUDA_VISIBLE_DEVICES= run hidden_gpu --skip-preflight
  [ "$rc" != 0 ] || problems+=("GPU requirement on, device hidden: exit 0, want a failure")
fi

for archive in "$scratch"/results-*; do  # the archives read like a ./bazelw test run
  [ -f "$archive/run.json" ] || continue  # a preflight that stopped the run: no tests, no archive
  python3 -c 'import sys; sys.path.insert(0, sys.argv[2]); import results, run_identity
r = results.read_run(sys.argv[1]); cases = [c for _, c in r.cases()]
print(sys.argv[1].rsplit("/", 1)[-1] + ":", len(r.targets), "targets,", len(cases), "cases",
      {o: sum(c.outcome == o for c in cases) for o in sorted({c.outcome for c in cases})},
      "identity:", run_identity.venv_identity(r).get("lane"), "machine GPU:", r.meta.get("machine", {}).get("gpu"))' \
    "$archive" "$repo/tools/verdict"
done
echo "smoke wall time: $(($(date +%s) - began)) s"
if [ ${#problems[@]} -gt 0 ]; then
  printf 'FAIL: %s\n' "${problems[@]}"
  exit 1
fi
echo "PASS"
