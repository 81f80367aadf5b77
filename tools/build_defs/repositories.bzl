"""tvm_conformance_dependencies(): the repositories that the kit's macros (tvm.bzl) need.

The kit's own WORKSPACE and any workspace that uses the macros call it, so the list is written
once. A workspace that reaches the kit as `@tvm_conformance` (local_repository) does:

    load("@tvm_conformance//tools/build_defs:repositories.bzl", "tvm_conformance_dependencies")

    tvm_conformance_dependencies()

Every kit file is named by Label(), which resolves in this file's repository: the main one in
the kit, @tvm_conformance elsewhere. A plain string would resolve in the calling workspace.
A repository the caller declared before the call is kept (its own googletest, say).
"""

load("//third_party/gpu:gpu_detect.bzl", "gpu_detect")
load("//third_party/python:venv.bzl", "python_venv", "python_venv_base")
load("//tools/config:lanes.bzl", "LANES", "lane_lock", "lane_python_locks", "lane_venv_repository")

def _kit_directory_impl(rctx):
    # The directory of a file in the kit, mounted as a repository. local_repository cannot do
    # this from another workspace: its relative `path` is read from that workspace's root.
    directory = rctx.path(rctx.attr.workspace_file).dirname
    for child in directory.readdir():
        rctx.symlink(child, child.basename)

_kit_directory = repository_rule(
    implementation = _kit_directory_impl,
    attrs = {
        "workspace_file": attr.label(
            mandatory = True,
            allow_single_file = True,
            doc = "The WORKSPACE file of the kit directory to mount.",
        ),
    },
    # Symlinks into the kit's tree: nothing to cache, and an edit there is seen at once.
    local = True,
    doc = "A directory of the kit (an in-repo stand-in) as an external repository.",
)

def _maybe(repository_rule, name, **kwargs):
    if not native.existing_rule(name):
        repository_rule(name = name, **kwargs)

# A WORKSPACE macro declares repositories by their fixed names, so it takes no `name`.
# buildifier: disable=unnamed-macro
def tvm_conformance_dependencies():
    """Declares the repositories and toolchain that tvm.bzl's macros build and test with.

    Offline, as the kit is: Debian's Bazel packages under /usr/share/bazel, Debian's googletest
    sources, the kit's in-repo stand-ins, the lanes' venvs from the kit's hashed locks, and the
    GPU probe. ./bazelw installs the Debian packages.
    """

    # Debian's bazel-platforms, bazel-skylib and bazel-rules-java (system install paths).
    _maybe(native.local_repository, "platforms", path = "/usr/share/bazel/platforms")
    _maybe(native.local_repository, "bazel_skylib", path = "/usr/share/bazel/tools/skylib")
    _maybe(native.local_repository, "rules_java", path = "/usr/share/bazel/rules/java")

    # Stand-ins for repositories that Bazel 4.2.3 itself asks for (see each BUILD file for why).
    _maybe(_kit_directory, "rules_cc", workspace_file = Label("//third_party/rules_cc:WORKSPACE"))
    _maybe(
        _kit_directory,
        "remote_coverage_tools",
        workspace_file = Label("//third_party/remote_coverage_tools:WORKSPACE"),
    )

    # googletest from Debian's sources (apt-get install googletest).
    _maybe(
        native.new_local_repository,
        "googletest",
        build_file = str(Label("//third_party/googletest:googletest.BUILD")),
        path = "/usr/src/googletest",
    )

    # The pinned Python venv of each lane (tools/config/lanes.bzl): toolchain for every
    # py_test, and tvm_ffi / tvm_runtime for C++. Only the lane a build selects is fetched.
    # Each is the lane's base venv (pip, from the lock) seen through a layer that puts a user's
    # own wheels in place of the pinned ones: a new wheel re-makes the layer, not the base.
    # Each lane also has a GPU flavour (`<venv>_gpu`: torch's CUDA build, --config=cuda_gpu),
    # fetched only by a build that selects it.
    for lane in LANES:
        for gpu in (False, True):
            name = lane_venv_repository(lane, gpu)
            lock = lane_lock(lane, gpu)

            # A CPU lock whose CPU-only torch pip cannot find falls back to the GPU lock.
            fallback = {} if gpu else {"fallback_lock": lane_lock(lane, True)}

            # On a CPython whose own lock it has (3.10), the lane installs that instead.
            # Another lane's base is the default lane's (same flavour) with its own TVM pair,
            # where its lock differs from the default's in that pair only.
            share = {} if lane == "default" else {"share_base": "@%s_base//:pip_report.json" % lane_venv_repository("default", gpu)}
            _maybe(python_venv_base, name + "_base", lane = lane, lock = lock, python_locks = lane_python_locks(lane), **dict(fallback, **share))
            _maybe(python_venv, name, base = "@%s_base//:pip_report.json" % name, lane = lane, lock = lock)

    # Whether this machine has a GPU: an input of every cuda test variant (third_party/gpu).
    _maybe(gpu_detect, "gpu_detect")

    # The selected lane's interpreter (//third_party/python:py_toolchain).
    native.register_toolchains(str(Label("//third_party/python:py_toolchain")))
