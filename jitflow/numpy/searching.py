"""searchsorted: where values would be inserted into a sorted array.

For a sorted `a`, the insertion point of v is the number of elements that come before
it: those less than v (side='left') or not greater (side='right'), in NumPy's sort order,
where NaN comes after everything. Counting compares every v with every element (n m
comparisons rather than m log n), exact, and the same on both backends. As in NumPy, an
unsorted `a` gives unspecified positions.
"""
import numpy as _np

from .. import ops
from ..errors import at_user_line
from ._common import _dtype_of, _ndim, _shape
from .creation import asarray
from .shapes import reshape, take


def _sorts_before(x, y):
    """x < y in NumPy's sort order: NaN after every number."""
    if _dtype_of(x).kind != "f" and _dtype_of(y).kind != "f":
        return ops.less(x, y)
    return ops.logical_or(ops.less(x, y),
                          ops.logical_and(ops.isnan(y), ops.logical_not(ops.isnan(x))))


def check_search(shape, side):
    """NumPy's errors for a sorted array a of `shape` searched from `side`."""
    if len(shape) != 1:
        raise ValueError(at_user_line(f"searchsorted: object too deep for desired array "
                                      f"(a must be 1-d, got shape {tuple(shape)})"))
    if side not in ("left", "right"):
        raise ValueError(at_user_line(f"searchsorted: side must be 'left' or 'right', "
                                      f"got {side!r}"))


def searchsorted(a, v, side="left", sorter=None):
    a = asarray(a)
    check_search(_shape(a), side)
    if sorter is not None:
        a = take(a, sorter)
    v = asarray(v)
    # NumPy compares in the common dtype of a and v
    common = _np.result_type(_dtype_of(a), _dtype_of(v))
    a, v = ops.cast(a, common), ops.cast(v, common)
    elements = reshape(a, (1,) * _ndim(v) + _shape(a))  # along a last axis
    values = reshape(v, _shape(v) + (1,))
    if side == "left":
        before = _sorts_before(elements, values)
    else:
        before = ops.logical_not(_sorts_before(values, elements))
    return ops.reduce_sum(ops.cast(before, _np.int64), axes=(_ndim(v),), keepdims=False)


__all__ = ["searchsorted"]
