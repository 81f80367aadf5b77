"""The example CI workflows (examples/ci) run only commands that exist, with options that parse.

Each workflow's shell lines (GitHub Actions: every step's `run`; GitLab CI: every job's
`before_script`, `script` and `after_script`) are split into commands. A command that names a
repo tool is checked against the tool itself:

  ./bazelw ...             its own options (--require-whole, --allow-partial=<why>), a Bazel
                           command, each --config against the configs the rc files define, each
                           --//pkg:flag and target against its package's BUILD file, other
                           flags against the Bazel flags the examples may use (BAZEL_FLAGS), and
                           what follows `--` of a `run` by that target's own parser
  gpu_runner/run.sh ...    tools/gpu_runner/run_bundle.py's parser (a bundle unpacks
                           tools/gpu_runner/ as gpu_runner/)
  [python3] tools/X.py ... that script's argparse parser

A parser is the tool's own: its `main` runs until argparse has parsed the options, then stops
(parse_args is wrapped), so the test never runs the tool. Variables are expanded from the
workflow's env / variables; the others stand for a value.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import os
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

# The source tree (this file's real path: examples/ci/workflows_test.py).
ROOT = Path(os.path.realpath(__file__)).parents[2]
for tool_dir in ("tools/verdict", "tools/mutants", "tools/gpu_runner", "tools/config", "python"):
    if str(ROOT / tool_dir) not in sys.path:
        sys.path.append(str(ROOT / tool_dir))

GITHUB = ROOT / "examples" / "ci" / "github" / "conformance.yml"
GITLAB = ROOT / "examples" / "ci" / "gitlab" / ".gitlab-ci.yml"
RC_FILES = (".bazelrc", "tools/build_defs/tvm.bazelrc", "tools/config/lanes.bazelrc")
BAZEL_COMMANDS = {"build", "test", "run", "query", "cquery", "info", "fetch", "clean", "shutdown"}
STARTUP_FLAGS = {"--output_base", "--output_user_root", "--bazelrc"}
# The Bazel flags (beyond --config and build settings) an example may pass; add one here when a
# workflow needs it, after checking it in Bazel 4.2.3's `bazel help <command>`.
BAZEL_FLAGS = {"--disk_cache", "--keep_going", "--test_output", "--repo_env", "--remote_cache"}
# bazel run TARGET -- ARGS: the module whose main(argv) parses ARGS.
RUN_PARSERS = {"//tools/verdict:report": "report", "//tools/mutants": "runner"}
# Targets whose arguments are parsed by a shell script: the arguments it takes.
RUN_SHELL_ARGS = {"//tools:lint": {"--fix"}}
UNKNOWN = "VALUE"  # what an undefined variable stands for
# The prerequisites' installer (tools/setup/prerequisites.txt's reader): its one argument.
SETUP_SCRIPT = "tools/setup/prerequisites.sh"


class _Parsed(Exception):
    """Raised by the wrapped parse_args once the options parsed."""


@contextlib.contextmanager
def _stop_after_parsing() -> Iterator[None]:
    original = argparse.ArgumentParser.parse_args

    def parse_args(self, args=None, namespace=None):  # noqa: ANN001, ANN202
        original(self, args, namespace)
        raise _Parsed

    argparse.ArgumentParser.parse_args = parse_args  # type: ignore[method-assign]
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_args = original  # type: ignore[method-assign]


def parse_with(module_name: str, argv: list[str]) -> str | None:
    """None when `module_name`'s main accepts `argv`, else why not (argparse's message)."""
    module = importlib.import_module(module_name)
    takes_argv = bool(inspect.signature(module.main).parameters)
    saved = sys.argv
    err = sys.stderr
    sys.stderr = captured = _Capture()
    try:
        with _stop_after_parsing():
            if takes_argv:
                module.main(argv)
            else:
                sys.argv = [module_name, *argv]
                module.main()
    except _Parsed:
        return None
    except SystemExit as exit_:
        return f"{module_name}: exit {exit_.code}: {captured.text.strip()}"
    finally:
        sys.argv = saved
        sys.stderr = err
    return f"{module_name}: main returned without parsing its options"


class _Capture:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


# --- Reading the workflows ---------------------------------------------------------------------
def github_scripts(data: dict) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(where, script, env) of each `run` step of a GitHub workflow."""
    for job_id, job in (data.get("jobs") or {}).items():
        for n, step in enumerate(job.get("steps") or []):
            if "run" in step:
                env = {
                    **(data.get("env") or {}),
                    **(job.get("env") or {}),
                    **(step.get("env") or {}),
                }
                yield f"jobs.{job_id}.steps[{n}]", step["run"], {k: str(v) for k, v in env.items()}


def _lines(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [line for item in (value or []) for line in _lines(item)]  # type: ignore[attr-defined]


def gitlab_scripts(data: dict) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(where, script line, variables) of each job's before_script, script and after_script."""
    top = {k: str(v) for k, v in (data.get("variables") or {}).items()}
    for job_id, job in data.items():
        if not isinstance(job, dict) or job_id in ("variables", "default", "workflow"):
            continue
        local = {k: str(v) for k, v in (job.get("variables") or {}).items()}
        for key in ("before_script", "script", "after_script"):
            for n, line in enumerate(_lines(job.get(key))):
                yield f"{job_id}.{key}[{n}]", line, {**top, **local}


def expand(text: str, env: dict[str, str]) -> str:
    """$VAR, ${VAR} and ${{ expr }} with the workflow's values; others become UNKNOWN."""
    for _ in range(3):  # values that name other variables
        text = re.sub(r"\$\{\{[^}]*\}\}", UNKNOWN, text)
        text = re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: env.get(m[1], UNKNOWN), text)
    return text


def commands(script: str, env: dict[str, str]) -> Iterator[list[str]]:
    """The simple commands of a shell script: lines joined at a trailing backslash, split at
    ; && || | and newlines, without leading shell keywords, variable assignments and
    redirections."""
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(expand(line, env), posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words: list[str] = []
        for token in [*lexer, ";"]:
            if token in (";", "&&", "||", "|", "&", ";;"):
                while words and (
                    words[0] in ("if", "then", "else", "elif", "do", "!", "fi", "done")
                    or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0])
                ):
                    words.pop(0)
                if words:
                    yield words
                words = []
            elif token in (">", ">>", "<", "2>", "2>&1", ">&"):
                words.append("\0redirect")
            elif words and words[-1] == "\0redirect":
                words.pop()
            else:
                words.append(token)


def repo_commands(path: Path) -> list[tuple[str, list[str]]]:
    """(where, argv) of every command of the workflow at `path` that names a repo tool."""
    return repo_commands_of(path.read_text(encoding="utf-8"), path)


def repo_commands_of(text: str, path: Path) -> list[tuple[str, list[str]]]:
    data = yaml.safe_load(text)
    scripts = gitlab_scripts(data) if path.name == ".gitlab-ci.yml" else github_scripts(data)
    found = []
    for where, script, env in scripts:
        for argv in commands(script, env):
            if argv[0] == "sudo" and len(argv) > 1:
                argv = argv[1:]
            if argv[0] in ("python3", "python") and len(argv) > 1 and argv[1].endswith(".py"):
                argv = argv[1:]
            if argv[0] == "./bazelw" or argv[0].endswith((".py", "run.sh", SETUP_SCRIPT)):
                found.append((where, argv))
    return found


# --- Checking one command ------------------------------------------------------------------------
def bazelrc_configs() -> set[str]:
    """Every --config=NAME the rc files define (`build:NAME`, `test:NAME`, ...)."""
    names = set()
    for rc in RC_FILES:
        names |= set(re.findall(r"^\w+:(\w+)\s", (ROOT / rc).read_text(), re.M))
    return names


def target_problem(label: str) -> str | None:
    """None when the label's package has a BUILD file defining it (or is a pattern)."""
    if label == "//...":
        return None
    match = re.fullmatch(r"//([\w/.-]*?)(/\.\.\.|:([\w.-]+))?", label)
    if not match:
        return f"{label}: not a label"
    package, rest, name = match[1], match[2], match[3]
    build = ROOT / package / "BUILD.bazel"
    if not build.is_file():
        return f"{label}: no package {package or '//'}"
    if rest and rest.endswith("..."):
        return None
    name = name or package.rsplit("/", 1)[-1]
    if not re.search(rf'^\s*name = "{re.escape(name)}",', build.read_text(), re.M):
        return f"{label}: {package}/BUILD.bazel defines no {name}"
    return None


def bazelw_problems(argv: list[str]) -> list[str]:
    """What is wrong with a ./bazelw command line (empty: nothing)."""
    problems = []
    args = list(argv[1:])
    tail: list[str] = []
    if "--" in args:
        at = args.index("--")
        args, tail = args[:at], args[at + 1 :]
    for arg in list(args):
        if arg == "--require-whole" or (arg.startswith("--allow-partial=") and arg[16:].strip()):
            args.remove(arg)
        elif arg.startswith("--allow-partial"):
            problems.append(f"{arg}: --allow-partial needs the reason: --allow-partial=<why>")
            args.remove(arg)
    while args and args[0].startswith("--"):
        if args[0].split("=", 1)[0] not in STARTUP_FLAGS:
            problems.append(f"{args[0]}: not a startup option the examples use")
        args.pop(0)
    if not args or args[0] not in BAZEL_COMMANDS:
        return [*problems, f"no Bazel command in {argv}"]
    command, args = args[0], args[1:]
    configs = bazelrc_configs()
    targets = []
    for arg in args:
        if arg.startswith("--config="):
            if arg[9:] not in configs:
                problems.append(f"{arg}: no such config in {', '.join(RC_FILES)}")
        elif arg.startswith(("--//", "--no//")):
            label = arg.split("=", 1)[0].replace("--no//", "//").replace("--//", "//")
            problem = target_problem(label)
            if problem:
                problems.append(f"{arg}: {problem}")
        elif arg.startswith("-"):
            if arg.split("=", 1)[0] not in BAZEL_FLAGS:
                problems.append(f"{arg}: not a Bazel flag the examples may use (BAZEL_FLAGS)")
        else:
            targets.append(arg)
    for label in targets:
        problem = target_problem(label) if command not in ("info", "shutdown", "clean") else None
        if problem:
            problems.append(problem)
    if command == "run" and tail:
        target = targets[0] if targets else ""
        if target in RUN_PARSERS:
            problem = parse_with(RUN_PARSERS[target], tail)
            if problem:
                problems.append(problem)
        elif target in RUN_SHELL_ARGS:
            problems += [
                f"{target}: no option {a}" for a in tail if a not in RUN_SHELL_ARGS[target]
            ]
        else:
            problems.append(f"{target}: no parser known for its arguments {tail} (RUN_PARSERS)")
    return problems


def command_problems(argv: list[str]) -> list[str]:
    """What is wrong with one repo command (empty: nothing)."""
    if argv[0] == "./bazelw":
        return bazelw_problems(argv)
    script = argv[0]
    if script.startswith("gpu_runner/"):
        script = "tools/" + script  # the bundle's gpu_runner/ is tools/gpu_runner/
    if not (ROOT / script).is_file():
        return [f"{argv[0]}: no such file ({script})"]
    if script == SETUP_SCRIPT:
        modes = {"check", "install", "apt-line"}
        if argv[1:2] and argv[1] in modes and len(argv) == 2:
            return []
        return [f"{SETUP_SCRIPT} {' '.join(argv[1:])}: it takes one of {sorted(modes)}"]
    module = "run_bundle" if script.endswith("/run.sh") else Path(script).stem
    problem = parse_with(module, argv[1:])
    return [problem] if problem else []


# --- The tests ------------------------------------------------------------------------------------
WORKFLOWS = [GITHUB, GITLAB]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.parent.name)
def test_every_repo_command_exists_and_its_options_parse(path: Path) -> None:
    found = repo_commands(path)
    problems = [f"{where}: {p}" for where, argv in found for p in command_problems(argv)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.parent.name)
def test_each_workflow_runs_the_suite_the_bundle_and_the_report(path: Path) -> None:
    # The reading above found the commands (not nothing): the CPU suite, the lane bundle's
    # build and run, and the report.
    found = [" ".join(argv) for _, argv in repo_commands(path)]
    wanted = (
        "./bazelw test ",
        "//tools/gpu_runner:lane_bundle",
        "gpu_runner/run.sh",
        "//tools/verdict:report",
    )
    for piece in wanted:
        assert any(piece in line for line in found), (piece, found)


PLANTED = [
    ("--config=ci //...", "--config=cii //...", "--config=cii: no such config"),
    ("//tools/gpu_runner:lane_bundle", "//tools/gpu_runner:lane_bundel", "defines no lane_bundel"),
    ("runner_python=cp312", "runner_pythn=cp312", "defines no runner_pythn"),
    ("run.sh --out", "run.sh --outt", "run_bundle: exit 2"),
    ('report -- "', 'report -- --bogus "', "report: exit 2"),
    (
        "./bazelw test --config=ci",
        "./bazelw test --keep_goin --config=ci",
        "--keep_goin: not a Bazel",
    ),
    ("./bazelw test --config=ci", "./bazelw --allow-partial= test --config=ci", "needs the reason"),
]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.parent.name)
@pytest.mark.parametrize(("old", "new", "said"), PLANTED, ids=[p[1] for p in PLANTED])
def test_a_planted_bad_option_fails(path: Path, old: str, new: str, said: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    found = repo_commands_of(text.replace(old, new, 1), path)
    problems = [p for _, argv in found for p in command_problems(argv)]
    assert any(said in p for p in problems), problems


def test_the_github_workflow_installs_the_one_prerequisites_list() -> None:
    found = [argv for _, argv in repo_commands(GITHUB)]
    assert [SETUP_SCRIPT, "install"] in found, found
    planted = GITHUB.read_text(encoding="utf-8").replace(
        "prerequisites.sh install", "prerequisites.sh instal"
    )
    problems = [p for _, argv in repo_commands_of(planted, GITHUB) for p in command_problems(argv)]
    assert any("it takes one of" in p for p in problems), problems


def test_parsers_refuse_bad_options_of_every_tool_the_checker_knows() -> None:
    assert command_problems(["./bazelw", "run", "//tools/mutants", "--", "run", "--scope", "x"])
    assert not command_problems(
        ["./bazelw", "run", "//tools/mutants", "--", "--baseline", "--only", "a"]
    )
    assert not command_problems(["./bazelw", "run", "//tools:lint", "--", "--fix"])
    assert command_problems(["./bazelw", "run", "//tools:lint", "--", "--fixx"])
    assert command_problems(["tools/verdict/verdict.py", "--frobnicate", "runs/x"])
    assert not command_problems(["tools/verdict/verdict.py", "--allow-partial=why", "runs/x"])
    assert command_problems(["tools/verdict/no_such_tool.py"])
    assert not command_problems(["tools/verdict/check_my_wheel.py", "--tvm-wheel", "x.whl"])
    assert command_problems(["tools/verdict/check_my_wheel.py", "--lane"])


def test_commands_split_a_script_as_the_shell_does() -> None:
    script = (
        "status=0\n./bazelw test --config=ci //... || status=$?\n"
        'if [ -f "$D/summary.md" ]; then cat "$D/summary.md" >> "$OUT"; fi\n'
        "./bazelw build \\\n  //a:b\n"
    )
    got = list(commands(script, {"D": "runs/x"}))
    assert ["./bazelw", "test", "--config=ci", "//..."] in got
    assert ["cat", "runs/x/summary.md"] in got
    assert ["./bazelw", "build", "//a:b"] in got
