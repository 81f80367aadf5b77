#!/usr/bin/env bash
# Lints the whole tree: ruff (check + format) for Python, clang-format for C++, buildifier (lint
# + format) for BUILD, .bzl and WORKSPACE files, and the CI workflows (GitHub Actions:
# .github/workflows/*.yml and examples/ci/github/*.yml; GitLab CI: .gitlab-ci.yml) with
# actionlint and check-jsonschema's bundled schemas (offline: no schema is fetched). Run it as
# `./bazelw run //tools:lint`; the pinned tools come from //tools/lint:BUILD.bazel. Exit 1 and a
# list of findings when anything is off; with --fix it rewrites the files instead (then reports
# what it could not fix; workflows are checked only).
#
#   lint.sh --ruff=PATH --clang-format=PATH --buildifier=PATH --actionlint=PATH
#           --check-jsonschema=PATH [--root=DIR] [--fix]
#
# Files: what git tracks plus new files it does not ignore (outside a git checkout: every file
# but bazel-* and .git). Settings: ruff reads pyproject.toml, clang-format .clang-format;
# buildifier's disabled warnings are below, each with its reason.
set -uo pipefail

usage() {
  echo "usage: $0 --ruff=PATH --clang-format=PATH --buildifier=PATH --actionlint=PATH" \
    "--check-jsonschema=PATH [--root=DIR] [--fix]" >&2
  exit 2
}

fix=0
root="${BUILD_WORKSPACE_DIRECTORY:-}"
ruff="" clang_format="" buildifier="" actionlint="" check_jsonschema=""
for arg in "$@"; do
  case "$arg" in
    --fix) fix=1 ;;
    --root=*) root="${arg#*=}" ;;
    --ruff=*) ruff="${arg#*=}" ;;
    --clang-format=*) clang_format="${arg#*=}" ;;
    --buildifier=*) buildifier="${arg#*=}" ;;
    --actionlint=*) actionlint="${arg#*=}" ;;
    --check-jsonschema=*) check_jsonschema="${arg#*=}" ;;
    -h | --help) usage ;;
    *) echo "lint: unknown argument '$arg'" >&2; usage ;;
  esac
done
[[ -n "$ruff" && -n "$clang_format" && -n "$buildifier" && -n "$actionlint" && -n "$check_jsonschema" ]] ||
  usage
if [[ -z "$root" ]]; then
  echo "lint: no tree to lint: run it with ./bazelw run //tools:lint, or pass --root=DIR" >&2
  exit 2
fi
[[ -d "$root" ]] || { echo "lint: --root '$root' is not a directory" >&2; exit 2; }

# Tool paths are relative to the runfiles directory `bazel run` starts in; fix them before cd.
for tool in ruff clang_format buildifier actionlint check_jsonschema; do
  path="${!tool}"
  [[ -x "$path" ]] || { echo "lint: $tool binary '$path' is not executable" >&2; exit 2; }
  printf -v "$tool" '%s' "$(cd "$(dirname "$path")" && pwd)/$(basename "$path")"
done
cd "$root" || exit 2

# Buildifier warnings that Bazel 4.2.3 forces on us. Bazel 4.2.3's @bazel_tools predates
# loading rules from rules_cc / rules_python / rules_shell (offline, no such repositories
# exist here; third_party/rules_cc only re-exports the native rules), so every cc_*, py_* and
# sh_* rule in this tree is the native one. Re-enable them with the move to a newer Bazel.
buildifier_warnings=(
  -native-cc-binary
  -native-cc-import
  -native-cc-library
  -native-cc-shared-library
  -native-cc-test
  -native-py
  -native-sh-binary
  -native-sh-library
  -native-sh-test
)

py=() cc=() starlark=() github=() gitlab=()
list_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard
  else
    find . \( -name 'bazel-*' -o -name .git \) -prune -o -type f -print0 | sed -z 's|^\./||'
  fi
}
while IFS= read -r -d '' file; do
  [[ -f "$file" ]] || continue # tracked but deleted in the work tree
  case "$file" in
    *.py | *.pyi) py+=("$file") ;;
    # Outside code under third_party/ keeps its own style.
    third_party/*.cc | third_party/*.h) ;;
    *.cc | *.h | *.cpp | *.hpp) cc+=("$file") ;;
    BUILD | */BUILD | BUILD.* | */BUILD.* | *.BUILD | *.bzl | WORKSPACE | */WORKSPACE | WORKSPACE.bazel | */WORKSPACE.bazel)
      starlark+=("$file") ;;
    .github/workflows/*.yml | .github/workflows/*.yaml | */.github/workflows/*.yml | */.github/workflows/*.yaml | \
      examples/ci/github/*.yml | examples/ci/github/*.yaml)
      github+=("$file") ;;
    .gitlab-ci.yml | */.gitlab-ci.yml) gitlab+=("$file") ;;
  esac
done < <(list_files | sort -z)

failed=()
# run NAME COMMAND...: runs one tool, remembers it when it reports findings.
run() {
  local name="$1"
  shift
  echo "== $name" >&2
  if ! "$@"; then
    failed+=("$name")
  fi
}

if [[ ${#py[@]} -gt 0 ]]; then
  # --force-exclude: pyproject.toml's excludes hold for files named on the command line too.
  if [[ $fix -eq 1 ]]; then
    run "ruff check --fix" "$ruff" check --force-exclude --fix "${py[@]}"
    run "ruff format" "$ruff" format --force-exclude "${py[@]}"
  else
    run "ruff check" "$ruff" check --force-exclude "${py[@]}"
    run "ruff format --check" "$ruff" format --check --force-exclude "${py[@]}"
  fi
fi

if [[ ${#cc[@]} -gt 0 ]]; then
  if [[ $fix -eq 1 ]]; then
    run "clang-format -i" "$clang_format" --style=file -i "${cc[@]}"
  else
    run "clang-format" "$clang_format" --style=file --dry-run -Werror "${cc[@]}"
  fi
fi

if [[ ${#starlark[@]} -gt 0 ]]; then
  warnings="$(
    IFS=,
    echo "${buildifier_warnings[*]}"
  )"
  if [[ $fix -eq 1 ]]; then
    run "buildifier fix" "$buildifier" -mode=fix -lint=fix -warnings="$warnings" "${starlark[@]}"
    # Fixing applies the automatic fixes only; report what is left for a person.
    run "buildifier lint" "$buildifier" -mode=check -lint=warn -warnings="$warnings" "${starlark[@]}"
  else
    run "buildifier" "$buildifier" -mode=check -lint=warn -warnings="$warnings" "${starlark[@]}"
  fi
fi

# CI workflows: checked, never rewritten. check-jsonschema's --builtin-schema is the schema
# inside its wheel: nothing is downloaded.
if [[ ${#github[@]} -gt 0 ]]; then
  run "actionlint" "$actionlint" "${github[@]}"
  run "check-jsonschema github" "$check_jsonschema" --builtin-schema vendor.github-workflows "${github[@]}"
fi
if [[ ${#gitlab[@]} -gt 0 ]]; then
  run "check-jsonschema gitlab" "$check_jsonschema" --builtin-schema vendor.gitlab-ci "${gitlab[@]}"
fi

echo "lint: ${#py[@]} Python, ${#cc[@]} C++, ${#starlark[@]} Starlark files," \
  "$((${#github[@]} + ${#gitlab[@]})) CI workflows in $root" >&2
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "lint: findings from: $(IFS=,; echo "${failed[*]}" | sed 's/,/, /g')" >&2
  [[ $fix -eq 1 ]] || echo "lint: ./bazelw run //tools:lint -- --fix applies the automatic fixes" >&2
  exit 1
fi
echo "lint: clean" >&2
