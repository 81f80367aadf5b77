#!/usr/bin/env bash
# tools/remote_cache/install.sh [--relock]: install BuildGrid (the REAPI cache server) from
# requirements.lock, hashes required, into its own venv; prints the venv's path.
#
# The venv lives outside the repo and outside Bazel (BUILDGRID_VENV, default
# ~/.cache/tvm_conformance/buildgrid_venv) because the server is infrastructure, not a build
# input. BuildGrid 0.9.1 needs Python >= 3.13: BUILDGRID_PYTHON, else python3.14 / python3.13
# on PATH, else the newest 3.13+ that pyenv has installed.
# --relock regenerates requirements.lock from requirements.in (pip's resolver, one sha256 per
# file it picked) before installing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${BUILDGRID_VENV:-$HOME/.cache/tvm_conformance/buildgrid_venv}"

runs_313() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 13))' 2>/dev/null; }

find_python() {
  local c
  for c in "${BUILDGRID_PYTHON:-}" python3.14 python3.13 python3; do
    [[ -n "$c" ]] && command -v "$c" >/dev/null && runs_313 "$c" && { command -v "$c"; return; }
  done
  if command -v pyenv >/dev/null; then
    for c in $(ls -d "$(pyenv root)"/versions/3.1[3-9]* 2>/dev/null | sort -V -r); do
      runs_313 "$c/bin/python3" && { echo "$c/bin/python3"; return; }
    done
  fi
  echo "install.sh: BuildGrid 0.9.1 needs Python >= 3.13; none found. Set BUILDGRID_PYTHON." >&2
  exit 1
}

python="$(find_python)"

if [[ "${1:-}" == "--relock" ]]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "$python" -m venv "$tmp/venv"
  "$tmp/venv/bin/pip" install -q --dry-run --ignore-installed --report "$tmp/report.json" \
    -r "$here/requirements.in"
  "$python" - "$tmp/report.json" "$here/requirements.lock" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
head = open(sys.argv[2]).read().split("\n\n", 1)[0] if open(sys.argv[2]).read() else ""
rows = []
for item in sorted(report["install"], key=lambda i: i["metadata"]["name"].lower()):
    meta, digest = item["metadata"], item["download_info"]["archive_info"]["hashes"]["sha256"]
    rows.append(f"{meta['name'].lower()}=={meta['version']} \\\n    --hash=sha256:{digest}")
open(sys.argv[2], "w").write(head + "\n\n" + "\n".join(rows) + "\n")
PY
  echo "install.sh: rewrote requirements.lock" >&2
fi

stamp="$venv/.lock.sha256"
want="$(sha256sum "$here/requirements.lock" | cut -d' ' -f1)"
if [[ ! -x "$venv/bin/bgd" || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install -q --require-hashes --no-deps -r "$here/requirements.lock" >&2
  echo "$want" >"$stamp"
fi
echo "$venv"
