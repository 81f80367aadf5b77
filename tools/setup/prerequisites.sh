#!/usr/bin/env bash
# tools/setup/prerequisites.sh check|install|apt-line: the machine's prerequisites
# (tools/setup/prerequisites.txt, the one list).
#   check     prints the missing ones, one line each (`PACKAGE PROBE WHO`); exit 1 if any
#   install   installs the missing Debian packages with apt-get (as root; otherwise prints the
#             line and exits 1); exit 1 if apt-get failed
#   apt-line  prints the one `apt-get install` line for what is missing (empty if nothing)
# A missing entry that is not a Debian package (`-`, and chromium on Ubuntu, whose apt package
# is a snap stand-in) is named on stderr by install and apt-line, with how to get it.
set -euo pipefail

list="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/prerequisites.txt"

# probe PROBE: whether it holds on this machine.
probe() {
  local kind="${1%%:*}" arg="${1#*:}" name
  case "$kind" in
    cmd)
      for name in ${arg//|/ }; do command -v "$name" >/dev/null && return 0; done
      return 1
      ;;
    file) [[ -e "$arg" ]] ;;
    pymod) command -v python3 >/dev/null && python3 -c "import ${arg}" 2>/dev/null ;;
    *)
      echo "prerequisites.sh: unknown probe '$1' in $list" >&2
      exit 2
      ;;
  esac
}

# The missing entries: "PACKAGE\tPROBE\tWHO" lines.
missing() {
  local package probe_spec who
  while read -r package probe_spec who; do
    [[ -z "$package" || "$package" == \#* || "$package" == probed ]] && continue
    probe "$probe_spec" || printf '%s\t%s\t%s\n' "$package" "$probe_spec" "$who"
  done <"$list"
}

case "${1:-}" in
  check)
    out="$(missing)"
    [[ -z "$out" ]] || { echo "$out"; exit 1; }
    ;;
  apt-line | install)
    out="$(missing)"
    packages=() others=() ubuntu=0
    grep -qsx 'ID=ubuntu' /etc/os-release && ubuntu=1
    while IFS=$'\t' read -r package probe_spec who; do
      [[ -n "$package" ]] || continue
      if [[ "$package" == chromium && $ubuntu == 1 ]]; then
        others+=("chromium: sudo snap install chromium (Ubuntu's apt package is a snap stand-in)")
      elif [[ "$package" == - ]]; then
        others+=("${probe_spec#*:}: ${who}")
      else
        packages+=("$package")
      fi
    done <<<"$out"
    [[ -n "${TVM_CONFORMANCE_QUIET_PREREQUISITES:-}" ]] ||
      for other in ${others[@]+"${others[@]}"}; do echo "prerequisites: not installed: $other" >&2; done
    if [[ "$1" == apt-line ]]; then
      [[ ${#packages[@]} -eq 0 ]] || echo "apt-get update && apt-get install -y ${packages[*]}"
      exit 0
    fi
    [[ ${#packages[@]} -gt 0 ]] || exit 0
    if [[ "$(id -u)" -ne 0 ]] || ! command -v apt-get >/dev/null; then
      echo "prerequisites.sh: missing ${packages[*]}; as root: apt-get update && apt-get install -y ${packages[*]}" >&2
      exit 1
    fi
    echo "prerequisites.sh: installing ${packages[*]}" >&2
    (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${packages[@]}") >&2
    ;;
  *)
    echo "usage: tools/setup/prerequisites.sh check|install|apt-line" >&2
    exit 2
    ;;
esac
