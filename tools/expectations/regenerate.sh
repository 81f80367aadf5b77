#!/usr/bin/env bash
# Regenerate every lane's expectations (python/tvm_conformance/expectations/<lane>/), one
# `./bazelw run --config=<lane> //tools/expectations -- --write` per lane of the lanes table
# (tools/config/lanes.bzl). Review the diff: every changed line is a case whose outcome changed.
set -euo pipefail
cd "$(dirname "$0")/../.."
for lane in $(python3 tools/config/lanes.py names); do
  config=()
  [[ "$lane" == default ]] || config=("--config=$lane")
  ./bazelw run "${config[@]}" //tools/expectations -- --write
done
