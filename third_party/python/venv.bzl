"""Repository rules `python_venv_base` and `python_venv`: a lane's pinned virtualenv.

rules_python cannot be fetched offline, so these rules do the small part we need.

`python_venv_base` (`@python_venv_base`, `@python_venv_<lane>_base`):
  * checks the host python3, or $TVM_CONFORMANCE_PYTHON (3.10 to 3.13; anything else is a
    clear error);
  * creates a venv and installs the lock file with `--require-hashes --no-deps`: the lane's
    lock for that Python where it has one (`python_locks`, 3.10), else its lock;
  * another lane's base (`share_base`) is the default lane's base as hard links with the
    lane's apache-tvm / apache-tvm-ffi installed in place of the default's, where the lane's
    lock pins everything else as the default's does (`venv_tool.py lane-layer`): torch is not
    installed and compiled again for each lane;
  * records it (tvm_conformance_venv.json) and lists each distribution's files by entry;
  * keeps it in the machine's venv cache (`$TVM_CONFORMANCE_VENV_CACHE`, default
    ~/.cache/tvm_conformance/venv_bases, as hard links, keyed by the locks' contents, the lane,
    the interpreter and these tools' sources), from which another output base links it;
  * strips what would make cache keys machine dependent (bytecode, RECORD files, console
    scripts with absolute shebangs, the `command =` line of pyvenv.cfg), so two clones in
    different directories produce byte-identical action inputs, and writes bytecode again
    without paths.

`python_venv` (`@python_venv`, `@python_venv_<lane>`), what every target uses:
  * the base venv as hard links (a copy where links cannot be made);
  * with a user's wheels (TVM_CONFORMANCE_TVM_WHEEL / _TVM_FFI_WHEEL, ./bazelw adds their
    sha256), a layer: the pinned apache-tvm / apache-tvm-ffi removed, the user's installed and
    scrubbed, the record rewritten. Torch and the rest stay the base's files, so a new wheel
    costs seconds, not a new venv;
  * writes a BUILD file exposing a Python toolchain (by label, not an interpreter path),
    the runfiles groups only some targets add (torch, the installers), and cc_library
    targets for tvm_ffi and tvm_runtime.

Bazel re-runs the base only when the lock file (a label attribute read through `rctx.path`)
or this file changes, and on `bazel sync --configure` (both rules are `configure = True`): run
that after changing the host python3, whose version the venv is tied to. The layer re-runs
when the base or the user's wheels change.
"""

# 3.10 installs the lane's own 3.10 lock (`python_locks`): its other locks pin releases that
# need 3.11 or newer (filelock 4.2, numpy 2.4).
_SUPPORTED_PYTHON = ["3.10", "3.11", "3.12", "3.13"]

# The lane's interpreter where it is not `python3` on PATH: a name on PATH (python3.12) or an
# absolute path (check_my_wheel --python sets it with --repo_env). Part of the venv's identity:
# the record names its version.
_PYTHON_ENV = "TVM_CONFORMANCE_PYTHON"

# What pip says when no source it knows has the CPU-only torch a CPU lock pins (torch==X+cpu):
# the first with a stock pip; the second where a find-links copy is for another CPython (seen
# with 3.12 here, where pip's constraints name torch too).
_NO_CPU_TORCH = ["No matching distribution found for torch==", "Cannot install torch=="]

def _no_cpu_torch(result):
    """True if pip failed only for want of the lock's CPU-only torch."""
    said = result.stderr + result.stdout
    return [m for m in _NO_CPU_TORCH if m in said] != [] and "+cpu" in said

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

def _host_python(rctx):
    """The host python3 and its `major.minor`, checked (exists, can make venvs, supported)."""
    wanted = rctx.os.environ.get(_PYTHON_ENV, "").strip() or rctx.attr.python
    if wanted.startswith("/"):
        python = rctx.path(wanted) if rctx.path(wanted).exists else None
    else:
        python = rctx.which(wanted)
    if python == None:
        fail("python_venv: `%s` is not on PATH. Install Python %s (Debian: apt-get install python3 python3-venv)." %
             (wanted, " to ".join([_SUPPORTED_PYTHON[0], _SUPPORTED_PYTHON[-1]])))

    probe = rctx.execute([python, "-c", "import sys, venv, ensurepip; print('%d.%d' % sys.version_info[:2])"])
    if probe.return_code != 0:
        _fail_setup("%s cannot create virtual environments" % python, probe, "Debian: apt-get install python3-venv")
    version = probe.stdout.strip()
    if version not in _SUPPORTED_PYTHON:
        fail("python_venv: %s is Python %s; this kit supports Python %s (the pinned apache-tvm wheels). Put a supported python3 first on PATH." %
             (python, version, ", ".join(_SUPPORTED_PYTHON)))
    return python, version

def _run(rctx, what, argv, hint = "", **kwargs):
    result = rctx.execute(argv, **kwargs)
    if result.return_code != 0:
        _fail_setup(what, result, hint)

def _record(rctx, tool, used_lock, instead_of):
    """Writes the venv's record (venv/tvm_conformance_venv.json) from pip_report.json."""
    _run(rctx, "recording the venv failed", ["venv/bin/python", tool, "record", "venv/tvm_conformance_venv.json", rctx.attr.lane, used_lock, "pip_report.json"] + (["--instead-of=" + instead_of] if instead_of else []))

def _link_venv(rctx, source):
    """Makes venv/ a copy of the venv `source`, as hard links where the file system allows.

    Nothing that uses the copy writes into a file it did not create, so `source` stays as it
    was; a file to be rewritten (the record) is unlinked first.
    """
    copied = rctx.execute(["cp", "-al", source, "venv"])
    if copied.return_code != 0:
        rctx.delete("venv")
        _run(rctx, "copying the venv %s failed" % source, ["cp", "-a", source, "venv"])

def _pip_install(rctx, lock, report = "pip_report.json"):
    """pip installs the hashed lock `lock` (a path) into venv/; the result, not checked."""
    return rctx.execute(
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
            report,
            "-r",
            str(lock),
        ],
        timeout = rctx.attr.timeout,
        quiet = True,
    )

def _python_venv_base_impl(rctx):
    python, version = _host_python(rctx)
    lock_label = rctx.attr.lock
    for label, for_python in rctx.attr.python_locks.items():
        if for_python == version:
            lock_label = label
    lock = rctx.path(lock_label)
    tool = rctx.path(rctx.attr._tool)
    used_lock, instead_of = str(lock_label), ""
    if lock_label != rctx.attr.lock:
        # In place of the lane's lock, as the fallback below: the record, the run's identity
        # and the report's column title name the index's torch that came with it.
        instead_of = str(rctx.attr.lock)

        # Said once, before the download (see the fallback below).
        rctx.execute(["echo", ("python_venv (lane %s): Python %s installs %s, the lane's lock for it " +
                               "(the index's torch with its CUDA libraries, %s to download once, " +
                               "about 5 GB on disk; no CPU-only torch exists for it).") %
                              (rctx.attr.lane, version, used_lock, rctx.attr.fallback_download)], quiet = False)

    if rctx.attr.share_base and _share_base(rctx, python, version, lock_label, used_lock, instead_of, tool):
        return
    cached = _venv_cache_entry(rctx, python, lock)
    if cached and _from_venv_cache(rctx, cached, tool, lock, used_lock, instead_of):
        return

    rctx.report_progress("Creating the Python %s venv" % version)
    _run(rctx, "`python3 -m venv` failed", [python, "-m", "venv", "venv"])

    rctx.report_progress("Installing %s (first time: a minute or two)" % used_lock)
    result = _pip_install(rctx, lock)
    if result.return_code != 0 and lock_label == rctx.attr.lock and rctx.attr.fallback_lock and _no_cpu_torch(result):
        # A stock pip: the CPU-only torch of a CPU lock comes only from a find-links directory
        # (README, "Where torch comes from"). The lane's GPU lock has the index's torch, hashed
        # for every CPython; it runs on a CPU too.
        used_lock, instead_of = str(rctx.attr.fallback_lock), used_lock

        # Said once (this rule's result is cached), and before the download: an unquiet
        # command's output reaches the terminal at once, where a print() would wait until the
        # rule ends.
        message = ("python_venv (lane %s): pip has no source for the CPU-only torch of %s " +
                   "(torch==X+cpu is not on the package index; README, \"Where torch comes " +
                   "from\"). Installing %s instead: the index's torch with its CUDA libraries, " +
                   "%s to download once, about 5 GB on disk. The run's identity records this " +
                   "torch build.") % (rctx.attr.lane, instead_of, used_lock, rctx.attr.fallback_download)
        rctx.execute(["echo", message], quiet = False)
        rctx.report_progress("Installing %s (%s to download)" % (used_lock, rctx.attr.fallback_download))
        rctx.delete("pip_report.json")
        result = _pip_install(rctx, rctx.path(rctx.attr.fallback_lock))
    if result.return_code != 0:
        _fail_setup(
            "pip could not install the lock file %s" % used_lock,
            result,
            "Fix the lock (third_party/python/update_lock.sh) or the package index settings, then re-run.",
        )
    rctx.file("lock_used.txt", "%s\n%s\n" % (used_lock, instead_of))
    rctx.file("lock_used.lock", rctx.read(rctx.path(rctx.attr.fallback_lock) if used_lock == str(rctx.attr.fallback_lock) else lock))

    # What the report's lane header shows: lane, lock, versions, wheels and their sha256.
    _record(rctx, tool, used_lock, instead_of)

    # Each distribution's files by top-level entry, read from the RECORD files that the scrub
    # removes: the runfiles groups and a layer's removal of a distribution use it.
    _run(rctx, "listing the venv's distributions failed", ["venv/bin/python", tool, "entries", "dist_entries.json"])
    _run(rctx, "scrubbing the venv failed", [python, rctx.path(rctx.attr._scrub), "venv"])
    rctx.file("BUILD.bazel", "# The base venv that python_venv (third_party/python/venv.bzl) copies.\n")
    if cached:
        _to_venv_cache(rctx, cached)

# The machine's cache of base venvs (`$TVM_CONFORMANCE_VENV_CACHE`, default
# ~/.cache/tvm_conformance/venv_bases; `none` turns it off): one entry per key, the venv as hard
# links. Another clone's output base (CI's remote-execution clone, examples/downstream, a
# user's second checkout) then links it in seconds instead of installing and compiling it again.
_VENV_CACHE_ENV = "TVM_CONFORMANCE_VENV_CACHE"

# An entry no output base linked for this many days is removed when another is stored.
_VENV_CACHE_DAYS = 14

# What a base is made of besides the venv: copied with it to and from the cache.
_BASE_FILES = ["pip_report.json", "dist_entries.json", "lock_used.txt", "lock_used.lock"]

# The key: everything that decides the base's files. The lane's locks (the one chosen and its
# fallback) by content, the lane's name (the record names it), the interpreter (its real path
# and full version: the venv links it), and the sources of this file and the tools that make it.
_KEY_CODE = """
import hashlib, os, sys
digest = hashlib.sha256()
digest.update(("v1\\0%s\\0%s\\0%s\\0" % (sys.argv[1], os.path.realpath(sys.executable), sys.version)).encode())
for path in sys.argv[2:]:
    with open(path, "rb") as f:
        digest.update(hashlib.sha256(f.read()).digest())
print(digest.hexdigest())
"""

def _venv_cache_entry(rctx, python, lock):
    """The cache entry's directory for this base (a string), or None where the cache is off."""
    root = rctx.os.environ.get(_VENV_CACHE_ENV, "").strip()
    if root == "none":
        return None
    if not root:
        home = rctx.os.environ.get("HOME", "")
        if not home:
            return None
        root = home + "/.cache/tvm_conformance/venv_bases"
    files = [str(lock), str(rctx.path(rctx.attr._tool)), str(rctx.path(rctx.attr._scrub)), str(rctx.path(rctx.attr._rule))]
    if rctx.attr.fallback_lock:
        files.append(str(rctx.path(rctx.attr.fallback_lock)))
    key = rctx.execute([python, "-c", _KEY_CODE, rctx.attr.lane] + files)
    if key.return_code != 0:
        return None
    return "%s/%s" % (root, key.stdout.strip())

def _from_venv_cache(rctx, entry, tool, lock, used_lock, instead_of):
    """Link the base from the cache entry `entry`; False where it has no complete entry.

    The record and lock_used.txt are written again: they name the locks by this workspace's
    labels (another workspace, examples/downstream, names the kit's as @tvm_conformance//...),
    as a whole install here would.
    """
    if not rctx.path(entry + "/complete").exists:
        return False
    rctx.report_progress("Linking the base venv from the machine's venv cache")
    _link_venv(rctx, entry + "/venv")
    for name in ["pip_report.json", "dist_entries.json", "lock_used.lock"]:
        rctx.file(name, rctx.read(entry + "/" + name))

    # The entry's install fell back to the GPU lock (no CPU-only torch here) where it installed
    # that lock's contents: as the whole install's fallback, it names both.
    installed = rctx.read("lock_used.lock")
    if rctx.attr.fallback_lock and installed != rctx.read(lock) and installed == rctx.read(rctx.path(rctx.attr.fallback_lock)):
        used_lock, instead_of = str(rctx.attr.fallback_lock), used_lock
    rctx.file("lock_used.txt", "%s\n%s\n" % (used_lock, instead_of))

    # The copy's record is a link to the entry's: removed, never written through.
    rctx.delete("venv/tvm_conformance_venv.json")
    _record(rctx, tool, used_lock, instead_of)

    # When it was last used: _to_venv_cache removes entries unused for _VENV_CACHE_DAYS.
    rctx.execute(["touch", entry + "/complete"])
    rctx.file("BUILD.bazel", "# The base venv that python_venv (third_party/python/venv.bzl) copies (from the machine's venv cache).\n")
    return True

def _to_venv_cache(rctx, entry):
    """Puts this base into the cache as `entry`, where it can.

    A new directory renamed into place, so a reader sees a complete entry or none. Best
    effort: a cache that cannot be written (another file system, no space) is skipped.
    """
    rctx.execute(["sh", "-c", """
entry="$1"; days="$2"; shift 2
tmp="$entry.tmp.$$"
rm -rf "$tmp"; mkdir -p "$tmp" || exit 0
{ cp -al venv "$tmp/venv" && cp "$@" "$tmp"/ && touch "$tmp/complete" && mv -T "$tmp" "$entry"; } || rm -rf "$tmp"
# Entries no output base linked for that many days (a lock or this rule since changed), and
# the leftovers of an interrupted store: each entry holds a whole venv (1 to 5 GB).
for old in "$(dirname "$entry")"/*; do
  case "$old" in
    *.tmp.*) [ -n "$(find "$old" -maxdepth 0 -mtime +1)" ] && rm -rf "$old" ;;
    *) [ -f "$old/complete" ] && [ -n "$(find "$old/complete" -mtime +"$days")" ] && rm -rf "$old" ;;
  esac
done
exit 0
""", "to_venv_cache", entry, str(_VENV_CACHE_DAYS)] + _BASE_FILES)

# The distributions a lane's lock pins apart from the default lane's: TVM's pair.
_LANE_DISTS = ["apache-tvm", "apache-tvm-ffi"]

def _share_base(rctx, python, version, lock_label, used_lock, instead_of, tool):
    """Makes this lane's base from the default lane's, or returns False.

    The base is the default lane's base (`share_base`) as hard links with this lane's TVM pair
    in place of the default's, where the lane's lock pins everything else exactly as the lock
    the default base installed (venv_tool.py lane-layer): torch and the rest are not installed
    and compiled again (on 2 cores: 14 s instead of 50 s a lane, and 1.2 GB less on disk).
    False where the locks differ more: the venv is then installed whole.
    """
    base = rctx.path(rctx.attr.share_base).dirname
    if not base.get_child("venv").get_child("lib").get_child("python" + version).exists:
        return False
    candidates = [(lock_label, used_lock, instead_of)]
    if lock_label == rctx.attr.lock and rctx.attr.fallback_lock:
        # Where the default base fell back to its GPU lock (no CPU-only torch here), this
        # lane's GPU lock is the one that matches it.
        candidates.append((rctx.attr.fallback_lock, str(rctx.attr.fallback_lock), used_lock))
    chosen = None
    for label, used, instead in candidates:
        check = rctx.execute([python, tool, "lane-layer", rctx.path(label), base.get_child("lock_used.lock"), "layer.lock"])
        if check.return_code == 0:
            chosen = (label, used, instead)
            break
    if chosen == None:
        return False
    label, used_lock, instead_of = chosen
    if label != lock_label:
        rctx.execute(["echo", ("python_venv (lane %s): the default lane installed its GPU lock (no CPU-only " +
                               "torch here); so does this lane: %s in place of %s.") % (rctx.attr.lane, used_lock, instead_of)], quiet = False)

    rctx.report_progress("Linking the default lane's venv, installing this lane's TVM pair")
    _link_venv(rctx, str(base.get_child("venv")))

    # The copy's record is a link to the default base's: removed, never written through.
    rctx.delete("venv/tvm_conformance_venv.json")
    base_entries = str(base.get_child("dist_entries.json"))
    _run(rctx, "removing the default lane's TVM pair failed", ["venv/bin/python", tool, "unlayer", base_entries] + _LANE_DISTS)
    result = _pip_install(rctx, rctx.path("layer.lock"), report = "pip_report_layer.json")
    if result.return_code != 0:
        _fail_setup("pip could not install the TVM pair of %s" % used_lock, result, "Fix the lock (third_party/python/update_lock.sh) or the package index settings, then re-run.")
    _run(rctx, "merging the pip reports failed", [python, tool, "merge-report", str(base.get_child("pip_report.json")), "pip_report_layer.json", "pip_report.json"])
    rctx.file("lock_used.txt", "%s\n%s\n" % (used_lock, instead_of))
    rctx.file("lock_used.lock", rctx.read(rctx.path(label)))
    _record(rctx, tool, used_lock, instead_of)
    _run(rctx, "listing the venv's distributions failed", ["venv/bin/python", tool, "entries", "dist_entries.json", base_entries])
    tops = rctx.execute([python, tool, "tops", "dist_entries.json"] + _LANE_DISTS)
    if tops.return_code != 0:
        _fail_setup("reading the TVM pair's entries failed", tops, "")
    _run(rctx, "scrubbing the TVM pair failed", [python, rctx.path(rctx.attr._scrub), "venv"] + [t for t in tops.stdout.strip().split(" ") if t])
    rctx.file("BUILD.bazel", "# The base venv that python_venv (third_party/python/venv.bzl) copies: the default lane's, with this lane's TVM pair.\n")
    return True

python_venv_base = repository_rule(
    implementation = _python_venv_base_impl,
    attrs = {
        "lock": attr.label(mandatory = True, allow_single_file = True, doc = "Hashed requirements lock."),
        "lane": attr.string(default = "default", doc = "The lane's name (--config=<lane>), recorded in the venv."),
        "fallback_lock": attr.label(allow_single_file = True, doc = "Installed instead where pip finds no CPU-only torch for `lock` (the lane's GPU lock)."),
        "python_locks": attr.label_keyed_string_dict(allow_files = True, doc = "{lock: CPython major.minor}: installed instead of `lock` (and of fallback_lock) on that Python."),
        "fallback_download": attr.string(default = "2.9 GB", doc = "What installing fallback_lock downloads (said once)."),
        "python": attr.string(default = "python3", doc = "Host interpreter looked up on PATH."),
        "share_base": attr.label(allow_single_file = True, doc = "A file at the root of the default lane's base: this lane's base is it with this lane's TVM pair, where the locks differ in that pair only."),
        "timeout": attr.int(default = 1800, doc = "Seconds pip may take (torch is large)."),
        "_rule": attr.label(default = Label("//third_party/python:venv.bzl")),
        "_scrub": attr.label(default = Label("//third_party/python:scrub_venv.py")),
        "_tool": attr.label(default = Label("//third_party/python:venv_tool.py")),
    },
    # Host-dependent (the venv links the host's python3): `bazel sync --configure` re-runs it.
    configure = True,
    environ = [_PYTHON_ENV, _VENV_CACHE_ENV],
    doc = "A virtualenv installed from a hashed lock file, scrubbed; python_venv exposes it.",
)

def _user_wheels(rctx, python, tool):
    """[(dist, path)] of the user's wheels, tvm-ffi first (a TVM wheel is checked against it)."""
    user_wheels = []
    for dist in ["apache-tvm-ffi", "apache-tvm"]:
        wheel = rctx.os.environ.get(_USER_WHEEL_ENV[dist], "").strip()
        if not wheel:
            continue
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
    return user_wheels

def _python_venv_impl(rctx):
    # First: resolving the base fetches it (and may restart this function).
    base = rctx.path(rctx.attr.base).dirname
    python, version = _host_python(rctx)
    tool = rctx.path(rctx.attr._tool)
    user_wheels = _user_wheels(rctx, python, tool)

    rctx.report_progress("Copying the base venv")
    _link_venv(rctx, str(base.get_child("venv")))
    entries = "dist_entries.json"
    rctx.symlink(base.get_child(entries), "base_entries.json")
    if user_wheels:
        # The layer: the user's wheels in place of the pinned ones; torch and the rest are the
        # base's files, already installed and compiled.
        dists = [dist for dist, _ in user_wheels]
        _run(rctx, "removing the pinned %s failed" % " and ".join(dists), ["venv/bin/python", tool, "unlayer", "base_entries.json"] + dists)
        for dist, wheel in user_wheels:
            rctx.report_progress("Installing the user's %s wheel %s" % (dist, wheel))
            _run(rctx, "the wheel %s=%s cannot be used" % (_USER_WHEEL_ENV[dist], wheel), ["venv/bin/python", tool, "install-wheel", dist, wheel], quiet = True)
        _run(rctx, "listing the venv's distributions failed", ["venv/bin/python", tool, "entries", entries, "base_entries.json"])
        result = rctx.execute([python, tool, "tops", entries] + dists)
        if result.return_code != 0:
            _fail_setup("reading the new distributions' entries failed", result, "")
        _run(rctx, "scrubbing the user's wheels failed", [python, rctx.path(rctx.attr._scrub), "venv"] + [t for t in result.stdout.strip().split(" ") if t])

        # The record names the user's wheels; the copied one is a link to the base's: replace it.
        # The lock is the one the base installed (its GPU lock where pip had no CPU torch).
        used_lock, instead_of = (rctx.read(base.get_child("lock_used.txt")).split("\n") + ["", ""])[:2]
        rctx.delete("venv/tvm_conformance_venv.json")
        _run(
            rctx,
            "recording the venv failed",
            ["venv/bin/python", tool, "record", "venv/tvm_conformance_venv.json", rctx.attr.lane, used_lock, str(base.get_child("pip_report.json"))] +
            (["--instead-of=" + instead_of] if instead_of else []) +
            ["%s=%s" % (dist, wheel) for dist, wheel in user_wheels],
        )
    else:
        rctx.symlink(base.get_child(entries), entries)

    # Which site-packages entries only torch (or only the installers) need.
    _run(rctx, "grouping the venv's runfiles failed", ["venv/bin/python", tool, "groups", "venv_groups.bzl", entries])

    rctx.template(
        "BUILD.bazel",
        rctx.attr._build_template,
        substitutions = {
            "{SITE_PACKAGES}": "venv/lib/python%s/site-packages" % version,
            "{PYTHON_VERSION}": version,
        },
        executable = False,
    )

python_venv = repository_rule(
    implementation = _python_venv_impl,
    attrs = {
        "base": attr.label(mandatory = True, allow_single_file = True, doc = "A file at the root of the python_venv_base repository."),
        "lock": attr.label(mandatory = True, allow_single_file = True, doc = "The base's lock (recorded)."),
        "lane": attr.string(default = "default", doc = "The lane's name (--config=<lane>), recorded in the venv."),
        "python": attr.string(default = "python3", doc = "Host interpreter looked up on PATH."),
        "_build_template": attr.label(default = Label("//third_party/python:BUILD.venv.tpl")),
        "_scrub": attr.label(default = Label("//third_party/python:scrub_venv.py")),
        "_tool": attr.label(default = Label("//third_party/python:venv_tool.py")),
    },
    configure = True,
    # A user's own wheels (docs/lanes.md): changing them re-makes this layer, not the base.
    environ = [v for v in _USER_WHEEL_ENV.values()] + [v + _SHA_SUFFIX for v in _USER_WHEEL_ENV.values()] + [_PYTHON_ENV],
    doc = "The lane's venv: the base venv, with a user's wheels layered in place of the pinned ones; a toolchain and cc_library targets.",
)
