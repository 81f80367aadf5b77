"""Repository rule `python_venv`: a pinned virtualenv made from the host's python3.

rules_python cannot be fetched offline, so this rule does the small part we need:
  * checks the host python3 (3.10 to 3.12; anything else is a clear error);
  * creates a venv and installs the lock file with `--require-hashes --no-deps`;
  * strips what would make cache keys machine dependent (bytecode, RECORD files, console
    scripts with absolute shebangs, the `command =` line of pyvenv.cfg), so two clones in
    different directories produce byte-identical action inputs;
  * writes a BUILD file exposing a Python toolchain (by label, not an interpreter path),
    the runfiles groups only some targets add (torch, the installers), and cc_library
    targets for tvm_ffi and tvm_runtime.

Bazel re-runs the rule only when the lock file (a label attribute read through
`rctx.path`) or this file changes, so the venv is re-created only then, and on
`bazel sync --configure` (the rule is `configure = True`): run that after changing the host
python3, whose version the venv is tied to.
"""

_SUPPORTED_PYTHON = ["3.10", "3.11", "3.12"]

# A user's own build: absolute paths of wheels installed in place of the pinned distribution.
_USER_WHEEL_ENV = {
    "apache-tvm-ffi": "TVM_CONFORMANCE_TVM_FFI_WHEEL",
    "apache-tvm": "TVM_CONFORMANCE_TVM_WHEEL",
}

# The sha256 of each user wheel (./bazelw adds it): the wheel's content, not its path, keys the
# venv, so a wheel rebuilt at the same path re-creates the venv and re-runs every test.
_SHA_SUFFIX = "_SHA256"

def _fail_setup(what, result, hint):
    fail("\n".join([
        "python_venv: %s (exit code %d)." % (what, result.return_code),
        result.stdout,
        result.stderr,
        hint,
    ]))

def _python_venv_impl(rctx):
    python = rctx.which(rctx.attr.python)
    if python == None:
        fail("python_venv: `%s` is not on PATH. Install Python %s (Debian: apt-get install python3 python3-venv)." %
             (rctx.attr.python, " to ".join([_SUPPORTED_PYTHON[0], _SUPPORTED_PYTHON[-1]])))

    probe = rctx.execute([python, "-c", "import sys, venv, ensurepip; print('%d.%d' % sys.version_info[:2])"])
    if probe.return_code != 0:
        _fail_setup("%s cannot create virtual environments" % python, probe, "Debian: apt-get install python3-venv")
    version = probe.stdout.strip()
    if version not in _SUPPORTED_PYTHON:
        fail("python_venv: %s is Python %s; this kit supports Python %s (the pinned apache-tvm wheels). Put a supported python3 first on PATH." %
             (python, version, ", ".join(_SUPPORTED_PYTHON)))

    lock = rctx.path(rctx.attr.lock)
    tool = rctx.path(rctx.attr._tool)
    user_wheels = []  # (dist, path), tvm-ffi first: a TVM wheel is checked against it
    for dist in ["apache-tvm-ffi", "apache-tvm"]:
        wheel = rctx.os.environ.get(_USER_WHEEL_ENV[dist], "").strip()
        if wheel:
            if not wheel.startswith("/"):
                fail("python_venv: %s=%s must be an absolute path (Bazel runs this rule elsewhere)" %
                     (_USER_WHEEL_ENV[dist], wheel))
            sha_var = _USER_WHEEL_ENV[dist] + _SHA_SUFFIX
            given = rctx.os.environ.get(sha_var, "").strip()
            result = rctx.execute([python, tool, "sha256", wheel])
            if result.return_code != 0:
                _fail_setup("cannot read the wheel %s=%s" % (_USER_WHEEL_ENV[dist], wheel), result, "")
            actual = result.stdout.strip()
            if given != actual:
                fail(("python_venv: %s=%s has sha256 %s, but %s is %r. Run through ./bazelw, " +
                      "which passes the wheel's sha256, or add --repo_env=%s=%s.") %
                     (_USER_WHEEL_ENV[dist], wheel, actual, sha_var, given, sha_var, actual))
            user_wheels.append((dist, wheel))
    if user_wheels:
        result = rctx.execute([python, tool, "drop", str(lock), "user.lock"] + [d for d, _ in user_wheels])
        if result.return_code != 0:
            _fail_setup("preparing the lock for the user's wheels failed", result, "")
        lock = rctx.path("user.lock")

    rctx.report_progress("Creating the Python %s venv" % version)
    result = rctx.execute([python, "-m", "venv", "venv"])
    if result.return_code != 0:
        _fail_setup("`python3 -m venv` failed", result, "")

    rctx.report_progress("Installing %s (first time: a minute or two)" % rctx.attr.lock)
    result = rctx.execute(
        [
            "venv/bin/python",
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-input",
            "--require-hashes",
            "--no-deps",
            "--only-binary=:all:",
            "--no-compile",
            # Which wheel (file, sha256) pip took for each package: the venv's identity.
            "--report",
            "pip_report.json",
            "-r",
            str(lock),
        ],
        timeout = rctx.attr.timeout,
        quiet = True,
    )
    if result.return_code != 0:
        _fail_setup(
            "pip could not install the lock file %s" % rctx.attr.lock,
            result,
            "Fix the lock (third_party/python/update_lock.sh) or the package index settings, then re-run.",
        )

    for dist, wheel in user_wheels:
        rctx.report_progress("Installing the user's %s wheel %s" % (dist, wheel))
        result = rctx.execute(["venv/bin/python", tool, "install-wheel", dist, wheel], quiet = True)
        if result.return_code != 0:
            _fail_setup("the wheel %s=%s cannot be used" % (_USER_WHEEL_ENV[dist], wheel), result, "")

    # What the report's lane header shows: lane, lock, versions, the user's wheels and sha256.
    result = rctx.execute(
        ["venv/bin/python", tool, "record", "venv/tvm_conformance_venv.json", rctx.attr.lane, str(rctx.attr.lock), "pip_report.json"] +
        ["%s=%s" % (dist, wheel) for dist, wheel in user_wheels],
    )
    if result.return_code != 0:
        _fail_setup("recording the venv failed", result, "")

    # Which site-packages entries only torch (or only the installers) need: read from the
    # distributions' RECORD files, which the scrub below removes.
    result = rctx.execute(["venv/bin/python", tool, "groups", "venv_groups.bzl"])
    if result.return_code != 0:
        _fail_setup("grouping the venv's runfiles failed", result, "")

    site_packages = "venv/lib/python%s/site-packages" % version
    result = rctx.execute([python, rctx.path(rctx.attr._scrub), "venv"])
    if result.return_code != 0:
        _fail_setup("scrubbing the venv failed", result, "")

    rctx.template(
        "BUILD.bazel",
        rctx.attr._build_template,
        substitutions = {
            "{SITE_PACKAGES}": site_packages,
            "{PYTHON_VERSION}": version,
        },
        executable = False,
    )

python_venv = repository_rule(
    implementation = _python_venv_impl,
    attrs = {
        "lock": attr.label(mandatory = True, allow_single_file = True, doc = "Hashed requirements lock."),
        "lane": attr.string(default = "default", doc = "The lane's name (--config=<lane>), recorded in the venv."),
        "python": attr.string(default = "python3", doc = "Host interpreter looked up on PATH."),
        "timeout": attr.int(default = 1800, doc = "Seconds pip may take (torch is large)."),
        "_build_template": attr.label(default = Label("//third_party/python:BUILD.venv.tpl")),
        "_scrub": attr.label(default = Label("//third_party/python:scrub_venv.py")),
        "_tool": attr.label(default = Label("//third_party/python:venv_tool.py")),
    },
    # Host-dependent (the venv links the host's python3): `bazel sync --configure` re-runs it.
    configure = True,
    # A user's own wheels (README, "Lanes"): changing them re-creates the venv.
    environ = [v for v in _USER_WHEEL_ENV.values()] + [v + _SHA_SUFFIX for v in _USER_WHEEL_ENV.values()],
    doc = "A virtualenv installed from a hashed lock file, with a toolchain and cc_library targets.",
)
