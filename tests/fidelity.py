"""Comparing jitflow with NumPy, the reference: same dtype, same shape, same values.

NaN compares equal to NaN, infinities must match in sign, and exact comparisons tell -0.0
from 0.0. Approximate comparisons are for results NumPy itself computes differently
depending on memory layout or SIMD path (transcendental functions, float reductions).
"""
import warnings

import numpy as np

import jitflow

# The kinds of error jitflow must raise exactly when NumPy does.
ERROR_KINDS = (TypeError, ValueError, IndexError, ArithmeticError)


def numpy_outcome(fn, *args, **kwargs):
    """(result, None) when NumPy computes fn(*args), (None, error) when it raises.

    Floating-point warnings are silenced: jitflow gives the IEEE result without them.
    """
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kwargs), None
        except ERROR_KINDS as error:
            return None, error


def error_kinds(error):
    """The error classes (of ERROR_KINDS) `error` belongs to, for pytest.raises."""
    return tuple(kind for kind in ERROR_KINDS if isinstance(error, kind))


def ulps(dtype, n=8):
    """A relative tolerance of n units in the last place of a float dtype (0 otherwise)."""
    dtype = np.dtype(dtype)
    return n * float(np.finfo(dtype).eps) if dtype.kind == "f" else 0.0


def assert_same(actual, expected, *, rtol=0.0, atol=0.0, zero_sign=True, what=""):
    """actual has expected's dtype and shape, and its values.

    Exact unless rtol or atol is given; then non-finite values must still match exactly.
    zero_sign=False allows 0.0 for -0.0 where NumPy leaves the sign unspecified (max of
    0.0 and -0.0 in a reduction depends on the order NumPy visits the elements).
    """
    actual, expected = np.asarray(actual), np.asarray(expected)
    label = f"{what}: " if what else ""
    assert actual.dtype == expected.dtype, \
        f"{label}dtype {actual.dtype}, NumPy gives {expected.dtype}"
    assert actual.shape == expected.shape, \
        f"{label}shape {actual.shape}, NumPy gives {expected.shape}"
    if expected.dtype.kind != "f":
        np.testing.assert_array_equal(actual, expected, err_msg=label)
        return
    if not np.any(rtol) and not np.any(atol):
        np.testing.assert_array_equal(actual, expected, err_msg=label)
    else:
        finite = np.isfinite(expected)
        np.testing.assert_array_equal(actual[~finite], expected[~finite], err_msg=label)
        with np.errstate(invalid="ignore"):
            error = np.abs(actual.astype(np.float64) - expected)
        bound = np.broadcast_to(atol + rtol * np.abs(expected.astype(np.float64)),
                                expected.shape)
        bad = finite & ~(error <= bound)
        assert not bad.any(), (f"{label}{actual[bad]} differ from NumPy's "
                               f"{expected[bad]} by more than {bound[bad]}")
    if zero_sign:  # where both are zero (within a tolerance, one may not be)
        zeros = (expected == 0) & (actual == 0)
        np.testing.assert_array_equal(np.signbit(actual[zeros]),
                                      np.signbit(expected[zeros]),
                                      err_msg=f"{label}sign of zero differs from NumPy")


def run_traced(fn, *args):
    """fn(*args) traced by jitflow.function and run, after checking that the traced graph
    declares the dtype and shape that running it gives (a mismatch would be a silent
    wrong answer for a backend that trusts the declared types)."""
    compiled = jitflow.function(fn)
    result = compiled(*args)
    graph = compiled.trace(*args)
    outputs = result if isinstance(result, (tuple, list)) else [result]
    for declared, value in zip(graph.out_types, outputs, strict=True):
        value = np.asarray(value)
        assert (declared.dtype, declared.shape) == (value.dtype, value.shape), \
            f"the traced graph declares {declared} but computes {value.dtype}{value.shape}"
    return result
