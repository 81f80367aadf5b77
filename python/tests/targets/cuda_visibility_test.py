"""cuda with every GPU hidden (`CUDA_VISIBLE_DEVICES=`): enabled, not runnable, and the plugin
says no cuda device is present. GPU-only (it needs a CUDA runtime that loads, i.e. a driver), so
it is the `_cuda` variant a GPU runner runs, where a skip fails the verdict; elsewhere it skips
with its reason.
"""

import pytest
import tvm

from tvm_conformance import targets
from tvm_conformance.testing import compiles_for

# It takes no target but belongs to the cuda variant (and so to the GPU runner's lane bundle).
pytestmark = compiles_for("cuda")

_VISIBLE_NO_CUDA_DEVICE = """
import json, tvm, tvm.testing
from tvm.testing import utils
from tvm_conformance import deploy, targets
deploy.load_cuda_runtime()
record = utils._get_targets(["cuda", "llvm"])[0]
info = targets.describe("cuda")
print(json.dumps({"enabled": bool(tvm.runtime.enabled("cuda")), "record": record,
                  "runnable": info.runnable, "reason": info.reason}, default=str))
"""


def test_cuda_with_no_visible_device_is_enabled_but_not_runnable(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """On a machine whose CUDA runtime loads (a driver is installed), hiding every GPU with
    `CUDA_VISIBLE_DEVICES=` leaves cuda enabled and not runnable, in a child process."""
    import json

    from tvm_conformance import crash_isolation, deploy

    why = deploy.load_cuda_runtime()
    if why or not tvm.runtime.enabled("cuda"):
        # cuda cannot run here, as the plugin records for its own skips: the verdict allows the
        # skip under --config=cuda and fails it where cuda is required (a GPU runner).
        request.node.user_properties.append((targets.UNAVAILABLE_TARGET_PROPERTY, "cuda"))
        pytest.skip(f"needs a CUDA runtime that loads (a GPU driver): {why or 'cuda not enabled'}")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    child = crash_isolation.run_isolated(_VISIBLE_NO_CUDA_DEVICE, timeout=120)
    assert child.returncode == 0, child.stderr
    seen = json.loads(child.stdout.strip().splitlines()[-1])
    assert seen["enabled"] is True
    assert seen["record"]["is_enabled"] is True
    assert seen["record"]["is_runnable"] is False
    assert seen["runnable"] is False
    assert seen["reason"] == f"no {tvm.cuda(0)} device present"
