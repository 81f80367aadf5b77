"""TVM's own current pattern: an explicit target list, the gpu mark, device_enabled."""

import pytest
import tvm
import tvm.testing


@pytest.mark.parametrize("target", ["llvm", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_device_exists(target: str) -> None:
    if not tvm.testing.device_enabled(target):
        pytest.skip(f"{target} is not enabled (device_enabled)")
    assert tvm.device_from_target(target).exist
