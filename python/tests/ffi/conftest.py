"""Shared fixture of these tests: the C++ extensions a test module names in EXTENSIONS, loaded
for the module (tvm_conformance.extensions)."""

from tvm_conformance.extensions import extensions  # noqa: F401
