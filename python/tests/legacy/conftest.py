"""Shared fixtures of the legacy-API tests (tvm_conformance.kit_fixtures): an inner pytest run
with the plugin, and GPU-less and GPU views of the machine."""

from tvm_conformance.kit_fixtures import run_inner, with_gpu, without_gpu  # noqa: F401
