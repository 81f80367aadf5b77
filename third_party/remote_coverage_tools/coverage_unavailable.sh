#!/bin/sh
# See BUILD.bazel: coverage tools are not available offline in this kit.
echo "coverage is not available in tvm_conformance (offline Bazel 4.2.3)" >&2
exit 1
