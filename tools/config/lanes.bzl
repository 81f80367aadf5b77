"""The lanes: each lane is one TVM x tvm-ffi pair under test, pinned by one hashed lock.

This is the one table of lanes. Everything that names lanes reads it: the lanes' venv
repositories (tools/build_defs/repositories.bzl), the values of --//tools/config:lane
(tools/config/BUILD.bazel), the venv aliases (third_party/python/BUILD.bazel), the GPU-runner
lane wheels (third_party/gpu_runner/wheels.bzl), the `--config=<lane>` lines
(tools/config/lanes.bazelrc, which ./bazelw rewrites from this table), CI's lane runs (.ci/run)
and check_my_wheel's --lane.

Adding a lane is one entry here plus its locks: third_party/python/lanes/<lane>.in, compiled to
<lane>.lock by third_party/python/update_lock.sh <lane>, and its GPU flavour <lane>_gpu.lock
(torch's CUDA build, the rest as in <lane>.lock) by update_lock.sh <lane> --gpu. The GPU
flavour is the venv of --config=cuda_gpu (--//tools/config:gpu_torch); the others keep the
CPU-only torch.

`python_locks` are the lane's locks for a CPython its own locks cannot install on (3.10: numpy
2.4 and filelock 4.2 need 3.11; pytest needs tomli and exceptiongroup there), used for both
flavours on that Python (no CPU-only torch exists for it): update_lock.sh <lane> --python 3.10.

The table is plain data (strings in dicts) so that Python reads it too (tools/config/lanes.py).
"""

LANES = {
    "default": {
        "lock": "requirements.lock",
        "gpu_lock": "requirements_gpu.lock",
        "python_locks": {"3.10": "requirements_py310.lock"},
        "summary": "TVM 0.27.0.post1 with tvm-ffi 0.1.14.post0",
    },
    "ffi_next": {
        "lock": "lanes/ffi_next.lock",
        "gpu_lock": "lanes/ffi_next_gpu.lock",
        "python_locks": {"3.10": "lanes/ffi_next_py310.lock"},
        "summary": "TVM 0.27.0.post1 with the newest tvm-ffi (0.1.15.post2)",
    },
    "tvm_prev": {
        "lock": "lanes/tvm_prev.lock",
        "gpu_lock": "lanes/tvm_prev_gpu.lock",
        "python_locks": {"3.10": "lanes/tvm_prev_py310.lock"},
        "summary": "TVM 0.26.0 with the oldest tvm-ffi it accepts (0.1.13.post2)",
    },
}

# The CPythons a GPU runner may have, by wheel tag: //tools/gpu_runner:lane_bundle carries the
# lane's compiled wheels for the one chosen (--//tools/config:runner_python). The known GPU
# runner has 3.12.
RUNNER_PYTHONS = {
    "cp310": "3.10",
    "cp311": "3.11",
    "cp312": "3.12",
}

def lane_lock(lane, gpu = False):
    """The label of `lane`'s lock (`gpu`: its GPU flavour), in the kit's repository.

    The same label from any workspace.
    """
    return Label("//third_party/python:" + LANES[lane]["gpu_lock" if gpu else "lock"])

def lane_python_locks(lane):
    """{label of the lock: CPython `major.minor`} of `lane`'s per-Python locks."""
    return {
        Label("//third_party/python:" + lock): python
        for python, lock in LANES[lane].get("python_locks", {}).items()
    }

def lane_venv_repository(lane, gpu = False):
    """The name of `lane`'s venv repository: python_venv for the default lane.

    `_gpu` is added for its GPU flavour (torch's CUDA build).
    """
    name = "python_venv" if lane == "default" else "python_venv_" + lane
    return name + "_gpu" if gpu else name
