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
"$tools/venv/bin/pip-compile" --quiet --generate-hashes --allow-unsafe --no-header \
  --strip-extras --no-emit-index-url --no-emit-find-links \
  -o "$tools/requirements.lock" requirements.in
{
  cat <<'HEADER'
# Pinned, hashed lint tools (@lint_tools, //tools:lint). Generated from requirements.in by
# update_lock.sh (pip-compile --generate-hashes); edit requirements.in, not this.
# pip installs it with --require-hashes --no-deps --only-binary=:all:.
HEADER
  cat "$tools/requirements.lock"
} >"$here/requirements.lock"
echo "Wrote $here/requirements.lock"
