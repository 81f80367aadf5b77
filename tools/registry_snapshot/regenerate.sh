#!/usr/bin/env bash
# Regenerate every lane's registry snapshot (tools/registry_snapshot/<lane>.json), one
# `./bazelw run --config=<lane> //tools/registry_snapshot -- --write` per lane.
exec "$(dirname "$0")/../config/run_each_lane.sh" //tools/registry_snapshot -- --write
