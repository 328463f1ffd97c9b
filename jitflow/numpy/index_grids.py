"""Grids of indices: indices (dense and sparse), ix_ (an open mesh of index arrays),
mask_indices (the positions a mask function keeps) and fromfunction (a function of the
index grids).

Their shapes are known when a function is traced, so in a traced function the grids
are iota nodes (computed in the loops that read them, never stored as constants), and
fromfunction's function is traced with them; eagerly they are NumPy arrays.
"""
import numpy as _np

from .. import ops
from ..errors import at_user_line
from ..trace import Tracer
from ._common import _dtype_of, _ndim, _shape, _static_shape
from .creation import asarray, ones
from .selecting import nonzero
from .shapes import reshape, stack


def _grids(dimensions, dtype, sparse, name):
    """One index grid per axis of `dimensions` (each of shape 1 but along its own axis
    when sparse)."""
    dims = _static_shape(dimensions, f"jitflow.numpy.{name}: dimensions")
    if any(dim < 0 for dim in dims):
        raise ValueError(at_user_line("negative dimensions are not allowed"))
    dtype = _np.dtype(dtype)
    if dtype == _np.bool_ and any(dim > 2 for dim in dims):  # NumPy's arange refuses
        raise TypeError(at_user_line("arange() is only supported for booleans when the "
                                     "result has at most length 2."))
    grids = []
    for axis, dim in enumerate(dims):
        shape = (1,) * axis + (dim,) + (1,) * (len(dims) - axis - 1) if sparse else dims
        grids.append(ops.cast(ops.iota(shape, _np.int64, axis=axis), dtype))
    return grids


def indices(dimensions, dtype=int, sparse=False):
    """The index of each position of an array of shape `dimensions` along each axis:
    one array of shape (ndim, *dimensions), or (sparse) a tuple of broadcastable ones."""
    grids = _grids(dimensions, dtype, sparse, "indices")
    if sparse:
        return tuple(grids)
    if not grids:
        return _np.zeros((0,), dtype)
    return stack(grids)


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """function(i0, i1, ..., **kwargs), each i the index grid of one axis of `shape`
    (traced index arrays in a traced function)."""
    if like is not None:
        raise TypeError(at_user_line("jitflow.numpy.fromfunction: like= is not supported"))
    return function(*_grids(shape, dtype, False, "fromfunction"), **kwargs)


def ix_(*args):
    """Index arrays that broadcast into the open mesh of the 1-d sequences `args` (a
    boolean one stands for the positions where it is true)."""
    meshes = []
    for k, new in enumerate(args):
        listed = not isinstance(new, (_np.ndarray, Tracer))
        new = asarray(new)
        if listed and _shape(new) == (0,):
            new = ops.cast(new, _np.intp)  # an empty sequence indexes, as NumPy types it
        if _ndim(new) != 1:
            raise ValueError(at_user_line("Cross index must be 1 dimensional"))
        if _dtype_of(new) == _np.bool_:
            new = nonzero(_known_mask(new))[0]
        meshes.append(reshape(new, (1,) * k + (_shape(new)[0],) +
                              (1,) * (len(args) - k - 1)))
    return tuple(meshes)


def _known_mask(mask):
    if not isinstance(mask, Tracer):
        return mask
    return mask._value(
        "jitflow.numpy.ix_ of a boolean mask, whose index array is as long as the count "
        "of its true elements,",
        "pass the positions instead: jitflow.numpy.nonzero(mask, size=n)[0] with a "
        "Python int n, or a mask whose value is known when the function is traced")


def mask_indices(n, mask_func, k=0):
    """The (row, column) indices where mask_func(ones((n, n)), k) is nonzero (triu and
    tril give the triangles)."""
    return nonzero(mask_func(ones((n, n), int), k) != 0)


__all__ = ["fromfunction", "indices", "ix_", "mask_indices"]
