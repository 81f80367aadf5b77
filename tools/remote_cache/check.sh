#!/usr/bin/env bash
# tools/remote_cache/check.sh [TARGET...]: prove that a second clone gets its actions from the
# remote cache. Default targets: //... .
#
#   1. installs BuildGrid (install.sh) and starts it on 127.0.0.1 (a free port, a fresh
#      storage dir), waiting at most 60 s for `bgd capabilities` to answer;
#   2. clone A (git clone of this checkout, HEAD) builds and tests TARGETs with
#      --config=remote_push, its own output base and no disk cache;
#   3. clone B, in another directory with another output base and no disk cache, runs the
#      same with --config=remote (read-only) and --nocache_test_results is NOT given, so a
#      cached test result counts as a hit too;
#   4. prints B's "remote cache hit" count against its total processes, and exits 1 when B
#      ran any action that A had pushed (a cache key that depends on the clone's path).
# With GPU keying present (third_party/gpu, TVM_CONFORMANCE_GPU), step 5 checks that a cuda
# variant's result recorded with TVM_CONFORMANCE_GPU=0 is not served to a clone that has
# TVM_CONFORMANCE_GPU=1: the test must run again, and with TVM_CONFORMANCE_GPU=0 be served
# (set CHECK_GPU_TARGET to choose it).
# The server and both Bazel servers it started are stopped on exit, also on failure; the
# logs are copied to CHECK_KEEP_LOGS (a directory) when it is set.
# Network: 127.0.0.1 only; every Bazel call has a time bound (CHECK_TIMEOUT_S, default 1800).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(git -C "$here" rev-parse --show-toplevel)"
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(//...)
timeout_s="${CHECK_TIMEOUT_S:-1800}"
gpu_target="${CHECK_GPU_TARGET:-//python/tests/targets:cuda_codegen_test_cuda}"

work="$(mktemp -d -t remote-cache-check.XXXXXX)"
server_pid=""
cleanup() {
  local status=$?
  for clone in a b; do
    if [[ -d "$work/$clone" ]]; then
      (cd "$work/$clone" && ./bazelw --output_base="$work/ob_$clone" shutdown) >/dev/null 2>&1 || true
    fi
  done
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [[ -n "${CHECK_KEEP_LOGS:-}" ]]; then
    mkdir -p "$CHECK_KEEP_LOGS" && cp "$work"/*.log "$CHECK_KEEP_LOGS"/ 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT INT TERM

venv="$("$here/install.sh")"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
endpoint="grpc://127.0.0.1:$port"
mkdir -p "$work/cas"
sed -e "s|@PORT@|$port|" -e "s|@STORAGE@|$work/cas|" "$here/cache.yml.in" >"$work/cache.yml"
"$venv/bin/bgd" server start "$work/cache.yml" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 60); do
  "$venv/bin/bgd" capabilities --remote "$endpoint" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; echo "check.sh: BuildGrid exited" >&2; exit 1; }
  sleep 1
done
"$venv/bin/bgd" capabilities --remote "$endpoint" >/dev/null || { echo "check.sh: no answer on $endpoint" >&2; exit 1; }
echo "check.sh: BuildGrid on $endpoint (pid $server_pid)"

# Each clone: its own directory, output base and no disk cache, so only the remote cache links
# them. .bazelrc.user (resource limits) is copied when this checkout has one.
clone() {
  git clone -q "$repo" "$work/$1"
  [[ -f "$repo/.bazelrc.user" ]] && cp "$repo/.bazelrc.user" "$work/$1/"
  return 0
}

run_bazel() {  # run_bazel CLONE LOG ARGS...
  local clone=$1 log=$2
  shift 2
  (cd "$work/$clone" && timeout "$timeout_s" ./bazelw --output_base="$work/ob_$clone" "$@" \
    --disk_cache= --remote_cache="$endpoint" --remote_timeout=60) 2>&1 | tee "$log" |
    grep -E '^//|^INFO: [0-9]+ processes|^Test cases|^Executed'
  return "${PIPESTATUS[0]}"
}

# "INFO: 123 processes: 100 remote cache hit, 20 internal, 3 linux-sandbox." -> fields.
count() {  # count LOG KIND
  grep -E '^INFO: [0-9]+ processes' "$1" | tail -1 |
    grep -oE "[0-9]+ $2" | grep -oE '^[0-9]+' || echo 0
}
total() { grep -E '^INFO: [0-9]+ processes' "$1" | tail -1 | grep -oE '[0-9]+ processes' | grep -oE '^[0-9]+' || echo 0; }

clone a
echo "check.sh: clone A (push): test ${targets[*]}"
run_bazel a "$work/a.log" test --config=remote_push "${targets[@]}"

clone b
echo "check.sh: clone B (read-only): test ${targets[*]}"
run_bazel b "$work/b.log" test --config=remote "${targets[@]}"

hits="$(count "$work/b.log" 'remote cache hit')"
all="$(total "$work/b.log")"
internal="$(count "$work/b.log" 'internal')"
ran=$((all - hits - internal))
echo "check.sh: clone B: $hits remote cache hit / $all processes ($internal internal, $ran run locally)"
status=0
if [[ $ran -ne 0 ]]; then
  echo "check.sh: FAIL: clone B ran $ran cacheable action(s) itself" >&2
  status=1
fi

if [[ -d "$repo/third_party/gpu" ]]; then
  echo "check.sh: GPU keying: $gpu_target under --config=cuda, pushed with TVM_CONFORMANCE_GPU=0"
  (export TVM_CONFORMANCE_GPU=0; run_bazel a "$work/a_gpu.log" test --config=cuda --config=remote_push "$gpu_target")
  echo "check.sh: ... then read by clone B with TVM_CONFORMANCE_GPU=1 (must not be served)"
  (export TVM_CONFORMANCE_GPU=1; run_bazel b "$work/b_gpu.log" test --config=cuda --config=remote "$gpu_target") || true
  if grep -q "(cached) PASSED" "$work/b_gpu.log"; then
    echo "check.sh: FAIL: a cuda result recorded without a GPU was served to a GPU clone" >&2
    status=1
  else
    echo "check.sh: the cuda variant ran again on the GPU clone"
  fi
  # Control: the same key (TVM_CONFORMANCE_GPU=0) must be served, or the test above proved
  # only that the cuda variant is never cached.
  echo "check.sh: control: clone B with TVM_CONFORMANCE_GPU=0 (must be served)"
  (export TVM_CONFORMANCE_GPU=0; run_bazel b "$work/b_gpu0.log" test --config=cuda --config=remote "$gpu_target")
  if grep -q "(cached) PASSED" "$work/b_gpu0.log"; then
    echo "check.sh: GPU keying holds through the remote cache"
  else
    echo "check.sh: FAIL: the cuda variant was not served even with the same GPU key" >&2
    status=1
  fi
else
  echo "check.sh: no GPU keying in this tree (third_party/gpu); GPU check skipped"
fi
exit "$status"
