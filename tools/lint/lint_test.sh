#!/usr/bin/env bash
# Self-test of lint.sh with the pinned tools: on small trees made here, check mode finds what
# each tool should find and fails; --fix rewrites the files so that a second check is clean;
# Bazel-4-forced native-rule warnings stay off while other buildifier warnings stay on; files
# git ignores are not linted; CI workflows are checked with actionlint and check-jsonschema.
set -uo pipefail

lint="$1"
shift
tools=("$@")
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# run_lint DIR [ARGS...]: runs lint.sh on DIR; sets `out` and `rc`.
run_lint() {
  local dir="$1"
  shift
  out="$("$lint" "${tools[@]}" --root="$dir" "$@" 2>&1)"
  rc=$?
}

expect_in_out() {
  grep -qF -- "$1" <<<"$out" || fail "$2: output lacks '$1'; output was:"$'\n'"$out"
}

make_tree() {
  mkdir -p "$1"
  printf '[tool.ruff]\nline-length = 100\n\n[tool.ruff.lint]\nselect = ["E", "F", "W", "I", "B", "UP"]\n' >"$1/pyproject.toml"
  printf 'BasedOnStyle: Google\n' >"$1/.clang-format"
}

# 1. One finding per tool: check fails and names each file; --fix repairs all of them.
tree="$tmp/findings"
make_tree "$tree"
printf 'import os\nx=1\n' >"$tree/bad.py"
mkdir -p "$tree/cpp"
printf 'int  f( ){return 1;}\n' >"$tree/cpp/bad.cc"
# A native rule (its warning is disabled: Bazel 4.2.3 has nothing to load it from), unformatted.
printf 'cc_library(name="x",srcs=["cpp/bad.cc"])\n' >"$tree/BUILD.bazel"
run_lint "$tree"
[[ $rc -eq 1 ]] || fail "check on a tree with findings exited $rc, wanted 1"
expect_in_out "F401" "ruff check"
expect_in_out "bad.py" "ruff"
expect_in_out "cpp/bad.cc" "clang-format"
expect_in_out "BUILD.bazel # reformat" "buildifier"
expect_in_out "findings from: ruff check, ruff format --check, clang-format, buildifier" "summary"
grep -q "native-cc-library" <<<"$out" && fail "native-cc-library warning is not disabled: $out"

run_lint "$tree" --fix
[[ $rc -eq 0 ]] || fail "--fix exited $rc, wanted 0; output was: $out"
[[ "$(cat "$tree/bad.py")" == "x = 1" ]] || fail "bad.py after --fix: $(cat "$tree/bad.py")"
[[ "$(cat "$tree/cpp/bad.cc")" == "int f() { return 1; }" ]] || fail "bad.cc after --fix: $(cat "$tree/cpp/bad.cc")"
run_lint "$tree"
[[ $rc -eq 0 ]] || fail "check after --fix exited $rc, wanted 0; output was: $out"
expect_in_out "lint: clean" "check after --fix"

# 2. A buildifier warning that is not forced by Bazel 4.2.3 still fails the check.
tree="$tmp/warning"
make_tree "$tree"
printf '"""Docstring."""\n\ndef f():\n    unused = 1\n    return 2\n' >"$tree/defs.bzl"
run_lint "$tree"
[[ $rc -eq 1 ]] || fail "check with an unused variable exited $rc, wanted 1"
expect_in_out "defs.bzl:4: unused-variable" "buildifier lint"

# 3. In a git checkout, files git ignores are not linted; new untracked ones are.
if command -v git >/dev/null; then
  tree="$tmp/git"
  make_tree "$tree"
  git -C "$tree" init -q
  printf 'ignored.py\n' >"$tree/.gitignore"
  printf 'import os\n' >"$tree/ignored.py"
  printf 'x = 1\n' >"$tree/new.py"
  run_lint "$tree"
  [[ $rc -eq 0 ]] || fail "an ignored file was linted (exit $rc): $out"
  expect_in_out "lint: 1 Python" "git file list"
else
  echo "skipped: git file list (git is not on PATH)" >&2
fi

# 4. CI workflows: a GitHub workflow with an unknown job key fails actionlint and the bundled
# schema, a GitLab file with a wrongly typed key fails its schema; fixed, both are clean.
tree="$tmp/workflows"
make_tree "$tree"
mkdir -p "$tree/.github/workflows"
workflow='on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    %s: 5\n    steps:\n      - run: ./x.sh\n'
# shellcheck disable=SC2059
printf "$workflow" timeout-minute >"$tree/.github/workflows/ci.yml"
printf 'job:\n  script: [./x.sh]\n  timeout: [2h]\n' >"$tree/.gitlab-ci.yml"
run_lint "$tree"
[[ $rc -eq 1 ]] || fail "check of bad workflows exited $rc, wanted 1; output was: $out"
expect_in_out 'unexpected key "timeout-minute"' "actionlint"
expect_in_out "findings from: actionlint, check-jsonschema github, check-jsonschema gitlab" "workflows"
expect_in_out "2 CI workflows" "workflow count"
# shellcheck disable=SC2059
printf "$workflow" timeout-minutes >"$tree/.github/workflows/ci.yml"
printf 'job:\n  script: [./x.sh]\n  timeout: 2h\n' >"$tree/.gitlab-ci.yml"
run_lint "$tree"
[[ $rc -eq 0 ]] || fail "check of good workflows exited $rc, wanted 0; output was: $out"

# 5. Bad usage is a clear error, not a lint of some other tree.
run_lint "$tmp/does-not-exist"
[[ $rc -eq 2 ]] || fail "a missing --root exited $rc, wanted 2"
expect_in_out "is not a directory" "missing --root"

if [[ $failures -gt 0 ]]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "lint_test: all checks passed"
