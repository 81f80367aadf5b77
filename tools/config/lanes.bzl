"""The lanes: each lane is one TVM x tvm-ffi pair under test, pinned by one hashed lock.

This is the one table of lanes. Everything that names lanes reads it: the lanes' venv
repositories (tools/build_defs/repositories.bzl), the values of --//tools/config:lane
(tools/config/BUILD.bazel), the venv aliases (third_party/python/BUILD.bazel), the GPU-runner
lane wheels (third_party/gpu_runner/wheels.bzl), the `--config=<lane>` lines
(tools/config/lanes.bazelrc, which ./bazelw rewrites from this table), CI's lane runs (.ci/run)
and check_my_wheel's --lane.

Adding a lane is one entry here plus its lock: third_party/python/lanes/<lane>.in, compiled to
<lane>.lock by third_party/python/update_lock.sh <lane>.

The table is plain data (strings in dicts) so that Python reads it too (tools/config/lanes.py).
"""

LANES = {
    "default": {
        "lock": "requirements.lock",
        "summary": "TVM 0.27.0.post1 with tvm-ffi 0.1.14.post0",
    },
    "ffi_next": {
        "lock": "lanes/ffi_next.lock",
        "summary": "TVM 0.27.0.post1 with the newest tvm-ffi (0.1.15.post2)",
    },
    "tvm_prev": {
        "lock": "lanes/tvm_prev.lock",
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

def lane_lock(lane):
    """The label of `lane`'s lock, in the kit's repository from any workspace."""
    return Label("//third_party/python:" + LANES[lane]["lock"])

def lane_venv_repository(lane):
    """The name of `lane`'s venv repository: python_venv for the default lane."""
    return "python_venv" if lane == "default" else "python_venv_" + lane
