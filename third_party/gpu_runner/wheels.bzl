"""`gpu_runner_wheels`: the wheels of third_party/gpu_runner/wheels.lock, hash-checked.

Each line is downloaded with `python3 -m pip download --only-binary=:all: --no-deps
--python-version X` (pip resolves the file for that interpreter without running it), then its
sha256 is compared with the lock. The repository exposes `:wheels` (all files).
"""

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
