#!/usr/bin/env bash
# update_lock.sh [LANE]: regenerates a hashed lock with pip-compile (pip-tools, installed into a
# throwaway venv). Run from anywhere; needs the package index.
#   no LANE:  requirements.in -> requirements.lock   (the default lane, @python_venv)
#   LANE:     lanes/LANE.in   -> lanes/LANE.lock     (--config=LANE, @python_venv_LANE)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
lane="${1:-}"
if [[ -z "$lane" ]]; then
  in="requirements.in" out="requirements.lock" repo="@python_venv"
else
  in="lanes/$lane.in" out="lanes/$lane.lock" repo="@python_venv_$lane"
  [[ -f "$here/$in" ]] || { echo "update_lock.sh: no $here/$in" >&2; exit 2; }
fi
tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT
python3 -m venv "$tools/venv"
"$tools/venv/bin/pip" install --quiet pip-tools
cd "$here"
"$tools/venv/bin/pip-compile" --quiet --generate-hashes --allow-unsafe --no-header \
  --strip-extras --no-emit-index-url --no-emit-find-links \
  -o "$tools/out.lock" "$in"
{
  cat <<HEADER
# Pinned, hashed Python dependencies of the test venv ($repo). Generated from
# $in by update_lock.sh (pip-compile --generate-hashes); edit $in, not this.
# pip installs it with --require-hashes --no-deps, so every package is listed here.
# torch==2.13.0+cpu: the CPU-only wheel. Its hash is the one of the local CPU wheel that this
# project's machines serve through pip's find-links (see docs/lanes.md, "torch").
HEADER
  cat "$tools/out.lock"
} >"$here/$out"
echo "Wrote $here/$out"
