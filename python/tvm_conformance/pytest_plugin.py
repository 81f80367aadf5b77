"""pytest plugin of tvm_conformance: the `target` and `dev` fixtures.

Any test that takes `target` or `dev` runs once per TVM target named in TVM_TEST_TARGETS
(";"-separated, e.g. "llvm;cuda"; unset means "llvm"), with the target's kind as the test id
(`test_x[llvm]`). A target whose device is absent is skipped with a reason naming it.
Loaded by every tvm_py_test and by plain pytest through pyproject.toml.
"""

import os

import pytest

ENV_VAR = "TVM_TEST_TARGETS"


def _targets_from_env() -> list[str]:
    raw = os.environ.get(ENV_VAR, "")
    targets = [entry.strip() for entry in raw.split(";") if entry.strip()]
    return targets or ["llvm"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize tests taking `target` or `dev` over the configured targets."""
    if "target" in metafunc.fixturenames or "dev" in metafunc.fixturenames:
        if "target" in metafunc.fixturenames and any(
            "target" in m.args[0] for m in metafunc.definition.iter_markers("parametrize")
        ):
            return
        targets = _targets_from_env()
        ids = [t.split()[0] for t in targets]
        metafunc.parametrize("target", targets, ids=ids, indirect=True)


@pytest.fixture
def target(request: pytest.FixtureRequest) -> str:
    """The TVM target string of this test instance; skips when its device is absent."""
    import tvm.testing

    value = request.param
    if not tvm.testing.device_enabled(value):
        pytest.skip(f"target {value!r}: runtime disabled or no device on this machine")
    return value


@pytest.fixture
def dev(target: str):
    """The tvm.runtime.Device of `target`."""
    import tvm

    # tvm.device() takes device names ("cpu", "cuda"), not target kinds ("llvm").
    return tvm.device(tvm.target.Target(target).get_target_device_type(), 0)
