"""`gpu_runner_wheels`: the wheels of third_party/gpu_runner/wheels.lock, hash-checked.

Each line is downloaded with `python3 -m pip download --only-binary=:all: --no-deps
--python-version X` (pip resolves the file for that interpreter without running it), then its
sha256 is compared with the lock. The repository exposes `:wheels` (all files).
"""

load("//tools/config:lanes.bzl", "LANES", "RUNNER_PYTHONS", "lane_lock")

def _lock_lines(text):
    lines = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = [f for f in line.replace("\t", " ").split(" ") if f]
        if len(fields) != 4:
            fail("wheels.lock: want `python requirement wheel sha256`, got %r" % line)
        lines.append(struct(python = fields[0], requirement = fields[1], wheel = fields[2], sha256 = fields[3]))
    return lines

def _gpu_runner_wheels_impl(ctx):
    lock = ctx.path(ctx.attr.lock)
    files = []
    for entry in _lock_lines(ctx.read(lock)):
        if not ctx.path(entry.wheel).exists:
            result = ctx.execute(
                [
                    "python3",
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--only-binary=:all:",
                    "--no-deps",
                    "--python-version",
                    entry.python,
                    "--dest",
                    "dl-" + entry.python,
                    entry.requirement,
                ],
                timeout = 600,
            )
            if result.return_code != 0:
                fail("pip download %s (Python %s) failed:\n%s" % (entry.requirement, entry.python, result.stderr))
            moved = ctx.execute(["mv", "dl-%s/%s" % (entry.python, entry.wheel), entry.wheel])
            if moved.return_code != 0:
                fail("pip download %s (Python %s) did not give %s: %s" % (entry.requirement, entry.python, entry.wheel, moved.stderr))
        digest = ctx.execute(["sha256sum", entry.wheel]).stdout.split(" ")[0]
        if digest != entry.sha256:
            fail("%s: sha256 %s, the lock (%s) says %s" % (entry.wheel, digest, ctx.attr.lock, entry.sha256))
        files.append(entry.wheel)
    ctx.execute(["rm", "-rf"] + ["dl-" + v for v in ["3.10", "3.11", "3.12"]])
    ctx.file("BUILD.bazel", """filegroup(
    name = "wheels",
    srcs = {files},
    visibility = ["//visibility:public"],
)
""".format(files = repr(sorted(files))))

gpu_runner_wheels = repository_rule(
    implementation = _gpu_runner_wheels_impl,
    attrs = {"lock": attr.label(allow_single_file = True)},
    doc = "The hash-checked wheels of the GPU-runner bundle (third_party/gpu_runner/wheels.lock).",
)

# --- The lane bundle's wheels: a lane's locked versions, for one runner Python ---------------

# What the lane bundle carries as wheels (compiled per CPython, so the runner's own version):
# tvm-ffi (the lane's), and ml_dtypes, which TVM's compiler package imports.
LANE_WHEEL_PACKAGES = ["apache-tvm-ffi", "ml-dtypes"]

def _locked(text, package):
    """(version, [sha256]) of `package` in a pip-compile --generate-hashes lock."""
    version, hashes, inside = None, [], False
    for raw in text.splitlines():
        line = raw.strip()
        if not raw.startswith(" ") and "==" in line:
            name = line.split("==")[0].lower().replace("_", "-")
            inside = name == package
            if inside:
                version = line.split("==")[1].split(" ")[0]
        elif inside and line.startswith("--hash=sha256:"):
            hashes.append(line[len("--hash=sha256:"):].split(" ")[0])
    if version == None or not hashes:
        fail("%s: no hashed pin in the lock" % package)
    return version, hashes

def _lane_runner_wheels_impl(ctx):
    text = ctx.read(ctx.path(ctx.attr.lock))
    files = []
    for package in ctx.attr.packages:
        version, hashes = _locked(text, package)
        dest = "dl-" + package
        result = ctx.execute(
            [
                "python3",
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--only-binary=:all:",
                "--no-deps",
                "--python-version",
                ctx.attr.python,
                "--dest",
                dest,
                "%s==%s" % (package, version),
            ],
            timeout = 600,
        )
        if result.return_code != 0:
            fail("pip download %s==%s (Python %s) failed:\n%s" % (package, version, ctx.attr.python, result.stderr))
        found = [f for f in ctx.execute(["ls", dest]).stdout.splitlines() if f]
        if len(found) != 1:
            fail("pip download %s==%s gave %r, want one wheel" % (package, version, found))
        digest = ctx.execute(["sha256sum", "%s/%s" % (dest, found[0])]).stdout.split(" ")[0]
        if digest not in hashes:
            fail("%s: sha256 %s is not among the hashes %s pins for %s==%s" % (found[0], digest, ctx.attr.lock, package, version))
        ctx.execute(["mv", "%s/%s" % (dest, found[0]), found[0]])
        ctx.execute(["rm", "-rf", dest])
        files.append(found[0])
    ctx.file("BUILD.bazel", """filegroup(
    name = "wheels",
    srcs = {files},
    visibility = ["//visibility:public"],
)
""".format(files = repr(sorted(files))))

lane_runner_wheels = repository_rule(
    implementation = _lane_runner_wheels_impl,
    attrs = {
        "lock": attr.label(allow_single_file = True),
        "python": attr.string(doc = "the runner's CPython, e.g. 3.12"),
        "packages": attr.string_list(),
    },
    doc = "A lane's locked wheels of `packages` for one runner Python, checked against the lock.",
)

def lane_runner_wheel_repositories():
    """`@lane_wheels_<lane>_<cpXY>` for every lane and runner Python (fetched when selected)."""
    for lane in LANES:
        for tag, version in RUNNER_PYTHONS.items():
            lane_runner_wheels(
                name = "lane_wheels_%s_%s" % (lane, tag),
                lock = lane_lock(lane),
                python = version,
                packages = LANE_WHEEL_PACKAGES,
            )
