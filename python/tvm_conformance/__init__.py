"""tvm_conformance: checks that a TVM build keeps its runtime-interop contract.

Modules: `pytest_plugin` (target/dev fixtures and markers), `testing` (its decorators),
`legacy` (tvm.testing's removed pytest helpers, by their old names), and the harnesses used by
tests under python/tests/. The installed wheel (//python:wheel) ships these; `runfiles`,
`extensions`, `seed_models`, `deploy`, `preflight`, `kit_fixtures`, `roundtrip`, `op_corpus` and
`op_corpus_outcomes` work only inside this repo and stay out of it.
"""
