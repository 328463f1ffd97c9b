"""Functions whose result's length is a count of the data: nonzero, argwhere,
flatnonzero, extract, compress, where with one argument (and ndarray.nonzero and
ndarray.compress).

On NumPy arrays, and on values whose contents are known (eager derivatives), they
return what NumPy returns. A traced value's count is known only at run time, so there
they take a static `size=` as JAX's do: the result holds the first `size` elements
found (in C order; later ones are dropped when there are more), and `fill_value` in
the slots past the count (0 unless given). `size=` works eagerly too, with the same
meaning.

Where each element goes is its rank among the selected ones (a running count of the
mask), written by one scatter into `size` slots plus one slot that takes every element
past the size; the values are then read by a gather, so the derivative of extract and
compress with respect to the values reaches the elements taken.
"""
import math
import operator

import numpy as _np

from .. import ops
from ..errors import ConcretizationError, at_user_line
from ..ir.types import normalize_axis
from ..trace import Tracer
from ._common import _dtype_of, _ndim, _shape
from . import elementwise
from .creation import asarray
from .shapes import moveaxis, ravel, reshape, stack


def _selected(x):
    """NumPy's truth of each element: nonzero (NaN is nonzero, -0.0 is not); a
    constant's stays a constant, so that its count is known."""
    if not isinstance(x, Tracer):
        return _np.asarray(x) != 0
    return x if _dtype_of(x) == _np.bool_ else ops.not_equal(x, 0)


def _static_size(name, mask, size, counted="elements are selected", fill="0"):
    """`size` as a Python int; without it, the number of selected elements where it is
    known, or the error that says to pass size=."""
    if size is not None:
        if isinstance(size, Tracer) or isinstance(size, bool):
            raise TypeError(at_user_line(f"jitflow.numpy.{name}: size= must be a Python "
                                         f"int known when the function is traced, got "
                                         f"{size!r}"))
        size = operator.index(size)
        if size < 0:
            raise ValueError(at_user_line(f"jitflow.numpy.{name}: size= must not be "
                                          f"negative, got {size}"))
        return size
    if not isinstance(mask, Tracer):
        return int(_np.count_nonzero(mask))
    count = ops.reduce_sum(ops.cast(mask, _np.int64), axes=tuple(range(_ndim(mask))))
    if isinstance(count, Tracer):
        count = count._value(
            f"jitflow.numpy.{name}'s result, whose length is how many {counted},",
            f"pass a static size= (a Python int) to jitflow.numpy.{name}, as in JAX: "
            f"the result then holds the first `size` elements found, and fill_value= "
            f"(default {fill}) in the slots past the count")
    return int(count)


def _first_positions(mask, size):
    """(flat positions of the first `size` True elements of the 1-d `mask`, whether
    each of the `size` slots holds one)."""
    n = _shape(mask)[0]
    ones = ops.cast(mask, _np.int64)
    count = ops.reduce_sum(ones, axes=(0,))
    if n == 0:
        return (ops.broadcast_to(_np.int64(0), (size,)),
                ops.broadcast_to(_np.bool_(False), (size,)))
    rank = ops.subtract(ops.cumsum(ones, axis=0), _np.int64(1))
    kept = ops.logical_and(mask, ops.less(rank, _np.int64(size)))
    slot = ops.where(kept, rank, _np.int64(size))  # slot `size` takes the rest
    start = ops.broadcast_to(_np.int64(0), (size + 1,))
    positions = ops.scatter(start, ops.iota((n,), _np.int64), slot, axis=0)
    filled = ops.less(ops.iota((size,), _np.int64), count)
    return ops.slice_array(positions, starts=(0,), steps=(1,), sizes=(size,)), filled


def _unraveled(flat, shape):
    """The per-axis indices of C-order flat positions into `shape` (no zero sizes)."""
    strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    return [ops.remainder(ops.floor_divide(flat, _np.int64(stride)), _np.int64(size))
            for stride, size in zip(strides, shape)]


def _fills(name, fill_value, count, dtype):
    """fill_value as `count` scalars of `dtype` (one value, or one per result)."""
    values = 0 if fill_value is None else fill_value
    if isinstance(values, (tuple, list)):
        if len(values) != count:
            raise ValueError(at_user_line(
                f"jitflow.numpy.{name}: fill_value must be one value or {count} values "
                f"(one per result), got {len(values)}"))
    else:
        values = [values] * count
    fills = []
    for value in values:
        if _ndim(value) != 0:
            raise ValueError(at_user_line(f"jitflow.numpy.{name}: fill_value must be "
                                          f"scalars, got shape {_shape(value)}"))
        fills.append(ops.cast(value, dtype) if isinstance(value, Tracer) else
                     _np.asarray(value).astype(dtype))
    return fills


def _nonzero_indices(name, a, size, fill_value):
    if _ndim(a) == 0:
        raise ValueError(at_user_line(
            "Calling nonzero on 0d arrays is not allowed. Use "
            "np.atleast_1d(scalar).nonzero() instead."))
    mask = _selected(a)
    size = _static_size(name, mask, size)
    shape = _shape(a)
    positions, filled = _first_positions(ravel(mask), size)
    fills = _fills(name, fill_value, len(shape), _np.int64)
    if math.prod(shape) == 0:
        return tuple(ops.broadcast_to(f, (size,)) for f in fills)
    return tuple(ops.where(filled, index, fill)
                 for index, fill in zip(_unraveled(positions, shape), fills))


def nonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of `a`, one array per axis."""
    return _nonzero_indices("nonzero", asarray(a), size, fill_value)


def where(condition, x=None, y=None, *, size=None, fill_value=None):
    """x where `condition`, else y; with the condition alone, nonzero(condition)."""
    if x is None and y is None:
        return _nonzero_indices("where", asarray(condition), size, fill_value)
    if x is None or y is None:
        raise ValueError(at_user_line("either both or neither of x and y should be given"))
    if size is not None or fill_value is not None:
        raise TypeError(at_user_line("jitflow.numpy.where: size= and fill_value= go with "
                                     "the one-argument form where(condition)"))
    return elementwise.where(condition, x, y)


def flatnonzero(a, *, size=None, fill_value=None):
    """The flat (C-order) indices of the nonzero elements of `a`."""
    return _nonzero_indices("flatnonzero", ravel(asarray(a)), size, fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of `a`, one row per element."""
    a = asarray(a)
    if _ndim(a) == 0:  # NumPy's: one row of no indices if the value is nonzero
        rows = _static_size("argwhere", reshape(_selected(a), (1,)), size)
        return ops.broadcast_to(_np.int64(0), (rows, 0))
    indices = _nonzero_indices("argwhere", a, size, fill_value)
    return stack(indices, axis=1)


def _kept_condition(name, condition, length):
    """A 1-d condition held to `length` elements: NumPy raises IndexError if a True
    lies past them, which is known only for a condition whose value is."""
    condition = asarray(condition)
    condition = ravel(condition) if isinstance(condition, Tracer) else condition.ravel()
    extra = _shape(condition)[0] - length
    if extra > 0:
        beyond = condition[length:]
        if isinstance(beyond, Tracer):
            try:
                beyond = beyond._value(f"jitflow.numpy.{name}")
            except ConcretizationError:
                raise IndexError(at_user_line(
                    f"jitflow.numpy.{name}: the traced condition has {length + extra} "
                    f"elements, more than the {length} it selects from; NumPy raises "
                    f"IndexError when one of the extra ones is true, which is known only "
                    f"at run time: give a condition of at most {length} elements")) \
                    from None
        true_at = _np.flatnonzero(_np.asarray(beyond))
        if true_at.size:
            raise IndexError(at_user_line(f"index {length + true_at[0]} is out of bounds "
                                          f"for axis 0 with size {length}"))
        condition = condition[:length]
    return _selected(condition)


def _taken(name, values, condition, size, fill_value):
    """The elements of the 1-d `values` where `condition`, at most `size` of them,
    the slots past the count filled."""
    size = _static_size(name, condition, size)
    positions, filled = _first_positions(condition, size)
    dtype = _dtype_of(values)
    (fill,) = _fills(name, fill_value, 1, dtype)
    if _shape(values)[0] == 0:
        return ops.broadcast_to(fill, (size,))
    taken = ops.gather(values, positions, axis=0)
    return ops.where(filled, taken, fill)


def extract(condition, arr, *, size=None, fill_value=None):
    """The elements of `arr` (flattened) where `condition` (flattened) is nonzero."""
    values = ravel(asarray(arr))
    condition = _kept_condition("extract", condition, _shape(values)[0])
    return _taken("extract", values, condition, size, fill_value)


def compress(condition, a, axis=None, out=None, *, size=None, fill_value=None):
    """The slices of `a` along `axis` (of the flattened `a` without one) where the 1-d
    `condition` is nonzero."""
    if out is not None:
        raise TypeError(at_user_line("jitflow.numpy.compress: out= is not supported"))
    a = asarray(a)
    if _ndim(condition) != 1:
        raise ValueError(at_user_line("condition must be a 1-d array"))
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis(axis, _ndim(a))
    moved = moveaxis(a, axis, 0)
    condition = _kept_condition("compress", condition, _shape(moved)[0])
    size = _static_size("compress", condition, size)
    positions, filled = _first_positions(condition, size)
    (fill,) = _fills("compress", fill_value, 1, _dtype_of(a))
    rest = _shape(moved)[1:]
    if _shape(moved)[0] == 0:
        taken = ops.broadcast_to(fill, (size,) + rest)
    else:
        taken = ops.gather(moved, positions, axis=0)
        taken = ops.where(reshape(filled, (size,) + (1,) * len(rest)), taken, fill)
    return moveaxis(taken, 0, axis)


def trim_zeros(filt, trim="fb", axis=None, *, size=None, fill_value=None):
    """filt without its leading ('f') and trailing ('b') zeros along the axes (all
    without axis=). Where the values are known, NumPy's slice of filt (a traced one
    too, so derivatives reach it); a traced 1-d filt whose values are not takes size=:
    the first `size` elements kept, fill_value (0 unless given) past them."""
    if not isinstance(trim, str) or trim.lower() not in ("fb", "bf", "f", "b"):
        raise ValueError(at_user_line(f"unexpected character(s) in `trim`: {trim!r}"))
    trim = trim.lower()
    a = asarray(filt)
    known = a
    if isinstance(a, Tracer):
        try:
            known = a._value("jitflow.numpy.trim_zeros")
        except ConcretizationError:
            return _trimmed_traced(a, trim, axis, size, fill_value)
    return _trimmed_known(a, _np.asarray(known), trim, axis, size, fill_value)


def _trimmed_known(a, known, trim, axis, size, fill_value):
    """NumPy's slice of `a`, its values `known`: from the first to the last nonzero
    index along each axis trimmed (nothing where all are zero)."""
    axes = tuple(range(known.ndim)) if axis is None else \
        _np.lib.array_utils.normalize_axis_tuple(axis, known.ndim, argname="axis")
    if not axes:  # nothing to trim (a 0-d filt too)
        return a if size is None else _sized(a, size, fill_value)
    nonzero_at = _np.nonzero(known)
    slices = []
    for ax in range(known.ndim):
        if ax not in axes:
            slices.append(slice(None))
        elif nonzero_at[ax].size == 0:
            slices.append(slice(0, 0))
        else:
            slices.append(slice(int(nonzero_at[ax].min()) if "f" in trim else None,
                                int(nonzero_at[ax].max()) + 1 if "b" in trim else None))
    result = a[tuple(slices)]
    return result if size is None else _sized(result, size, fill_value)


def _sized(values, size, fill_value):
    """The 1-d `values` cut to `size` elements or filled past them."""
    size = _static_size("trim_zeros", None, size)
    (fill,) = _fills("trim_zeros", fill_value, 1, _dtype_of(values))
    count = _shape(values)[0]
    if count >= size:
        return values[:size]
    return elementwise.where(ops.less(ops.iota((size,), _np.int64), _np.int64(count)),
                             ops.gather(values, _np.minimum(_np.arange(size), count - 1),
                                        axis=0) if count else fill, fill)


def _trimmed_traced(a, trim, axis, size, fill_value):
    """A traced 1-d filt trimmed into `size` slots (the shape is known only at run
    time)."""
    if size is None or _ndim(a) != 1:
        a._value("jitflow.numpy.trim_zeros's result, whose shape depends on how many "
                 "zeros filt starts and ends with,",
                 "for a 1-d filt pass a static size= (a Python int) to "
                 "jitflow.numpy.trim_zeros: the result then holds the first `size` "
                 "elements kept, and fill_value= (default 0) past them")
    size = _static_size("trim_zeros", None, size)
    (fill,) = _fills("trim_zeros", fill_value, 1, _dtype_of(a))
    n = _shape(a)[0]
    if n == 0:
        return ops.broadcast_to(fill, (size,))
    nonzero = ops.cast(_selected(a), _np.int8)
    found = ops.greater(ops.reduce_max(nonzero, axes=(0,)), _np.int8(0))
    start = ops.argmax(nonzero, axis=0) if "f" in trim else _np.int64(0)
    stop = ops.subtract(_np.int64(n), ops.argmax(nonzero[::-1], axis=0)) if "b" in trim \
        else _np.int64(n)
    count = ops.where(found, ops.subtract(stop, start), _np.int64(0))
    slots = ops.iota((size,), _np.int64)
    positions = ops.minimum(ops.add(start, slots), _np.int64(n - 1))
    return ops.where(ops.less(slots, count), ops.gather(a, positions, axis=0), fill)


__all__ = ["argwhere", "compress", "extract", "flatnonzero", "nonzero", "trim_zeros",
           "where"]
