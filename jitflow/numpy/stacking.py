"""Joining and splitting: atleast_1d/2d/3d, vstack, hstack, dstack, column_stack,
append, split, array_split, hsplit, vsplit, dsplit, unstack, broadcast_arrays, meshgrid.

Each is NumPy's own recipe over concatenate, reshape and basic slicing, so the pieces a
split gives are views of the array (writes into them reach it, as in NumPy) and the
derivatives are those of the slices and concatenations.
"""
import operator

import numpy as _np

from ..errors import at_user_line
from ..ir.types import normalize_axis
from ..trace import Tracer
from ._common import _ndim, _shape, _static_shape
from .creation import asarray
from .shapes import broadcast_to, concatenate, ravel, reshape


def _at_least(arrays, ndim, shape_of):
    """Each of `arrays` as an array of at least `ndim` dimensions (shape_of(shape) gives
    the new shape of one with fewer); one array alone, several as a tuple (NumPy 2)."""
    results = []
    for a in arrays:
        a = asarray(a)
        results.append(a if _ndim(a) >= ndim else reshape(a, shape_of(_shape(a))))
    return results[0] if len(results) == 1 else tuple(results)


def atleast_1d(*arys):
    return _at_least(arys, 1, lambda shape: (1,))


def atleast_2d(*arys):
    return _at_least(arys, 2, lambda shape: (1,) + shape if shape else (1, 1))


def atleast_3d(*arys):
    # (N,) becomes (1, N, 1) and (M, N) becomes (M, N, 1), as NumPy lays them out.
    return _at_least(arys, 3, lambda shape: (1,) + shape + (1,) if len(shape) == 1
                     else shape + (1,) if shape else (1, 1, 1))


def _sequence(name, tup):
    """The arrays of a stacking function's sequence argument (NumPy refuses others)."""
    if isinstance(tup, (Tracer, _np.ndarray)) or not isinstance(tup, (list, tuple)):
        raise TypeError(at_user_line(f"{name}: arrays to stack must be passed as a "
                                     f"list or tuple, got {type(tup).__name__}"))
    return list(tup)


def _no_dtype(name, dtype, casting):
    if dtype is not None or casting != "same_kind":
        raise NotImplementedError(at_user_line(
            f"jitflow.numpy.{name}: dtype= and casting= are not supported; cast the "
            f"arrays first (a.astype(dtype))"))


def _as_list(arrays):
    return list(arrays) if isinstance(arrays, tuple) else [arrays]


def vstack(tup, *, dtype=None, casting="same_kind"):
    _no_dtype("vstack", dtype, casting)
    return concatenate(_as_list(atleast_2d(*_sequence("vstack", tup))), axis=0)


def hstack(tup, *, dtype=None, casting="same_kind"):
    _no_dtype("hstack", dtype, casting)
    arrays = _as_list(atleast_1d(*_sequence("hstack", tup)))
    # 1-d arrays join end to end; others along their second axis
    return concatenate(arrays, axis=0 if arrays and _ndim(arrays[0]) == 1 else 1)


def dstack(tup):
    return concatenate(_as_list(atleast_3d(*_sequence("dstack", tup))), axis=2)


def column_stack(tup):
    columns = []
    for a in _sequence("column_stack", tup):
        a = asarray(a)
        # a 1-d array is a column: (N,) becomes (N, 1); a scalar (1, 1)
        columns.append(a if _ndim(a) >= 2 else reshape(a, (-1, 1)))
    return concatenate(columns, axis=1)


def _static_int(value, what):
    if isinstance(value, Tracer):
        raise TypeError(at_user_line(
            f"{what} must be known when the function is traced, not a traced value "
            f"{value.type}: the pieces' shapes would depend on it (pass Python ints, or "
            f"mark the argument static: jitflow.function(fn, static_argnames=...))"))
    return operator.index(value)


def _division_points(length, indices_or_sections, name):
    """Where the pieces start and end: NumPy's sections (the first length % n pieces one
    longer) or the indices given, with Python's slicing rules for each piece."""
    if _ndim(indices_or_sections) == 1 or isinstance(indices_or_sections, (list, tuple)):
        indices = [_static_int(i, f"{name}: an index") for i in indices_or_sections]
        return [0, *indices, length]
    sections = _static_int(indices_or_sections, f"{name}: the number of sections")
    if sections <= 0:
        raise ValueError(at_user_line("number sections must be larger than 0."))
    each, extras = divmod(length, sections)
    sizes = [0] + extras * [each + 1] + (sections - extras) * [each]
    return list(_np.cumsum(sizes).tolist())


def array_split(ary, indices_or_sections, axis=0):
    ary = asarray(ary)
    axis = normalize_axis(axis, _ndim(ary))
    points = _division_points(_shape(ary)[axis], indices_or_sections, "array_split")
    before = (slice(None),) * axis
    return [ary[before + (slice(start, end),)] for start, end in zip(points, points[1:])]


def split(ary, indices_or_sections, axis=0):
    if not (_ndim(indices_or_sections) == 1 or
            isinstance(indices_or_sections, (list, tuple))):
        sections = _static_int(indices_or_sections, "split: the number of sections")
        length = _shape(ary)[normalize_axis(axis, _ndim(ary))]
        if sections == 0:  # NumPy's length % sections
            raise ZeroDivisionError(at_user_line("split: integer modulo by zero (0 "
                                                 "sections)"))
        if length % sections:
            raise ValueError(at_user_line(f"array split does not result in an equal "
                                          f"division (an axis of length {length} into "
                                          f"{sections} sections)"))
    return array_split(ary, indices_or_sections, axis)


def _split_along(name, axis_for, least):
    def function(ary, indices_or_sections):
        ndim = _ndim(ary)
        if ndim < least:
            raise ValueError(at_user_line(f"{name} only works on arrays of {least} or "
                                          f"more dimensions, got shape {_shape(ary)}"))
        return split(ary, indices_or_sections, axis_for(ndim))
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"NumPy's {name}, on arrays and traced values."
    return function


hsplit = _split_along("hsplit", lambda ndim: 1 if ndim > 1 else 0, 1)
vsplit = _split_along("vsplit", lambda ndim: 0, 2)
dsplit = _split_along("dsplit", lambda ndim: 2, 3)


def append(arr, values, axis=None):
    arr, values = asarray(arr), asarray(values)
    if axis is None:  # both flattened, as NumPy does
        arr, values, axis = ravel(arr), ravel(values), 0
    return concatenate([arr, values], axis=axis)


def unstack(x, /, *, axis=0):
    """The slices of x along `axis`, as a tuple of views."""
    x = asarray(x)
    if _ndim(x) == 0:
        raise ValueError(at_user_line("Input array must be at least 1-d."))
    axis = normalize_axis(axis, _ndim(x))
    before = (slice(None),) * axis
    return tuple(x[before + (i,)] for i in range(_shape(x)[axis]))


def broadcast_arrays(*args):
    arrays = [asarray(a) for a in args]
    shape = _np.broadcast_shapes(*(_shape(a) for a in arrays))
    return tuple(a if _shape(a) == shape else broadcast_to(a, shape) for a in arrays)


def broadcast_shapes(*args):
    """The shape the shapes `args` broadcast to (static, as shapes are)."""
    return _np.broadcast_shapes(*(_static_shape(shape, "jitflow.numpy.broadcast_shapes")
                                  for shape in args))


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(at_user_line("Valid values for `indexing` are 'xy' and 'ij'."))
    ndim = len(xi)
    grids = []
    for i, x in enumerate(xi):
        shape = [1] * ndim
        shape[i] = -1
        grids.append(reshape(asarray(x), shape))
    if indexing == "xy" and ndim > 1:  # the first two axes are (y, x)
        grids = [reshape(g, (_shape(g)[1], _shape(g)[0]) + _shape(g)[2:]) for g in grids]
    if not sparse:
        grids = list(broadcast_arrays(*grids))
    if copy:
        grids = [g.copy() for g in grids]
    return tuple(grids)


__all__ = ["append", "broadcast_arrays", "broadcast_shapes", "meshgrid", "unstack", "array_split", "atleast_1d", "atleast_2d", "atleast_3d", "column_stack", "dsplit", "dstack", "hsplit", "hstack", "split", "vsplit", "vstack"]
