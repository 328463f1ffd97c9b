"""Run-time errors of generated code: a status word the entry function returns.

Kernels never read or write out of bounds: a bad index is replaced by a safe one, the
status records the error, and the call boundary raises it as a Python exception.
A Python function that generated code calls (control/python_callbacks.py) and that
raises leaves its exception here, on the calling thread, and returns PYTHON_RAISED: the
call boundary raises that exception itself.
"""
import threading

import numpy as np

from .emitter import I32

OK = 0
INDEX_OUT_OF_BOUNDS = 1
NEGATIVE_POWER = 2
OUT_OF_MEMORY = 3
PYTHON_INT_OVERFLOW = 4
PYTHON_RAISED = 5  # a Python callback raised: the exception waits in _raised
# What LAPACK reports (codegen/linalg), raised as numpy.linalg raises it
SINGULAR_MATRIX = 6
NOT_POSITIVE_DEFINITE = 7
EIGENVALUES_DID_NOT_CONVERGE = 8
SVD_DID_NOT_CONVERGE = 9
LAPACK_FAILED = 10  # an argument LAPACK refused: a fault of jitflow's, never the user's
NAN_MADE = 11  # code built with nan_checks made a NaN (config.debug_nans)
INF_MADE = 12  # ... or an infinity (config.debug_infs)
# A Python int that does not fit the integer dtype NumPy converts it to (NEP 50): one
# code per dtype narrower than the int64 Python ints arrive in, or unsigned.
PYTHON_INT_OVERFLOWS = {np.dtype(np.int32): PYTHON_INT_OVERFLOW,
                        **{np.dtype(name): 13 + i for i, name in enumerate(
                            ("int8", "int16", "uint8", "uint16", "uint32", "uint64"))}}
FALLBACK = -1  # the fast entry declined (a misaligned array): take the checked path

MESSAGES = {
    INDEX_OUT_OF_BOUNDS: (IndexError, "an index is out of bounds for the indexed axis"),
    NEGATIVE_POWER: (ValueError, "Integers to negative integer powers are not allowed."),
    OUT_OF_MEMORY: (MemoryError, "cannot allocate the workspace"),
    SINGULAR_MATRIX: (np.linalg.LinAlgError, "Singular matrix"),
    NOT_POSITIVE_DEFINITE: (np.linalg.LinAlgError, "Matrix is not positive definite"),
    EIGENVALUES_DID_NOT_CONVERGE: (np.linalg.LinAlgError, "Eigenvalues did not converge"),
    SVD_DID_NOT_CONVERGE: (np.linalg.LinAlgError, "SVD did not converge"),
    LAPACK_FAILED: (RuntimeError, "LAPACK refused an argument"),
    NAN_MADE: (FloatingPointError, "an operation made a NaN"),
    INF_MADE: (FloatingPointError, "an operation made an infinity"),
    # NEP 50: a Python int takes the array's dtype, and NumPy refuses one that does not fit
    **{code: (OverflowError, f"Python integer out of bounds for {dtype}")
       for dtype, code in PYTHON_INT_OVERFLOWS.items()},
}


class ErrorState:
    """An i32 in the entry function's frame; the first error flagged wins."""

    def __init__(self, em):
        self.em = em
        self.slot = em.b.alloca(I32, name="status")
        em.b.store(I32(OK), self.slot)

    def flag_if(self, condition, code):
        """Record `code` where `condition` holds (in any existing lane of a vector)."""
        b = self.em.b
        condition = self.em.any_lane(condition)
        current = b.load(self.slot, typ=I32)
        unset = b.icmp_signed("==", current, I32(OK))
        b.store(b.select(b.and_(condition, unset), I32(code), current), self.slot)

    def merge(self, status):
        """Take `status`, a called function's result, unless an error came first."""
        b = self.em.b
        current = b.load(self.slot, typ=I32)
        b.store(b.select(b.icmp_signed("==", current, I32(OK)), status, current), self.slot)

    def result(self):
        return self.em.b.load(self.slot, typ=I32)


_raised = threading.local()  # .error: the first exception a callback raised in this call


def record_raised(error):
    """Keep the first exception a callback of the running call raised (on its thread:
    callbacks run on worker 0, the calling thread)."""
    if getattr(_raised, "error", None) is None:
        _raised.error = error


def callback_raised():
    """Whether a callback of the running call has raised (later ones are skipped)."""
    return getattr(_raised, "error", None) is not None


def raise_for(status, where):
    error, _raised.error = getattr(_raised, "error", None), None
    if status == PYTHON_RAISED and error is not None:
        error.add_note(f"(raised by a Python callback called from compiled '{where}')")
        raise error
    kind, message = MESSAGES.get(status, (RuntimeError, f"native code failed ({status})"))
    raise kind(f"{where}: {message}")
