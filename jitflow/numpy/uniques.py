"""unique: the distinct values in NumPy's sorted order (NaN last), with the index of
each one's first occurrence, the inverse and the counts.

This version does not sort: every element is compared with every other (n^2
comparisons, fused into reductions), which decides for each element whether it is the
first of its value, and how many distinct values come before it (its place in the
result). One scatter per result then puts each first occurrence in its place. It is
meant for small arrays (at most MAX_ELEMENTS); a version built on a sort primitive
can replace this file.

The number of distinct values is known only at run time, so traced arrays take a
static `size=` as in JAX: the first `size` distinct values are kept, and the slots
past the count hold `fill_value` (by default the smallest value), the index of the
smallest value's first occurrence, and counts of 0. Of values that compare equal
(0.0 and -0.0) the first occurrence is the one kept.
"""
from collections import namedtuple

import numpy as _np

from .. import ops
from ..errors import at_user_line
from ._common import _dtype_of, _shape
from .creation import asarray
from .searching import _sorts_before
from .selecting import _fills, _static_size
from .shapes import ravel, reshape

MAX_ELEMENTS = 1 << 14


def _same(x_i, x_j, equal_nan):
    same = ops.equal(x_i, x_j)
    if equal_nan and _dtype_of(x_i).kind == "f":
        same = ops.logical_or(same, ops.logical_and(ops.isnan(x_i), ops.isnan(x_j)))
    return same


def _comes_before(x, equal_nan):
    """[i, j]: whether x[j] comes before x[i] in NumPy's sorted order; NaNs that are
    distinct values (equal_nan=False) in the order they occur."""
    n = _shape(x)[0]
    x_i, x_j = reshape(x, (n, 1)), reshape(x, (1, n))
    before = _sorts_before(x_j, x_i)
    if not equal_nan and _dtype_of(x).kind == "f":
        earlier = ops.less(ops.iota((1, n), _np.int64, axis=1),
                           ops.iota((n, 1), _np.int64, axis=0))
        before = ops.logical_or(before, ops.logical_and(
            ops.logical_and(ops.isnan(x_i), ops.isnan(x_j)), earlier))
    return before


def _count(mask, axis):
    return ops.reduce_sum(ops.cast(mask, _np.int64), axes=(axis,))


def unique(ar, return_index=False, return_inverse=False, return_counts=False,
           axis=None, *, equal_nan=True, sorted=True, size=None, fill_value=None):
    return _unique("unique", ar, return_index, return_inverse, return_counts, axis,
                   equal_nan, size, fill_value)


def _unique(name, ar, return_index=False, return_inverse=False, return_counts=False,
            axis=None, equal_nan=True, size=None, fill_value=None):
    if axis is not None:
        raise NotImplementedError(at_user_line(f"jitflow.numpy.{name}: axis= is not "
                                               "supported (unique of the flattened array "
                                               "is)"))
    a = asarray(ar)
    x = ravel(a)
    same, first = _first_occurrences(name, x, equal_nan)
    size = _static_size(name, first, size, "distinct values there are",
                        "the smallest value")
    place, slot, filled = _sorted_slots(x, first, size, equal_nan)
    values, first_index = _sorted_kept(name, x, slot, filled, size, fill_value)
    results = [values]
    if return_index:
        results.append(first_index)
    if return_inverse:
        results.append(reshape(place, _shape(a)))
    if return_counts:
        counts = _placed(_count(same, 1), slot, size)
        results.append(ops.where(filled, counts, _np.int64(0)))
    return results[0] if len(results) == 1 else tuple(results)


def _first_occurrences(name, x, equal_nan=True):
    """([i, j]: whether x[i] and x[j] are the same value, whether each element of the
    1-d `x` is its value's first occurrence)."""
    n = _shape(x)[0]
    if n > MAX_ELEMENTS:
        raise NotImplementedError(at_user_line(
            f"jitflow.numpy.{name} of {n} elements: without a sort it compares every "
            f"pair, which jitflow does for at most {MAX_ELEMENTS} elements"))
    x_i, x_j = reshape(x, (n, 1)), reshape(x, (1, n))
    same = _same(x_i, x_j, equal_nan)
    if not equal_nan and _dtype_of(x).kind == "f":  # each NaN is one of its own
        same = ops.logical_or(same, ops.equal(ops.iota((n, 1), _np.int64, axis=0),
                                              ops.iota((1, n), _np.int64, axis=1)))
    earlier = ops.less(ops.iota((1, n), _np.int64, axis=1),
                       ops.iota((n, 1), _np.int64, axis=0))
    return same, ops.equal(_count(ops.logical_and(same, earlier), 1), 0)


def _comes_before_stably(x):
    """[i, j]: whether x[j] comes before x[i] in NumPy's stable sorted order: values
    that sort alike (NaNs, 0.0 and -0.0, equal ones) in the order they occur."""
    n = _shape(x)[0]
    x_i, x_j = reshape(x, (n, 1)), reshape(x, (1, n))
    alike = ops.logical_not(ops.logical_or(_sorts_before(x_j, x_i), _sorts_before(x_i, x_j)))
    earlier = ops.less(ops.iota((1, n), _np.int64, axis=1),
                       ops.iota((n, 1), _np.int64, axis=0))
    return ops.logical_or(_sorts_before(x_j, x_i), ops.logical_and(alike, earlier))


def _sorted_slots(x, keep, size, equal_nan=True, stable=False):
    """Where each kept element of the 1-d `x` goes among `size` slots in NumPy's sorted
    order: (its place, its slot: `size` for one not kept or past the size, whether each
    slot is filled). Kept elements must be distinct values (NaNs distinct only with
    equal_nan=False, which orders them as they occur), unless `stable`: then kept
    elements that sort alike go in the order they occur."""
    n = _shape(x)[0]
    before = _comes_before_stably(x) if stable else _comes_before(x, equal_nan)
    place = _count(ops.logical_and(before, reshape(keep, (1, n))), 1)
    slot = ops.where(ops.logical_and(keep, ops.less(place, _np.int64(size))), place,
                     _np.int64(size))
    filled = ops.less(ops.iota((size,), _np.int64), _count(keep, 0))
    return place, slot, filled


def _sorted_kept(name, x, slot, filled, size, fill_value):
    """(the kept values of the 1-d `x` in their slots, their indices in `x`); the slots
    past the count hold `fill_value` (by default the smallest value kept) and the
    smallest value's index."""
    n = _shape(x)[0]
    values = _placed(x, slot, size)
    indices = _placed(ops.iota((n,), _np.int64), slot, size)
    if fill_value is None:
        fill = values[0] if n and size else _np.zeros((), _dtype_of(x))
    else:
        (fill,) = _fills(name, fill_value, 1, _dtype_of(x))
    index_fill = indices[0] if n and size else _np.int64(0)
    return ops.where(filled, values, fill), ops.where(filled, indices, index_fill)


def _placed(values, slot, size):
    """The 1-d `values` written at `slot` into `size` slots (one more takes the rest;
    slots no value reaches hold zeros, replaced by the fill)."""
    dtype = _dtype_of(values)
    if _shape(values)[0] == 0:
        return ops.broadcast_to(_np.zeros((), dtype), (size,))
    target = ops.broadcast_to(_np.zeros((), dtype), (size + 1,))
    placed = ops.scatter(target, values, slot, axis=0)
    return ops.slice_array(placed, starts=(0,), steps=(1,), sizes=(size,))


# NumPy 2's array-API forms: unique with equal_nan=False (each NaN a value of its own),
# their results as NumPy's named tuples. NumPy's unique_values leaves the order
# unspecified; here it is sorted, as unique's.
UniqueAllResult = namedtuple("UniqueAllResult", "values indices inverse_indices counts")
UniqueCountsResult = namedtuple("UniqueCountsResult", "values counts")
UniqueInverseResult = namedtuple("UniqueInverseResult", "values inverse_indices")


def unique_values(x, *, size=None, fill_value=None):
    return _unique("unique_values", x, equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(x, *, size=None, fill_value=None):
    return UniqueCountsResult(*_unique("unique_counts", x, return_counts=True,
                                       equal_nan=False, size=size, fill_value=fill_value))


def unique_inverse(x, *, size=None, fill_value=None):
    return UniqueInverseResult(*_unique("unique_inverse", x, return_inverse=True,
                                        equal_nan=False, size=size, fill_value=fill_value))


def unique_all(x, *, size=None, fill_value=None):
    return UniqueAllResult(*_unique("unique_all", x, True, True, True, equal_nan=False,
                                    size=size, fill_value=fill_value))


__all__ = ["unique", "unique_all", "unique_counts", "unique_inverse", "unique_values"]
