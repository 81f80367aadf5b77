#!/usr/bin/env bash
# `./bazelw run [--config=<lane>] ARGS...` once per lane of the lanes table
# (tools/config/lanes.bzl), the default lane first: what each lane's regenerate.sh runs
# (tools/registry_snapshot, tools/expectations).
set -euo pipefail
cd "$(dirname "$0")/../.."
for lane in $(python3 tools/config/lanes.py names); do
  config=()
  [[ "$lane" == default ]] || config=("--config=$lane")
  ./bazelw run "${config[@]}" "$@"
done
