#!/bin/sh
# Runs every test of the GPU-runner bundle; see run_bundle.py (or `run.sh --help`).
# Needs python3 (3.10-3.12) with numpy and torch; PYTHON picks another interpreter.
here=$(cd "$(dirname "$0")" && pwd)
exec "${PYTHON:-python3}" "$here/run_bundle.py" "$@"
