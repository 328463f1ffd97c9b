"""Counting into bins and reading between points: bincount, digitize, histogram, interp.

Where a value falls among edges is searchsorted's count of the edges before it (every
value compared with every edge), so nothing here sorts. A count per bin is a
scatter_add into as many bins as there are, one more taking what falls outside, so the
derivative of bincount and histogram with respect to the weights is a gather.

How many bins bincount makes depends on the largest value; traced, it takes the static
`length=` of JAX (values from `length` on, and negative ones, are dropped: their count
is known only at run time). histogram's edges must be known when the function is traced:
an array of edges (traced edges must increase, as NumPy requires of them), or a number
of bins with `range=` (without range=, the data's own minimum and maximum, known only
eagerly).
"""
import operator

import numpy as _np

from .. import ops
from ..errors import ConcretizationError, at_user_line
from ..trace import Tracer
from ._common import _dtype_of, _ndim, _shape
from .creation import asarray
from .elementwise import where
from .searching import searchsorted
from .shapes import ravel, reshape, take


def _concrete(x, name, what, advice):
    """x's value where it is known: a NumPy array, or a traced value under an eager
    derivative; None where it is known only at run time."""
    if not isinstance(x, Tracer):
        return _np.asarray(x)
    try:
        return _np.asarray(x._value(f"jitflow.numpy.{name}: {what}", advice))
    except ConcretizationError:
        return None


def _binned(index, weights, length, dtype):
    """Counts (or sums of `weights`) of the `index` values in [0, length): a
    scatter_add into one more bin, which takes the others."""
    inside = ops.logical_and(ops.greater_equal(index, 0), ops.less(index, length))
    slot = ops.where(inside, index, _np.int64(length))
    updates = ops.broadcast_to(_np.int64(1), _shape(index)) if weights is None else \
        ops.cast(weights, dtype)
    counts = ops.scatter_add(updates, slot, axis=0, shape=(length + 1,))
    return ops.slice_array(counts, starts=(0,), steps=(1,), sizes=(length,))


def bincount(x, weights=None, minlength=0, *, length=None):
    """How many times each of 0, 1, ... occurs in the 1-d non-negative integers x (the
    sum of their weights where weights are given, in float64)."""
    x = asarray(x)
    if _ndim(x) != 1:
        raise ValueError(at_user_line("object too deep for desired array"))
    if _dtype_of(x).kind not in "bi":
        raise TypeError(at_user_line(f"Cannot cast array data from dtype('{_dtype_of(x)}') "
                                     f"to dtype('int64') according to the rule 'safe'"))
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError(at_user_line("'minlength' must not be negative"))
    if weights is not None:
        weights = asarray(weights)
        if _shape(weights) != _shape(x):
            raise ValueError(at_user_line("The weights and list don't have the same "
                                          "length."))
    x = ops.cast(x, _np.int64)
    if length is None:
        length = _length_of(x, minlength)
    elif isinstance(length, Tracer) or operator.index(length) < 0:
        raise ValueError(at_user_line(f"jitflow.numpy.bincount: length= must be a "
                                      f"non-negative Python int, got {length!r}"))
    if _shape(x)[0] == 0:  # NumPy's: integer zeros, weights or not
        weights = None
    return _binned(x, weights, operator.index(length), _np.float64)


def _length_of(x, minlength):
    """NumPy's length of bincount's result, from the values of x."""
    values = _concrete(x, "bincount", "the length of the result, one more than the "
                       "largest value,", "")
    if values is None:
        raise ConcretizationError(at_user_line(
            "jitflow.numpy.bincount of a traced value: the length of the result is one "
            "more than the largest value, known only at run time; pass a static length= "
            "(a Python int), as in JAX: values from `length` on are then dropped"))
    if values.size and values.min() < 0:
        raise ValueError(at_user_line("'list' argument must have no negative elements"))
    return max(int(values.max()) + 1 if values.size else 0, minlength)


def digitize(x, bins, right=False):
    """The index of the bin each x falls in, for increasing or decreasing edges."""
    x, bins = asarray(x), asarray(bins)
    if _ndim(bins) != 1:
        raise ValueError(at_user_line("object too deep for desired array"))
    edges = _concrete(bins, "digitize", "the order of the bins", "")
    side = "left" if right else "right"
    n = _shape(bins)[0]
    ascending = searchsorted(bins, x, side=side)
    descending = ops.subtract(_np.int64(n), searchsorted(bins[::-1], x, side=side))
    if edges is None:  # which way the traced edges go, at run time
        return where(ops.less_equal(bins[0], bins[-1]) if n else True, ascending,
                     descending)
    increasing, decreasing = (bool(_np.all(edges[1:] >= edges[:-1])),
                              bool(_np.all(edges[1:] <= edges[:-1])))
    if not increasing and not decreasing:
        raise ValueError(at_user_line("bins must be monotonically increasing or "
                                      "decreasing"))
    return ascending if increasing else descending


def histogram(a, bins=10, range=None, density=None, weights=None):
    """(counts, edges) of the values of `a` (flattened) in the bins; the last bin holds
    its right edge too, and values outside the edges (NaN too) are counted in none."""
    a = ravel(asarray(a))
    if weights is not None:
        weights = ravel(asarray(weights))
        if _shape(weights) != _shape(a):
            raise ValueError(at_user_line("weights should have the same shape as a."))
    edges = _edges(a, bins, range)
    n = _shape(edges)[0] - 1
    index = ops.subtract(searchsorted(edges, a, side="right"), _np.int64(1))
    index = ops.where(ops.equal(a, edges[-1]), _np.int64(n - 1), index)
    inside = ops.logical_and(ops.greater_equal(a, edges[0]), ops.less_equal(a, edges[-1]))
    index = ops.where(inside, index, _np.int64(n))
    if weights is None:
        counts = _binned(index, None, n, None)
    else:  # NumPy sums the weights in float64, then gives them their own dtype
        counts = ops.cast(_binned(index, weights, n, _np.float64), _dtype_of(weights))
    if not density:
        return counts, edges
    widths = ops.cast(ops.subtract(edges[1:], edges[:-1]), _np.float64)
    total = ops.reduce_sum(counts, axes=(0,))
    return ops.divide(ops.divide(counts, widths), total), edges


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges histogram(a, bins, range) counts into."""
    a = ravel(asarray(a))
    if weights is not None and _shape(weights) != _shape(a):
        raise ValueError(at_user_line("weights should have the same shape as a."))
    return _edges(a, bins, range, "histogram_bin_edges")


def _edges(a, bins, range, name="histogram"):
    """NumPy's bin edges: an array given, or `bins` equal bins over `range` (or over
    the values' own range, when they are known)."""
    if isinstance(bins, str):
        raise NotImplementedError(at_user_line(
            f"jitflow.numpy.{name}: bins={bins!r} (an estimator of the bin width) is "
            f"not supported; give a number of bins and range=, or the edges"))
    if _ndim(bins) == 1:
        edges = asarray(bins)
        known = _concrete(edges, name, "the bin edges", "")
        if known is not None and _np.any(known[:-1] > known[1:]):
            raise ValueError(at_user_line("`bins` must increase monotonically, when an "
                                          "array"))
        if _shape(edges)[0] < 1:
            raise ValueError(at_user_line("`bins` must have at least one edge"))
        return edges
    if isinstance(bins, Tracer):
        raise TypeError(at_user_line(f"jitflow.numpy.{name}: a number of bins must be "
                                     "a Python int known when the function is traced"))
    if range is not None:
        # the dtype decides the edges' dtype (NumPy reads bools as uint8)
        values = _np.zeros(0, _np.uint8 if _dtype_of(a) == _np.bool_ else _dtype_of(a))
    else:
        values = _concrete(a, name, "the range of the values", "")
        if values is None:
            raise ConcretizationError(at_user_line(
                f"jitflow.numpy.{name} of a traced value with a number of bins: the "
                "bins span the values' minimum to maximum, known only at run time; pass "
                "range=(low, high) (Python numbers), or the bin edges as an array"))
    return _np.histogram_bin_edges(values, bins, range)


def interp(x, xp, fp, left=None, right=None, period=None):
    """NumPy's piecewise-linear interpolation, in float64: fp[j] plus the slope of the
    segment [xp[j], xp[j+1]] holding x times x - xp[j] (or, where that is NaN, from
    the segment's right end); left and right (fp's ends by default) beyond xp."""
    if period is not None:
        raise NotImplementedError(at_user_line(
            "jitflow.numpy.interp: period= (which sorts the points) is not supported"))
    x, xp, fp = (ops.cast(asarray(v), _np.float64) for v in (x, xp, fp))
    if _ndim(xp) != 1 or _ndim(fp) != 1:
        raise ValueError(at_user_line("object too deep for desired array"))
    n = _shape(xp)[0]
    if _shape(fp)[0] != n:
        raise ValueError(at_user_line("fp and xp are not of the same length."))
    if n == 0:
        raise ValueError(at_user_line("array of sample points is empty"))
    left = fp[0] if left is None else ops.cast(asarray(left), _np.float64)
    right = fp[-1] if right is None else ops.cast(asarray(right), _np.float64)
    j = ops.subtract(searchsorted(xp, x, side="right"), _np.int64(1))
    inner = _between_points(x, xp, fp, j) if n > 1 else fp[0]
    on_last = ops.equal(x, xp[-1])
    result = ops.where(ops.less(x, xp[0]), left,
                       ops.where(ops.greater(x, xp[-1]), right,
                                 ops.where(on_last, fp[-1], inner)))
    return ops.where(ops.isnan(x), x, result)


def _between_points(x, xp, fp, j):
    """The value on segment j (held to the segments there are) at x."""
    j = ops.minimum(ops.maximum(j, _np.int64(0)), _np.int64(_shape(xp)[0] - 2))
    x0, x1 = take(xp, j), take(xp, ops.add(j, _np.int64(1)))
    y0, y1 = take(fp, j), take(fp, ops.add(j, _np.int64(1)))
    slope = ops.divide(ops.subtract(y1, y0), ops.subtract(x1, x0))
    value = ops.add(ops.multiply(slope, ops.subtract(x, x0)), y0)
    other = ops.add(ops.multiply(slope, ops.subtract(x, x1)), y1)
    value = ops.where(ops.isnan(value), other, value)
    value = ops.where(ops.logical_and(ops.isnan(value), ops.equal(y0, y1)), y0, value)
    return ops.where(ops.equal(x, x0), y0, value)


__all__ = ["bincount", "digitize", "histogram", "histogram_bin_edges", "interp"]
