"""Reductions (sum, max, mean, var, ...), cumsum, and the softmax family."""
import builtins
import math

import numpy as _np

from .. import ops
from ..ir.types import normalize_axes, normalize_axis
from ._common import _dtype_of, _ndim, _no_out, _shape, _strong
from .elementwise import astype, exp, isfinite, log, maximum, sqrt, where
from .shapes import ravel, squeeze


def _reduce(name, op, a, axis, dtype, out, keepdims):
    _no_out(name, out)
    if dtype is not None:
        a = astype(a, dtype)
    result = op(a, axes=normalize_axes(axis, _ndim(a)), keepdims=keepdims)
    return result if dtype is None else astype(result, dtype)


def sum(a, axis=None, dtype=None, out=None, keepdims=False):
    return _reduce("sum", ops.reduce_sum, a, axis, dtype, out, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False):
    return _reduce("prod", ops.reduce_prod, a, axis, dtype, out, keepdims)


def max(a, axis=None, out=None, keepdims=False):
    return _reduce("max", ops.reduce_max, a, axis, None, out, keepdims)


def min(a, axis=None, out=None, keepdims=False):
    return _reduce("min", ops.reduce_min, a, axis, None, out, keepdims)


amax, amin = max, min


def any(a, axis=None, out=None, keepdims=False):
    # A count rather than a max, so that any() of nothing is False, as in NumPy.
    count = _reduce("any", ops.reduce_sum, ops.not_equal(a, 0), axis, None, out, keepdims)
    return ops.greater(count, 0)


def all(a, axis=None, out=None, keepdims=False):
    count = _reduce("all", ops.reduce_sum, ops.equal(a, 0), axis, None, out, keepdims)
    return ops.equal(count, 0)


def argmax(a, axis=None, out=None, keepdims=False):
    _no_out("argmax", out)
    axis = None if axis is None else normalize_axis(axis, _ndim(a))
    return ops.argmax(a, axis=axis, keepdims=keepdims)


def argmin(a, axis=None, out=None, keepdims=False):
    _no_out("argmin", out)
    axis = None if axis is None else normalize_axis(axis, _ndim(a))
    return ops.argmin(a, axis=axis, keepdims=keepdims)


def _count(a, axis):
    shape = _shape(a)
    return math.prod(shape[i] for i in normalize_axes(axis, len(shape)))


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    _no_out("mean", out)
    if dtype is None and _dtype_of(a).kind in "biu":
        dtype = _np.float64  # NumPy averages integers in float64
    if dtype is None and _dtype_of(a) == _np.float16:
        # and float16 in float32, rounded to half at the end
        mean32 = mean(a, axis=axis, dtype=_np.float32, keepdims=keepdims)
        return astype(mean32, _np.float16)
    if dtype is not None:
        a = astype(a, dtype)
    total = sum(a, axis=axis, keepdims=keepdims)
    return _strong(ops.divide(total, _count(a, axis)))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    _no_out("var", out)
    centered = ops.subtract(a, mean(a, axis=axis, dtype=dtype, keepdims=True))
    squares = ops.multiply(centered, centered)
    # NumPy sums the squares in `dtype` too: an int array's float64 squares in float32.
    total = sum(squares, axis=axis, dtype=dtype, keepdims=keepdims)
    return _strong(ops.divide(total, builtins.max(_count(a, axis) - ddof, 0)))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return sqrt(var(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims))


def cumsum(a, axis=None, dtype=None, out=None):
    _no_out("cumsum", out)
    if axis is None:
        a, axis = ravel(a), 0
    if dtype is not None:
        a = astype(a, dtype)
    result = ops.cumsum(a, axis=normalize_axis(axis, _ndim(a)))
    return result if dtype is None else astype(result, dtype)


def logsumexp(a, axis=None, keepdims=False):
    """log(sum(exp(a))) without overflow: the max is taken out before exponentiating."""
    peak = max(a, axis=axis, keepdims=True)
    peak = where(isfinite(peak), peak, 0)  # keeps inf and all -inf rows exact
    total = sum(exp(ops.subtract(a, peak)), axis=axis, keepdims=True)
    result = ops.add(log(total), peak)
    return result if keepdims else squeeze(result, axis=axis)


def softmax(x, axis=-1):
    shifted = ops.subtract(x, max(x, axis=axis, keepdims=True))
    exps = exp(shifted)
    return ops.divide(exps, sum(exps, axis=axis, keepdims=True))


def log_softmax(x, axis=-1):
    # (x - peak) - log(sum(exp(x - peak))), not x - logsumexp(x): the latter rounds
    # logsumexp at the magnitude of x (1000.69 in float32) before cancelling it.
    peak = max(x, axis=axis, keepdims=True)
    shifted = ops.subtract(x, where(isfinite(peak), peak, 0))
    return ops.subtract(shifted, log(sum(exp(shifted), axis=axis, keepdims=True)))


def relu(x):
    return maximum(x, 0)


def sigmoid(x):
    return ops.logistic(x)


logistic = sigmoid


__all__ = ["all", "amax", "amin", "any", "argmax", "argmin", "cumsum", "log_softmax", "logistic", "logsumexp", "max", "mean", "min", "prod", "relu", "sigmoid", "softmax", "std", "sum", "var"]
