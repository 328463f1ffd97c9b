"""Statistics over the reductions: nansum, nanprod, nanmax, nanmin, nanmean, average,
ptp, count_nonzero, cov, corrcoef, isclose, allclose; NumPy's own recipes, so their
dtypes, NaN handling and degenerate cases (all-NaN slices, no degrees of freedom) are
NumPy's."""
import builtins
import math

import numpy as _np

from .. import ops
from ..contract import matmul
from ..errors import at_user_line
from ..ir.types import is_floating, normalize_axes
from ..trace import Tracer
from ._common import _dtype_of, _ndim, _no_out, _shape
from .creation import asarray
from .elementwise import absolute, astype, clip, equal, isfinite, isnan, less_equal, \
    logical_and, logical_not, logical_or, multiply, sqrt, subtract, where
from .matrices import diag
from .reductions import all, max, mean, min, prod, sum
from .shapes import concatenate, reshape, squeeze, transpose


def _without_nan(a, value):
    """a with its NaN replaced by `value` (floats only; other dtypes have none)."""
    a = asarray(a)
    return where(isnan(a), value, a) if _dtype_of(a).kind == "f" else a


def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    return sum(_without_nan(a, 0), axis=axis, dtype=dtype, out=out, keepdims=keepdims)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False):
    return prod(_without_nan(a, 1), axis=axis, dtype=dtype, out=out, keepdims=keepdims)


def _nan_extremum(name, extremum, fill):
    def function(a, axis=None, out=None, keepdims=False):
        _no_out(name, out)
        a = asarray(a)
        if not is_floating(_dtype_of(a)):  # (NumPy's fmax.reduce: bfloat16 too)
            return extremum(a, axis=axis, keepdims=keepdims)
        # NaN only where the whole slice is NaN (NumPy warns there); the fills in a's
        # dtype (a Python float would make float64 of bfloat16 in where)
        filled = where(isnan(a), _np.asarray(fill).astype(_dtype_of(a)), a)
        result = extremum(filled, axis=axis, keepdims=keepdims)
        return where(all(isnan(a), axis=axis, keepdims=keepdims),
                     _np.asarray(_np.nan).astype(_dtype_of(a)), result)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"NumPy's {name}: the {extremum.__name__} ignoring NaN."
    return function


nanmax = _nan_extremum("nanmax", max, -_np.inf)
nanmin = _nan_extremum("nanmin", min, _np.inf)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    _no_out("nanmean", out)
    a = asarray(a)
    if _dtype_of(a).kind != "f":
        return mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    total = sum(where(isnan(a), 0, a), axis=axis, dtype=dtype, keepdims=keepdims)
    count = sum(logical_not(isnan(a)), axis=axis, dtype=_np.int64, keepdims=keepdims)
    # NumPy divides in place: in float64 (the loop of a float and an int64), then
    # rounded to the total's dtype; 0 / 0 is NaN for an all-NaN slice
    return astype(ops.divide(total, count), _dtype_of(total))


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    a = asarray(a)
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        if math_size(_shape(avg)) == 0:  # NumPy's a.size / avg.size
            raise ZeroDivisionError(at_user_line(f"average: division by zero (an empty "
                                                 f"result, shape {_shape(avg)})"))
        scale = _np.array(math_size(_shape(a)) / math_size(_shape(avg)), _dtype_of(avg))
    else:
        weights = _constant_weights(weights, a, axis)
        if _dtype_of(a).kind in "biu":
            dtype = _np.result_type(_dtype_of(a), weights.dtype, "f8")
        else:
            dtype = _np.result_type(_dtype_of(a), weights.dtype)
        scale = weights.sum(axis=axis, dtype=dtype, keepdims=keepdims)
        if _np.any(scale == 0.0):
            raise ZeroDivisionError(at_user_line("Weights sum to zero, can't be "
                                                 "normalized"))
        avg = ops.divide(sum(multiply(a, weights, dtype=dtype), axis=axis,
                             keepdims=keepdims), scale)
    if not returned:
        return avg
    return avg, _np.broadcast_to(scale, _shape(avg)).copy()


def math_size(shape):
    return int(_np.prod(shape, dtype=_np.int64))


def _constant_weights(weights, a, axis):
    """NumPy's weights checked and laid out along a's axes; they must be constants
    (NumPy raises when they sum to zero, which a traced value could not say)."""
    if isinstance(weights, Tracer):
        raise NotImplementedError(at_user_line(
            f"jitflow.numpy.average: weights must be constants (NumPy arrays), not a "
            f"traced value {weights.type}: NumPy raises ZeroDivisionError when they sum "
            f"to zero, which is not known while tracing; compute "
            f"sum(a * w, axis) / sum(w, axis) instead"))
    weights = _np.asarray(weights)
    if weights.shape == _shape(a):
        return weights
    if axis is None:
        raise TypeError(at_user_line("Axis must be specified when shapes of a and "
                                     "weights differ."))
    axes = normalize_axes(axis, _ndim(a))
    if weights.shape != tuple(_shape(a)[ax] for ax in axes):
        raise ValueError(at_user_line(f"Shape of weights must be consistent with shape "
                                      f"of a along specified axis (weights "
                                      f"{weights.shape}, a {_shape(a)}, axis {axis})."))
    return weights.transpose(_np.argsort(axis if isinstance(axis, tuple) else (axis,))) \
        .reshape(tuple(s if ax in axes else 1 for ax, s in enumerate(_shape(a))))


def ptp(a, axis=None, out=None, keepdims=False):
    _no_out("ptp", out)
    return subtract(max(a, axis=axis, keepdims=keepdims),
                    min(a, axis=axis, keepdims=keepdims))


def count_nonzero(a, axis=None, *, keepdims=False):
    a = asarray(a)
    counts = sum(astype(a, _np.bool_), axis=axis, dtype=_np.int64, keepdims=keepdims)
    if axis is not None or keepdims:
        return counts
    # NumPy gives a Python int for the whole array
    return ops.cast(counts, _np.int64, weak=True) if isinstance(counts, Tracer) \
        else int(counts)


def _python_number(value):
    """A Python number, written in the code or passed in (a weakly typed traced value):
    NumPy's isclose keeps it one, so it takes the other operand's dtype."""
    return isinstance(value, (int, float)) or (isinstance(value, Tracer) and value.type.weak)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    x = a if _python_number(a) else asarray(a)
    y = b if _python_number(b) else asarray(b)
    if isinstance(y, (int, float)):
        # the bound a Python float too, rounded to x's dtype when compared
        y = float(y)
        bound, finite = atol + rtol * builtins.abs(y), math.isfinite(y)
    else:
        if _python_number(y):  # passed in: a float, still weak (NumPy's float(y))
            y = y if y.dtype.kind == "f" else ops.cast(y, _np.float64, weak=True)
        else:
            y = astype(y, _np.result_type(_dtype_of(y), 1.0))  # NumPy's y in >= f64
        bound, finite = ops.add(atol, ops.multiply(rtol, ops.absolute(y))), isfinite(y)
    within = less_equal(absolute(subtract(x, y)), bound)
    close = logical_or(logical_and(within, finite), equal(x, y))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(x), isnan(y)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    result = all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
    return result if isinstance(result, Tracer) else bool(result)


def _no_frequency_weights(name, fweights, aweights):
    if fweights is not None or aweights is not None:
        raise NotImplementedError(at_user_line(
            f"jitflow.numpy.{name}: fweights= and aweights= are not supported"))


def _variables(m, rowvar, dtype):
    """m as a 2-d array of variables in rows, as NumPy's cov lays it out."""
    m = asarray(m)
    if _ndim(m) > 2:
        raise ValueError(at_user_line(f"m has more than 2 dimensions (shape "
                                      f"{_shape(m)})"))
    X = astype(m, dtype)
    X = reshape(X, (1,) * (2 - _ndim(X)) + tuple(_shape(X)))
    return X


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    _no_frequency_weights("cov", fweights, aweights)
    m = asarray(m)
    if y is not None:
        y = asarray(y)
        if _ndim(y) > 2:
            raise ValueError(at_user_line("y has more than 2 dimensions"))
    if dtype is None:
        dtype = _np.result_type(_dtype_of(m), *([] if y is None else [_dtype_of(y)]),
                                _np.float64)
    X = _variables(m, rowvar, dtype)
    if not rowvar and _ndim(m) != 1:
        X = transpose(X)
    if _shape(X)[0] == 0:
        return _np.array([]).reshape(0, 0)
    if y is not None:
        Y = _variables(y, rowvar, dtype)
        if not rowvar and _shape(Y)[0] != 1:
            Y = transpose(Y)
        X = concatenate([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    fact = _shape(X)[1] - ddof
    fact = fact if fact > 0 else 0.0  # NumPy warns: no degrees of freedom
    X = subtract(X, mean(X, axis=1, keepdims=True))
    c = matmul(X, transpose(X))
    # NumPy's c *= 1 / fact: a float64 scalar, the product rounded back to c's dtype
    with _np.errstate(divide="ignore"):
        scale = _np.true_divide(1, fact)
    c = astype(multiply(c, scale), _dtype_of(c))
    return squeeze(c)


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    c = cov(x, y, rowvar, dtype=dtype)
    if _ndim(c) < 1:
        return ops.divide(c, c)  # one variable: 1, or NaN for NaN, inf or 0
    stddev = sqrt(diag(c))
    c = ops.divide(c, reshape(stddev, (-1, 1)))
    c = ops.divide(c, reshape(stddev, (1, -1)))
    return clip(c, -1, 1)


__all__ = ["allclose", "average", "corrcoef", "count_nonzero", "cov", "isclose", "nanmax", "nanmean", "nanmin", "nanprod", "nansum", "ptp"]
