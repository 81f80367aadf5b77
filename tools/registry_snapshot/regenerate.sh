#!/usr/bin/env bash
# Regenerate every lane's registry snapshot (tools/registry_snapshot/<lane>.json), one
# `./bazelw run --config=<lane> //tools/registry_snapshot -- --write` per lane of the lanes
# table (tools/config/lanes.bzl).
set -euo pipefail
cd "$(dirname "$0")/../.."
for lane in $(python3 tools/config/lanes.py names); do
  config=()
  [[ "$lane" == default ]] || config=("--config=$lane")
  ./bazelw run "${config[@]}" //tools/registry_snapshot -- --write
done
