#!/usr/bin/env bash
# Regenerates requirements.lock from requirements.in with hashes (pip-compile from pip-tools,
# installed into a throwaway venv). Run from anywhere; needs the package index.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT
python3 -m venv "$tools/venv"
"$tools/venv/bin/pip" install --quiet pip-tools
cd "$here"
header="$(sed -n '/^# Pinned/,/^# project/p' "$here/requirements.lock")"
"$tools/venv/bin/pip-compile" --quiet --generate-hashes --allow-unsafe --no-header \
  --strip-extras --no-emit-index-url --no-emit-find-links \
  -o "$tools/requirements.lock" requirements.in
{ printf '%s\n' "$header"; cat "$tools/requirements.lock"; } >"$here/requirements.lock"
echo "Wrote $here/requirements.lock"
