"""Sums built from the others: NumPy 2.1's cumulative_sum and cumulative_prod (with
include_initial), vdot, and trapezoid (the trapezoid rule over samples y, spaced by dx
or at coordinates x)."""
import numpy as _np

from ..contract import dot
from ..errors import at_user_line
from ..ir.types import normalize_axis
from ._common import _dtype_of, _ndim, _no_out, _shape
from .creation import asarray, full
from .elementwise import divide, add, multiply
from .rearranging import diff
from .reductions import cumsum, sum
from .scans import cumprod
from .shapes import concatenate, ravel, reshape


def _cumulative(name, scan, initial, x, axis, dtype, out, include_initial):
    _no_out(name, out)
    x = asarray(x)
    if _ndim(x) == 0:  # a 0-d array scans as one of one element, as in NumPy
        x = reshape(x, (1,))
    if axis is None:
        if _ndim(x) > 1:
            raise ValueError(at_user_line(
                "For arrays which have more than one dimension ``axis`` argument is "
                "required."))
        axis = 0
    axis = normalize_axis(axis, _ndim(x))
    result = scan(x, axis=axis, dtype=dtype)
    if not include_initial:
        return result
    shape = list(_shape(result))
    shape[axis] = 1
    return concatenate([full(tuple(shape), initial, _dtype_of(result)), result], axis=axis)


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative("cumulative_sum", cumsum, 0, x, axis, dtype, out, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative("cumulative_prod", cumprod, 1, x, axis, dtype, out, include_initial)


def vdot(a, b, /):
    """The dot product of the flattened arrays (real arrays: no conjugate to take)."""
    a, b = ravel(asarray(a)), ravel(asarray(b))
    if _shape(a) != _shape(b):
        raise ValueError(at_user_line(f"vectors have different lengths: {_shape(a)[0]} "
                                      f"and {_shape(b)[0]}"))
    return dot(a, b)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """NumPy's sum of d * (y[1:] + y[:-1]) / 2.0 along the axis, in that order."""
    y = asarray(y)
    if x is None:
        d = dx
    else:
        x = asarray(x)
        if _ndim(x) == 1:
            d = diff(x)
            shape = [1] * _ndim(y)
            shape[axis] = _shape(d)[0]
            d = reshape(d, shape)
        else:
            d = diff(x, axis=axis)
    ndim = _ndim(y)
    later, earlier = [slice(None)] * ndim, [slice(None)] * ndim
    later[axis], earlier[axis] = slice(1, None), slice(None, -1)
    pairs = add(y[tuple(later)], y[tuple(earlier)])
    return sum(divide(multiply(d, pairs), 2.0), axis=axis)


__all__ = ["cumulative_prod", "cumulative_sum", "trapezoid", "vdot"]
