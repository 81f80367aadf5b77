#!/usr/bin/env bash
# tools/remote_exec/install.sh: install the loopback REAPI executor's tools; print the venv.
#
# From requirements.lock (hashes required, no dependencies resolved), into a venv outside the
# repo and outside Bazel (REMOTE_EXEC_VENV, default ~/.cache/tvm_conformance/remote_exec_venv):
# the executor is infrastructure, not a build input. Debian's bubblewrap (the runner's sandbox)
# is installed with apt-get when missing and this runs as root; otherwise the command is named.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${REMOTE_EXEC_VENV:-$HOME/.cache/tvm_conformance/remote_exec_venv}"

if ! command -v bwrap >/dev/null; then
  if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null; then
    (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap) >&2
  else
    echo "install.sh: bubblewrap is missing: sudo apt-get install -y bubblewrap" >&2
    exit 1
  fi
fi

stamp="$venv/.lock.sha256"
want="$(sha256sum "$here/requirements.lock" | cut -d' ' -f1)"
if [[ ! -x "$venv/bin/python" || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --require-hashes --no-deps -r "$here/requirements.lock" >&2
  echo "$want" >"$stamp"
fi
echo "$venv"
