"""Build macros for tvm_conformance: the one file every BUILD file loads from.

  tvm_cc_extension  a shared library of TVM-FFI functions, loadable from Python, plus an
                    alwayslink cc_library of the same code for linking into gtests.
  tvm_cc_test       a googletest binary linked with libtvm_ffi.so and libtvm_runtime.so.
  tvm_py_test       pytest over some files with the pinned venv, JUnit XML, strict markers and
                    the repo's plugin; one variant per TVM target when `targets` is given.
  tvm_exported_module  a file made at build time by a Python script with the pinned venv
                    (e.g. a Relax executable from export_library) for Python and C++ tests.

Rule loads (native today; rules_cc / rules_python later) live here only, so a move to
MODULE.bazel or to loaded rules touches this file alone.
"""

# Warnings on for our own C++; tvm-ffi headers are clean with these.
TVM_DEFAULT_COPTS = [
    "-Wall",
    "-Wextra",
    "-Wno-unused-parameter",
]

_TVM_FFI = "@python_venv//:tvm_ffi"
_TVM_RUNTIME = "@python_venv//:tvm_runtime"
_GTEST_MAIN = "@googletest//:gtest_main"
_PYTEST_RUNNER = "//tools/testing:pytest_runner.py"
_PYTEST_CONFIG = "//:pyproject.toml"
_CONFORMANCE_LIB = "//python/tvm_conformance"

# Per-target settings of test variants. A variant exists (is compatible) only in the configs
# that can at least compile for its target; `cuda` needs --config=cuda. GPU variants carry the
# `gpu` tag (so --test_tag_filters=-gpu drops them) and `requires-gpu` (for executors that
# schedule on GPU machines).
_TARGETS = {
    "llvm": struct(
        tags = ["cpu"],
        compatible_with = [],
        pytest_args = [],
    ),
    "cuda": struct(
        tags = ["gpu", "requires-gpu"],
        # Without a device, cases skip with a reason instead of falling back to llvm (seed 002's
        # plain-pytest default), which would rerun the llvm variant under a cuda name.
        pytest_args = ["--tvm-target-fallback=none"],
        compatible_with = select({
            "//tools/config:cuda_enabled": [],
            "//conditions:default": ["//tools/config:incompatible"],
        }),
    ),
}

def _target_settings(target):
    if target not in _TARGETS:
        fail("unknown TVM test target %r; known: %s" % (target, ", ".join(sorted(_TARGETS.keys()))))
    return _TARGETS[target]

def _test_variants(rule, name, targets, env, tags, common, args = None, trailing_args = [], pytest = False):
    """Emits test `name`, or with `targets` one `<name>_<target>` each and a suite `name`.

    A variant gets TVM_TEST_TARGETS=<target>, the target's tags and compatibility, and (for
    pytest) the target's pytest arguments between `args` and `trailing_args`.
    """
    extra = {} if args == None else {"args": args + trailing_args}
    if targets == None:
        rule(name = name, env = env, tags = tags, **dict(common, **extra))
        return
    variants = []
    for target in targets:
        settings = _target_settings(target)
        if args != None:
            extra["args"] = args + (settings.pytest_args if pytest else []) + trailing_args
        rule(
            name = "%s_%s" % (name, target),
            env = dict(env, TVM_TEST_TARGETS = target),
            tags = tags + settings.tags,
            target_compatible_with = settings.compatible_with,
            **dict(common, **extra)
        )
        variants.append(":%s_%s" % (name, target))
    native.test_suite(name = name, tests = variants)

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
        copts = TVM_DEFAULT_COPTS + copts,
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

def tvm_cc_test(name, srcs, deps = [], copts = [], env = {}, targets = None, tags = [], **kwargs):
    """A googletest binary linked with tvm_ffi, tvm_runtime and gtest_main.

    Args:
      name: test name; with `targets`, the suite of `<name>_<target>` variants.
      srcs: test sources.
      deps: extra deps (extensions' `<name>_lib`, //cpp/tests:test_util).
      copts: extra compiler options.
      env: environment of the test.
      targets: None for a target-independent test, or TVM targets (e.g. ["llvm", "cuda"]):
        one variant each, with TVM_TEST_TARGETS set.
      tags: extra tags.
      **kwargs: passed to cc_test.
    """
    common = dict(
        srcs = srcs,
        copts = TVM_DEFAULT_COPTS + copts,
        deps = deps + [_TVM_RUNTIME, _TVM_FFI, _GTEST_MAIN],
        **kwargs
    )
    _test_variants(native.cc_test, name, targets, env, tags, common)

def tvm_py_test(name, srcs, deps = [], data = [], args = [], env = {}, targets = None, tags = [], size = "medium", **kwargs):
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
        one variant each, `<name>_<target>`, with TVM_TEST_TARGETS set.
      tags: extra tags.
      size: test size (TVM compiles make most tests medium).
      **kwargs: passed to py_test.
    """
    common = dict(
        srcs = srcs + [_PYTEST_RUNNER],
        main = _PYTEST_RUNNER,
        data = data + [_PYTEST_CONFIG],
        deps = deps + [_CONFORMANCE_LIB],
        python_version = "PY3",
        srcs_version = "PY3",
        size = size,
        **kwargs
    )
    files = ["$(rootpath %s)" % src for src in srcs]
    _test_variants(native.py_test, name, targets, env, tags, common, args = args, trailing_args = files, pytest = True)

def tvm_exported_module(name, script, out = None, deps = [], visibility = None, **kwargs):
    """A build-time artefact written by `script` run with the venv's Python.

    `script` is made a py_binary (`<name>_builder`) and run by a genrule as
    `<name>_builder $(location out)`; it must write exactly that file and nothing else, and the
    same bytes on every run, so the action caches like any other.

    Args:
      name: genrule name; tests list `:<name>` (or the output file) in `data`.
      script: the Python source that builds the artefact; takes the output path as argv[1].
      out: the output file name; defaults to `<name>.so`.
      deps: extra py deps of the script.
      visibility: visibility of the artefact (the builder stays private).
      **kwargs: passed to the genrule (e.g. tags).
    """
    builder = name + "_builder"
    native.py_binary(
        name = builder,
        srcs = [script],
        main = script,
        deps = deps,
        python_version = "PY3",
        srcs_version = "PY3",
        visibility = ["//visibility:private"],
    )
    native.genrule(
        name = name,
        outs = [out or name + ".so"],
        # The builder (and so the venv interpreter) comes from the exec configuration.
        tools = [":" + builder],
        cmd = "$(location :%s) $@" % builder,
        message = "Exporting %s" % name,
        visibility = visibility,
        **kwargs
    )
