"""tvm_conformance.deviation_registry: plain data, standard library only, entries that parse."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tvm_conformance import deviation_registry as registry
from tvm_conformance.runfiles import rlocation

# Suffixes of the per-target variants tvm_py_test(targets = [...]) makes of one name.
VARIANT_SUFFIXES = ("_llvm", "_cuda", "_independent")


def _dev(**fields: object) -> registry.Deviation:
    base: dict[str, object] = {
        "id": "x-y",
        "area": "a",
        "expected": "e",
        "actual": "a",
        "raises": "tvm_conformance.observed.FidelityLost",
        "tests": ("//p:t :: c",),
    }
    return registry.Deviation(**{**base, **fields})  # type: ignore[arg-type]


def test_imports_neither_pytest_nor_tvm() -> None:
    python_dir = str(Path(registry.__file__).resolve().parent.parent)
    code = (
        f"import sys; sys.path.insert(0, {python_dir!r}); "
        "from tvm_conformance import deviation_registry as r; r.by_id(); "
        "bad = sorted(m for m in ('pytest', 'tvm', 'tvm_ffi', 'numpy', 'torch') "
        "if m in sys.modules); print(bad)"
    )
    proc = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True
    )
    assert proc.stdout.strip() == "[]", proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("case", "listed"),
    [
        ("test_x[OSError-cpp]", True),
        ("test_x[OSError-relax_vm]", True),
        ("test_x[BlockingIOError-cpp]", False),  # `*` only where it is written
        ("test_x[OSError-cpp]extra", False),  # the whole case must match
        ("test_y", True),
        ("test_y[a]", False),
        ("test_z[a.b]", True),  # `[`, `]` and `.` are literal
        ("test_z[aXb]", False),
    ],
)
def test_lists_matches_star_only(case: str, listed: bool) -> None:
    dev = _dev(tests=("//p:t :: test_x[OSError-*]", "//p:t :: test_y", "//p:t :: test_z[a.b]"))
    assert registry.lists(dev, "//p:t", case) is listed
    assert registry.lists(dev, "//p:other", case) is False


@pytest.mark.parametrize(
    ("tvm", "tvm_ffi", "versions", "expected"),
    [
        ("", "", ("0.27.0.post1", "0.1.14.post0"), True),
        ("", ">=0.1.15", ("0.27.0.post1", "0.1.15.post2"), True),
        ("", ">=0.1.15", ("0.27.0.post1", "0.1.14"), False),
        ("", "<0.1.14", ("0.26.0", "0.1.13.post2"), True),
        ("", "<0.1.14", ("0.27.0.post1", "0.1.14.post0"), False),
        ("<0.27", "", ("0.26.0", "0.1.13.post2"), True),
        (">=0.26,<0.27", "", ("0.27.0.post1", "0.1.14"), False),
    ],
)
def test_applies_reads_version_specs(
    tvm: str, tvm_ffi: str, versions: tuple[str, str], expected: bool
) -> None:
    assert registry.applies(_dev(tvm=tvm, tvm_ffi=tvm_ffi), *versions) is expected


# Release candidates, dev and nightly builds, post and local versions of TVM and tvm-ffi
# (issue 43, point 3). The rule (docs/deviations.md): versions are PEP 440; a pre-release or dev
# build of the version a deviation starts or ends at is on neither side of that bound, so the
# deviation is not expected there; `>=V.dev0` starts it at V's first nightly.
@pytest.mark.parametrize(
    ("spec", "version", "expected"),
    [
        # Starts at tvm-ffi 0.1.13: its rc comes before it, its post-release after.
        (">=0.1.13", "0.1.13rc2", False),
        (">=0.1.13", "0.1.13.post2", True),
        (">=0.1.13", "0.1.13", True),
        # Starts at 0.1.15: its rcs and nightlies do not have it; the next nightly does.
        (">=0.1.15", "0.1.15rc1", False),
        (">=0.1.15", "0.1.15.dev7+g1a2b3c4", False),
        (">=0.1.15", "0.1.15+g9f8e7d6", True),
        (">=0.1.15", "0.1.16.dev1+g1a2b3c4", True),
        (">=0.1.15", "0.1.14.post9", False),
        (">=0.1.15.dev0", "0.1.15.dev7+g1a2b3c4", True),
        (">=0.1.15.dev0", "0.1.15rc1", True),
        (">=0.1.15.dev0", "0.1.14.post9", False),
        # Fixed in 0.1.14: its rcs and nightlies count as fixed; 0.1.13's post and local
        # builds as not.
        ("<0.1.14", "0.1.14rc1", False),
        ("<0.1.14", "0.1.14.dev3+g9f8e7d6", False),
        ("<0.1.14", "0.1.14+g9f8e7d6", False),
        ("<0.1.14", "0.1.13rc2", True),
        ("<0.1.14", "0.1.13.post2+local.1", True),
        ("<0.1.14rc2", "0.1.14rc1", True),
        # A local build is its public version to every clause but == with a local label:
        # digits of a commit hash are not a version part.
        ("<=0.1.14", "0.1.14+g9f8e7d6", True),
        ("==0.1.14", "0.1.14+g9f8e7d6", True),
        ("==0.1.14+g9f8e7d6", "0.1.14+g0000000", False),
        # TVM nightlies: 0.28.dev123+g1a2b3c4 is a build before 0.28, after every 0.27.
        (">=0.27", "0.28.dev123+g1a2b3c4", True),
        (">=0.26,<0.27", "0.28.dev123+g1a2b3c4", False),
        ("<0.28", "0.28.dev123+g1a2b3c4", False),
        ("==0.28.*", "0.28.dev123+g1a2b3c4", True),
        (">=0.28", "0.28.dev123+g1a2b3c4", False),
        (">=0.26,<0.27", "0.27rc0", False),
        (">=0.26,<0.27", "0.26.1rc1", True),
        (">=0.26,<0.27", "0.26.dev5", False),
    ],
)
def test_applies_to_rc_dev_post_and_local_versions(spec: str, version: str, expected: bool) -> None:
    # The same rule for both packages.
    assert registry.applies(_dev(tvm=spec), version, "0.1.14.post0") is expected
    assert registry.applies(_dev(tvm_ffi=spec), "0.27.0.post1", version) is expected


def test_unreadable_installed_version_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="'0.1.15-custom' is not a PEP 440 version"):
        registry.applies(_dev(tvm_ffi=">=0.1.15"), "0.27.0", "0.1.15-custom")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kind": "crash"}, "kind crash needs signal"),
        (
            {"kind": "crash", "signal": "SIGSEGV", "raises": "builtins.RuntimeError"},
            "kind crash raises",
        ),
        ({"signal": "SIGSEGV"}, "only for kind crash"),
        ({"tests": ("//p:t c",)}, "is not '//pkg:target :: case'"),
        ({"tests": ()}, "names no test"),
        ({"tvm_ffi": "0.1.15"}, "tvm_ffi: version spec '0.1.15': '0.1.15' is not an operator"),
        ({"tvm": ">=0.28-nightly"}, "tvm: version spec '>=0.28-nightly'"),
        ({"tvm": ">=0.28,"}, "has an empty clause"),
        ({"tvm_ffi": ">0.1.14+g1a2b"}, "a local label (+...) goes only after == or !="),
        ({"raises": "ValueError"}, "dotted class name"),
        ({"id": "Bad_Id"}, "id must be"),
        ({"raises": "builtins.RuntimeError"}, "is a builtin or TVM class"),
        ({"raises": "builtins.AttributeError"}, "is a builtin or TVM class"),
        ({"raises": "tvm.error.InternalError"}, "is a builtin or TVM class"),
        ({"raises": "tvm_ffi.core.Error"}, "is a builtin or TVM class"),
        ({"raises": "_pytest.outcomes.Failed"}, "is a builtin or TVM class"),
    ],
)
def test_bad_entries_are_errors(
    monkeypatch: pytest.MonkeyPatch, fields: dict[str, object], message: str
) -> None:
    monkeypatch.setattr(registry, "DEVIATIONS", (_dev(**fields),))
    with pytest.raises(ValueError, match=re.escape(message)):
        registry.by_id()


def test_no_deviation_raises_a_builtin_or_tvm_class() -> None:
    """A builtin class (RuntimeError: TVM's InternalError, RPCError, OpError subclass it) or a
    TVM base class would let a worse failure count as the deviation (issue 36, point 4)."""
    from tvm_conformance import crash_isolation, deviations, observed

    broad = [f"{d.id}: {d.raises}" for d in registry.DEVIATIONS if registry.broad_raises(d.raises)]
    print(
        f"deviations with a builtin or TVM-base raises: {len(broad)} of {len(registry.DEVIATIONS)}"
    )
    assert broad == [], broad
    # Resolved, each is a dedicated class: an observed deviation or the crash isolation's.
    for dev in registry.by_id().values():
        cls = deviations.exception_class(dev.raises)
        assert issubclass(cls, (observed.DeviationObserved, crash_isolation.ProcessCrashed)), dev
        assert cls.__module__.startswith("tvm_conformance."), dev


def test_every_crash_deviation_records_its_signal() -> None:
    crashes = [dev for dev in registry.by_id().values() if dev.kind == "crash"]
    assert crashes and all(dev.signal.startswith("SIG") for dev in crashes)


def _build_names(package: str) -> set[str]:
    text = Path(rlocation(f"{package}/BUILD.bazel")).read_text(encoding="utf-8")
    return set(re.findall(r'"([A-Za-z0-9_.+-]+)"', text))


def test_every_tests_entry_names_a_target_that_exists() -> None:
    missing = []
    for dev in registry.by_id().values():
        for entry in dev.tests:
            label, _ = registry.parse_test(entry)
            package, _, name = label.removeprefix("//").partition(":")
            names = _build_names(package)
            base = next((name[: -len(s)] for s in VARIANT_SUFFIXES if name.endswith(s)), name)
            if name not in names and base not in names:
                missing.append(f"{dev.id}: {entry}")
    assert not missing, "tests entries naming no target of their BUILD file:\n" + "\n".join(missing)
