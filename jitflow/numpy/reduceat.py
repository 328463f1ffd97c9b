"""ufunc.reduceat for add, multiply, maximum and minimum: the reductions of the slices
array[indices[i]:indices[i+1]] along an axis (of array[indices[i]] alone where the next
index is not larger; the last slice runs to the end), as NumPy defines it.

The indices must be known when the function is traced (NumPy's IndexError for one out of
bounds is then raised there). Each slice is a row of a constant mask over the axis: the
elements outside it are replaced by the reduction's identity and every row is reduced at
once (work proportional to the number of slices times the length of the axis).
"""
import numpy as _np

from .. import ops
from ..errors import at_user_line
from ..ir.types import normalize_axis
from ..trace import Tracer
from ._common import _dtype_of, _ndim, _shape
from .creation import asarray
from .elementwise import astype, where
from .reductions import max, min, prod, sum
from .shapes import moveaxis, reshape

_REDUCTIONS = {"add": sum, "multiply": prod, "maximum": max, "minimum": min}


def _identity(name, dtype):
    """The value that leaves the reduction unchanged (-0.0 for float sums)."""
    if name == "add":
        return _np.array(-0.0 if dtype.kind == "f" else 0).astype(dtype)
    if name == "multiply":
        return _np.array(1).astype(dtype)
    if dtype.kind == "f":
        return _np.array(-_np.inf if name == "maximum" else _np.inf, dtype)
    if dtype.kind == "b":
        return _np.array(name == "minimum")
    info = _np.iinfo(dtype)
    return _np.array(info.min if name == "maximum" else info.max, dtype)


def _slices(name, indices, length):
    """The (len(indices), length) mask of the elements each slice reduces."""
    if isinstance(indices, Tracer):
        raise TypeError(at_user_line(
            f"numpy.{name}.reduceat: the indices must be known when the function is "
            f"traced (a NumPy array or a list), not a traced value {indices.type}"))
    indices = _np.asarray(indices)
    if indices.ndim != 1 or (indices.size and indices.dtype.kind not in "iu"):
        raise TypeError(at_user_line(f"numpy.{name}.reduceat: the indices must be a 1-d "
                                     f"array of integers"))
    for index in indices:
        if not 0 <= index < length:
            raise IndexError(at_user_line(f"index {index} out-of-bounds in "
                                          f"{name}.reduceat [0, {length})"))
    starts = indices.astype(_np.int64)
    stops = _np.append(starts[1:], length)
    stops = _np.where(stops > starts, stops, starts + 1)
    positions = _np.arange(length)
    return (positions >= starts[:, None]) & (positions < stops[:, None])


def reduceat(name, array, indices, axis=0, dtype=None, out=None):
    """numpy.<name>.reduceat(array, indices, axis, dtype)."""
    if name not in _REDUCTIONS:
        raise TypeError(at_user_line(f"numpy.{name}.reduceat is not supported by jitflow "
                                     f"(add, multiply, maximum and minimum are)"))
    if out is not None:
        raise TypeError(at_user_line(f"numpy.{name}.reduceat: out= is not supported"))
    array = asarray(array)
    if _ndim(array) == 0:
        raise TypeError(at_user_line(f"numpy.{name}.reduceat of a 0-d array (it needs an "
                                     f"axis)"))
    axis = normalize_axis(axis, _ndim(array))
    if dtype is not None:
        array = astype(array, dtype)
    moved = moveaxis(array, axis, -1)
    length = _shape(moved)[-1]
    mask = _slices(name, indices, length)
    identity = _identity(name, _dtype_of(array))
    if length == 0:  # no slices either: reduce no rows of one identity each
        kept = ops.broadcast_to(identity, _shape(moved)[:-1] + (0, 1))
    else:
        rows = reshape(moved, _shape(moved)[:-1] + (1, length))
        kept = where(mask, rows, identity)
    reduced = _REDUCTIONS[name](kept, axis=-1, **({} if name in ("maximum", "minimum")
                                                  else {"dtype": dtype}))
    if name == "add" and _dtype_of(reduced).kind == "f":
        reduced = _signed_zero_sums(reduced, kept)
    return moveaxis(reduced, -1, axis)


def _signed_zero_sums(sums, kept):
    """NumPy adds a slice's elements in turn from its first, so a slice of -0.0 alone
    sums to -0.0 (a sum from +0.0 would give 0.0). That sum is exactly +0.0, and
    -(0.0 - sum) is then -0.0, with the sum's own derivative: -|sum|'s was 0 there."""
    negative_zero = ops.logical_and(ops.equal(kept, 0), ops.signbit(kept))
    all_negative = ops.equal(sum(ops.logical_not(negative_zero), axis=-1), 0)
    return where(all_negative, ops.negative(ops.subtract(0.0, sums)), sums)
