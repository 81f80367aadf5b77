"""Shared fixtures of the plugin tests (tvm_conformance.kit_fixtures): an inner pytest run with
the plugin, cuda as this machine has it, and a GPU-less view of the machine."""

from tvm_conformance.kit_fixtures import cuda_target, run_inner, without_gpu  # noqa: F401
