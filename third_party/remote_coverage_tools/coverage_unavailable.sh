#!/bin/sh
# See BUILD.bazel: coverage tools are not available offline in this kit.
echo "coverage is not available in tvm_conformance (offline Bazel 4.2.3; see README)" >&2
exit 1
