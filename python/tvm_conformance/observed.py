"""Exceptions a deviation's test raises when it sees the recorded behaviour itself.

A strict xfail with ``raises=AssertionError`` (or pytest's ``Failed``) is satisfied by any
failed assertion, including a worse regression than the one recorded (the exception never
arrived, the call returned nothing). A test of such a deviation first checks that the
surrounding behaviour holds (the exception did arrive, the call did return), then raises one
of these for exactly the recorded deviation; anything else stays an AssertionError and fails
the test. Standard library only.

A deviation whose exception is a builtin one (the recorded OverflowError, TypeError, a plain
RuntimeError) wraps the one call it is about in :func:`recorded` (or one of the helpers built
on it), which turns exactly the recorded exception, class and message, into a dedicated type
here; the registry refuses builtin and TVM classes as ``raises``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator


class DeviationObserved(Exception):
    """The recorded deviating behaviour was seen (base class)."""


class FidelityLost(DeviationObserved):
    """An exception crossed C++ or the VM and arrived, but lost its type, args or attributes."""


class UncheckedValueAccepted(DeviationObserved):
    """A value that should be refused was accepted and handed on unchanged."""


class BatchStatisticsUsed(DeviationObserved):
    """An imported eval-mode BatchNorm normalized by batch statistics (matches train mode)."""


class OpaqueConversion(DeviationObserved):
    """A value crossed the FFI as an opaque Python object instead of its FFI type."""


class CallbackNotCalled(DeviationObserved):
    """A callback the source calls for its side effect is not called: the function returned
    without calling it, or the built executable holds no call of it (removed as dead code)."""


class KeywordArgumentsIgnored(DeviationObserved):
    """An importer dropped arguments a call passed by keyword: its output is exactly the
    call's output without them."""


class ArgumentReadAsDefault(DeviationObserved):
    """An importer translated an op as if some of its arguments were at PyTorch's defaults:
    the output is exactly the op's with those arguments at their defaults."""


class TranslatorFailed(DeviationObserved):
    """A valid model failed to import with the recorded Python error raised inside the
    importer's translator (a loud failure, not a wrong result)."""


class NumpyScalarRefused(DeviationObserved):
    """A numpy scalar that stands for a Python bool, int or float was refused where the Python
    value is taken, with the recorded error naming ``ffi.OpaquePyObject``."""


class LoaderNotRegistered(DeviationObserved):
    """A module loader the runtime ships is not registered until the process loads it."""


class ViewBitIgnored(DeviationObserved):
    """A torch negative or conjugate view was taken as its stored data, its view bit ignored."""


class TensorCopyUnchecked(DeviationObserved):
    """A copy between two TVM tensors of another shape or dtype (the same size in bytes) was
    neither refused nor converted: the bytes were copied as they are."""


class LargeUintAsCall(DeviationObserved):
    """A uint64 constant beyond int64's range came back as a ``tirx.large_uint_imm(low, high)``
    call of its exact 32-bit halves, not as an integer constant with its value."""


class BoolReductionRefused(DeviationObserved):
    """A max / min reduction of a boolean tensor was refused while building (no identity value
    for bool), where numpy reduces it to a bool."""


class ErrorClassLost(FidelityLost):
    """A custom exception class raised in a callback arrived as plain ``RuntimeError`` (not a
    subclass such as TVM's ``InternalError``), its message unchanged."""


class IntBeyondInt64Overflowed(DeviationObserved):
    """A Python int beyond int64 was refused at the Python boundary with CPython's own
    ``OverflowError: Python int too large to convert to C long``."""


class Timedelta64IntConversionFailed(DeviationObserved):
    """A ``numpy.timedelta64`` with a unit was passed to ``int()`` by tvm-ffi, which raised
    ``TypeError: int() argument must be ... not 'datetime.timedelta'``."""


class CompilerAbsenceUnclear(DeviationObserved):
    """Runtime-only TVM answered a compiler API with ``AttributeError: module
    'tvm.ir._ffi_api' has no attribute '<name>'`` instead of naming the missing compiler."""


class SliceStepIgnored(DeviationObserved):
    """`tensor[::step] = source` (any step, 0 included) copied the whole source in order, as
    `tensor[:] = source` does, where numpy writes every step-th element or refuses."""


class SetItemRefusalUnclear(DeviationObserved):
    """A tensor refused an index form with ``ValueError: Array only support set from numpy
    array``, which names the value (even a numpy array) instead of the index."""


class BoolArithmeticBuildFailed(DeviationObserved):
    """An elementwise, matmul or convolution op on bool tensors, accepted by its struct-info
    inference, failed to build with TVM's internal float-dtype check."""


class BoolOpBuildFailed(DeviationObserved):
    """A unary op or a comparison of bool tensors, accepted by its struct-info inference,
    failed to build (TVM's own refusal of the dtype, or LLVM's verifier)."""


class MathIntrinsicMissing(DeviationObserved):
    """A math op accepted for a dtype by its struct-info inference failed to build: TVM has no
    intrinsic (or legalization) of it for that dtype on llvm."""


class InfiniteIntBoundFailed(DeviationObserved):
    """R.clip of an integer tensor with an infinite bound (what the frontends emit for an
    open side) failed to build instead of leaving that side open."""


class InfiniteIntBoundClamped(DeviationObserved):
    """R.clip of an int64 tensor with infinite bounds built, and every element came back as
    int64's minimum instead of the value itself."""


class ScalarParameterRefused(DeviationObserved):
    """An op accepted with a 0-d parameter tensor by its struct-info inference failed while
    legalizing (topi asserts a 1-d one)."""


class DefaultArgumentBuildFailed(DeviationObserved):
    """An op called with an argument at its documented default (omitted or None), accepted by
    its struct-info inference, failed to build while the default pipeline legalized it."""


class LegalizationMissing(DeviationObserved):
    """An op accepted by its struct-info inference failed to build in every form: its
    registered legalization calls a function TVM does not have."""


class LegalizationUnsupported(DeviationObserved):
    """An op accepted by its struct-info inference failed to build in every form: its
    legalization says the op is not supported yet."""


class VmCodegenMissing(DeviationObserved):
    """An op accepted by its struct-info inference failed to build in every form: the default
    pipeline does not lower it, and the VM's code generator refuses the call."""


class DtypeBuildFailed(DeviationObserved):
    """An op accepted for a dtype by its struct-info inference failed to build in that dtype
    (its legalization's TIR refuses the dtype: a bitwise op of floats, an integer division)."""


class GridLayoutMisread(DeviationObserved):
    """An op read a tensor argument in another layout than the one it documents: its output's
    shape follows the wrong axes."""


class DtypeRunFailed(DeviationObserved):
    """An op accepted for a dtype by its struct-info inference built, and its runtime kernel
    refused the dtype when called."""


class NegativeAxisLegalizeFailed(DeviationObserved):
    """An op given a negative axis, accepted by its struct-info inference, failed while the
    default pipeline legalized it (the legalizer did not normalize the axis)."""


class UndeclaredDtypeReturned(DeviationObserved):
    """A Relax function returned a tensor of another dtype than its op's struct-info inference
    declared (and numpy's rule gives)."""


class UndeclaredShapeReturned(DeviationObserved):
    """A Relax function returned a tensor of another shape than its op's struct-info inference
    declared (and the reference gives)."""


class FirstAxisOnlyReduced(DeviationObserved):
    """A reduction over several axes ran along the first of them only: it returned that
    reduction's (values, indices) pair where one tensor was declared."""


class CenterScaleIgnored(DeviationObserved):
    """A normalization given center=False / scale=False gave a result that differs from the
    reference in every element (it still adds beta / multiplies by gamma)."""


class EqualIouSuppressed(DeviationObserved):
    """A non-maximum suppression removed a box whose IoU with a selected one equals the
    threshold (the documented rule removes it only above)."""


class NothingSelected(DeviationObserved):
    """A selection (a non-maximum suppression) returned no result where its documented rule
    selects some."""


class LimitIgnored(DeviationObserved):
    """An op given a limit as a runtime tensor returned more results than the limit allows
    (the rows and the count of an unlimited selection)."""


class DocumentedFormRefused(DeviationObserved):
    """A form of an argument that the function's own docstring documents was refused with the
    recorded error."""


class InstrumentNotCalled(DeviationObserved):
    """A function given to ``VirtualMachine.set_instrument`` was accepted and never called
    while the VM ran a function that makes calls."""


class PathLikeRefused(DeviationObserved):
    """A ``pathlib.Path`` given where a file path is taken was refused: the FFI's type error
    (``Expected `str` but got `ffi.OpaquePyObject```), or the function's own str-only code
    (``'PosixPath' object has no attribute 'endswith'``)."""


class ByteOrderIgnored(DeviationObserved):
    """A numpy source in non-native byte order was copied into a tensor as its raw bytes: each
    value came back byte-swapped."""


class SubByteValueLost(DeviationObserved):
    """A one-element ml_dtypes int4 array copied into a runtime tensor came back from
    ``numpy()`` as an int8 zero, whatever its value."""


@contextlib.contextmanager
def recorded(
    exc_type: type[BaseException], message: str, observed: type[DeviationObserved]
) -> Iterator[None]:
    """Turn exactly the recorded failure into ``observed``; let anything else through.

    The recorded failure is an exception whose class is ``exc_type`` itself (a subclass, such
    as TVM's ``InternalError`` or ``RPCError`` for ``RuntimeError``, is not it) and whose
    ``str()`` matches the regular expression ``message`` in full. Any other exception, of the
    same class with another message included, leaves the block unchanged, so a strict xfail
    with ``raises=observed`` fails on it. Wrap only the call the deviation is about: the same
    exception from another call (a setup step) is then not turned into ``observed``.
    """
    try:
        yield
    except exc_type as err:
        if type(err) is exc_type and re.fullmatch(message, str(err), re.DOTALL):
            raise observed(f"{type(err).__name__}: {err}") from err
        raise


def error_class_lost(message: str) -> contextlib.AbstractContextManager[None]:
    """``ffi-unregistered-error-class-lost``: the callback's error arrived as a plain
    ``RuntimeError`` carrying exactly ``message``."""
    return recorded(RuntimeError, re.escape(message), ErrorClassLost)


# CPython's message for an int that does not fit a C long (PyLong_AsLong).
INT_OVERFLOW_MESSAGE = "Python int too large to convert to C long"


def int_beyond_int64_overflow() -> contextlib.AbstractContextManager[None]:
    """``ffi-int-beyond-int64-overflow``: the FFI call raised CPython's OverflowError."""
    return recorded(OverflowError, re.escape(INT_OVERFLOW_MESSAGE), IntBeyondInt64Overflowed)


TIMEDELTA_INT_MESSAGE = (
    r"int\(\) argument must be a string, a bytes-like object or a real number, "
    r"not 'datetime\.timedelta'"
)


def timedelta64_int_conversion() -> contextlib.AbstractContextManager[None]:
    """``ffi-numpy-timedelta64-typeerror``: int() on the timedelta64 raised its TypeError."""
    return recorded(TypeError, TIMEDELTA_INT_MESSAGE, Timedelta64IntConversionFailed)


def compiler_absence_unclear(attribute: str) -> contextlib.AbstractContextManager[None]:
    """``deploy-relax-import-unclear`` / ``deploy-compile-unclear``: the compiler's FFI API
    module lacks ``attribute`` (and says nothing else)."""
    return recorded(
        AttributeError,
        rf"module 'tvm\.ir\._ffi_api' has no attribute '{re.escape(attribute)}'",
        CompilerAbsenceUnclear,
    )


# --- issue 52: the FFI containers against collections.abc and CPython's protocol tests -----


class UpdateFormRefused(DeviationObserved):
    """A MutableMapping's update refused a form dict.update takes (pairs, keywords)."""


class UnequalToPythonValue(DeviationObserved):
    """An FFI container compared unequal to the Python value it holds."""


class PythonEqualityBypassed(DeviationObserved):
    """An FFI container's lookup did not use Python's == (a value equal under == not found)."""


class ViewMappingMissing(DeviationObserved):
    """A mapping view's abc mixin (repr, `in values()`) failed on the view's missing
    `_mapping` attribute, with the recorded AttributeError."""


class IteratorLengthFixed(DeviationObserved):
    """An FFI List's iterator stopped at the length the List had when iteration began."""


class DtypeRefused(DeviationObserved):
    """A frontend refused a model whose parameters are in a dtype PyTorch computes in, with
    the recorded error naming that dtype."""


class KernelOutOfBounds(DeviationObserved):
    """A kernel indexed outside its tensor's metadata: it returned without writing its output
    (the sentinel the test filled it with stays), or its process died of SIGSEGV in the call."""


class IndicesAsFloatZeros(DeviationObserved):
    """An op's integer indices output came back as floating-point zeros (PyTorch gives the
    int64 positions)."""
