"""Sample runs of two lanes (default with a cuda run, ffi_next) for the report's tests."""

import json
from pathlib import Path

import conformance_check
import fake_runs
import report
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

DEVIATIONS_MD = "\n".join(
    [
        "| id | kind | lanes | expected (seed / upstream) | what TVM does | test | upstream |",
        "|---|---|---|---|---|---|---|",
        "| `ffi-err-type` | deviation | all | custom type kept | arrives as RuntimeError "
        "| `//py:err_test :: test_err` | - |",
        "| `ffi-save-json-crash` | crash | tvm-ffi >= 0.1.15 | save_json works | segfault "
        "| `//py:json_test :: test_save_json` | - |",
    ]
)

GTEST = """<?xml version="1.0"?><testsuites><testsuite name="Kit">
<testcase name="Throws" status="run" result="completed" classname="Kit"/>
</testsuite></testsuites>"""

LANE_INFO = junit(
    [case_xml("test_record_lane_facts")],
    suite_properties={
        "tvm_version": "0.27.0.post1",
        "tvm_ffi_version": "0.1.15.post2",
        "gpu": "none",
        "venv_info": json.dumps({"tvm_wheel_sha256": "ab" * 32}),
    },
)


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
    report.FIDELITY_OUTPUT: json.dumps({"title": "Exception fidelity", "rows": FIDELITY_ROWS})
}


# //benchmarks:overhead_ratio_test's figures, per lane (its undeclared outputs).
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
    return {report.OVERHEAD_OUTPUT: json.dumps({"tvm": "0.27", "rows": rows})}


OVERHEAD_DEFAULT = _overhead(400.0, 0.8)
OVERHEAD_FFI_NEXT = _overhead(250.0, 0.5)


def runs(tmp_path: Path) -> list[results.Run]:
    """Three run archives under tmp_path/conformance-runs, read back."""
    default = {
        "//py:cb_test_llvm": junit([_cb("llvm", "bytecode"), _cb("llvm", "compiled")]),
        "//py:err_test": junit([case_xml("test_err", "xfailed", "deviation ffi-err-type: x")]),
        "//py:json_test": junit([case_xml("test_save_json")]),
        "//cpp:kit_test": GTEST,
    }
    cuda = {
        "//py:cuda_test_cuda": junit(
            [
                case_xml(
                    "test_run[cuda]",
                    "skipped",
                    "no cuda:0 device present",
                    properties={"tvm_target": "cuda"},
                )
            ]
        )
    }
    ffi_next = {
        "//py:cb_test_llvm": junit(
            [_cb("llvm", "bytecode"), _cb("llvm", "compiled", "failed", "assert 3 == 4")]
        ),
        "//py:err_test": junit([case_xml("test_err", "xfailed", "deviation ffi-err-type: x")]),
        "//py:json_test": junit(
            [case_xml("test_save_json", "xfailed", "deviation ffi-save-json-crash: SIGSEGV")]
        ),
        "//cpp:kit_test": GTEST,
        report.LANE_INFO_LABEL: LANE_INFO,
    }
    dirs = [
        fake_runs.archive(
            tmp_path,
            default,
            start_ms=1_795_000_000_000,
            outputs={"//py:err_test": FIDELITY, "//py:json_test": OVERHEAD_DEFAULT},
        ),
        fake_runs.archive(
            tmp_path, cuda, ["--//tools/config:cuda=true"], start_ms=1_795_000_100_000
        ),
        fake_runs.archive(
            tmp_path,
            ffi_next,
            ["--//tools/config:lane=ffi_next"],
            start_ms=1_795_000_200_000,
            outputs={"//py:json_test": OVERHEAD_FFI_NEXT},
        ),
    ]
    return [results.read_run(d) for d in dirs]


def build(tmp_path: Path) -> dict:
    """The report of `runs` against CONFORMANCE and DEVIATIONS_MD."""
    rows = conformance_check.parse_rows(CONFORMANCE)
    return report.build(runs(tmp_path), rows, report.parse_deviations_table(DEVIATIONS_MD))
