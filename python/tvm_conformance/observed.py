"""Exceptions a deviation's test raises when it sees the recorded behaviour itself.

A strict xfail with ``raises=AssertionError`` (or pytest's ``Failed``) is satisfied by any
failed assertion, including a worse regression than the one recorded (the exception never
arrived, the call returned nothing). A test of such a deviation first checks that the
surrounding behaviour holds (the exception did arrive, the call did return), then raises one
of these for exactly the recorded deviation; anything else stays an AssertionError and fails
the test. Standard library only.
"""

from __future__ import annotations


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


class LoaderNotRegistered(DeviationObserved):
    """A module loader the runtime ships is not registered until the process loads it."""


class ViewBitIgnored(DeviationObserved):
    """A torch negative or conjugate view was taken as its stored data, its view bit ignored."""
