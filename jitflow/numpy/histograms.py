"""Histograms of points in several dimensions: histogramdd and histogram2d.

As histogram's (binning.py), the edges must be known when a function is traced: per
dimension an array of edges (traced edges must increase, as NumPy requires), or a
number of bins with a range (without one, the data's own minimum and maximum, known
only eagerly). Each point's bin along each dimension is searchsorted's count of the
edges before it (a point on the last edge goes in the last bin; NaN and points outside
go in none), the bins are numbered in C order, and one scatter_add counts them (or sums
the weights), so the derivative with respect to the weights is a gather. Counts are
float64, as NumPy gives them.
"""
import builtins
import math
import operator

import numpy as _np
from numpy.lib._histograms_impl import _get_outer_edges

from .. import ops
from ..errors import ConcretizationError, at_user_line
from ._common import _ndim, _python_scalar, _shape
from .binning import _binned, _concrete
from .creation import asarray
from .rearranging import diff
from .searching import searchsorted
from .shapes import ravel, reshape, stack, transpose


def _points(sample):
    """The sample as an (N, D) array: rows are points (a sequence of D coordinate
    arrays, or a 1-d array of one coordinate, stand for its transpose)."""
    if isinstance(sample, (list, tuple)):
        return transpose(stack([asarray(column) for column in sample]))
    sample = asarray(sample)
    return sample if _ndim(sample) == 2 else transpose(reshape(sample, (1, -1)))


def _bins_per_dimension(bins, count):
    try:
        if len(bins) != count:
            raise ValueError(at_user_line("The dimension of bins must be equal to the "
                                          "dimension of the sample x."))
        return list(bins)
    except TypeError:  # a number of bins for every dimension
        return [bins] * count


def _dimension_edges(column, bins, range_, i):
    """NumPy's edges along one dimension: the array given, or `bins` equal bins over
    the range (the column's own, when its values are known)."""
    if _ndim(bins) == 1:
        edges = asarray(bins)
        known = _concrete(edges, "histogramdd", "the bin edges", "")
        if known is not None and _np.any(known[:-1] > known[1:]):
            raise ValueError(at_user_line(f"`bins[{i}]` must be monotonically increasing, "
                                          f"when an array"))
        return edges
    if _ndim(bins) != 0:
        raise ValueError(at_user_line(f"`bins[{i}]` must be a scalar or 1d array"))
    bins = _python_scalar(bins, f"jitflow.numpy.histogramdd: bins[{i}]")
    if bins < 1:
        raise ValueError(at_user_line(f"`bins[{i}]` must be positive, when an integer"))
    if range_ is not None:
        values = _np.zeros(0)
        range_ = tuple(_python_scalar(end, "jitflow.numpy.histogramdd: range")
                       for end in range_)
    else:
        values = _concrete(column, "histogramdd", "the range of the values", "")
        if values is None:
            raise ConcretizationError(at_user_line(
                "jitflow.numpy.histogramdd of traced points with a number of bins: the "
                "bins span the values' minimum to maximum, known only at run time; pass "
                "range= (a (low, high) of Python numbers per dimension), or the edges"))
    try:
        count = operator.index(bins)
    except TypeError as error:
        raise TypeError(at_user_line(f"`bins[{i}]` must be an integer, when a "
                                     f"scalar")) from error
    first, last = _get_outer_edges(values, range_)
    return _np.linspace(first, last, count + 1)


def _bin_of_each_point(column, edges):
    """0 below the first edge, len(edges) above the last (and NaN); a point on the
    last edge goes in the last bin."""
    index = searchsorted(edges, column, side="right")
    on_last_edge = ops.equal(column, edges[-1])
    return ops.where(on_last_edge, ops.subtract(index, _np.int64(1)), index)


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """(counts of the points in each bin, float64 with one axis per dimension, the list
    of each dimension's edges)."""
    points = _points(sample)
    count, dimensions = _shape(points)
    per_dimension = _bins_per_dimension(bins, dimensions)
    if range is None:
        range = (None,) * dimensions
    elif len(range) != dimensions:
        raise ValueError(at_user_line("range argument must have one entry per dimension"))
    # (histogramdd's argument `range` hides the builtin: builtins.range)
    columns = [points[:, i] for i in builtins.range(dimensions)]
    edges = [_dimension_edges(columns[i], per_dimension[i], range[i], i)
             for i in builtins.range(dimensions)]
    sizes = [_shape(e)[0] + 1 for e in edges]  # with a bin for outliers at each end
    flat = ops.broadcast_to(_np.int64(0), (count,))
    for column, edge, stride in zip(columns, edges, _c_strides(sizes)):
        flat = ops.add(flat, ops.multiply(_bin_of_each_point(column, edge),
                                          _np.int64(stride)))
    if weights is not None:
        weights = ravel(asarray(weights))
        if _shape(weights) != (count,):
            raise ValueError(at_user_line("The weights and list don't have the same "
                                          "length."))
    counts = _binned(flat, weights, math.prod(sizes), _np.float64)
    hist = ops.cast(reshape(counts, sizes), _np.float64)
    hist = hist[tuple(slice(1, -1) for _ in sizes)]  # the outliers dropped
    if density:
        total = ops.reduce_sum(hist, axes=tuple(builtins.range(dimensions)))
        for i, edge in enumerate(edges):
            shape = [1] * dimensions
            shape[i] = sizes[i] - 2
            hist = ops.divide(hist, reshape(ops.cast(diff(edge), _np.float64), shape))
        hist = ops.divide(hist, total)
    return hist, edges


def _c_strides(sizes):
    return [math.prod(sizes[i + 1:]) for i in builtins.range(len(sizes))]


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """(counts of the points (x, y) in each bin, x's edges, y's edges)."""
    try:
        given = len(bins)
    except TypeError:
        given = 1
    if given not in (1, 2):  # one array of edges for both
        bins = [asarray(bins), asarray(bins)]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]


__all__ = ["histogram2d", "histogramdd"]
