"""The registry of known TVM deviations, as plain data (standard library only).

A deviation is a behaviour where TVM (or tvm-ffi) does not do what a seed document or upstream
promises. Each is listed here once: what was expected, what happens, the exception the test of
it raises, which test cases it covers (``tests``), and the versions it applies to (``tvm``,
``tvm_ffi``: PEP 440 version specifiers, not code, read by :mod:`tvm_conformance.pep440`).

This module imports neither pytest nor tvm, so tools run with any python3 read it::

    sys.path.insert(0, "<repo>/python")
    from tvm_conformance import deviation_registry
    deviation_registry.by_id()["ffi-keyerror-args"].tests

The pytest side (the strict xfail mark, the installed versions) is
:mod:`tvm_conformance.deviations`; ``docs/deviations.md`` is generated from this list by
``tools/deviations/deviations_doc.py``.

``tests`` entries are ``//pkg:target :: case``. In the case part ``*`` is the only wildcard
(any characters, possibly none); everything else, ``[`` and ``]`` included, is literal. A case
may xfail under a deviation only if one of its entries lists that case: keep each entry as
narrow as the truth, one per parametrized family that deviates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from tvm_conformance import pep440

# Kinds: "deviation" (a wrong result or error), "crash" (the process dies of ``signal``; the
# test runs the behaviour in a child process, tvm_conformance.crash_isolation).
KINDS = ("deviation", "crash")
# What a crash deviation's test raises; the xfail binds it to the recorded signal.
CRASH_RAISES = "tvm_conformance.crash_isolation.ProcessCrashed"

_ID = re.compile(r"[a-z0-9][a-z0-9-]*")
# Modules whose exception classes a worse failure can raise too: a deviation's `raises` is
# never one of them (a builtin RuntimeError is also TVM's InternalError, RPCError, OpError; a
# TypeError any bad call). Its test raises a dedicated class (tvm_conformance.observed) after
# checking the recorded behaviour itself.
BROAD_MODULES = ("builtins", "exceptions", "tvm", "tvm_ffi", "pytest", "_pytest")


def broad_raises(dotted: str) -> bool:
    """True if ``dotted`` names a builtin class, or a class of TVM, tvm-ffi or pytest."""
    module = dotted.rpartition(".")[0]
    return module == "" or any(
        module == broad or module.startswith(broad + ".") for broad in BROAD_MODULES
    )


_SIGNAL = re.compile(r"SIG[A-Z0-9]+")
_TEST = re.compile(r"(?P<label>//[A-Za-z0-9_./-]*:[A-Za-z0-9_.+-]+) :: (?P<case>\S.*)")


@dataclass(frozen=True)
class Deviation:
    """One known deviation of TVM from what a seed or upstream promises."""

    id: str  # short slug, lowercase with dashes: "ffi-keyerror-args"
    area: str  # section in docs/deviations.md: "ffi", "relax", "frontend", "robustness", ...
    expected: str  # what the seed or upstream expects
    actual: str  # what TVM does (name the TVM / tvm-ffi versions it was seen on)
    raises: str  # dotted name of the exception the test raises when it sees `actual`
    tests: tuple[str, ...]  # `//pkg:target :: case` patterns of every case marked with it
    kind: str = "deviation"  # or "crash"
    signal: str = ""  # kind "crash" only, and required there: "SIGSEGV", "SIGABRT"
    upstream: str = ""  # an upstream issue or PR, if one exists ("apache/tvm#12345")
    lanes: str = "all"  # human-readable scope for the doc: "all", "tvm-ffi >= 0.1.15"
    # PEP 440 specifiers of the apache-tvm / apache-tvm-ffi versions it applies to (">=0.27",
    # "<0.27,>=0.26"); "" any. A pre-release or dev build of a bound is on neither side of it:
    # write ">=0.1.15.dev0" where V's nightlies and rcs already show it (docs/deviations.md).
    tvm: str = ""
    tvm_ffi: str = ""


def parse_test(entry: str) -> tuple[str, str]:
    """``//pkg:target :: case`` -> (label, case pattern); a malformed entry is a ValueError."""
    match = _TEST.fullmatch(entry)
    if match is None:
        raise ValueError(f"tests entry {entry!r} is not '//pkg:target :: case'")
    return match["label"], match["case"]


@cache
def _case_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


def lists(dev: Deviation, label: str, case: str) -> bool:
    """True if one of ``dev.tests`` names test case ``case`` of target ``label``."""
    for entry in dev.tests:
        entry_label, pattern = parse_test(entry)
        if entry_label == label and _case_regex(pattern).fullmatch(case):
            return True
    return False


def parse_version(text: str) -> pep440.Version:
    """ "0.1.15.post2" -> its PEP 440 version; "0.28.dev123+g1a2b3c4" is a nightly of 0.28."""
    return pep440.Version.parse(text)


def parse_spec(spec: str) -> pep440.Specifier:
    """ ">=0.1.13,<0.1.15" -> its PEP 440 specifier; "" holds for any version. A spec that
    cannot be read is a ValueError naming it."""
    return pep440.Specifier.parse(spec)


def version_matches(version: pep440.Version | str, spec: str) -> bool:
    """True if ``version`` meets every clause of ``spec``, read as PEP 440 (pre-releases and
    dev builds admitted; a pre-release of a bound is on neither side of it: docs/deviations.md)."""
    return parse_spec(spec).contains(version)


def applies(
    dev: Deviation, tvm_version: pep440.Version | str, tvm_ffi_version: pep440.Version | str
) -> bool:
    """True if ``dev`` is expected with these apache-tvm and apache-tvm-ffi versions."""
    return version_matches(tvm_version, dev.tvm) and version_matches(tvm_ffi_version, dev.tvm_ffi)


def validate(dev: Deviation) -> None:
    """Raise ValueError naming what is wrong with one entry."""
    where = f"deviation {dev.id!r}"
    if not _ID.fullmatch(dev.id):
        raise ValueError(f"{where}: id must be lowercase letters, digits and dashes")
    if dev.kind not in KINDS:
        raise ValueError(f"{where}: kind must be one of {KINDS}, not {dev.kind!r}")
    if dev.kind == "crash":
        if not _SIGNAL.fullmatch(dev.signal):
            raise ValueError(
                f"{where}: kind crash needs signal ('SIGSEGV', ...), not {dev.signal!r}"
            )
        if dev.raises != CRASH_RAISES:
            raise ValueError(f"{where}: kind crash raises {CRASH_RAISES}, not {dev.raises!r}")
    elif dev.signal:
        raise ValueError(f"{where}: signal {dev.signal!r} is only for kind crash")
    if not re.fullmatch(r"[A-Za-z_][\w.]*\.[A-Za-z_]\w*", dev.raises):
        raise ValueError(f"{where}: raises must be a dotted class name, not {dev.raises!r}")
    if broad_raises(dev.raises):
        raise ValueError(
            f"{where}: raises {dev.raises!r} is a builtin or TVM class, which a worse failure "
            "raises too; raise a dedicated tvm_conformance.observed class after checking the "
            "recorded behaviour (tvm_conformance.observed.recorded)"
        )
    if not dev.tests:
        raise ValueError(f"{where}: names no test")
    for entry in dev.tests:
        parse_test(entry)
    for package, spec in (("tvm", dev.tvm), ("tvm_ffi", dev.tvm_ffi)):
        try:
            parse_spec(spec)
        except ValueError as err:
            raise ValueError(f"{where}: {package}: {err}") from None


def by_id() -> dict[str, Deviation]:
    """Every deviation by id, each validated; duplicate ids are an error."""
    table: dict[str, Deviation] = {}
    for dev in DEVIATIONS:
        if dev.id in table:
            raise ValueError(f"deviation id {dev.id!r} is listed twice")
        validate(dev)
        table[dev.id] = dev
    return table


# The registry. Keep entries grouped by area; each area's block is appended to independently.
DEVIATIONS: tuple[Deviation, ...] = (
    # --- ffi ---------------------------------------------------------------------------------
    Deviation(
        id="ffi-keyerror-args",
        area="ffi",
        expected="A Python KeyError('k') raised in a callback and caught after crossing C++ "
        "keeps its args: ('k',), as every other builtin exception does (seed 001).",
        actual="The args come back re-quoted: the error crosses as str(KeyError('k')), so "
        "Python sees KeyError(\"'k'\") (TVM 0.27 / tvm-ffi 0.1.14).",
        raises="tvm_conformance.observed.FidelityLost",
        tests=("//python/tests/ffi:error_test :: test_python_key_error_through_cpp_keeps_args",),
    ),
    Deviation(
        id="ffi-unregistered-error-class-lost",
        area="ffi",
        expected="A custom Python exception class raised in a callback arrives as that class "
        "after crossing C++ or the Relax VM, as builtin classes do (seeds 000, 001).",
        actual="tvm_ffi carries errors by kind name; a class not registered with "
        "tvm_ffi.register_error arrives as RuntimeError (message kept), even when it "
        "subclasses ValueError (TVM 0.27 / tvm-ffi 0.1.14).",
        raises="tvm_conformance.observed.ErrorClassLost",
        tests=(
            "//python/tests/ffi:error_test :: "
            "test_python_unregistered_subclass_through_cpp_keeps_class",
            "//python/tests/relax:vm_callback_error_test_llvm :: "
            "test_unregistered_custom_exception_keeps_its_class[llvm-UnregisteredError-*]",
            "//python/tests/relax:vm_callback_error_test_llvm :: "
            "test_unregistered_custom_exception_keeps_its_class[llvm-UnregisteredValueError-*]",
            "//python/tests/relax:vm_callback_error_test_cuda :: "
            "test_unregistered_custom_exception_keeps_its_class[cuda-UnregisteredError-*]",
            "//python/tests/relax:vm_callback_error_test_cuda :: "
            "test_unregistered_custom_exception_keeps_its_class[cuda-UnregisteredValueError-*]",
        ),
    ),
    Deviation(
        id="ffi-torch-neg-view-bit-ignored",
        area="ffi",
        expected="A torch negative view (`t._neg_view()`, is_neg() True) passed where C++ takes "
        "a Tensor is refused or read as the view reads (torch's own __dlpack__ does not "
        "refuse it in torch 2.13; a conjugate view it does refuse).",
        actual="tvm-ffi takes it zero-copy with the negative bit ignored: C++ sees the stored "
        "values, and testing.tensor_add_inplace(view of -1s, 1.0) leaves the view at -2s, "
        "not 0s; a silent wrong result (tvm-ffi 0.1.14.post0, torch 2.13 CPU).",
        raises="tvm_conformance.observed.ViewBitIgnored",
        tests=(
            "//python/tests/ffi:device_tensor_test_llvm :: "
            "test_torch_negative_view_is_refused_or_read_as_viewed[llvm]",
            "//python/tests/ffi:device_tensor_test_llvm :: "
            "test_torch_negative_view_written_in_place_by_tensorview_fixture[llvm]",
            "//python/tests/ffi:device_tensor_test_cuda :: "
            "test_torch_negative_view_is_refused_or_read_as_viewed[cuda]",
        ),
    ),
    Deviation(
        id="ffi-torch-conj-view-bit-ignored",
        area="ffi",
        expected="A torch complex conjugate view (`t.conj()`, is_conj() True) passed where C++ "
        "takes a Tensor is refused, as torch's own __dlpack__ refuses it (BufferError), or is "
        "read as the view reads.",
        actual="tvm-ffi takes it zero-copy with the conjugate bit ignored: C++ (testing.echo) "
        "sees and hands back the unconjugated values; a silent wrong result "
        "(tvm-ffi 0.1.14.post0, torch 2.13 CPU).",
        raises="tvm_conformance.observed.ViewBitIgnored",
        tests=(
            "//python/tests/ffi:device_tensor_test_llvm :: "
            "test_torch_conjugate_view_is_refused_or_read_as_viewed[llvm]",
            "//python/tests/ffi:device_tensor_test_cuda :: "
            "test_torch_conjugate_view_is_refused_or_read_as_viewed[cuda]",
        ),
    ),
    Deviation(
        id="runtime-tensor-copy-unchecked",
        area="ffi",
        expected="Tensor.copyfrom(t) and t.copyto(dest) between two TVM tensors refuse a "
        "destination of another shape (copyto's docstring: it 'must have same shape'), as "
        "copyfrom of a numpy array of another shape does (ValueError), and refuse or convert "
        "another dtype, as copyfrom of numpy converts it.",
        actual="Any destination of the same size in bytes is accepted and the bytes are copied "
        "as they are: a (2, 3) int32 tensor copied into a (3, 2) or (6,) one is reshaped, into "
        "a (2, 3) float32 one reinterpreted (1 becomes 1.4e-45); only another size in bytes is "
        "refused (TVM 0.27 / tvm-ffi 0.1.14).",
        raises="tvm_conformance.observed.TensorCopyUnchecked",
        tests=(
            "//python/tests/ffi:tensor_copy_test :: "
            "test_copy_to_another_shape_or_dtype_is_refused_or_converted[*]",
        ),
    ),
    Deviation(
        id="ffi-const-numpy-bool-refused",
        area="ffi",
        expected="tvm.runtime.const(np.bool_(True)) is a bool constant with value True, as "
        "tvm.runtime.const(True) is and as numpy int and float scalars keep their dtype.",
        actual="It raises InternalError 'First argument to tvm.tirx.const must be int, float, "
        "or bool, but instead received argument with type code ffi.OpaquePyObject': numpy.bool_ "
        "is no Python bool, and tvm-ffi passes it on as an opaque object (TVM 0.27.0.post1, "
        "tvm-ffi 0.1.14.post0).",
        raises="tvm_conformance.observed.NumpyScalarRefused",
        tests=(
            "//python/tests/ffi:scalar_types_test :: "
            "test_const_of_a_numpy_scalar_keeps_its_dtype_and_value[bool]",
        ),
    ),
    # --- relax -------------------------------------------------------------------------------
    Deviation(
        id="relax-callback-locals-lost",
        area="relax",
        expected="The innermost traceback frame of an error raised in a Python callback that "
        "the VM called keeps the callback's locals (seed 000: debug from the traceback).",
        actual="tvm_ffi rebuilds that frame: file, function and line are right, f_locals lacks "
        "the callback's variables (TVM 0.27 / tvm-ffi 0.1.14).",
        raises="tvm_conformance.observed.FidelityLost",
        tests=(
            "//python/tests/relax:vm_callback_error_test_llvm :: "
            "test_innermost_traceback_frame_keeps_callback_locals[llvm-*]",
            "//python/tests/relax:vm_callback_error_test_cuda :: "
            "test_innermost_traceback_frame_keeps_callback_locals[cuda-*]",
        ),
    ),
    Deviation(
        id="relax-callback-return-unchecked",
        area="relax",
        expected="A callback declared to return R.Tensor([4], 'float32') that returns an int, a "
        "str, None or a tensor of another shape is rejected by the VM with an error.",
        actual="No check is inserted on callback results: the VM hands back the Python value "
        "(or the wrong-shaped tensor) as the function's result; only a kernel that consumes it "
        "fails (TVM 0.27).",
        raises="tvm_conformance.observed.UncheckedValueAccepted",
        tests=(
            "//python/tests/relax:vm_callback_test_llvm :: "
            "test_callback_wrong_return_type_is_rejected[llvm-int-*]",
            "//python/tests/relax:vm_callback_test_llvm :: "
            "test_callback_wrong_return_type_is_rejected[llvm-str-*]",
            "//python/tests/relax:vm_callback_test_llvm :: "
            "test_callback_wrong_return_type_is_rejected[llvm-none-*]",
            "//python/tests/relax:vm_callback_test_llvm :: "
            "test_callback_wrong_shape_is_rejected[llvm-*]",
            "//python/tests/relax:vm_callback_test_cuda :: "
            "test_callback_wrong_return_type_is_rejected[cuda-int-*]",
            "//python/tests/relax:vm_callback_test_cuda :: "
            "test_callback_wrong_return_type_is_rejected[cuda-str-*]",
            "//python/tests/relax:vm_callback_test_cuda :: "
            "test_callback_wrong_return_type_is_rejected[cuda-none-*]",
            "//python/tests/relax:vm_callback_test_cuda :: "
            "test_callback_wrong_shape_is_rejected[cuda-*]",
        ),
    ),
    Deviation(
        id="relax-pure-callback-call-eliminated",
        area="relax",
        expected="A Relax function that calls an R.Callable argument for its side effect only "
        "(its result unused) calls it on every target, as it does on llvm (seed 000: Relax "
        "passes a tensor to a Python callback).",
        actual="relax.build's cuda pipeline takes the R.Callable as pure (the default) and "
        "removes the call as dead code: the function returns without calling the callback, in "
        "both exec modes, and the executable holds no vm.builtin.invoke_closure; llvm's keeps "
        "it. Declared impure (@R.function(pure=False), R.Callable(..., purity=False)) it is "
        "called. Seen on an H100 with TVM 0.27.0.post1 + tvm-ffi 0.1.14.post0 and TVM 0.26.0 "
        "+ tvm-ffi 0.1.13.post2; the build cases check the executable without a GPU.",
        raises="tvm_conformance.observed.CallbackNotCalled",
        tests=(
            "//python/tests/relax:vm_callback_test_cuda :: "
            "test_relax_passes_tensor_to_callback[cuda-*]",
            "//python/tests/relax:vm_callback_test_cuda :: "
            "test_pure_callback_call_survives_build[cuda-*]",
        ),
        lanes="all (cuda target only)",
    ),
    Deviation(
        id="relax-bool-max-min-refused",
        area="relax",
        expected="R.max / R.min of a bool tensor builds and reduces it as numpy does: max is "
        "'any', min is 'all', the result a bool tensor (R.sum and R.prod of the same mask "
        "build and give 'any' and 'all').",
        actual="relax.build raises InternalError 'Cannot decide min_value for type T.bool' "
        "(max_value for R.min) while legalizing the reduction: topi has no identity value "
        "for bool (TVM 0.27 / tvm-ffi 0.1.14).",
        raises="tvm_conformance.observed.BoolReductionRefused",
        tests=(
            "//python/tests/relax:vm_reduction_test_llvm :: "
            "test_max_and_min_of_a_bool_mask_are_any_and_all[*]",
        ),
    ),
    Deviation(
        id="relax-bool-arithmetic-build-fails",
        area="relax",
        expected="R.add / R.multiply / R.matmul / R.nn.relu / R.nn.conv2d of bool tensors, "
        "which their struct-info inference accepts, build and compute as numpy does on bool "
        "(or are refused with a clear error when the call is made); so do R.subtract, "
        "R.maximum, R.minimum, R.greater(_equal), R.less(_equal), R.outer, R.square, "
        "R.divide, R.floor_divide, R.floor_mod and R.mod (the op corpus's ops), "
        "R.nn.avg_pool1d/2d/3d, R.nn.adaptive_avg_pool2d and R.nn.nll_loss, R.cumsum and "
        "R.cumprod (walked from the op registry, issue 69), R.bucketize (with a reference "
        "since issue 69), and R.nn.conv1d, R.nn.conv3d, "
        "R.nn.conv1d_transpose, R.nn.conv2d_transpose and R.nn.conv3d_transpose with no "
        "out_dtype (with a float out_dtype they build and compute).",
        actual="relax.build raises InternalError 'Check failed: "
        "(t.MatchesCode(DLDataTypeCode::kDLFloat)) is false' while compiling them (TVM 0.27 "
        "with tvm-ffi 0.1.14 and 0.1.15, TVM 0.26); the four divisions say "
        "'(dtype.MatchesCode(...))'.",
        raises="tvm_conformance.observed.BoolArithmeticBuildFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-bool-arithmetic-build-fails-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-bool-argmax-max-pool-refused",
        area="relax",
        expected="R.argmax and R.nn.max_pool2d of a bool tensor, which their struct-info "
        "inference accepts, build and give numpy's argmax (the first True) as int64 and the "
        "window's 'any'; R.argmin, R.max, R.min, R.nn.max_pool1d and R.nn.max_pool3d "
        "likewise (numpy's argmin, any, all; the window's 'any').",
        actual="relax.build raises InternalError 'Cannot decide min_value for type T.bool' "
        "('max_value' for R.argmin and R.min) "
        "while legalizing it: topi has no identity value for bool (TVM 0.27 with tvm-ffi "
        "0.1.14 and 0.1.15, TVM 0.26).",
        raises="tvm_conformance.observed.BoolReductionRefused",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-bool-argmax-max-pool-refused-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-batch-norm-negative-axis",
        area="relax",
        expected="R.nn.batch_norm with a negative axis (its signature takes an int; the "
        "struct-info inference accepts -3 for NCHW data) builds and normalizes over that axis "
        "like the same non-negative axis.",
        actual="relax.build raises ValueError 'list.remove(x): x not in list' in the "
        "batch_norm legalizer, which looks the axis up without normalizing it (TVM 0.27 "
        "with tvm-ffi 0.1.14 and 0.1.15, TVM 0.26).",
        raises="tvm_conformance.observed.NegativeAxisLegalizeFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-batch-norm-negative-axis-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-layer-norm-center-scale-ignored",
        area="relax",
        expected="R.nn.layer_norm with center=False leaves beta out and with scale=False "
        "leaves gamma out (its documented arguments); so do R.nn.group_norm and "
        "R.nn.instance_norm (walked since issue 69).",
        actual="The built function still multiplies by gamma and adds beta: every element "
        "differs from the reference (seen: gamma 3, beta 10 applied with both False), both "
        "exec modes (TVM 0.27 with tvm-ffi 0.1.14 and 0.1.15, TVM 0.26); the legalization of "
        "all three passes neither attribute to topi.",
        raises="tvm_conformance.observed.CenterScaleIgnored",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-layer-norm-center-scale-ignored-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-int-mean-returns-int64",
        area="relax",
        expected="R.mean (and R.variance) of an int32 or bool tensor, and R.nn.avg_pool1d/2d/3d "
        "of an int32 tensor, return the dtype their struct-info inference declares (the "
        "input's, like R.sum), holding the result truncated.",
        actual="The compiled function returns an int64 tensor where the call's type declares "
        "int32 (bool), in both exec modes (TVM 0.27 with tvm-ffi 0.1.14 and 0.1.15, "
        "TVM 0.26).",
        raises="tvm_conformance.observed.UndeclaredDtypeReturned",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-int-mean-returns-int64-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-int-std-returns-float32",
        area="relax",
        expected="R.std of an int32, int64 or bool tensor returns the dtype its struct-info "
        "inference declares (the input's), holding the deviation truncated.",
        actual="The compiled function returns a float32 tensor where the call's type declares "
        "the integer (bool) dtype, in both exec modes (TVM 0.27 / tvm-ffi 0.1.14, TVM 0.26).",
        raises="tvm_conformance.observed.UndeclaredDtypeReturned",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-int-std-returns-float32-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-bool-unary-build-fails",
        area="relax",
        expected="R.abs, R.isfinite, R.isinf and R.isnan of a bool tensor, which their "
        "struct-info inference accepts, build and give numpy's answer (the value; True, "
        "False, False).",
        actual="relax.build raises InternalError 'Data type T.bool not supported for absolute "
        "op' ('finiteness ops', 'isnan op') while legalizing them (TVM 0.27 / tvm-ffi 0.1.14, "
        "TVM 0.26).",
        raises="tvm_conformance.observed.BoolOpBuildFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-bool-unary-build-fails-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-op-not-lowered-by-build",
        area="relax",
        expected="R.ewise_fma and R.wrap_param, registered ops with a Python function and a "
        "struct-info inference that accepts the call, build with relax.build's default "
        "pipeline (or are refused when the call is made).",
        actual="relax.build raises InternalError from the VM's code generator: 'CodeGenVM "
        "cannot emit this Relax operator directly' (CodeGenVMTIR in compiled mode; TVM 0.26: "
        "'CodeGenVM cannot handle this intrinsic now'): no pass of the default pipeline lowers "
        "them (TVM 0.27 "
        "with tvm-ffi 0.1.14 and 0.1.15, TVM 0.26).",
        raises="tvm_conformance.observed.VmCodegenMissing",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-op-not-lowered-by-build-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-bitwise-float-build-fails",
        area="relax",
        expected="R.bitwise_and / R.bitwise_or / R.bitwise_xor / R.bitwise_not / R.left_shift "
        "/ R.right_shift of float tensors (and the shifts of bool tensors), which their "
        "struct-info inference accepts, are refused when the call is made, or build.",
        actual="relax.build raises InternalError 'Expected integer argument as LHS of & "
        "operator (bitwise AND)' (|, ^, <<, >>; ~: 'Expected integer or boolean argument for ~ "
        "operator') while compiling the legalized TIR (TVM 0.27 "
        "with tvm-ffi 0.1.14 and 0.1.15, TVM 0.26).",
        raises="tvm_conformance.observed.DtypeBuildFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-bitwise-float-build-fails-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-int-cross-entropy-build-fails",
        area="relax",
        expected="R.nn.cross_entropy_with_logits of int32 / int64 tensors, which its "
        "struct-info inference accepts, builds and gives -sum(predictions * labels) / batch "
        "(its documented formula, truncated), or is refused when the call is made (bool: "
        "relax-bool-negation-out-of-range).",
        actual="relax.build raises RuntimeError 'TVM supports multiple types of integer "
        "divisions, please call div, indexdiv/indexmod, floordiv/floormod  or truncdiv/truncmod "
        "directly' while legalizing it (TVM 0.27 with tvm-ffi 0.1.14 and 0.1.15, TVM 0.26).",
        raises="tvm_conformance.observed.DtypeBuildFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-int-cross-entropy-build-fails-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-int-attention-build-fails",
        area="relax",
        expected="R.nn.attention and R.nn.attention_bias of int32 / int64 tensors, which their "
        "struct-info inference accepts, build and compute softmax(q k^T / sqrt(head size) "
        "[+ bias]) v, or are refused when the call is made.",
        actual="relax.build raises RuntimeError 'TVM supports multiple types of integer "
        "divisions, please call div, indexdiv/indexmod, floordiv/floormod  or truncdiv/truncmod "
        "directly' while legalizing its scale (TVM 0.27 with tvm-ffi 0.1.14 and 0.1.15, "
        "TVM 0.26).",
        raises="tvm_conformance.observed.DtypeBuildFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-int-attention-build-fails-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-grid-sample-grid-layout",
        area="relax",
        expected="R.image.grid_sample(data [N, C, H, W], grid [N, H_out, W_out, 2]) returns "
        "[N, C, H_out, W_out], as its docstring and its struct-info inference say (PyTorch's "
        "grid_sample).",
        actual="the legalization hands the grid to topi.image.grid_sample, which reads it as "
        "[N, 2, H_out, W_out]: a grid of [2, 13, 10, 2] gives an output of [2, 3, 10, 2], not "
        "[2, 3, 13, 10] (TVM 0.27 with tvm-ffi 0.1.14 and 0.1.15, TVM 0.26; the op "
        "corpus's grid_sampler_2d records show it through the PyTorch frontend).",
        raises="tvm_conformance.observed.GridLayoutMisread",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-grid-sample-grid-layout-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-int-grid-sample-build-fails",
        area="relax",
        expected="R.image.grid_sample of int32 / int64 / bool tensors, which its struct-info "
        "inference accepts, builds and samples as it does floats, or is refused when the call "
        "is made.",
        actual="relax.build raises RuntimeError 'TVM supports multiple types of integer "
        "divisions, please call div, indexdiv/indexmod, floordiv/floormod  or truncdiv/truncmod "
        "directly' while legalizing its grid's unnormalization (TVM 0.27 with tvm-ffi 0.1.14 "
        "and 0.1.15, TVM 0.26).",
        raises="tvm_conformance.observed.DtypeBuildFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-int-grid-sample-build-fails-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-int-roi-pool-build-fails",
        area="relax",
        expected="R.vision.roi_pool of int32 / int64 / bool maps, which its struct-info "
        "inference accepts, builds and gives each bin's maximum (ONNX's MaxRoiPool), or is "
        "refused when the call is made.",
        actual="relax.build raises RuntimeError 'Cannot convert infinity to BigInt' while "
        "legalizing it: topi's roi_pool starts each bin's maximum at -inf in the data's dtype "
        "(TVM 0.27 with tvm-ffi 0.1.14 and 0.1.15; 0.26 fails otherwise: "
        "relax-int-roi-pool-build-fails-tvm026, relax-int64-roi-pool-build-fails-tvm026).",
        raises="tvm_conformance.observed.DtypeBuildFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-int-roi-pool-build-fails-*]",
        ),
        tvm=">=0.27",
    ),
    Deviation(
        id="relax-int-roi-pool-build-fails-tvm026",
        area="relax",
        expected="R.vision.roi_pool of int32 / bool maps, which its struct-info inference "
        "accepts, builds and gives each bin's maximum (ONNX's MaxRoiPool), or is refused when "
        "the call is made.",
        actual="relax.build raises ValueError 'Literal value -9223372036854775808 exceeds "
        "minimum of int32' (bool: '... exceeds range of bool') while legalizing it: the -inf "
        "each maximum starts at became int64's minimum first (TVM 0.26; int64: "
        "relax-int64-roi-pool-build-fails-tvm026; 0.27: relax-int-roi-pool-build-fails).",
        raises="tvm_conformance.observed.DtypeBuildFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-int-roi-pool-build-fails-tvm026-*]",
        ),
        tvm="<0.27",
    ),
    Deviation(
        id="relax-int64-roi-pool-build-fails-tvm026",
        area="relax",
        expected="R.vision.roi_pool of int64 maps, which its struct-info inference accepts, "
        "builds and gives each bin's maximum (ONNX's MaxRoiPool), or is refused when the call "
        "is made.",
        actual="relax.build raises RuntimeError 'TVM supports multiple types of integer "
        "divisions, please call div, indexdiv/indexmod, floordiv/floormod  or truncdiv/truncmod "
        "directly' while legalizing it (TVM 0.26; 0.27: relax-int-roi-pool-build-fails).",
        raises="tvm_conformance.observed.DtypeBuildFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-int64-roi-pool-build-fails-tvm026-*]",
        ),
        tvm="<0.27",
    ),
    Deviation(
        id="relax-roi-align-build-fails-tvm026",
        area="relax",
        expected="R.vision.roi_align of float32 / float16 data, which its struct-info inference "
        "accepts, builds and gives torchvision's roi_align.",
        actual="relax.build raises InternalError 'Do not have a default for tirx.ProducerLoad' "
        "while lowering it, for every form (TVM 0.26; 0.27 builds it: float16 returns float32, "
        "relax-roi-align-float16-returns-float32).",
        raises="tvm_conformance.observed.DtypeBuildFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-roi-align-build-fails-tvm026-*]",
        ),
        tvm="<0.27",
    ),
    Deviation(
        id="relax-roi-align-float16-returns-float32",
        area="relax",
        expected="R.vision.roi_align of float16 data and boxes returns the float16 tensor its "
        "struct-info inference declares.",
        actual="The built function returns a float32 tensor (TVM 0.27 with tvm-ffi 0.1.14 "
        "and 0.1.15; 0.26 does not build it: relax-roi-align-build-fails-tvm026).",
        raises="tvm_conformance.observed.UndeclaredDtypeReturned",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-roi-align-float16-returns-float32-*]",
        ),
        tvm=">=0.27",
    ),
    Deviation(
        id="relax-bool-attention-build-fails",
        area="relax",
        expected="R.nn.attention and R.nn.attention_bias of bool tensors, which their "
        "struct-info inference accepts, build and compute as they do on 0 and 1, or are "
        "refused when the call is made.",
        actual="relax.build raises InternalError 'Cannot decide min_value for type T.bool' "
        "while compiling its softmax's maximum (TVM 0.27 with tvm-ffi 0.1.14 and 0.1.15, "
        "TVM 0.26).",
        raises="tvm_conformance.observed.DtypeBuildFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-bool-attention-build-fails-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-int-instance-norm-build-fails",
        area="relax",
        expected="R.nn.instance_norm of int32 / int64 / bool tensors is refused when the call "
        "is made, as R.nn.group_norm's struct-info inference refuses them ('expects that data "
        "must be float'), or builds.",
        actual="Its struct-info inference accepts them and relax.build raises InternalError "
        "'instance_norm: only support float32 and float16 for now' (TVM 0.27 with tvm-ffi "
        "0.1.14 and 0.1.15, TVM 0.26).",
        raises="tvm_conformance.observed.DtypeBuildFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-int-instance-norm-build-fails-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-one-hot-negative-axis",
        area="relax",
        expected="R.one_hot with a negative axis other than -1 (its signature takes an int; "
        "the struct-info inference accepts -2 for 2-d indices) builds and puts the new axis "
        "where numpy's moveaxis would.",
        actual="relax.build raises IndexError 'Index 2 out of bounds 2' while legalizing it: "
        "the axis is not normalized (TVM 0.27 with tvm-ffi 0.1.14 and 0.1.15, TVM 0.26).",
        raises="tvm_conformance.observed.NegativeAxisLegalizeFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-one-hot-negative-axis-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-bool-sort-unsupported",
        area="relax",
        expected="R.sort, R.argsort and R.topk of a bool tensor, which their struct-info "
        "inference accepts and relax.build builds, sort it as numpy does (False before True); "
        "R.median of one, which sorts it too, gives its median.",
        actual="The built function raises InternalError 'Unsupported input dtype: bool' when "
        "called: the runtime's sort kernel takes no bool (TVM 0.27 with tvm-ffi 0.1.14 and "
        "0.1.15, TVM 0.26).",
        raises="tvm_conformance.observed.DtypeRunFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-bool-sort-unsupported-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-median-keepdims-without-axis-shape",
        area="relax",
        expected="R.median without an axis and with keepdims=True returns the tensor of ones' "
        "shape its struct-info inference declares ((1, 1) for a 2-d input), as torch.median's "
        "value with every axis kept.",
        actual="The built function returns a (1,) tensor: the legalization flattens the input "
        "and keeps one axis (TVM 0.27 with tvm-ffi 0.1.14 and 0.1.15, TVM 0.26).",
        raises="tvm_conformance.observed.UndeclaredShapeReturned",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-median-keepdims-without-axis-shape-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-median-several-axes-out-of-bounds",
        area="relax",
        expected="R.median over two or more axes, which its struct-info inference accepts "
        "and declares one tensor for, returns the median of those axes' elements together.",
        actual="The legalization sorts along the first axis only and gathers at the middle of "
        "all the axes' elements, past that axis's end (an out-of-bounds read: the kit runs it "
        "in a child process), and returns that axis's (values, indices) pair where one tensor "
        "is declared (TVM 0.27 with tvm-ffi 0.1.14 and 0.1.15, TVM 0.26).",
        raises="tvm_conformance.observed.FirstAxisOnlyReduced",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-median-several-axes-out-of-bounds-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-bool-negation-out-of-range",
        area="relax",
        expected="R.negative and R.sign of a bool tensor, R.nn.cross_entropy_with_logits of "
        "bool tensors (a negated sum) and R.vision.get_valid_counts of bool boxes (its invalid "
        "rows are -1), which their struct-info inference accepts, build (or are refused when "
        "the call is made).",
        actual="relax.build raises ValueError '-1 exceeds range of bool' while legalizing "
        "them (TVM 0.27 / tvm-ffi 0.1.14, TVM 0.26).",
        raises="tvm_conformance.observed.BoolOpBuildFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-bool-negation-out-of-range-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-bool-comparison-invalid-llvm",
        area="relax",
        expected="R.equal and R.not_equal of bool tensors, which their struct-info inference "
        "accepts, build and compare as numpy does.",
        actual="relax.build raises InternalError from LLVM's verifier: TVM emits a floating "
        "comparison of i1 values ('fcmp oeq i1', 'fcmp one i1') (TVM 0.27 / tvm-ffi 0.1.14, "
        "TVM 0.26).",
        raises="tvm_conformance.observed.BoolOpBuildFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-bool-comparison-invalid-llvm-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-float16-math-intrinsic-missing",
        area="relax",
        expected="R.acos, R.acosh, R.asin, R.asinh, R.atan, R.atan2, R.cosh and R.sinh of "
        "float16 tensors, which their struct-info inference accepts, build on llvm (as R.sin, "
        "R.cos, R.exp and R.tanh of float16 do).",
        actual="relax.build raises InternalError 'unknown intrinsic ... tirx.acos' (and the "
        "others') while compiling them for llvm (TVM 0.27 / tvm-ffi 0.1.14, TVM 0.26).",
        raises="tvm_conformance.observed.MathIntrinsicMissing",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-float16-math-intrinsic-missing-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-int-float-only-build-fails",
        area="relax",
        expected="R.atan2, R.log_add_exp and R.power of int32, int64 or bool tensors, which "
        "their struct-info inference accepts, build (or are refused when the call is made).",
        actual="relax.build raises InternalError while compiling them: 'unknown intrinsic ... "
        "tirx.atan2', 'Check failed: (IsFloatType(a.ty())) is false', 'power only applies to "
        "float' (TVM 0.27 / tvm-ffi 0.1.14, TVM 0.26).",
        raises="tvm_conformance.observed.MathIntrinsicMissing",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-int-float-only-build-fails-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-clip-infinite-bound-int",
        area="relax",
        expected="R.clip of an int32, int64 or bool tensor between -inf and inf (the bounds "
        "the PyTorch frontends emit for clamp's open sides) builds and leaves the values.",
        actual="relax.build raises RuntimeError 'Cannot convert infinity to BigInt' while "
        "legalizing it (TVM 0.27 / tvm-ffi 0.1.14).",
        raises="tvm_conformance.observed.InfiniteIntBoundFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-clip-infinite-bound-int-*]",
        ),
        tvm=">=0.27",
    ),
    Deviation(
        id="relax-clip-infinite-bound-int-tvm026",
        area="relax",
        expected="R.clip of an int32 or bool tensor between -inf and inf (the bounds "
        "the PyTorch frontends emit for clamp's open sides) builds and leaves the values.",
        actual="relax.build raises ValueError 'Literal value -9223372036854775808 exceeds "
        "minimum of int32' (bool: '... exceeds range of bool') while legalizing it: -inf became "
        "int64's minimum first (TVM 0.26; 0.27 fails otherwise: relax-clip-infinite-bound-int; "
        "int64: relax-clip-infinite-bound-int64-min-tvm026).",
        raises="tvm_conformance.observed.InfiniteIntBoundFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-clip-infinite-bound-int-tvm026-*]",
        ),
        tvm="<0.27",
    ),
    Deviation(
        id="relax-clip-infinite-bound-int64-min-tvm026",
        area="relax",
        expected="R.clip of an int64 tensor between -inf and inf (the bounds "
        "the PyTorch frontends emit for clamp's open sides) builds and leaves the values.",
        actual="relax.build builds the int64 case (each point built alone; the int32 and bool ones "
        "fail: relax-clip-infinite-bound-int-tvm026), and every element comes back as "
        "-9223372036854775808, int64's minimum: the -inf bound was applied as a value (TVM 0.26).",
        raises="tvm_conformance.observed.InfiniteIntBoundClamped",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-clip-infinite-bound-int64-min-tvm026-*]",
        ),
        tvm="<0.27",
    ),
    Deviation(
        id="relax-prelu-scalar-alpha-assert",
        area="relax",
        expected="R.nn.prelu with a 0-d alpha (what the exported-program frontend emits for "
        "torch.nn.functional.prelu with a 0-d weight; the struct-info inference accepts it) "
        "builds and scales every negative value by it.",
        actual="relax.build fails with a bare AssertionError in topi.nn.prelu "
        "('assert len(slope.shape) == 1') while legalizing it (TVM 0.27 / tvm-ffi 0.1.14, "
        "TVM 0.26).",
        raises="tvm_conformance.observed.ScalarParameterRefused",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-prelu-scalar-alpha-assert-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-batch-norm-float16-returns-float32",
        area="relax",
        expected="R.nn.batch_norm of float16 data returns float16 (output, moving mean, moving "
        "variance), the dtype its struct-info inference declares.",
        actual="The compiled function returns three float32 tensors, in both exec modes (TVM "
        "0.27 / tvm-ffi 0.1.14).",
        raises="tvm_conformance.observed.UndeclaredDtypeReturned",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-batch-norm-float16-returns-float32-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-bool-adaptive-pool-returns-int32",
        area="relax",
        expected="R.nn.adaptive_avg_pool1d and R.nn.adaptive_avg_pool3d of a bool tensor return "
        "bool, the dtype their struct-info inference declares.",
        actual="The compiled function returns an int32 tensor (TVM 0.27 with tvm-ffi 0.1.14 and "
        "0.1.15, TVM 0.26; "
        "R.nn.adaptive_avg_pool2d of bool fails to build instead: "
        "relax-bool-arithmetic-build-fails).",
        raises="tvm_conformance.observed.UndeclaredDtypeReturned",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-bool-adaptive-pool-returns-int32-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-adaptive-avg-pool1d-default-output-size",
        area="relax",
        expected="R.nn.adaptive_avg_pool1d with output_size omitted or None (its default: the "
        "input's size, which its struct-info inference accepts) builds and averages over "
        "windows of one element.",
        actual="relax.build raises TypeError 'Cannot convert from type `ir.IntImm` to "
        "`Array<ir.Expr>`' while legalizing it (TVM 0.27 / tvm-ffi 0.1.14, TVM 0.26); only the "
        "whole walk (`--config=op_corpus`) calls it so.",
        raises="tvm_conformance.observed.DefaultArgumentBuildFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-adaptive-avg-pool1d-default-output-size-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-pixel-shuffle-legalize-missing",
        area="relax",
        expected="R.nn.pixel_shuffle (which the PyTorch frontends emit for "
        "torch.nn.functional.pixel_shuffle; its struct-info inference accepts every dtype) "
        "builds and rearranges the channels as torch does.",
        actual="relax.build raises AttributeError \"module 'tvm.topi.nn' has no attribute "
        "'pixel_shuffle'\" in every dtype: its legalization calls a topi function TVM does "
        "not have (TVM 0.27 with tvm-ffi 0.1.14 and 0.1.15, TVM 0.26).",
        raises="tvm_conformance.observed.LegalizationMissing",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-pixel-shuffle-legalize-missing-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-attention-var-len-legalize-unsupported",
        area="relax",
        expected="R.nn.attention_var_len (a registered op with a Python function; its "
        "struct-info inference accepts the call its docstring describes: queries, keys and "
        "values (1, total_seq_len, num_head, head_dim), int32 offsets and maximum lengths) "
        "builds with relax.build's default pipeline and attends each sequence alone, as "
        "R.nn.attention attends a batch of one.",
        actual="relax.build raises RuntimeError 'Legalization of attention_var_len op is not "
        "supported yet.' for every form and dtype, bytecode and compiled: the op has no "
        "legalization, only a CUTLASS offload (TVM 0.27 with tvm-ffi 0.1.14 and 0.1.15, TVM "
        "0.26).",
        raises="tvm_conformance.observed.LegalizationUnsupported",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-attention-var-len-legalize-unsupported-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-nms-suppresses-at-equal-iou",
        area="relax",
        expected="R.vision.non_max_suppression keeps MXNet box_nms's rule, whose arguments it "
        "keeps: a box is suppressed when its IoU with a selected box of its class is larger "
        "than iou_threshold (box_nms: 'Boxes with overlaps larger than overlap_thresh and "
        "smaller scores will be removed'; ONNX and torchvision suppress above the threshold "
        "too).",
        actual="The built function also suppresses a box whose IoU equals the threshold (topi's "
        "classic NMS tests iou >= iou_threshold): on the walk's boxes with whole-number "
        "corners, 6 of 16 float32 points select fewer boxes; every point equals box_nms with "
        "'larger than or equal' exactly, both exec modes (TVM 0.27 with tvm-ffi 0.1.14 and "
        "0.1.15, TVM 0.26).",
        raises="tvm_conformance.observed.EqualIouSuppressed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-nms-suppresses-at-equal-iou-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-nms-float16-run-fails",
        area="relax",
        expected="R.vision.non_max_suppression of float16 boxes, which its struct-info "
        "inference accepts and relax.build builds, runs and selects as for float32.",
        actual="The built function raises InternalError 'Check failed: dtype.bits == 32 ... "
        "Currently only supports input dtype to be float32.' when called: the runtime's "
        "argsort_nms kernel, which the legalization calls to order the scores, takes float32 "
        "only (TVM 0.27 with tvm-ffi 0.1.14 and 0.1.15, TVM 0.26).",
        raises="tvm_conformance.observed.DtypeRunFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-nms-float16-run-fails-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-all-class-nms-suppresses-at-equal-iou",
        area="relax",
        expected="R.vision.all_class_non_max_suppression keeps a box whose IoU with a selected "
        "box equals iou_threshold (ONNX NonMaxSuppression, which its docstring names, "
        "suppresses boxes whose IoU is greater than the threshold).",
        actual="The built function suppresses it: of two boxes with an IoU of exactly 0.5 and "
        "a threshold of 0.5 it selects the first only (topi's NMS loop tests iou >= "
        "iou_threshold), both exec modes (TVM 0.27 with tvm-ffi 0.1.14 and 0.1.15, TVM 0.26); "
        "a hand-picked case, the walk's inputs do not reach it.",
        raises="tvm_conformance.observed.EqualIouSuppressed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_all_class_nms_pinned_case[*-relax-all-class-nms-suppresses-at-equal-iou-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-all-class-nms-zero-iou-threshold-selects-nothing",
        area="relax",
        expected="R.vision.all_class_non_max_suppression with an iou_threshold of 0 selects the "
        "best box of each class and suppresses every box that overlaps a selected one (ONNX "
        "NonMaxSuppression: suppress where the IoU is greater than the threshold).",
        actual="The built function selects nothing: no rows and a count of 0 (topi's NMS runs "
        "its selection only when iou_threshold > 0), both exec modes (TVM 0.27 with tvm-ffi "
        "0.1.14 and 0.1.15, TVM 0.26); a hand-picked case, the walk's inputs do not reach it.",
        raises="tvm_conformance.observed.NothingSelected",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_all_class_nms_pinned_case[*-relax-all-class-nms-zero-iou-threshold-selects-"
            "nothing-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-nms-runtime-limit-ignored",
        area="relax",
        expected="R.vision.all_class_non_max_suppression with output_format 'onnx' selects "
        "at most max_output_boxes_per_class boxes per batch and class (ONNX "
        "NonMaxSuppression, which its docstring names), whether the limit is a constant or "
        "a tensor the function receives (a 0-d int64 of 1, in the walk).",
        actual="Given the limit as a function parameter, the built function ignores it: it "
        "returns the rows and count of an unlimited selection, every box of a class that "
        "passes the score and IoU tests (the legalization reads the limit only from a "
        "constant, else uses the number of boxes), float32 and float16, bytecode and compiled "
        "(TVM 0.27 with tvm-ffi 0.1.14 and 0.1.15, TVM 0.26).",
        raises="tvm_conformance.observed.LimitIgnored",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-nms-runtime-limit-ignored-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-bool-layout-transform-build-fails",
        area="relax",
        expected="R.layout_transform of a bool tensor by a map that pads nothing (the NCHW -> "
        "NCHW4c packing of a (1, 8, 2, 3) tensor; pad_value omitted or None), which its "
        "struct-info inference accepts, builds and moves each element where the map says, as "
        "it does for float16, float32, int32 and int64.",
        actual="relax.build raises ScheduleError (a RuntimeError) 'Buffer te_layout_transform "
        "has elements of type T.bool, but the transformation fills padding with "
        "T.index_map(lambda ...: (T.float32(0.0),)), which is of type float32', bytecode and "
        "compiled: the legalization's padding value is a float32 zero whatever the dtype, "
        "though nothing is padded (TVM 0.27 with tvm-ffi 0.1.14 and 0.1.15, TVM 0.26).",
        raises="tvm_conformance.observed.BoolOpBuildFailed",
        tests=(
            "//python/tests/relax:op_signatures_test_llvm :: "
            "test_known_deviation[llvm-relax-bool-layout-transform-build-fails-*]",
        ),
        tvm=">=0.26",
    ),
    # --- frontend ----------------------------------------------------------------------------
    Deviation(
        id="frontend-fx-batchnorm-batch-stats",
        area="frontend",
        expected="An eval-mode BatchNorm2d imported with from_fx normalizes by its running "
        "statistics, as PyTorch does (seed 003: outputs match PyTorch).",
        actual="from_fx emits relax.nn.batch_norm with training=True: the output is "
        "normalized by batch statistics and differs from PyTorch (TVM 0.27).",
        raises="tvm_conformance.observed.BatchStatisticsUsed",
        tests=(
            "//python/tests/frontend:normalization_test_llvm :: "
            "test_batch_norm_uses_running_stats[llvm-fx]",
            "//python/tests/frontend:normalization_test_cuda :: "
            "test_batch_norm_uses_running_stats[cuda-fx]",
        ),
    ),
    Deviation(
        id="frontend-ep-batchnorm-default-batch-stats",
        area="frontend",
        expected="An eval-mode BatchNorm2d imported with from_exported_program(..., "
        "run_ep_decomposition=False), where it reaches TVM as aten.batch_norm.default, "
        "normalizes by its running statistics, as PyTorch does and as the decomposed path does.",
        actual="TVM 0.27 translates aten.batch_norm.default as if it had "
        "_native_batch_norm_legit's arguments: training is forced on and its arguments are read "
        "one place off (momentum becomes eps), so the output is train-mode BatchNorm with "
        "eps=momentum and differs from PyTorch (the same in TVM 0.26).",
        raises="tvm_conformance.observed.BatchStatisticsUsed",
        tests=(
            "//python/tests/frontend:normalization_test_llvm :: "
            "test_batch_norm_uses_running_stats[llvm-exported_program_undecomposed]",
            "//python/tests/frontend:normalization_test_cuda :: "
            "test_batch_norm_uses_running_stats[cuda-exported_program_undecomposed]",
        ),
    ),
    Deviation(
        id="frontend-fx-module-avgpool2d-count-include-pad-ignored",
        area="frontend",
        expected="nn.AvgPool2d(3, 2, 1, count_include_pad=False) inside a model (an fx call_module "
        "node) imported with from_fx averages each window over its input elements only, as PyTorch "
        "does.",
        actual="from_fx's AvgPool2d module translator never reads count_include_pad: padded zeros "
        "count in the divisor (the output is the module's with count_include_pad=True; 0.556 off "
        "on a 4x4 of ones with AvgPool2d(3, 1, 1)). The functional form and both exported-program "
        "paths are right (TVM 0.27).",
        raises="tvm_conformance.observed.ArgumentReadAsDefault",
        tests=(
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-AvgPool2d-module-fx-count_include_pad=False]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-AvgPool2d-module-fx-count_include_pad=False]",
        ),
    ),
    Deviation(
        id="frontend-avgpool2d-divisor-override-ignored",
        area="frontend",
        expected="AvgPool2d(..., divisor_override=2) and F.avg_pool2d(..., divisor_override=2) "
        "divide each window's sum by 2, through every frontend.",
        actual="Every path drops divisor_override: from_fx (module and functional), "
        "from_exported_program decomposed and undecomposed all give the average with PyTorch's "
        "default divisor (the output is the op's with divisor_override=None; TVM 0.27).",
        raises="tvm_conformance.observed.ArgumentReadAsDefault",
        tests=(
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-AvgPool2d-*-divisor_override=2]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-AvgPool2d-*-divisor_override=2]",
        ),
    ),
    Deviation(
        id="frontend-ep-float64-model-dtype-mismatch",
        area="frontend",
        expected="A float64 model (nn.Linear(4, 2).double(), nn.Conv2d(2, 3, 3).double()) "
        "imports through from_exported_program and computes in float64, as PyTorch does.",
        actual="The linear and convolution translators fix out_dtype='float32': adding the "
        "float64 bias raises TypeError 'Binary operators must have the same datatype for both "
        "operands' at import (found by the op corpus, issue 54; TVM 0.27 and 0.26, either "
        "tvm-ffi).",
        raises="tvm_conformance.observed.TranslatorFailed",
        tests=(
            "//python/tests/frontend:corpus_findings_test_independent :: "
            "test_float64_model_imports_through_exported_program[*]",
        ),
    ),
    Deviation(
        id="frontend-fx-float64-parameters-refused",
        area="frontend",
        expected="A float64 model imports through from_fx and computes in float64.",
        actual="from_fx refuses it at import: ValueError 'Unsupported data type for model "
        "parameters: float64' (issue 54; TVM 0.27 and 0.26, either tvm-ffi).",
        raises="tvm_conformance.observed.DtypeRefused",
        tests=(
            "//python/tests/frontend:corpus_findings_test_independent :: "
            "test_float64_model_imports_through_fx[*]",
        ),
    ),
    Deviation(
        id="frontend-fx-prelu-requires-grad",
        area="frontend",
        expected="nn.Sequential(nn.PReLU()) in eval mode imports through from_fx.",
        actual="from_fx reads PReLU's weight with .numpy() on the parameter, which requires "
        'grad: RuntimeError "Can\'t call numpy() on Tensor that requires grad" at import '
        "(issue 54; TVM 0.27 and 0.26, either tvm-ffi).",
        raises="tvm_conformance.observed.TranslatorFailed",
        tests=(
            "//python/tests/frontend:corpus_findings_test_independent :: "
            "test_prelu_module_imports_through_fx",
        ),
    ),
    Deviation(
        id="frontend-ep-maxpool2d-indices-float-zeros",
        area="frontend",
        expected="nn.MaxPool2d(2, return_indices=True) through from_exported_program returns "
        "the pooled values and PyTorch's int64 indices.",
        actual="The values are right; the indices come back as float32 zeros (issue 54; TVM "
        "0.27 and 0.26, either tvm-ffi).",
        raises="tvm_conformance.observed.IndicesAsFloatZeros",
        tests=(
            "//python/tests/frontend:corpus_findings_test_llvm :: "
            "test_maxpool2d_indices_through_exported_program[llvm]",
            "//python/tests/frontend:corpus_findings_test_cuda :: "
            "test_maxpool2d_indices_through_exported_program[cuda]",
        ),
    ),
    Deviation(
        id="relax-argsort-0d-axis-out-of-bounds",
        area="frontend",
        expected="torch.argsort of a 0-d tensor (an OpInfo sample) imported and built for llvm "
        "returns index 0: tvm.contrib.sort.argsort, which Relax's argsort calls on CPU, writes "
        "0 to the 0-d output.",
        actual="tvm.contrib.sort.argsort turns axis -1 of a 0-d tensor into -1 (ndim + axis) "
        "and reads shape[-1], outside the shape: the output is left unwritten (a sentinel in "
        "it stays; the imported model returned 26, 35, 67 in the op corpus's batches) or the "
        "process dies of SIGSEGV in the call (1 in 12 on 0.27, 7 in 8 with the ffi_next "
        "tvm-ffi). Issue 54; TVM 0.27 and 0.26, either tvm-ffi. The op corpus does not run "
        "the case (its records say 'unsafe'): it could corrupt the other cases of its process.",
        raises="tvm_conformance.observed.KernelOutOfBounds",
        tests=(
            "//python/tests/frontend:corpus_findings_test_independent :: "
            "test_argsort_of_a_0d_tensor_writes_its_output",
        ),
    ),
    Deviation(
        id="frontend-fx-module-hardtanh-bounds-ignored",
        area="frontend",
        expected="nn.Hardtanh(-2.0, 3.0) inside a model (an fx call_module node) imported with "
        "from_fx clips to [-2, 3], as PyTorch does.",
        actual="from_fx's hardtanh translator reads min_val and max_val from the node's keywords "
        "only; a call_module node has none, so every Hardtanh module clips to (-1, 1), the "
        "defaults (the output is Hardtanh()'s). F.hardtanh and the exported-program paths are "
        "right (TVM 0.27).",
        raises="tvm_conformance.observed.ArgumentReadAsDefault",
        tests=(
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-Hardtanh-module-fx-*]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-Hardtanh-module-fx-*]",
        ),
    ),
    Deviation(
        id="frontend-fx-module-gelu-approximate-ignored",
        area="frontend",
        expected="nn.GELU(approximate='tanh') inside a model imported with from_fx computes the "
        "tanh approximation, as PyTorch does.",
        actual="from_fx's GELU module translator ignores approximate: the output is exact GELU's, "
        "approximate='none' (TVM 0.27). F.gelu(x, approximate='tanh') and the exported-program "
        "paths are right.",
        raises="tvm_conformance.observed.ArgumentReadAsDefault",
        tests=(
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-GELU-module-fx-approximate=tanh]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-GELU-module-fx-approximate=tanh]",
        ),
    ),
    Deviation(
        id="frontend-fx-module-conv2d-padding-mode-ignored",
        area="frontend",
        expected="nn.Conv2d(4, 6, 3, padding=1, padding_mode='reflect' or 'circular') inside a "
        "model imported with from_fx pads the input that way before the convolution, as PyTorch "
        "does.",
        actual="from_fx's Conv2d module translator ignores padding_mode: the input is padded with "
        "zeros (the output is the module's with padding_mode='zeros'; TVM 0.27). Both "
        "exported-program paths are right (torch.export records the pad).",
        raises="tvm_conformance.observed.ArgumentReadAsDefault",
        tests=(
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-Conv2d-module-fx-padding_mode=*]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-Conv2d-module-fx-padding_mode=*]",
        ),
    ),
    Deviation(
        id="frontend-softmax-dtype-ignored",
        area="frontend",
        expected="F.softmax(x, dim, 3, torch.float64) and F.log_softmax(..., torch.float64) return "
        "float64 results, as PyTorch does.",
        actual="from_fx and the undecomposed exported-program path drop the dtype argument: the "
        "output is float32, the call's without dtype (TVM 0.27). The decomposed path is right.",
        raises="tvm_conformance.observed.ArgumentReadAsDefault",
        tests=(
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-*Softmax-functional-fx-functional:dtype=float64]",
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-*Softmax-functional-exported_program_undecomposed-functional:dtype=float64]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-*Softmax-functional-fx-functional:dtype=float64]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-*Softmax-functional-exported_program_undecomposed-functional:dtype=float64]",
        ),
    ),
    Deviation(
        id="frontend-fx-module-layernorm-no-affine-typeerror",
        area="frontend",
        expected="nn.LayerNorm(8, elementwise_affine=False) inside a model imported with from_fx "
        "normalizes without weight and bias, as PyTorch does.",
        actual="The import fails: from_fx's LayerNorm module translator calls torch.ones_like on "
        "the normalized_shape tuple, raising TypeError \"ones_like(): argument 'input' (position "
        '1) must be Tensor, not tuple" (TVM 0.27).',
        raises="tvm_conformance.observed.TranslatorFailed",
        tests=(
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-LayerNorm-module-fx-elementwise_affine=False]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-LayerNorm-module-fx-elementwise_affine=False]",
        ),
    ),
    Deviation(
        id="frontend-layernorm-no-bias-keyerror",
        area="frontend",
        expected="nn.LayerNorm(8, bias=False), and LayerNorm without affine parameters through the "
        "undecomposed exported-program path (aten.layer_norm with weight or bias None), import and "
        "normalize as PyTorch does.",
        actual="The import fails with KeyError: None: from_fx's LayerNorm module translator looks "
        "the missing bias up among the parameters, and the undecomposed path's aten.layer_norm "
        "translator looks up a None weight or bias (TVM 0.27).",
        raises="tvm_conformance.observed.TranslatorFailed",
        tests=(
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-LayerNorm-module-fx-bias=False]",
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-LayerNorm-*-exported_program_undecomposed-elementwise_affine=False]",
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-LayerNorm-*-exported_program_undecomposed-bias=False]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-LayerNorm-module-fx-bias=False]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-LayerNorm-*-exported_program_undecomposed-elementwise_affine=False]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-LayerNorm-*-exported_program_undecomposed-bias=False]",
        ),
    ),
    Deviation(
        id="frontend-conv2d-padding-same-fails",
        area="frontend",
        expected="nn.Conv2d(..., padding='same') and F.conv2d(..., padding='same') import through "
        "every frontend, as torch.export's decomposed path shows they can.",
        actual="from_fx passes the string 'same' on to relax.op.nn.conv2d (TypeError \"Mismatched "
        'type on argument #3 ... Expected `Array<int>` but got `ffi.SmallStr`"), and the '
        'undecomposed path has no translator for aten.conv2d.padding (AssertionError "Unsupported '
        "function types ['conv2d.padding']\"; TVM 0.27).",
        raises="tvm_conformance.observed.TranslatorFailed",
        tests=(
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-Conv2d-*-fx-padding=same]",
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-Conv2d-*-exported_program_undecomposed-padding=same]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-Conv2d-*-fx-padding=same]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-Conv2d-*-exported_program_undecomposed-padding=same]",
        ),
    ),
    Deviation(
        id="frontend-fx-functional-keywords-ignored",
        area="frontend",
        expected="from_fx reads a functional op's arguments whether fx recorded them by "
        "position or by keyword, as PyTorch does: F.conv2d(x, w, b, stride=2, padding=1), "
        "F.conv2d(x, w, bias=b), F.linear(x, w, bias=b), F.layer_norm(x, shape, w, b) and "
        "F.layer_norm(x, shape, eps=0.1), F.max_pool2d(x, 3, 2, 1) match PyTorch (seed 003), "
        "and so does every argument of F.layer_norm and F.max_pool2d in constructor_arguments_test "
        "(F.max_pool2d(x, 3, 2, 1, 1, True): ceil_mode gives 4x4 from 6x6).",
        actual="TVM 0.27's (and 0.26's) from_fx reads these ops' arguments from node.args only, so "
        "every argument fx recorded as a keyword is dropped silently: the output is the "
        "call's without them (stride 1 and padding 0, no bias, unit weight and zero bias, eps"
        " 1e-5, stride = kernel and padding 0). F.layer_norm and F.max_pool2d record their "
        "arguments as keywords even when written positionally (fx traces them through their "
        "torch-function dispatch).",
        raises="tvm_conformance.observed.KeywordArgumentsIgnored",
        tests=(
            "//python/tests/frontend:functional_keywords_test_llvm :: "
            "test_functional_arguments_are_read[llvm-conv2d_keyword_stride_padding]",
            "//python/tests/frontend:functional_keywords_test_llvm :: "
            "test_functional_arguments_are_read[llvm-conv2d_keyword_bias]",
            "//python/tests/frontend:functional_keywords_test_llvm :: "
            "test_functional_arguments_are_read[llvm-linear_keyword_bias]",
            "//python/tests/frontend:functional_keywords_test_llvm :: "
            "test_functional_arguments_are_read[llvm-layer_norm_weight_bias]",
            "//python/tests/frontend:functional_keywords_test_llvm :: "
            "test_functional_arguments_are_read[llvm-layer_norm_eps]",
            "//python/tests/frontend:functional_keywords_test_llvm :: "
            "test_functional_arguments_are_read[llvm-max_pool2d_stride_padding]",
            "//python/tests/frontend:functional_keywords_test_cuda :: "
            "test_functional_arguments_are_read[cuda-conv2d_keyword_stride_padding]",
            "//python/tests/frontend:functional_keywords_test_cuda :: "
            "test_functional_arguments_are_read[cuda-conv2d_keyword_bias]",
            "//python/tests/frontend:functional_keywords_test_cuda :: "
            "test_functional_arguments_are_read[cuda-linear_keyword_bias]",
            "//python/tests/frontend:functional_keywords_test_cuda :: "
            "test_functional_arguments_are_read[cuda-layer_norm_weight_bias]",
            "//python/tests/frontend:functional_keywords_test_cuda :: "
            "test_functional_arguments_are_read[cuda-layer_norm_eps]",
            "//python/tests/frontend:functional_keywords_test_cuda :: "
            "test_functional_arguments_are_read[cuda-max_pool2d_stride_padding]",
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-LayerNorm-functional-fx-base]",
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-LayerNorm-functional-fx-normalized_shape=*]",
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-LayerNorm-functional-fx-eps=*]",
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-LayerNorm-functional-fx-bias=False]",
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-MaxPool2d-functional-fx-*]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-LayerNorm-functional-fx-base]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-LayerNorm-functional-fx-normalized_shape=*]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-LayerNorm-functional-fx-eps=*]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-LayerNorm-functional-fx-bias=False]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-MaxPool2d-functional-fx-*]",
        ),
    ),
    # --- lanes (version-specific) ------------------------------------------------------------
    Deviation(
        id="ffi-save-json-ir-node-segfault",
        area="lanes",
        kind="crash",
        expected="tvm.ir.save_json / load_json round-trip IR nodes (a tirx expression, an "
        "IRModule), as they do with the pinned tvm-ffi 0.1.14.post0 (seed 001).",
        actual="With apache-tvm-ffi 0.1.15.post2 (and TVM 0.27.0.post1), save_json on any IR "
        "node kills the process with SIGSEGV; the test runs it in a child process.",
        raises="tvm_conformance.crash_isolation.ProcessCrashed",
        tests=(
            "//python/tests/ffi:serialization_test :: "
            "test_ir_node_and_irmodule_json_round_trip_in_subprocess",
        ),
        lanes="ffi_next",
        tvm_ffi=">=0.1.15",
        signal="SIGSEGV",
    ),
    Deviation(
        id="ffi-int-beyond-int64-overflow",
        area="lanes",
        expected="A Python int beyond int64 crosses the FFI as ffi.BigInt: an Any parameter gives "
        "it back exactly, and a typed int parameter rejects it with a TypeError naming the "
        "signature (tvm-ffi 0.1.14 and later, the default lane).",
        actual="With apache-tvm-ffi 0.1.13.post2 (TVM 0.26.0) the conversion fails at the "
        "Python boundary: OverflowError 'Python int too large to convert to C long', naming "
        "neither the function nor the argument.",
        raises="tvm_conformance.observed.IntBeyondInt64Overflowed",
        tests=(
            "//python/tests/ffi:any_test :: "
            "test_int_beyond_int64_through_echo_round_trips_as_bigint",
            "//python/tests/ffi:function_test :: test_int_beyond_int64_rejected_by_int_parameter",
            "//python/tests/ffi:function_test :: test_int_beyond_int64_in_array_rejected",
            "//python/tests/robustness:fixture_bad_input_test :: "
            "test_int_beyond_int64_into_fixture_is_type_error[myadd]",
            "//python/tests/robustness:fixture_bad_input_test :: "
            "test_int_beyond_int64_into_fixture_is_type_error[tensor_arange]",
            "//python/tests/robustness:fixture_bad_input_test :: "
            "test_int_beyond_int64_into_fixture_is_type_error[array_sum]",
            "//python/tests/robustness:fixture_bad_input_test :: "
            "test_int_beyond_int64_into_fixture_is_type_error[make_adder]",
        ),
        lanes="tvm_prev",
        tvm_ffi="<0.1.14",
    ),
    Deviation(
        id="ffi-const-large-uint64-as-call",
        area="lanes",
        expected="tvm.runtime.const(np.uint64(2**64 - 1)) is a uint64 integer constant whose "
        "value is 2**64 - 1, as TVM 0.27 gives.",
        actual="TVM 0.26.0 returns the call T.large_uint_imm(T.uint32(low), T.uint32(high)) of "
        "its 32-bit halves (exact, but no constant: it has no .value) for a uint64 beyond "
        "int64's range.",
        raises="tvm_conformance.observed.LargeUintAsCall",
        tests=(
            "//python/tests/ffi:scalar_types_test :: "
            "test_const_of_a_numpy_scalar_keeps_its_dtype_and_value[uint64]",
        ),
        lanes="tvm_prev",
        tvm="<0.27",
    ),
    Deviation(
        id="frontend-mean-dtype-ignored",
        area="lanes",
        expected="torch.mean(x, 1, False, dtype=torch.float64) returns a float64 mean, as PyTorch "
        "does and TVM 0.27 does through every frontend.",
        actual="TVM 0.26.0 drops the dtype argument through from_fx and both exported-program "
        "paths: the output is float32, the mean without dtype.",
        raises="tvm_conformance.observed.ArgumentReadAsDefault",
        tests=(
            "//python/tests/frontend:constructor_arguments_test_llvm :: "
            "test_argument_is_translated[llvm-mean-functional-*-functional:dtype=float64]",
            "//python/tests/frontend:constructor_arguments_test_cuda :: "
            "test_argument_is_translated[cuda-mean-functional-*-functional:dtype=float64]",
        ),
        lanes="tvm_prev",
        tvm="<0.27",
    ),
    # --- robustness (crashers, exception fidelity) --------------------------------------------
    Deviation(
        id="ffi-numpy-bool-opaque",
        area="robustness",
        expected="A numpy.bool_ scalar crosses the FFI as a bool, as numpy integer and floating "
        "scalars cross as int and float (C++ sees a bool).",
        actual="It crosses as ffi.OpaquePyObject: C++ cannot read it as a bool, and Python gets "
        "the numpy.bool_ object back (tvm-ffi 0.1.13 - 0.1.15).",
        raises="tvm_conformance.observed.OpaqueConversion",
        tests=(
            "//python/tests/robustness:roundtrip_property_test :: test_numpy_bool_arrives_as_bool",
        ),
    ),
    Deviation(
        id="ffi-numpy-timedelta64-typeerror",
        area="robustness",
        expected="A numpy.timedelta64 scalar with a unit crosses the FFI like one without (an "
        "int count), or as an opaque object.",
        actual="tvm-ffi treats it as an integer (it subclasses numpy.signedinteger) and calls "
        "int() on it, which raises TypeError 'int() argument must be ... not "
        "datetime.timedelta' naming neither the function nor the argument.",
        raises="tvm_conformance.observed.Timedelta64IntConversionFailed",
        tests=(
            "//python/tests/robustness:roundtrip_property_test :: "
            "test_numpy_timedelta64_with_unit_arrives_as_int_count",
        ),
    ),
    Deviation(
        id="ffi-builtin-exception-type-lost",
        area="robustness",
        expected="A builtin exception raised in a Python callback arrives as its own class after "
        "crossing C++ or the Relax VM (seed 000: builtin types keep their type).",
        actual="Only tvm-ffi's registered kinds keep their class (AssertionError, AttributeError, "
        "IndexError, KeyError, MemoryError, RuntimeError, TypeError, ValueError); every other "
        "Exception subclass (OSError and its family, ZeroDivisionError, StopIteration, "
        "NotImplementedError, the warnings, ...) arrives as RuntimeError with its message "
        "(tvm-ffi 0.1.13 - 0.1.15; on CPython 3.10 to 3.13, whose builtins differ: exception "
        "groups from 3.11, PythonFinalizationError and _IncompleteInputError from 3.13).",
        raises="tvm_conformance.observed.FidelityLost",
        tests=(
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[ArithmeticError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[BlockingIOError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[BrokenPipeError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[BufferError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[BytesWarning-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[ChildProcessError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[ConnectionAbortedError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[ConnectionError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[ConnectionRefusedError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[ConnectionResetError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[DeprecationWarning-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[EOFError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[EncodingWarning-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[Exception-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[ExceptionGroup-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[FileExistsError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[FileNotFoundError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[FloatingPointError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[FutureWarning-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[ImportError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[ImportWarning-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[IndentationError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[InterruptedError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[IsADirectoryError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[LookupError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[ModuleNotFoundError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[NameError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[NotADirectoryError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[NotImplementedError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[OSError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[OverflowError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[PendingDeprecationWarning-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[PermissionError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[ProcessLookupError-*]",
            # CPython 3.13's new builtins (seen on 3.13.0): cases of 3.13 and later only.
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[PythonFinalizationError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[_IncompleteInputError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[RecursionError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[ReferenceError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[ResourceWarning-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[RuntimeWarning-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[StopAsyncIteration-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[StopIteration-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[SyntaxError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[SyntaxWarning-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[SystemError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[TabError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[TimeoutError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[UnboundLocalError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[UnicodeDecodeError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[UnicodeEncodeError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[UnicodeError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[UnicodeTranslateError-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[UnicodeWarning-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[UserWarning-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[Warning-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[ZeroDivisionError-*]",
        ),
    ),
    Deviation(
        id="ffi-base-exception-becomes-runtime-error",
        area="robustness",
        expected="KeyboardInterrupt, SystemExit, GeneratorExit (BaseException subclasses that "
        "`except Exception` must not catch) raised in a callback arrive as themselves.",
        actual="They arrive as RuntimeError, which `except Exception` catches: a Ctrl-C or "
        "sys.exit() inside a callback becomes an ordinary error (tvm-ffi 0.1.13 - 0.1.15).",
        raises="tvm_conformance.observed.FidelityLost",
        tests=(
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[BaseException-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[BaseExceptionGroup-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[GeneratorExit-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[KeyboardInterrupt-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_builtin_exception_keeps_type[SystemExit-*]",
        ),
    ),
    Deviation(
        id="ffi-exception-args-stringified",
        area="robustness",
        expected="ValueError('a', 2, None) raised in a callback keeps its args after crossing.",
        actual="The error crosses as its message: args become one str, \"('a', 2, None)\" "
        "(tvm-ffi 0.1.13 - 0.1.15).",
        raises="tvm_conformance.observed.FidelityLost",
        tests=(
            "//python/tests/robustness:exception_fidelity_test :: test_several_args_are_kept[cpp]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_several_args_are_kept[relax_vm]",
        ),
    ),
    Deviation(
        id="ffi-exception-cause-notes-attrs-lost",
        area="robustness",
        expected="An exception raised in a callback keeps its __cause__, __notes__ and custom "
        "attributes after crossing C++ or the Relax VM.",
        actual="A new exception object is built from kind and message: __cause__ is None, "
        "__notes__ and custom attributes are gone (tvm-ffi 0.1.13 - 0.1.15).",
        raises="tvm_conformance.observed.FidelityLost",
        tests=(
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_cause_notes_and_attributes_are_kept[ValueError with __cause__-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_cause_notes_and_attributes_are_kept[ValueError with __notes__-*]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_cause_notes_and_attributes_are_kept[ValueError with a custom attribute-*]",
        ),
    ),
    Deviation(
        id="ffi-caught-error-not-picklable",
        area="robustness",
        expected="An exception caught after crossing C++ or the Relax VM pickles with its type "
        "and args, as it does with tvm-ffi 0.1.14 and later.",
        actual="With apache-tvm-ffi 0.1.13.post2 (TVM 0.26.0) it carries an ffi.Error in its "
        "__dict__ (__tvm_ffi_error__); pickle.dumps raises TypeError 'Type `ffi.Error` does not "
        "support ToJSONGraph'.",
        raises="tvm_conformance.observed.FidelityLost",
        tests=(
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_every_caught_exception_pickles[cpp]",
            "//python/tests/robustness:exception_fidelity_test :: "
            "test_every_caught_exception_pickles[relax_vm]",
        ),
        lanes="tvm_prev",
        tvm_ffi="<0.1.14",
    ),
    # Crashers: each test runs the reproducer in a child process (tvm_conformance.crash_isolation)
    # and expects the clear error; today the child dies, so the test is a strict xfail raising
    # ProcessCrashed. Measured alike with tvm-ffi 0.1.14.post0, 0.1.15.post2 and 0.1.13.post2.
    Deviation(
        id="robust-none-for-function-segfault",
        area="robustness",
        kind="crash",
        expected="None passed where a C++ function takes an ffi::Function is rejected with a "
        "TypeError naming the signature, as an int there is.",
        actual="The process dies of SIGSEGV: `callhello(None)`, `testing.call_n_times(None, 3)` "
        "and `testing.invoke(None)` (tvm-ffi 0.1.13.post2, 0.1.14.post0, 0.1.15.post2).",
        raises="tvm_conformance.crash_isolation.ProcessCrashed",
        tests=(
            "//python/tests/robustness:known_crashers_test :: "
            "test_none_where_cpp_function_expected_is_type_error[callhello]",
            "//python/tests/robustness:known_crashers_test :: "
            "test_none_where_cpp_function_expected_is_type_error[call_n_times]",
            "//python/tests/robustness:known_crashers_test :: "
            "test_none_where_cpp_function_expected_is_type_error[invoke]",
        ),
        signal="SIGSEGV",
    ),
    Deviation(
        id="robust-relax-none-callable-segfault",
        area="robustness",
        kind="crash",
        expected="None passed to a Relax function parameter annotated R.Callable is rejected "
        "with an error before or when the VM calls it.",
        actual="The process dies of SIGSEGV in both VM exec modes, bytecode and compiled "
        "(TVM 0.26 / 0.27, tvm-ffi 0.1.13.post2, 0.1.14.post0, 0.1.15.post2).",
        raises="tvm_conformance.crash_isolation.ProcessCrashed",
        tests=(
            "//python/tests/robustness:known_crashers_test :: "
            "test_none_for_relax_callable_parameter_is_error[bytecode]",
            "//python/tests/robustness:known_crashers_test :: "
            "test_none_for_relax_callable_parameter_is_error[compiled]",
        ),
        signal="SIGSEGV",
    ),
    Deviation(
        id="robust-deep-callback-recursion-segfault",
        area="robustness",
        kind="crash",
        expected="Python -> C++ -> Python recursion (a callback calling testing.invoke on "
        "itself) stops at the recursion limit with RecursionError, as pure Python does.",
        actual="The process dies of SIGSEGV before RecursionError is raised (default recursion "
        "limit 1000; tvm-ffi 0.1.13.post2, 0.1.14.post0, 0.1.15.post2).",
        raises="tvm_conformance.crash_isolation.ProcessCrashed",
        tests=(
            "//python/tests/robustness:known_crashers_test :: "
            "test_deep_python_cpp_recursion_is_recursion_error",
        ),
        signal="SIGSEGV",
    ),
    Deviation(
        id="robust-lone-surrogate-error-segfault",
        area="robustness",
        kind="crash",
        expected="A Python exception whose message holds a lone surrogate (chr(0xd800), as "
        "os.fsdecode gives for undecodable file names) crosses C++ as that exception.",
        actual="The process dies of SIGSEGV when the message is converted for C++ "
        "(tvm-ffi 0.1.13.post2, 0.1.14.post0, 0.1.15.post2). An OSError whose filename holds "
        "one crosses without a crash (as RuntimeError).",
        raises="tvm_conformance.crash_isolation.ProcessCrashed",
        tests=(
            "//python/tests/robustness:known_crashers_test :: "
            "test_exception_message_with_lone_surrogate_crosses_cpp",
        ),
        signal="SIGSEGV",
    ),
    Deviation(
        id="robust-self-referential-container-segfault",
        area="robustness",
        kind="crash",
        expected="Converting a list or dict that contains itself (an argument of an Any "
        "parameter, or tvm.runtime.convert) raises an error (ValueError or RecursionError).",
        actual="The process dies of SIGSEGV (unbounded recursion in the conversion; "
        "tvm-ffi 0.1.13.post2, 0.1.14.post0, 0.1.15.post2).",
        raises="tvm_conformance.crash_isolation.ProcessCrashed",
        tests=(
            "//python/tests/robustness:known_crashers_test :: "
            "test_self_referential_container_is_error[list-echo]",
            "//python/tests/robustness:known_crashers_test :: "
            "test_self_referential_container_is_error[dict-echo]",
            "//python/tests/robustness:known_crashers_test :: "
            "test_self_referential_container_is_error[list-convert]",
        ),
        signal="SIGSEGV",
    ),
    Deviation(
        id="robust-deep-nesting-segfault",
        area="robustness",
        kind="crash",
        expected="A list or dict nested 50,000 deep passed to an Any parameter converts, or "
        "raises RecursionError / ValueError.",
        actual="The process dies of SIGSEGV (C stack overflow in the recursive conversion; "
        "tvm-ffi 0.1.13.post2, 0.1.14.post0, 0.1.15.post2).",
        raises="tvm_conformance.crash_isolation.ProcessCrashed",
        tests=(
            "//python/tests/robustness:known_crashers_test :: "
            "test_deeply_nested_container_converts_or_is_error[list]",
            "//python/tests/robustness:known_crashers_test :: "
            "test_deeply_nested_container_converts_or_is_error[dict]",
        ),
        signal="SIGSEGV",
    ),
    Deviation(
        id="robust-duplicate-global-registration-abort",
        area="robustness",
        kind="crash",
        expected="Loading a second library that registers global names already registered "
        "(here a copy of libhello.so: `myadd`, `callhello`) fails the load with an error.",
        actual="The process aborts (SIGABRT): the registration error is thrown from a static "
        "initialiser, ending in std::terminate ('Two GlobalDef().def registrations for the "
        "same function'; tvm-ffi 0.1.13.post2, 0.1.14.post0, 0.1.15.post2).",
        raises="tvm_conformance.crash_isolation.ProcessCrashed",
        tests=(
            "//python/tests/robustness:known_crashers_test :: "
            "test_second_library_with_same_global_names_fails_to_load",
        ),
        signal="SIGABRT",
    ),
    Deviation(
        id="robust-requires-grad-tensor-accepted",
        area="robustness",
        expected="A torch tensor with requires_grad=True passed where a Tensor is required is "
        "refused, as torch's own __dlpack__ refuses it (BufferError 'Can't export tensors "
        "that require gradient, use tensor.detach()').",
        actual="tvm-ffi takes it zero-copy; testing.tensor_add_inplace writes it behind "
        "autograd's back (tvm-ffi 0.1.13.post2, 0.1.14.post0, 0.1.15.post2, torch 2.13).",
        raises="tvm_conformance.observed.UncheckedValueAccepted",
        tests=(
            "//python/tests/robustness:fixture_bad_input_test :: "
            "test_requires_grad_torch_tensor_into_tensorview_fixture_is_rejected",
        ),
    ),
    # --- deployment --------------------------------------------------------------------------
    Deviation(
        id="deploy-relax-import-unclear",
        area="deploy",
        expected="In runtime-only TVM (TVM_USE_RUNTIME_LIB=1, or no compiler library), "
        "`from tvm import relax` fails with an error saying the compiler library is not "
        "loaded (an ImportError or RuntimeError naming it), as a deployed program needs.",
        actual="It raises AttributeError: module 'tvm.ir._ffi_api' has no attribute "
        "'RegisterOpAttr', from deep inside the import (TVM 0.27.0.post1 and 0.26.0).",
        raises="tvm_conformance.observed.CompilerAbsenceUnclear",
        tests=(
            "//python/tests/deploy:runtime_only_api_test :: "
            "test_relax_import_says_the_compiler_is_absent",
        ),
    ),
    Deviation(
        id="deploy-runtime-cuda-loader-not-registered",
        area="deploy",
        expected="Runtime-only TVM (TVM_USE_RUNTIME_LIB=1, no compiler library) registers the "
        "CUDA runtime it ships: after `import tvm`, tvm.cuda(0) exists on a GPU machine and "
        "tvm.runtime.load_module loads a cuda artefact.",
        actual="`import tvm` never opens libtvm_runtime_cuda.so in runtime-only mode (TVM "
        "0.27.0.post1 and 0.26.0; with the compiler it does): ffi.Module.load_from_bytes.cuda "
        "is not registered, tvm.cuda(0).exist is False on an H100, and load_module raises "
        "RuntimeError 'Library binary was created using {cuda} but a loader of that name is "
        "not registered' until the process loads the sidecar itself.",
        raises="tvm_conformance.observed.LoaderNotRegistered",
        tests=(
            "//python/tests/deploy:runtime_only_test_cuda :: "
            "test_runtime_alone_registers_its_cuda_loader",
        ),
        lanes="all (cuda variant)",
    ),
    Deviation(
        id="deploy-compile-unclear",
        area="deploy",
        expected="In runtime-only TVM, reaching for tvm.compile (with an IRModule, the only "
        "input it takes) fails with an error saying the compiler library is not loaded.",
        actual="tvm.IRModule() raises AttributeError: module 'tvm.ir._ffi_api' has no "
        "attribute 'IRModule' (tvm.target.Target likewise: no attribute 'Target'); nothing "
        "names the missing compiler (TVM 0.27.0.post1 and 0.26.0).",
        raises="tvm_conformance.observed.CompilerAbsenceUnclear",
        tests=(
            "//python/tests/deploy:runtime_only_api_test :: "
            "test_compile_says_the_compiler_is_absent",
        ),
    ),
    # --- issue 52: FFI containers against collections.abc and CPython's protocol tests ----------
    Deviation(
        id="ffi-dict-update-mapping-only",
        area="ffi",
        expected="tvm_ffi.Dict, a MutableMapping, updates from every form dict.update (and "
        "MutableMapping's update mixin) takes: a mapping, an iterable of pairs, keywords, both, "
        "or nothing.",
        actual="Dict.update(other) takes only an object with items(): d.update([('b', 2)]) "
        "raises AttributeError \"'list' object has no attribute 'items'\" (an items view, or "
        "an object with keys() and __getitem__, likewise), d.update(c=3) and d.update() raise "
        "TypeError (tvm-ffi 0.1.14.post0).",
        raises="tvm_conformance.observed.UpdateFormRefused",
        tests=(
            "//python/tests/ffi:container_protocol_test :: "
            "test_dict_update_takes_every_form_dict_update_takes[*]",
            "//python/tests/ffi:container_cpython_test :: test_cpython_recorded_statement"
            "[mapping_tests.*-Dict-test_update::update-*]",
            "//python/tests/ffi:container_cpython_test :: test_cpython_recorded_statement"
            "[mapping_tests.*-Dict-test_write::update-*]",
        ),
    ),
    Deviation(
        id="ffi-map-eq-dict-false",
        area="ffi",
        expected="A tvm_ffi.Map or Dict equals a dict with the same items (Mapping's __eq__ "
        "compares items), as tvm_ffi.Array([1, 2]) == [1, 2] is True; so a dict held in an "
        "Array is found by `in`.",
        actual="tvm_ffi.Map({'a': 1}) == {'a': 1} is False (Map/Dict.__eq__ return "
        "NotImplemented for a dict); {'a': 1} in tvm_ffi.Array([{'a': 1}]) is False, though "
        "that Array == [{'a': 1}] is True (tvm-ffi 0.1.14.post0).",
        raises="tvm_conformance.observed.UnequalToPythonValue",
        tests=(
            "//python/tests/ffi:container_protocol_test :: "
            "test_mapping_equals_the_dict_it_holds[*]",
            "//python/tests/ffi:container_cpython_test :: test_cpython_recorded_statement"
            "[mapping_tests.*-Dict-test_clear::eq-dict-*]",
            "//python/tests/ffi:container_cpython_test :: test_cpython_recorded_statement"
            "[mapping_tests.*-Dict-test_getitem::eq-dict-*]",
            "//python/tests/ffi:container_cpython_test :: test_cpython_recorded_statement"
            "[mapping_tests.*-Dict-test_update::eq-dict-*]",
        ),
    ),
    Deviation(
        id="ffi-container-python-eq-not-called",
        area="ffi",
        expected="Membership and key lookup in the FFI containers use Python's == and hash, "
        "as the Sequence / Mapping protocols and tuple, list and dict do: 1.0 in "
        "Array([1, 2]) is True, Map({1: 'one'}).get(1.0) is 'one', an element whose __eq__ "
        "always answers True is found, a key's raising __eq__ / __hash__ propagates.",
        actual="The containers compare with the FFI's own typed equality and never call "
        "Python's __eq__ / __hash__: 1.0 in Array([1, 2]) is False while Array.count(1.0) "
        "(the mixin, using ==) is 1; Map({1: 'one'}).get(1.0) is None; CPython's "
        "ALWAYS_EQ is not found; a key whose __hash__ raises gives KeyError (tvm-ffi "
        "0.1.14.post0).",
        raises="tvm_conformance.observed.PythonEqualityBypassed",
        tests=(
            "//python/tests/ffi:container_protocol_test :: test_membership_uses_python_equality[*]",
            "//python/tests/ffi:container_cpython_test :: test_cpython_recorded_statement"
            "[seq_tests.CommonTest-Array-test_contains_fake::*]",
            "//python/tests/ffi:container_cpython_test :: test_cpython_recorded_statement"
            "[seq_tests.CommonTest-Array-test_contains_order::*]",
            "//python/tests/ffi:container_cpython_test :: test_cpython_recorded_statement"
            "[list_tests.CommonTest-List-test_contains_fake::*]",
            "//python/tests/ffi:container_cpython_test :: test_cpython_recorded_statement"
            "[list_tests.CommonTest-List-test_contains_order::*]",
            "//python/tests/ffi:container_cpython_test :: test_cpython_recorded_statement"
            "[mapping_tests.TestHashMappingProtocol-Dict-test_eq::*]",
            "//python/tests/ffi:container_cpython_test :: test_cpython_recorded_statement"
            "[mapping_tests.TestHashMappingProtocol-Dict-test_pop::*]",
            "//python/tests/ffi:container_cpython_test :: test_cpython_recorded_statement"
            "[mapping_tests.TestHashMappingProtocol-Dict-test_getitem::getitem-hashes-key]",
            "//python/tests/ffi:container_cpython_test :: test_cpython_recorded_statement"
            "[mapping_tests.TestHashMappingProtocol-Dict-test_setdefault::*]",
        ),
    ),
    Deviation(
        id="ffi-mapping-view-mapping-missing",
        area="ffi",
        expected="The keys(), items() and values() views of a Map / Dict support every "
        "method of their collections.abc view class: repr() describes the view, and `v in "
        "d.values()` answers whether a value is held.",
        actual="tvm_ffi's KeysView / ItemsView / ValuesView subclass the abc views without "
        "setting _mapping, which the abc mixins read: repr(d.keys()) (and items(), values()) "
        "and `1 in d.values()` raise AttributeError \"'ValuesView' object has no attribute "
        "'_mapping'\" (tvm-ffi 0.1.14.post0).",
        raises="tvm_conformance.observed.ViewMappingMissing",
        tests=(
            "//python/tests/ffi:container_protocol_test :: "
            "test_mapping_view_repr_and_values_membership[*]",
        ),
    ),
    Deviation(
        id="ffi-list-iterator-fixed-length",
        area="ffi",
        expected="Iterating a tvm_ffi.List sees items appended during the iteration, as a "
        "list iterator and MutableSequence's __iter__ mixin (index until IndexError) do.",
        actual="List.__iter__ reads len() once and stops there: items appended while "
        "iterating are not visited, and an exhausted iterator never yields them (tvm-ffi "
        "0.1.14.post0).",
        raises="tvm_conformance.observed.IteratorLengthFixed",
        tests=(
            "//python/tests/ffi:container_protocol_test :: "
            "test_list_iterator_sees_items_appended_while_iterating",
            "//python/tests/ffi:container_cpython_test :: test_cpython_recorded_statement"
            "[list_tests.CommonTest-List-test_exhausted_iterator::iterator-sees-appended]",
        ),
    ),
    # --- issue 52: the runtime tensor's assignment forms and TVM's API protocols -----------
    Deviation(
        id="runtime-tensor-setitem-step-ignored",
        area="ffi",
        expected="`t[::step] = src` on a runtime tensor writes what numpy writes (every "
        "step-th element, reversed for a negative step) or is refused; step 0 is refused, as "
        "numpy refuses it.",
        actual="Every slice without start and stop is taken as `t[:]`, whatever its step (0, "
        "-1, 2, -2): a source of the whole shape is copied in order, so `t[::-1] = src` "
        "writes src unreversed and `t[::0] = src` copies it (TVM 0.27.0.post1).",
        raises="tvm_conformance.observed.SliceStepIgnored",
        tests=(
            "//python/tests/ffi:tensor_setitem_test :: "
            "test_stepped_slice_assignment_matches_numpy_or_is_refused[*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="runtime-tensor-setitem-refusal-blames-value",
        area="ffi",
        expected="A runtime tensor that does not support an index form (`t[0] = v`, "
        "`t[1:3] = v`, `t[...] = v`, a tuple) says the index is not supported.",
        actual="Every such key raises ValueError 'Array only support set from numpy array', "
        "also when the value is a numpy array of the tensor's shape and dtype: the message "
        "blames the value (TVM 0.27.0.post1).",
        raises="tvm_conformance.observed.SetItemRefusalUnclear",
        tests=(
            "//python/tests/ffi:tensor_setitem_test :: test_refused_key_is_named_in_the_error[*]",
        ),
        tvm=">=0.26",
    ),
    # --- issue 68: numpy's array model as the tensor reference --------------------------------
    Deviation(
        id="runtime-tensor-copyfrom-bfloat16-byte-order-ignored",
        area="ffi",
        expected="`dest.copyfrom(x)` of a bfloat16 array in non-native byte order "
        "(`x.astype(x.dtype.newbyteorder())`, which ml_dtypes supports) copies x's values, as "
        "it does for every numpy dtype with a byte order (int16 to float64, long double).",
        actual="Each value arrives byte-swapped (1.0 becomes -5.8e-39, no error): copyfrom "
        "takes a bfloat16 source as `np.frombuffer(x.tobytes(), 'uint16')`, ignoring its byte "
        "order (TVM 0.27.0.post1 and 0.26.0, ml_dtypes 0.6.0). `tvm.runtime.tensor(x)` refuses "
        "the same array (ValueError 'unknown dtype `>V2`').",
        raises="tvm_conformance.observed.ByteOrderIgnored",
        tests=(
            "//python/tests/ffi:tensor_layouts_test :: "
            "test_copy_holds_numpy_logical_values[byteswapped-*-bfloat16-copyfrom]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="runtime-tensor-int4-one-element-lost",
        area="ffi",
        expected="`tvm.runtime.tensor(x).numpy()` of a one-element ml_dtypes int4 array (0-d or "
        "shape (1,), the one size where numpy's byte per value and TVM's packed nibbles are the "
        "same byte count, so the copy is taken) gives back x: its value, dtype int4.",
        actual="It gives an int8 array of 0 for every value (-8 to 7): copyfrom writes "
        "ml_dtypes' unpacked byte, numpy() reads TVM's packed high nibble and names the result "
        "int8 (TVM 0.27.0.post1 / tvm-ffi 0.1.14.post0, and TVM 0.26.0 / tvm-ffi 0.1.13.post2, "
        "ml_dtypes 0.6.0). A larger int4 array is refused ('TensorCopyFromBytes: size "
        "mismatch').",
        raises="tvm_conformance.observed.SubByteValueLost",
        tests=(
            "//python/tests/ffi:tensor_layouts_test :: "
            "test_sub_byte_dtype_of_one_element_round_trips[*-int4]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="runtime-param-file-pathlib-refused",
        area="relax",
        expected="`tvm.runtime.save_param_dict_to_file(params, path)` and "
        "`load_param_dict_from_file(path)` take a `pathlib.Path` (relative or absolute), as "
        "`export_library` and `tvm.runtime.load_module` do.",
        actual="save_param_dict_to_file raises TypeError 'Mismatched type on argument #1 when "
        "calling: `runtime.SaveParamsToFile(0: Map<str, ffi.Tensor>, 1: str) -> void`. "
        "Expected `str` but got `ffi.OpaquePyObject`' (TVM 0.27.0.post1 / tvm-ffi "
        "0.1.14.post0, and TVM 0.26.0 / tvm-ffi 0.1.13.post2); load_param_dict_from_file "
        "raises the same TypeError for `runtime.LoadParamsFromFile(0: str)` (argument #0); a "
        "str path works.",
        raises="tvm_conformance.observed.PathLikeRefused",
        tests=(
            "//python/tests/relax:vm_path_forms_test :: "
            "test_param_dict_file_round_trips_through_a_pathlib_path[*]",
            "//python/tests/relax:path_functions_test :: test_path_parameter_in_every_form["
            "tvm.runtime.params.save_param_dict_to_file(path)-pathlib-*]",
            "//python/tests/relax:path_functions_test :: test_path_parameter_in_every_form["
            "tvm.runtime.params.load_param_dict_from_file(path)-pathlib-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="ffi-module-write-to-file-pathlib-refused",
        area="ffi",
        expected="`Module.write_to_file(file_name)` (tvm_ffi's, inherited by "
        "`tvm.runtime.Module`) takes a `pathlib.Path`, as `export_library` does.",
        actual="It raises TypeError 'Mismatched type on argument #1 when calling: "
        "`ffi.ModuleWriteToFile(0: ffi.Module, 1: str, 2: str) -> void`. Expected `str` but got "
        "`ffi.OpaquePyObject`' for a relative, absolute or `..` Path (TVM 0.27.0.post1 / "
        "tvm-ffi 0.1.14.post0, and TVM 0.26.0 / tvm-ffi 0.1.13.post2); the same path as a str "
        "writes the file where the OS resolves it.",
        raises="tvm_conformance.observed.PathLikeRefused",
        tests=(
            "//python/tests/relax:path_functions_test :: test_path_parameter_in_every_form["
            "tvm_ffi.module.Module.write_to_file(file_name)-pathlib-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="runtime-load-static-library-pathlib-refused",
        area="relax",
        expected="`tvm.runtime.load_static_library(path, func_names)` takes a `pathlib.Path`, "
        "as `tvm.runtime.load_module` does.",
        actual="It raises TypeError 'Mismatched type on argument #0 when calling: "
        "`runtime.ModuleLoadStaticLibrary(0: std::string, 1: Array<str>) -> ffi.Module`. "
        "Expected `std::string` but got `ffi.OpaquePyObject`' for a relative, absolute or `..` "
        "Path (TVM 0.27.0.post1 / tvm-ffi 0.1.14.post0, and TVM 0.26.0 / tvm-ffi "
        "0.1.13.post2); the same path as a str loads the object file.",
        raises="tvm_conformance.observed.PathLikeRefused",
        tests=(
            "//python/tests/relax:path_functions_test :: test_path_parameter_in_every_form["
            "tvm.runtime.module.load_static_library(path)-pathlib-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="contrib-tvmjs-load-tensor-cache-pathlib-refused",
        area="relax",
        expected="`tvm.contrib.tvmjs.load_tensor_cache(cachepath, device)` takes a "
        "`pathlib.Path` to the cache directory, as `dump_tensor_cache` takes one for it.",
        actual="It raises AttributeError \"'PosixPath' object has no attribute 'endswith'\" "
        '(it calls `cachepath.endswith(".json")`) for a relative, absolute or `..` Path '
        "(TVM 0.27.0.post1 and TVM 0.26.0); the same path as a str loads the cache.",
        raises="tvm_conformance.observed.PathLikeRefused",
        tests=(
            "//python/tests/relax:path_functions_test :: test_path_parameter_in_every_form["
            "tvm.contrib.tvmjs.load_tensor_cache(cachepath)-pathlib-*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-vm-memory-cfg-dict-refused",
        area="relax",
        expected='`relax.VirtualMachine(ex, dev, memory_cfg={dev: "naive"})`, the dict form '
        "its docstring documents (each device its allocator), builds a VM that runs.",
        actual="It raises TypeError 'Cannot convert from type `ffi.SmallStr` to `int`' for "
        "either allocator in either exec mode (TVM 0.27.0.post1 / tvm-ffi 0.1.14.post0, and "
        "TVM 0.26.0 / tvm-ffi 0.1.13.post2); the string form works.",
        raises="tvm_conformance.observed.DocumentedFormRefused",
        tests=(
            "//python/tests/relax:vm_api_protocol_test :: "
            "test_memory_cfg_as_a_dict_of_device_to_allocator[*]",
        ),
        tvm=">=0.26",
    ),
    Deviation(
        id="relax-vm-instrument-not-called-in-compiled-mode",
        area="relax",
        expected="A function given to `VirtualMachine.set_instrument` is called before and "
        "after each call the VM makes, as its docstring says, in either exec mode; or the "
        "compiled mode refuses set_instrument.",
        actual="In bytecode mode it is called around every call (12 calls for one R.add); in "
        "compiled mode set_instrument is accepted and the function is never called (TVM "
        "0.27.0.post1 / tvm-ffi 0.1.14.post0, and TVM 0.26.0 / tvm-ffi 0.1.13.post2).",
        raises="tvm_conformance.observed.InstrumentNotCalled",
        tests=(
            "//python/tests/relax:vm_api_protocol_test :: "
            "test_instrument_is_called_or_refused_in_compiled_mode",
        ),
        tvm=">=0.26",
    ),
)
