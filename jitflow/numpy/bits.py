"""packbits and unpackbits: the truth of elements as the bits of uint8s, and back.

packbits pads the chosen axis (the flattened array without one) with zeros to a
multiple of 8, views it as groups of 8 and sums each group's bits times their place
values (128 down to 1, or 1 up to 128 for bitorder='little'). unpackbits shifts each
byte right by each bit's place and keeps the lowest bit. Both are fused elementwise
work and a reduction, for traced values as for NumPy arrays.
"""
import operator

import numpy as _np

from .. import ops
from ..errors import at_user_line
from ..ir.types import normalize_axis
from ._common import _dtype_of, _ndim, _shape
from .creation import asarray
from .selecting import _selected
from .shapes import concatenate, moveaxis, ravel, reshape

_PLACES = {"big": _np.array([7, 6, 5, 4, 3, 2, 1, 0], _np.uint8),
           "little": _np.array([0, 1, 2, 3, 4, 5, 6, 7], _np.uint8)}


def _string(bitorder):
    if not isinstance(bitorder, str):
        raise TypeError(at_user_line(f"bitorder must be str, not "
                                     f"{type(bitorder).__name__}"))


def _packing_places(bitorder):
    """NumPy's packbits reads 'little' and 'big' (and what begins with them)."""
    _string(bitorder)
    for order in ("little", "big"):
        if bitorder.startswith(order):
            return _PLACES[order]
    raise ValueError(at_user_line("'order' must be either 'little' or 'big'"))


def _unpacking_places(bitorder):
    """NumPy's unpackbits reads the first letter."""
    _string(bitorder)
    for order in ("little", "big"):
        if bitorder[:1] == order[0]:
            return _PLACES[order]
    raise ValueError(at_user_line("'order' must begin with 'l' or 'b'"))


def _along_last(a, axis):
    """(a with `axis` last, that axis's place): the flattened array without one."""
    if axis is None:
        return ravel(a), 0
    a = ravel(a) if _ndim(a) == 0 else a  # NumPy takes a 0-d one as 1-d
    axis = normalize_axis(axis, _ndim(a))
    return moveaxis(a, axis, -1), axis


def _padded(x, length):
    """x's last axis padded with zeros to `length`, or cut to it."""
    missing = length - _shape(x)[-1]
    if missing <= 0:
        return x[..., :length]
    zeros = ops.broadcast_to(_np.zeros((), _dtype_of(x)), _shape(x)[:-1] + (missing,))
    return concatenate([x, zeros], axis=-1)


def packbits(a, /, axis=None, bitorder="big"):
    """Each group of 8 elements along `axis` (whether each is nonzero) as one uint8."""
    a = asarray(a)
    if _dtype_of(a).kind not in "biu":
        raise TypeError(at_user_line("Expected an input array of integer or boolean data "
                                     "type"))
    places = _packing_places(bitorder)
    bits, axis = _along_last(a, axis)
    bits = ops.cast(_selected(bits), _np.uint8)
    bytes_ = -(-_shape(bits)[-1] // 8)
    groups = reshape(_padded(bits, 8 * bytes_), _shape(bits)[:-1] + (bytes_, 8))
    values = ops.left_shift(groups, places)  # each bit at its place: their sum is an or
    packed = ops.cast(ops.reduce_sum(values, axes=(_ndim(groups) - 1,)), _np.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """Each uint8 along `axis` as its 8 bits (uint8 0s and 1s), `count` of them kept
    (all, or the first `count`, padded with zeros past them, or all but -count)."""
    a = asarray(a)
    if _dtype_of(a) != _np.uint8:
        raise TypeError(at_user_line("Expected an input array of unsigned byte data "
                                     "type"))
    places = _unpacking_places(bitorder)
    moved, axis = _along_last(a, axis)
    shape = _shape(moved)
    bits = ops.bitwise_and(ops.right_shift(reshape(moved, shape + (1,)), places),
                           _np.uint8(1))
    bits = reshape(bits, shape[:-1] + (8 * shape[-1],))
    if count is not None:
        count = operator.index(count)
        if count < 0 and -count > 8 * shape[-1]:
            raise ValueError(at_user_line("-count larger than number of elements"))
        bits = _padded(bits, count if count >= 0 else 8 * shape[-1] + count)
    return moveaxis(bits, -1, axis)


__all__ = ["packbits", "unpackbits"]
