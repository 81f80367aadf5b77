#!/bin/bash
# The lane bundle carries every `_cuda` test of the build graph: run by .ci/run (one
# `bazel query`, no bundle build). The lane bundle takes its tests from the per-package
# `cuda_tests` suites (CUDA_TEST_SUITES in tools/gpu_runner/BUILD.bazel); a `_cuda` test in a
# package that list does not name is missing from it, and this fails naming the test.
#   tools/gpu_runner/check_lane_suites.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
# The suite's `_cuda` tests, as the verdict of a GPU run reads them (tools/verdict/archive.py).
query="$(python3 -c 'import sys; sys.path.insert(0, "tools/verdict"); import archive; print(archive.CUDA_SUITE_QUERY)')"
suites='labels(tests, //tools/gpu_runner:lane_bundle)'
out="$(./bazelw query --output=label "($query) except tests($suites)" 2>/dev/null)" || {
  echo "check_lane_suites: bazel query failed:" >&2
  ./bazelw query --output=label "($query) except tests($suites)" >&2 || true
  exit 1
}
count="$(./bazelw query --output=label "$query" 2>/dev/null | grep -c .)"
if [[ -n "$out" ]]; then
  echo "check_lane_suites: FAIL: the lane bundle lacks these _cuda tests (add their package's" \
    ":cuda_tests to CUDA_TEST_SUITES in tools/gpu_runner/BUILD.bazel):" >&2
  printf '  %s\n' $out >&2
  exit 1
fi
echo "check_lane_suites: the lane bundle's suites hold all $count _cuda tests of the build graph"
