"""Build macros for tvm_conformance: the one file every BUILD file loads from.

  tvm_cc_extension  a shared library of TVM-FFI functions, loadable from Python, plus an
                    alwayslink cc_library of the same code for linking into gtests.
  tvm_cc_test       a googletest binary linked with libtvm_ffi.so and libtvm_runtime.so.
  (Both C++ macros build with ASan / UBSan under --config=asan / --config=ubsan.)
  tvm_py_test       pytest over some files with the pinned venv, JUnit XML, strict markers and
                    the repo's plugin; one variant per TVM target when `targets` is given.
  tvm_exported_module  a file made at build time by a Python script with the pinned venv
                    (e.g. a Relax executable from export_library) for Python and C++ tests.
  tvm_py_wheel      a pure-Python wheel written from a pyproject.toml and its sources
                    (write_wheel.py; no build backend, nothing fetched).

Rule loads (native today; rules_cc / rules_python later) live here only, so a move to
MODULE.bazel or to loaded rules touches this file alone.
"""

# Labels of the kit are written `_kit("//...")`: a plain string label in a macro resolves against
# the workspace that calls it, so another workspace loading this file (examples/downstream)
# would look for //tools/config etc. in its own tree. Label() resolves in this file's repository:
# the main one in the kit (where the strings stay exactly as before, and so the cache keys),
# @tvm_conformance elsewhere.
def _kit(label):
    return str(Label(label))

# Warnings on for our own C++; tvm-ffi headers are clean with these.
TVM_DEFAULT_COPTS = [
    "-Wall",
    "-Wextra",
    "-Wno-unused-parameter",
]

# Sanitizers for our own C++ (--config=asan / --config=ubsan set the build settings in
# tools/config). Only the extensions and gtests are instrumented: libtvm_ffi.so,
# libtvm_runtime.so (from the wheel) and googletest are not; .bazelrc sets the runtime options
# that this needs. -O1 and frame pointers give readable stacks at a modest cost.
_SANITIZER_COPTS = select({
    _kit("//tools/config:asan_enabled"): ["-fsanitize=address", "-fno-omit-frame-pointer", "-O1", "-g"],
    "//conditions:default": [],
}) + select({
    # Stop at the first finding, so a report fails the test instead of scrolling past.
    _kit("//tools/config:ubsan_enabled"): ["-fsanitize=undefined", "-fno-sanitize-recover=all", "-g"],
    "//conditions:default": [],
})
_SANITIZER_LINKOPTS = select({
    _kit("//tools/config:asan_enabled"): ["-fsanitize=address"],
    "//conditions:default": [],
}) + select({
    _kit("//tools/config:ubsan_enabled"): ["-fsanitize=undefined"],
    "//conditions:default": [],
})

_TVM_FFI = _kit("//third_party/python:tvm_ffi")
_TVM_RUNTIME = _kit("//third_party/python:tvm_runtime")
_GTEST_MAIN = _kit("//tools/build_defs:gtest_main")
_PYTEST_RUNNER = _kit("//tools/build_defs:pytest_runner.py")
_PYTEST_CONFIG = _kit("//:pyproject.toml")
_CONFORMANCE_LIB = _kit("//python/tvm_conformance")

# torch and what only torch requires: the venv's core leaves them out (third_party/python).
_TORCH_FILES = _kit("//third_party/python:torch_files")

# pytest finds pyproject.toml above the test files, which holds in the kit's own runfiles. From
# another workspace the test files sit in that workspace's runfiles directory, beside the kit's,
# so the config is named explicitly, and the test's own workspace (the working directory) stays
# pytest's rootdir, so case ids read as in the kit. Nothing is added in the kit itself.
_IN_THE_KIT = Label("//:pyproject.toml").workspace_name == ""
_PYTEST_CONFIG_ARGS = [] if _IN_THE_KIT else [
    "-c",
    "$(rootpath %s)" % _PYTEST_CONFIG,
    "--rootdir=.",
]

# From another workspace the kit's files sit in runfiles under tvm_conformance/, the name of the
# kit's Python package too. Bazel's default (legacy_create_init) writes an __init__.py there,
# which makes that directory shadow the real package (python/tvm_conformance). Without those
# generated files the runfiles directory is only a namespace and the package wins. The kit's own
# tests keep the default, under which they were written.
_PY_TEST_INIT_ARGS = {} if _IN_THE_KIT else {"legacy_create_init": False}

# What the GPU runner config (--config=cuda_gpu) adds to a cuda variant: pytest's flag, and the
# gtests' environment (they have no plugin). The bundles' manifests record these too, so their
# run.sh turns the requirement on and off exactly as the config does.
_REQUIRE_GPU_PYTEST_ARGS = ["--tvm-require-gpu"]
_REQUIRE_GPU_ENV = {"TVM_CONFORMANCE_REQUIRE_GPU": "1"}

# Per-target settings of test variants, the way JAX's jax.bzl makes `<name>_cpu` /
# `<name>_gpu`. A variant exists (is compatible) only in the configs that can at least compile
# for its target: `cuda` needs --config=cuda. Every variant is tagged `tvm_<target>`, so the
# package suites `<target>_tests` (made by the first test macro of a package) name it. GPU
# variants also carry `gpu` (--test_tag_filters=-gpu drops them) and `requires-gpu` (for
# executors that schedule on GPU machines).
_TARGETS = {
    "llvm": struct(
        tags = ["cpu"],
        compatible_with = [],
        pytest_args = [],
        data = [],
        gpu_runner_env = False,
        exec_properties = {},
    ),
    "cuda": struct(
        tags = ["gpu", "requires-gpu"],
        compatible_with = select({
            _kit("//tools/config:cuda_enabled"): [],
            "//conditions:default": [_kit("//tools/config:incompatible")],
        }),
        # Without a device, cases skip with a reason instead of falling back to llvm (seed 002's
        # plain-pytest default), which would rerun the llvm variant under a cuda name. In the
        # GPU runner config (--config=cuda_gpu) such a skip fails the case.
        pytest_args = ["--tvm-target-fallback=none"] + select({
            _kit("//tools/config:require_gpu_enabled"): _REQUIRE_GPU_PYTEST_ARGS,
            "//conditions:default": [],
        }),
        # What the GPU probe found is an input of every cuda test action, so a result recorded
        # without a GPU never satisfies a GPU runner through a disk or remote cache.
        data = [_kit("@gpu_detect//:gpu_presence")],
        # gtests have no plugin: under the GPU runner config they get
        # TVM_CONFORMANCE_REQUIRE_GPU=1, and a case that cannot run fails instead of skipping.
        gpu_runner_env = True,
        # On a remote executor (--config=remote_exec), the platform property that routes an
        # action to a pool of GPU workers: Buildbarn, BuildGrid, EngFlow and BuildBuddy match
        # `Pool` against their workers' pools; a single-pool executor (the loopback one of
        # tools/remote_exec) runs it with the rest, and its cases skip as they do locally.
        exec_properties = {"Pool": "gpu"},
    ),
}

# Tag and suite of the target-independent tests (and `<name>_independent` variants).
_INDEPENDENT = "independent"
_INDEPENDENT_TAG = "tvm_target_independent"

def _target_settings(target):
    if target not in _TARGETS:
        fail("unknown TVM test target %r; known: %s" % (target, ", ".join(sorted(_TARGETS.keys()))))
    return _TARGETS[target]

def _cc_target_env(env, target, settings):
    """A gtest variant's environment: `env`, TVM_TEST_TARGETS, and the GPU runner config's flag."""
    merged = dict(env, TVM_TEST_TARGETS = target)
    if not settings.gpu_runner_env:
        return merged
    return select({
        _kit("//tools/config:require_gpu_enabled"): dict(merged, **_REQUIRE_GPU_ENV),
        "//conditions:default": merged,
    })

# The GPU variants are packed by //tools/gpu_runner:lane_bundle, so that package sees them.
_LANE_BUNDLE_PACKAGE = _kit("//tools/gpu_runner:__pkg__")

def _with_bundle_visibility(common, settings):
    """`common` (a variant's attributes), visible to the lane bundle if it is a GPU variant."""
    if not settings.gpu_runner_env:
        return common
    visibility = common.get("visibility", ["//visibility:private"])
    if "//visibility:public" in visibility or _LANE_BUNDLE_PACKAGE in visibility:
        return common
    return dict(common, visibility = [v for v in visibility if v != "//visibility:private"] + [_LANE_BUNDLE_PACKAGE])

def _package_suites():
    """`llvm_tests`, `cuda_tests`, `target_independent_tests` of this package, made once.

    Each is a tag-filtered test_suite, so it also holds tests declared after it; CI lanes name
    suites (`//python/tests/relax:cuda_tests`), not globs.
    """
    if native.existing_rule("target_independent_tests"):
        return
    for target in sorted(_TARGETS.keys()):
        # The GPU runner's lane bundle takes its tests from the `cuda_tests` suites.
        native.test_suite(
            name = target + "_tests",
            tags = ["tvm_" + target],
            visibility = [_LANE_BUNDLE_PACKAGE] if _TARGETS[target].gpu_runner_env else None,
        )
    native.test_suite(name = "target_independent_tests", tags = [_INDEPENDENT_TAG])

def tvm_cc_extension(name, srcs, deps = [], copts = [], visibility = ["//visibility:public"], **kwargs):
    """A TVM-FFI extension: `lib<name>.so` (target `name`) and `<name>_lib` for gtests.

    Args:
      name: extension name; the shared library is `lib<name>.so`.
      srcs: C++ sources registering functions (TVM_FFI_STATIC_INIT_BLOCK or
        TVM_FFI_DLL_EXPORT_TYPED_FUNC).
      deps: extra cc deps; tvm_ffi is always added.
      copts: extra compiler options.
      visibility: visibility of all generated targets (public: tests load extensions).
      **kwargs: passed to the cc_library.
    """
    native.cc_library(
        name = name + "_lib",
        srcs = srcs,
        copts = TVM_DEFAULT_COPTS + copts + _SANITIZER_COPTS,
        linkopts = _SANITIZER_LINKOPTS,
        deps = deps + [_TVM_FFI],
        # Registration happens in static initialisers that nothing references.
        alwayslink = True,
        visibility = visibility,
        **kwargs
    )
    native.cc_binary(
        name = "lib%s.so" % name,
        linkshared = True,
        deps = [":%s_lib" % name],
        visibility = visibility,
    )
    native.filegroup(
        name = name,
        srcs = [":lib%s.so" % name],
        visibility = visibility,
    )

def tvm_cc_test(name, srcs, deps = [], data = [], copts = [], linkopts = [], env = {}, targets = None, target_data = {}, tags = [], **kwargs):
    """A googletest binary linked with tvm_ffi, tvm_runtime and the kit's gtest main.

    Args:
      name: test name; with `targets`, the suite of `<name>_<target>` variants.
      srcs: test sources.
      deps: extra deps (extensions' `<name>_lib`, //cpp/tests:test_util).
      data: runtime files (artefacts), found with test_util's Rlocation.
      copts: extra compiler options.
      linkopts: extra linker options (the sanitizer configs add theirs).
      env: environment of the test.
      targets: None for a target-independent test, or TVM targets (e.g. ["llvm", "cuda"]):
        one variant each, with TVM_TEST_TARGETS set (and TVM_CONFORMANCE_REQUIRE_GPU=1 in
        the GPU runner config, for cuda).
      target_data: {target: [files]}: runtime files of one variant only (its artefacts).
      tags: extra tags.
      **kwargs: passed to cc_test.
    """
    _package_suites()
    common = dict(
        srcs = srcs,
        copts = TVM_DEFAULT_COPTS + copts + _SANITIZER_COPTS,
        linkopts = linkopts + _SANITIZER_LINKOPTS,
        deps = deps + [_TVM_RUNTIME, _TVM_FFI, _GTEST_MAIN],
        **kwargs
    )
    if targets == None:
        native.cc_test(name = name, data = data, env = env, tags = tags + [_INDEPENDENT_TAG], **common)
        return
    for target in targets:
        settings = _target_settings(target)
        native.cc_test(
            name = "%s_%s" % (name, target),
            env = _cc_target_env(env, target, settings),
            tags = tags + settings.tags + ["tvm_" + target],
            target_compatible_with = settings.compatible_with,
            exec_properties = settings.exec_properties,
            data = data + target_data.get(target, []) + settings.data,
            **_with_bundle_visibility(common, settings)
        )
    native.test_suite(name = name, tests = [":%s_%s" % (name, t) for t in targets])

def tvm_py_test(
        name,
        srcs,
        deps = [],
        data = [],
        args = [],
        env = {},
        targets = None,
        target_independent = False,
        uses_torch = False,
        target_data = {},
        shard_count_by_target = {},
        tags = [],
        size = "medium",
        **kwargs):
    """pytest over `srcs` with the pinned venv, JUnit XML and the tvm_conformance plugin.

    The repo's pyproject.toml supplies the pytest settings (plugin, --strict-markers), the same
    ones plain `pytest` uses; the runner adds --junitxml=$XML_OUTPUT_FILE and fails on exit
    code 5 (nothing collected).

    Args:
      name: test name; with `targets`, the suite of `<name>_<target>` variants.
      srcs: pytest files (`<concept>_test.py`).
      deps: extra py deps; //python/tvm_conformance is always added.
      data: runtime files (extensions, artefacts); found with tvm_conformance.runfiles.
      args: extra pytest arguments.
      env: environment of the test.
      targets: None for a target-independent test, or TVM targets (e.g. ["llvm", "cuda"]):
        one variant each, `<name>_<target>`, with TVM_TEST_TARGETS set, running only that
        target's cases (`--tvm-variant`; the others are deselected, so its JUnit XML holds
        its own target alone).
      target_independent: with `targets`, the files also hold cases that take no target:
        they run once, in `<name>_independent`. Without it such cases are a usage error.
      uses_torch: the tests use torch (DLPack with torch, model import): torch is in their
        runfiles (the venv's core leaves it out: 10,000 files fewer per test). Otherwise the
        runner also keeps torch out of the process: tvm_ffi would import it eagerly (about 2.5 s
        of every test process), TVM sees it as absent, and a test importing it fails
        naming this attribute (tools/build_defs/pytest_runner.py).
      target_data: {target: [files]}: runtime files of one variant only (its artefacts).
      shard_count_by_target: {target: n}: that variant's shard_count instead of `shard_count`
        (a cuda variant whose cases each compile and run on a GPU: the GPU runner runs its
        shards at once, as Bazel does); "independent" for the `_independent` variant, which is
        otherwise one process.
      tags: extra tags.
      size: test size (TVM compiles make most tests medium).
      **kwargs: passed to py_test.
    """
    _package_suites()
    files = _PYTEST_CONFIG_ARGS + ["$(rootpath %s)" % src for src in srcs]
    common = dict(
        srcs = srcs + [_PYTEST_RUNNER],
        main = _PYTEST_RUNNER,
        deps = deps + [_CONFORMANCE_LIB],
        python_version = "PY3",
        srcs_version = "PY3",
        size = size,
        **dict(_PY_TEST_INIT_ARGS, **kwargs)
    )

    # A package's conftest.py (shared fixtures) goes with every test of the package, as pytest
    # finds it beside the test files in runfiles.
    data = data + [_PYTEST_CONFIG] + native.glob(["conftest.py"])
    if uses_torch:
        data = data + [_TORCH_FILES]
    env = dict(env, TVM_CONFORMANCE_TORCH = "1" if uses_torch else "0")
    if targets == None:
        if target_independent:
            fail("%s: target_independent needs `targets`" % name)
        native.py_test(
            name = name,
            args = args + files,
            data = data,
            env = env,
            tags = tags + [_INDEPENDENT_TAG],
            **common
        )
        return
    variants = []
    if target_independent:
        variants.append(name + "_" + _INDEPENDENT)

        # Cases that take no target need no device: they run on the CPU target only. They are
        # few (a table's own checks), so the variant is one process whatever `shard_count`
        # the targets' variants have, unless shard_count_by_target names "independent": a
        # shard's process start (4 s with torch) would cost more than its cases.
        independent_common = {k: v for k, v in common.items() if k != "shard_count"}
        if _INDEPENDENT in shard_count_by_target:
            independent_common["shard_count"] = shard_count_by_target[_INDEPENDENT]
        native.py_test(
            name = variants[-1],
            args = args + ["--tvm-variant=" + _INDEPENDENT] + files,
            data = data,
            env = dict(env, TVM_TEST_TARGETS = "llvm"),
            tags = tags + [_INDEPENDENT_TAG],
            **independent_common
        )
    orphans = [] if target_independent else ["--tvm-independent-cases=error"]
    for target in targets:
        settings = _target_settings(target)
        variant_common = common
        if target in shard_count_by_target:
            variant_common = dict(common, shard_count = shard_count_by_target[target])
        variants.append("%s_%s" % (name, target))
        native.py_test(
            name = variants[-1],
            args = args + ["--tvm-variant=" + target] + orphans + settings.pytest_args + files,
            data = data + target_data.get(target, []) + settings.data,
            env = dict(env, TVM_TEST_TARGETS = target),
            tags = tags + settings.tags + ["tvm_" + target],
            target_compatible_with = settings.compatible_with,
            exec_properties = settings.exec_properties,
            **_with_bundle_visibility(variant_common, settings)
        )
    native.test_suite(name = name, tests = [":" + v for v in variants])

# The build-time libcuda.so.1 stand-in that lets TVM's CUDA runtime load where no driver is, so
# the cuda export step compiles device code (third_party/cuda_stub/cuda_stub.c).
_CUDA_DRIVER_STUB = _kit("//third_party/cuda_stub:libcuda.so.1")

def tvm_exported_module(name, script, out = None, args = [], srcs = [], deps = [], target = "llvm", visibility = None, **kwargs):
    """A build-time artefact written by `script` run with the venv's Python.

    `script` is made a py_binary (`<name>_builder`) and run by a genrule as
    `<name>_builder ARGS $(location out)`; it must write exactly that file and nothing else, and
    the same bytes on every run, so the action caches like any other.

    Args:
      name: genrule name; tests list `:<name>` (or the output file) in `data`.
      script: the Python source that builds the artefact; takes the output path last.
      out: the output file name; defaults to `<name>.so`.
      args: arguments before the output path (e.g. ["--model", "mlp"]); may use
        $(location) / $(locations) of `srcs`.
      srcs: input files of the step (built artefacts, sources).
      deps: extra py deps of the script.
      target: the TVM target the artefact is for. "cuda" artefacts exist only under
        --config=cuda (like the cuda test variants) and are built with the driver stand-in on
        LD_LIBRARY_PATH, so TVM compiles device code with nvcc even without a driver.
      visibility: visibility of the artefact (the builder stays private).
      **kwargs: passed to the genrule (e.g. tags).
    """
    settings = _target_settings(target)
    builder = name + "_builder"
    native.py_binary(
        name = builder,
        srcs = [script],
        main = script,
        deps = deps,
        # Exporters import models from torch; a build action's runfiles cost once, not per test.
        data = [_TORCH_FILES],
        python_version = "PY3",
        srcs_version = "PY3",
        target_compatible_with = settings.compatible_with,
        visibility = ["//visibility:private"],
    )
    tools = [":" + builder]
    env = ""
    if target == "cuda":
        tools.append(_CUDA_DRIVER_STUB)
        env = "LD_LIBRARY_PATH=$$PWD/$$(dirname $(execpath %s)) " % _CUDA_DRIVER_STUB
    native.genrule(
        name = name,
        srcs = srcs,
        outs = [out or name + ".so"],
        # The builder (and so the venv interpreter) comes from the exec configuration.
        tools = tools,
        cmd = "%s$(location :%s) %s $@" % (env, builder, " ".join(args)),
        message = "Exporting %s" % name,
        target_compatible_with = settings.compatible_with,
        visibility = visibility,
        **kwargs
    )

def _op_corpus_torch_side_impl(ctx):
    runtime = ctx.attr._python[PyRuntimeInfo]
    lib = ctx.files._lib

    # The kit's package root (python/), on the action's PYTHONPATH.
    root = lib[0].dirname.rpartition("/")[0]
    outs = []
    for group in ctx.attr.chunks:
        specs = group.split(" ")
        files = [
            ctx.actions.declare_file("%s/%s.pt" % (ctx.label.name, spec.replace(":", "-").replace("/", "of")))
            for spec in specs
        ]
        ctx.actions.run(
            executable = runtime.interpreter,
            arguments = ["-m", "tvm_conformance.op_corpus", "torch-side", "--dir", files[0].dirname] + specs,
            inputs = depset(lib, transitive = [runtime.files, depset(ctx.files._torch)]),
            outputs = files,
            env = {
                "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONHASHSEED": "0",
                "PYTHONPATH": root,
            },
            mnemonic = "OpCorpusTorchSide",
            progress_message = "PyTorch's side of the op corpus tier's %s" % group,
        )
        outs += files
    return [DefaultInfo(files = depset(outs), runfiles = ctx.runfiles(files = outs))]

op_corpus_torch_side = rule(
    implementation = _op_corpus_torch_side_impl,
    doc = """PyTorch's side of op-corpus tier chunks (tvm_conformance.op_corpus.torch_side): each
chunk's cases, exclusions, float64 references and pickled models, one file a chunk
(`<name>/KIND-IofN.pt`), for the tier test's children to read (`chunks --torch-sides`).

It runs with the default lane's venv whatever the lane (`@python_venv`, not the lane's alias),
and imports no TVM (the command checks), so its action is the same in every lane and one
result serves them all; a reader whose torch or numpy is not the writer's makes its cases
itself (a GPU lane's CUDA torch, a user's lane with another torch).""",
    attrs = {
        "chunks": attr.string_list(
            mandatory = True,
            doc = "One action each: space-separated `KIND:I/N` chunks of the tier.",
        ),
        "_lib": attr.label(default = Label("//python/tvm_conformance:sources"), allow_files = True),
        "_python": attr.label(default = Label("@python_venv//:py3_runtime"), providers = [PyRuntimeInfo]),
        "_torch": attr.label(default = Label("@python_venv//:torch_files"), allow_files = True),
    },
)

def tvm_py_binary(name, srcs, main = None, deps = [], data = [], uses_torch = False, target = "llvm", **kwargs):
    """A Python tool run with the lane's venv (`bazel run`), like a test's process.

    Args:
      name: binary name.
      srcs: its sources.
      main: the source to run (default: `<name>.py`).
      deps: extra py deps; //python/tvm_conformance is always added.
      data: runtime files.
      uses_torch: torch is in its runfiles (as for tvm_py_test).
      target: "cuda" makes it exist under --config=cuda only (like the cuda test variants).
      **kwargs: passed to py_binary (e.g. visibility).
    """
    settings = _target_settings(target)
    native.py_binary(
        name = name,
        srcs = srcs,
        main = main or name + ".py",
        deps = deps + [_CONFORMANCE_LIB],
        data = data + ([_TORCH_FILES] if uses_torch else []),
        python_version = "PY3",
        srcs_version = "PY3",
        target_compatible_with = settings.compatible_with,
        **kwargs
    )

# --- Bundles: tests that run outside Bazel, exactly as their targets do --------------------

TvmTestInfo = provider(
    doc = "How Bazel runs one test target, for running it elsewhere (tvm_test_bundle).",
    fields = {
        "records": "depset of JSON objects: label, kind (py/cc), target, argv (after the " +
                   "interpreter), env, timeout_s, shard_count, gpu_runner_config",
        "files": "depset of the test's own runfiles (this workspace only: no venv, no toolchain)",
        "tags": "the test's tags (a test_suite's: none), for the suites' tag filters",
    },
)

def _main_repo(files):
    return [f for f in files if not f.short_path.startswith("../") and f.owner.workspace_name == ""]

# Bazel's timeout of a test of each size (seconds), which the GPU runner applies per test.
_SIZE_TIMEOUTS = {"small": 60, "medium": 300, "large": 900, "enormous": 3600}
_TIMEOUTS = {"short": 60, "moderate": 300, "long": 900, "eternal": 3600}

def _test_manifest_aspect_impl(target, ctx):
    rule = ctx.rule
    if rule.kind == "test_suite":
        # A suite stands for its tests (`tests`, or the package's tests its tags select).
        members = _suite_members(rule)
        return [TvmTestInfo(
            records = depset(transitive = [t[TvmTestInfo].records for t in members]),
            files = depset(transitive = [t[TvmTestInfo].files for t in members]),
            tags = [],
        )]
    if rule.kind not in ("py_test", "cc_test"):
        fail("%s: tvm_test_bundle takes py_test / cc_test targets, not %s" % (target.label, rule.kind))
    located = rule.attr.srcs + rule.attr.data
    args = [ctx.expand_location(a, located) for a in rule.attr.args]
    env = {k: ctx.expand_location(v, located) for k, v in rule.attr.env.items()}
    variant = ""
    for tag in rule.attr.tags:
        if tag.startswith("tvm_") and tag[len("tvm_"):] in _TARGETS:
            variant = tag[len("tvm_"):]
    gpu_runner_config = variant != "" and _TARGETS[variant].gpu_runner_env

    # The lane's own additions are recorded apart (and dropped here, should the bundle be built
    # under --config=cuda_gpu), so the runner adds them exactly when its GPU requirement is on.
    if gpu_runner_config:
        args = [a for a in args if a not in _REQUIRE_GPU_PYTEST_ARGS]
        env = {k: v for k, v in env.items() if k not in _REQUIRE_GPU_ENV}
    if rule.kind == "py_test":
        main = rule.files.main[0].short_path if rule.files.main else ""
        argv = [main] + args
    else:
        argv = [target[DefaultInfo].files_to_run.executable.short_path] + args
    record = struct(
        label = str(target.label).lstrip("@"),
        kind = "py" if rule.kind == "py_test" else "cc",
        target = variant,
        argv = argv,
        env = env,
        timeout_s = _TIMEOUTS[rule.attr.timeout] if rule.attr.timeout in _TIMEOUTS else _SIZE_TIMEOUTS[rule.attr.size],
        shard_count = rule.attr.shard_count if rule.attr.shard_count > 1 else 1,
        gpu_runner_config = struct(
            pytest_args = _REQUIRE_GPU_PYTEST_ARGS if rule.kind == "py_test" else [],
            env = _REQUIRE_GPU_ENV if rule.kind == "cc_test" else {},
        ) if gpu_runner_config else None,
    )
    files = _main_repo(target[DefaultInfo].default_runfiles.files.to_list())
    if rule.kind == "py_test":  # Bazel's launcher stub: the runner starts the main itself
        stub = target[DefaultInfo].files_to_run.executable
        files = [f for f in files if f != stub]

    # JSON text: a depset holds no dicts (env).
    return [TvmTestInfo(
        records = depset([json.encode(record)]),
        files = depset(files),
        tags = rule.attr.tags,
    )]

def _suite_members(rule):
    """A test_suite's tests, as Bazel expands the suite.

    `tests` when given, else the package's tests that carry every tag of the suite, none of its
    `-tag`s, and not `manual`.
    """
    if rule.attr.tests:
        return rule.attr.tests
    wanted = [t for t in rule.attr.tags if not t.startswith("-")]
    unwanted = [t[1:] for t in rule.attr.tags if t.startswith("-")] + ["manual"]
    return [
        t
        for t in getattr(rule.attr, "_implicit_tests", [])
        if TvmTestInfo in t and
           all([w in t[TvmTestInfo].tags for w in wanted]) and
           not any([u in t[TvmTestInfo].tags for u in unwanted])
    ]

_test_manifest_aspect = aspect(
    implementation = _test_manifest_aspect_impl,
    attr_aspects = ["tests", "_implicit_tests"],
    doc = "Reads each test's resolved args, env and runfiles (the macros' data, as configured).",
)

def _records(targets):
    """The test records under `targets` (tests and suites), one per label, sorted by label."""
    found = {}
    for text in depset(transitive = [t[TvmTestInfo].records for t in targets]).to_list():
        record = json.decode(text)
        found[record["label"]] = record
    return [found[label] for label in sorted(found.keys())]

def _tvm_test_bundle_impl(ctx):
    records = _records(ctx.attr.tests)
    suite = [r["label"] for r in _records(ctx.attr.suite) if r["target"] == "cuda"]
    carried = [r["label"] for r in records if r["target"] == "cuda"]
    missing = [label for label in suite if label not in carried]
    if ctx.attr.whole_suite and missing:
        fail("%s carries the whole `_cuda` suite, but not: %s" % (ctx.label, ", ".join(missing)))
    manifest = ctx.actions.declare_file(ctx.label.name + "_tests.json")
    ctx.actions.write(manifest, json.encode(struct(
        bundle = str(ctx.label).lstrip("@"),
        tests = records,
        # The suite's every `_cuda` test as the build graph knows it when the bundle is built:
        # a run of the bundle is held to it (run_bundle.py, tools/verdict/verdict.py).
        cuda_suite = struct(
            source = "build graph: " + " ".join([str(t.label).lstrip("@") for t in ctx.attr.suite]),
            targets = suite,
        ),
        whole_suite = ctx.attr.whole_suite,
    )))
    files = depset(transitive = [t[TvmTestInfo].files for t in ctx.attr.tests] + [
        depset(ctx.files.extra),
    ])
    args = ctx.actions.args()
    args.use_param_file("@%s", use_always = True)
    args.set_param_file_format("multiline")
    args.add_all("--top", ctx.files.top)
    args.add("--manifest", manifest)
    args.add_all("--wheel", ctx.files.wheels)
    args.add_all("--ws", files)
    args.add("--compiler" if ctx.attr.compiler else "--runtime-only")
    args.add("--max-bytes", str(ctx.attr.max_bytes))
    args.add(ctx.outputs.out)
    ctx.actions.run(
        executable = ctx.executable._packer,
        arguments = [args],
        inputs = depset([manifest] + ctx.files.top + ctx.files.wheels, transitive = [files]),
        outputs = [ctx.outputs.out],
        mnemonic = "TvmTestBundle",
        progress_message = "Packing %s (xz -9)" % ctx.outputs.out.short_path,
    )
    return [
        DefaultInfo(files = depset([ctx.outputs.out])),
        # `--output_groups=manifest` writes tests.json without packing (minutes of xz).
        OutputGroupInfo(manifest = depset([manifest])),
    ]

tvm_test_bundle = rule(
    implementation = _tvm_test_bundle_impl,
    doc = """An archive that runs `tests` outside Bazel exactly as their targets do.

    Each test's resolved args, env and own runfiles (this workspace's files: sources, built
    artefacts, extensions, gtest binaries) go in, with a manifest of them (`tests.json`) that
    the runner (`top`) reads, the venv's TVM (with `compiler`, the whole compiler library;
    otherwise runtime only), pytest and `wheels`. Packed with xz -9; over `max_bytes` fails.
    """,
    attrs = {
        "tests": attr.label_list(
            aspects = [_test_manifest_aspect],
            mandatory = True,
            doc = "py_test / cc_test targets or test_suites of them",
        ),
        "suite": attr.label_list(
            aspects = [_test_manifest_aspect],
            doc = "test_suites whose `_cuda` tests are the whole suite's (the per-package " +
                  "`cuda_tests`): recorded in tests.json, which a run is held to",
        ),
        "whole_suite": attr.bool(
            default = False,
            doc = "the bundle carries every `_cuda` test of `suite` (the build fails otherwise); " +
                  "without it a run of the bundle is labelled partial",
        ),
        "top": attr.label_list(allow_files = True, doc = "runner files at the archive's top"),
        "extra": attr.label_list(allow_files = True, doc = "more workspace files"),
        "wheels": attr.label_list(allow_files = [".whl"]),
        "compiler": attr.bool(default = True),
        "max_bytes": attr.int(mandatory = True),
        "out": attr.output(mandatory = True),
        "_packer": attr.label(
            default = Label("//tools/gpu_runner:make_bundle"),
            executable = True,
            cfg = "exec",
        ),
    },
)

# --- Wheels ---------------------------------------------------------------------------------

_WHEEL_WRITER = _kit("//tools/build_defs:write_wheel.py")

def tvm_py_wheel(name, pyproject, package, version, srcs, visibility = None, **kwargs):
    """`<package>-<version>-py3-none-any.whl`, written by write_wheel.py.

    The metadata (name, version, dependencies, entry points) and the module list come from
    `pyproject` alone; `version` only names the output (Bazel needs it before the build), and
    the writer fails if it differs from the pyproject's, as it does when `srcs` are not exactly
    the listed modules.

    Args:
      name: genrule name.
      pyproject: the pyproject.toml with [project] and [tool.<package>.wheel] modules.
      package: the import package the sources go into (`tvm_conformance/<file>`).
      version: the version in the output's file name; must match the pyproject's.
      srcs: the package's .py files.
      visibility: visibility of the wheel (the writer stays private).
      **kwargs: passed to the genrule (e.g. tags).
    """
    writer = name + "_writer"
    native.py_binary(
        name = writer,
        srcs = [_WHEEL_WRITER],
        main = _WHEEL_WRITER,
        python_version = "PY3",
        srcs_version = "PY3",
        visibility = ["//visibility:private"],
    )
    native.genrule(
        name = name,
        srcs = [pyproject] + srcs,
        outs = ["%s-%s-py3-none-any.whl" % (package, version)],
        tools = [":" + writer],
        cmd = "$(location :%s) --pyproject $(location %s) --package %s --out $@ --expect-name $@ %s" % (
            writer,
            pyproject,
            package,
            " ".join(["$(location %s)" % src for src in srcs]),
        ),
        message = "Writing the %s wheel" % package,
        visibility = visibility,
        **kwargs
    )
