#!/usr/bin/env bash
# tools/remote_exec/install.sh: install the loopback REAPI executor's tools; print the venv.
#
# From requirements.lock (hashes required, no dependencies resolved), into a venv outside the
# repo and outside Bazel (REMOTE_EXEC_VENV, default ~/.cache/tvm_conformance/remote_exec_venv):
# the executor is infrastructure, not a build input. Debian's bubblewrap (the runner's sandbox)
# comes with the kit's prerequisites (./bazelw installs them).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${REMOTE_EXEC_VENV:-$HOME/.cache/tvm_conformance/remote_exec_venv}"

# bubblewrap is one of the kit's prerequisites (tools/setup/prerequisites.txt): ./bazelw
# installs it with the rest; this script installs nothing outside its venv.
if ! command -v bwrap >/dev/null; then
  echo "install.sh: bubblewrap is missing (tools/setup/prerequisites.txt): run ./bazelw once as root, or sudo apt-get install -y bubblewrap" >&2
  exit 1
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
