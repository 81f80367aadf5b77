"""Sample run archives for the report's tests: two lanes, a user's wheel, a cuda run, a planted
GPU-runner run and an older run of the default lane (for the diff)."""

import json
from pathlib import Path

import conformance_check
import fake_runs
import report_model
import results
from fake_runs import case_xml, junit

CB = "`//py:cb_test_llvm :: test_cb[llvm-bytecode]`; `//py:cb_test_llvm :: test_cb[llvm-compiled]`"
CONFORMANCE = "\n".join(
    [
        "| seed | behaviour | test |",
        "|---|---|---|",
        f"| 001 | Callback returns | {CB} |",
        "| 001 | Error keeps its type | `//py:err_test :: test_err` |",
        "| 002 | CUDA runs | `//py:cuda_test_cuda :: test_run[cuda]` |",
        "| 004 | save_json of an IR node | `//py:json_test :: test_save_json` |",
        "| robust | kit: fixture throws | `//cpp:kit_test :: Kit.Throws` |",
    ]
)
REGISTRY = fake_runs.Registry(
    fake_runs.deviation(
        "ffi-err-type",
        ("//py:err_test :: test_err",),
        actual="arrives as RuntimeError",
        upstream="apache/tvm-ffi#123",
    ),
    fake_runs.deviation(
        "ffi-save-json-crash",
        ("//py:json_test :: test_save_json",),
        kind="crash",
        actual="segfault",
    ),
)
GPU_NAME = "NVIDIA H100 80GB HBM3"
USER_WHEEL = "apache_tvm-0.26.0-py3-none-any.whl"

GTEST = """<?xml version="1.0"?><testsuites><testsuite name="Kit">
<testcase name="Throws" status="run" result="completed" classname="Kit"/>
</testsuite></testsuites>"""


def _cb(target: str, mode: str, outcome: str = "passed", message: str = "") -> str:
    props = {"tvm_target": target, "exec_mode": mode}
    return case_xml(f"test_cb[{target}-{mode}]", outcome, message, properties=props)


# The undeclared outputs of the default lane's //py:err_test: an exception fidelity table.
FIDELITY_ROWS = [
    {
        "case": "ValueError",
        "crossing": "cpp",
        "caught": "ValueError",
        "type_kept": True,
        "args_kept": True,
        "picklable": True,
    },
    {
        "case": "OSError",
        "crossing": "cpp",
        "caught": "RuntimeError",
        "type_kept": False,
        "args_kept": True,
        "picklable": True,
    },
    {
        "case": "ValueError with __notes__",
        "crossing": "relax_vm",
        "caught": "ValueError",
        "type_kept": True,
        "args_kept": True,
        "picklable": True,
        "attribute": "__notes__",
        "attribute_kept": False,
    },
]
FIDELITY = {
    report_model.FIDELITY_OUTPUT: json.dumps({"title": "Exception fidelity", "rows": FIDELITY_ROWS})
}


# //benchmarks:overhead_ratio_test's figures (its undeclared outputs).
def _overhead(add_ns: float, ratio: float) -> dict[str, str]:
    rows = [
        {
            "case": "tvm_ffi add",
            "ns": add_ns,
            "floor": "ctypes add",
            "floor_ns": 500.0,
            "ratio": ratio,
        }
    ]
    return {report_model.OVERHEAD_OUTPUT: json.dumps({"tvm": "0.27", "rows": rows})}


def _default(compiled: str = "passed") -> dict[str, str]:
    return {
        "//py:cb_test_llvm": junit([_cb("llvm", "bytecode"), _cb("llvm", "compiled", compiled)]),
        "//py:err_test": junit([case_xml("test_err", "xfailed", "deviation ffi-err-type: x")]),
        "//py:json_test": junit([case_xml("test_save_json")]),
        "//cpp:kit_test": GTEST,
    }


def _cuda(outcome: str, message: str = "") -> dict[str, str]:
    properties = {"tvm_target": "cuda"}
    if outcome == "skipped":  # the plugin names the target that cannot run here
        properties["tvm_unavailable_target"] = "cuda"
    case = case_xml("test_run[cuda]", outcome, message, properties=properties)
    return {"//py:cuda_test_cuda": junit([case])}


def runs(tmp_path: Path) -> list[results.Run]:
    """Six run archives under tmp_path/conformance-runs, read back, oldest first:
    default (its callback failing), default again (fixed), default + cuda, ffi_next, the
    user's 0.26.0 wheel, and a GPU runner's cuda_gpu run."""
    default_record = fake_runs.venv_record()
    ffi_next = {
        **_default("failed"),
        "//py:json_test": junit(
            [case_xml("test_save_json", "xfailed", "deviation ffi-save-json-crash: SIGSEGV")]
        ),
    }
    specs = [
        (_default("failed"), [], default_record, {}),
        (
            _default(),
            [],
            default_record,
            {"//py:err_test": FIDELITY, "//py:json_test": _overhead(400.0, 0.8)},
        ),
        (
            {**_default(), **_cuda("skipped", "no cuda:0 device present")},
            ["--//tools/config:cuda=true"],
            default_record,
            {},
        ),
        (
            ffi_next,
            ["--//tools/config:lane=ffi_next"],
            fake_runs.venv_record("ffi_next", ffi_sha="e" * 64),
            {"//py:json_test": _overhead(250.0, 0.5)},
        ),
        (_default(), [], fake_runs.venv_record(tvm_sha="f" * 64, user_tvm=USER_WHEEL), {}),
        (
            _cuda("passed"),
            ["--//tools/config:cuda=true", "--//tools/config:require_gpu=true"],
            default_record,
            {},
        ),
    ]
    dirs = []
    for index, (tests, flags, record, outputs) in enumerate(specs):
        dirs.append(
            fake_runs.archive(
                tmp_path,
                tests,
                flags,
                venv_record=record,
                start_ms=1_795_000_000_000 + 100_000 * index,
                outputs=outputs,
            )
        )
    # The GPU runner's archive describes its own machine.
    meta_path = Path(dirs[-1]) / results.ARCHIVE_META
    meta = json.loads(meta_path.read_text())
    meta["machine"].update(gpu=GPU_NAME, host="gpu-runner-1")
    meta["gpu_suite"] = {"source": "tests.json", "targets": ["//py:cuda_test_cuda"]}
    meta_path.write_text(json.dumps(meta))
    return [results.read_run(d) for d in dirs]


def build(tmp_path: Path) -> dict:
    """The report of `runs` against CONFORMANCE and REGISTRY."""
    rows = conformance_check.parse_rows(CONFORMANCE)
    return report_model.build(runs(tmp_path), rows, REGISTRY)
