"""tvm_conformance.observed: only the recorded failure of a deviation becomes its observed type.

For each deviation whose recorded exception is a builtin one (issue 36, point 4), a planted
worse failure leaves the helper unchanged, so the strict xfail (``raises=`` the observed type)
fails on it instead of xfailing. Run through pytest itself (pytester), with the five real
registry entries made to apply whatever the installed versions.
"""

from __future__ import annotations

import dataclasses
import textwrap

import pytest

from tvm_conformance import deviation_registry, deviations, observed

pytest_plugins = ["pytester"]

# The five deviations once bound to a builtin class (held in names: tools/deviations/
# xfail_check.py checks literal ids of decorators in this tree).
CLASS_LOST = "ffi-unregistered-error-class-lost"
INT_OVERFLOW = "ffi-int-beyond-int64-overflow"
TIMEDELTA = "ffi-numpy-timedelta64-typeerror"
RELAX_IMPORT = "deploy-relax-import-unclear"
COMPILE = "deploy-compile-unclear"
FIVE = (CLASS_LOST, INT_OVERFLOW, TIMEDELTA, RELAX_IMPORT, COMPILE)


class InternalError(RuntimeError):
    """Stands in for tvm.error.InternalError (a RuntimeError subclass), without TVM."""


# (deviation, the helper its tests wrap the call in, the recorded failure, worse failures)
CASES = {
    CLASS_LOST: (
        lambda: observed.error_class_lost("custom failure 17"),
        lambda: RuntimeError("custom failure 17"),
        [
            lambda: InternalError("CUDA: an illegal memory access was encountered"),
            lambda: InternalError("custom failure 17"),  # a subclass is not the plain class
            lambda: RuntimeError("CUDA: an illegal memory access was encountered"),
            lambda: ValueError("custom failure 17"),
        ],
    ),
    INT_OVERFLOW: (
        observed.int_beyond_int64_overflow,
        lambda: OverflowError("Python int too large to convert to C long"),
        [
            lambda: OverflowError("int too big to convert"),
            lambda: OverflowError("math range error"),
            lambda: TypeError("Python int too large to convert to C long"),
        ],
    ),
    TIMEDELTA: (
        observed.timedelta64_int_conversion,
        lambda: TypeError(
            "int() argument must be a string, a bytes-like object or a real number, "
            "not 'datetime.timedelta'"
        ),
        [
            lambda: TypeError("Mismatched type on argument #0 when calling: `any_echo(0: Any)`"),
            lambda: TypeError("int() argument must be a string, not 'NoneType'"),
            lambda: ValueError("int() argument ... not 'datetime.timedelta'"),
        ],
    ),
    RELAX_IMPORT: (
        lambda: observed.compiler_absence_unclear("RegisterOpAttr"),
        lambda: AttributeError("module 'tvm.ir._ffi_api' has no attribute 'RegisterOpAttr'"),
        [
            lambda: AttributeError("'NoneType' object has no attribute 'shape'"),
            lambda: AttributeError("module 'tvm.relax' has no attribute 'build'"),
            lambda: AttributeError("module 'tvm.ir._ffi_api' has no attribute 'IRModule'"),
        ],
    ),
    COMPILE: (
        lambda: observed.compiler_absence_unclear("IRModule"),
        lambda: AttributeError("module 'tvm.ir._ffi_api' has no attribute 'IRModule'"),
        [
            lambda: AttributeError("module 'tvm.ir._ffi_api' has no attribute 'IRModuleX'"),
            lambda: AttributeError("'Target' object has no attribute 'kind'"),
            lambda: ImportError("libtvm_compiler.so: cannot open shared object file"),
        ],
    ),
}


def _raised(helper, make) -> BaseException:  # noqa: ANN001 (callables of the table above)
    with pytest.raises(BaseException) as info, helper():
        raise make()
    return info.value


@pytest.mark.parametrize("dev_id", FIVE)
def test_the_recorded_failure_becomes_the_deviations_type(dev_id: str) -> None:
    helper, recorded, _ = CASES[dev_id]
    accepts = deviations.raises_of(deviation_registry.by_id()[dev_id])
    got = _raised(helper, recorded)
    assert isinstance(got, accepts) and isinstance(got, observed.DeviationObserved)
    assert type(got.__cause__) is type(recorded())


@pytest.mark.parametrize("dev_id", FIVE)
def test_a_worse_failure_is_left_as_it_is(dev_id: str) -> None:
    helper, _, worse = CASES[dev_id]
    accepts = deviations.raises_of(deviation_registry.by_id()[dev_id])
    for make in worse:
        got = _raised(helper, make)
        assert type(got) is type(make()) and str(got) == str(make()), got
        assert not isinstance(got, accepts), f"{dev_id} would xfail on {got!r}"


def test_no_exception_at_all_is_not_the_deviation() -> None:
    with observed.int_beyond_int64_overflow():
        value = 1
    assert value == 1


INNER = """
import pytest
from tvm.error import InternalError  # TVM's own: a RuntimeError subclass
from tvm_conformance import deviations, observed

@deviations.xfail({class_lost!r})
def test_class_lost_as_recorded():
    with observed.error_class_lost("boom"):
        raise RuntimeError("boom")

@deviations.xfail({class_lost!r})
def test_class_lost_worse_internal_error():
    with observed.error_class_lost("boom"):
        raise InternalError("CUDA: an illegal memory access was encountered")

@deviations.xfail({int_overflow!r})
def test_overflow_from_another_call():
    float(10 ** 400)  # an OverflowError outside the wrapped FFI call
    with observed.int_beyond_int64_overflow():
        pass

@deviations.xfail({int_overflow!r})
def test_overflow_as_recorded():
    with observed.int_beyond_int64_overflow():
        raise OverflowError("Python int too large to convert to C long")

@deviations.xfail({timedelta!r})
def test_timedelta_worse():
    with observed.timedelta64_int_conversion():
        raise TypeError("Mismatched type on argument #0")

@deviations.xfail({relax_import!r})
def test_relax_import_worse():
    with observed.compiler_absence_unclear("RegisterOpAttr"):
        raise AttributeError("'NoneType' object has no attribute 'shape'")

@deviations.xfail({compile!r})
def test_compile_worse():
    with observed.compiler_absence_unclear("IRModule"):
        raise AttributeError("module 'tvm.ir._ffi_api' has no attribute 'Target'")
"""


@pytest.fixture
def applying(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real registry, the five entries applying whatever versions are installed."""
    entries = tuple(
        dataclasses.replace(d, tvm="", tvm_ffi="") if d.id in FIVE else d
        for d in deviation_registry.DEVIATIONS
    )
    monkeypatch.setattr(deviation_registry, "DEVIATIONS", entries)


@pytest.mark.usefixtures("applying")
def test_planted_worse_failures_fail_under_the_real_deviations(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_inner=textwrap.dedent(
            INNER.format(
                class_lost=CLASS_LOST,
                int_overflow=INT_OVERFLOW,
                timedelta=TIMEDELTA,
                relax_import=RELAX_IMPORT,
                compile=COMPILE,
            )
        )
    )
    result = pytester.runpytest("-rfx", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=5, xfailed=2)
    for line in (
        "XFAIL *test_class_lost_as_recorded*",
        "XFAIL *test_overflow_as_recorded*",
        "FAILED *test_class_lost_worse_internal_error - *",
        "E * tvm.error.InternalError: CUDA: an illegal memory access was encountered",
        "FAILED *test_overflow_from_another_call - OverflowError*",
        "E * OverflowError: int too large to convert to float",
        "FAILED *test_timedelta_worse - TypeError: Mismatched type*",
        "FAILED *test_relax_import_worse - AttributeError*",
        "FAILED *test_compile_worse - AttributeError*",
    ):
        result.stdout.fnmatch_lines([line])
