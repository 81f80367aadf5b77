"""`bazel run --config=cuda_gpu //tools/gpu_runner:preflight`: the full GPU-runner preflight.

tvm_conformance.preflight with this lane's venv interpreter (its TVM and torch) and the cuda
artefacts of this build; ./bazelw runs it after the host check and before any test of a
`--config=cuda_gpu` run. Arguments are passed on (``--json FILE``).
"""

import sys
from pathlib import Path

from tvm_conformance import deploy, preflight

MODELS = ("mul_add", "mlp", "callback")
# This workspace's root in the runfiles tree (`bazel run` sets no TEST_WORKSPACE for
# tvm_conformance.runfiles): the script lies at tools/gpu_runner/ below it. Not resolved, so
# it stays in the runfiles tree, where the built artefacts are.
RUNFILES_ROOT = Path(__file__).parent.parent.parent


def main() -> int:
    """Check everything; the exit status of tvm_conformance.preflight."""
    artefacts = [
        arg
        for m in MODELS
        for arg in ("--artefact", str(RUNFILES_ROOT / deploy.artefact(m, "cuda")))
    ]
    return preflight.main(["--stage", "full", *artefacts, *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
