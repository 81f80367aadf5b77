#!/usr/bin/env bash
# Regenerate every lane's expectations (python/tvm_conformance/expectations/<lane>/), one
# `./bazelw run --config=<lane> //tools/expectations -- --write` per lane. Review the diff:
# every changed line is a case whose outcome changed.
exec "$(dirname "$0")/../config/run_each_lane.sh" //tools/expectations -- --write
