"""tvm_conformance: checks that a TVM build keeps its runtime-interop contract.

Modules: `runfiles` (find workspace files under Bazel and plain pytest), `pytest_plugin`
(target/dev fixtures and markers), and the harnesses used by tests under python/tests/.
"""
