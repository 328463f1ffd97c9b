"""Rearranging elements: flip, fliplr, flipud, rot90, roll, tile, repeat, diff.

flip and rot90 are views in NumPy (reversed slices and transposes), and are built from
them here, so writes through them reach the array. The others make new arrays from
slices, broadcasts and concatenations, whose derivatives the primitives give.
"""
import math
import operator

import numpy as _np

from .. import ops
from ..errors import at_user_line
from ..ir.types import normalize_axes, normalize_axis
from ..trace import Tracer, aliases
from ._common import _dtype_of, _ndim, _shape
from .creation import asarray
from .shapes import broadcast_to, concatenate, ravel, reshape, take, transpose
from .stacking import _static_int


def flip(m, axis=None):
    m = asarray(m)
    ndim = _ndim(m)
    axes = range(ndim) if axis is None else normalize_axes(axis, ndim)
    return m[tuple(slice(None, None, -1) if i in axes else slice(None)
                   for i in range(ndim))]


def fliplr(m):
    m = asarray(m)
    if _ndim(m) < 2:
        raise ValueError(at_user_line(f"fliplr: Input must be >= 2-d, got shape "
                                      f"{_shape(m)}"))
    return m[:, ::-1]


def flipud(m):
    m = asarray(m)
    if _ndim(m) < 1:
        raise ValueError(at_user_line("flipud: Input must be >= 1-d, got a 0-d array"))
    return m[::-1, ...]


def rot90(m, k=1, axes=(0, 1)):
    m = asarray(m)
    ndim, axes = _ndim(m), tuple(axes)
    if len(axes) != 2:
        raise ValueError(at_user_line("rot90: len(axes) must be 2."))
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == ndim:
        raise ValueError(at_user_line(f"rot90: Axes must be different, got {axes}"))
    first, second = (normalize_axis(a, ndim, what="rot90 axes") for a in axes)
    k = _static_int(k, "rot90: k") % 4
    if k == 0:
        return m[...]
    if k == 2:
        return flip(flip(m, first), second)
    order = list(range(ndim))
    order[first], order[second] = order[second], order[first]
    if k == 1:
        return transpose(flip(m, second), order)
    return flip(transpose(m, order), second)


def roll(a, shift, axis=None):
    a = asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), _shape(a))
    shifts, axes = _np.broadcast_arrays(_static_ints(shift, "roll: shift"),
                                        _static_ints(axis, "roll: axis"))
    ndim, total = _ndim(a), {}
    for s, ax in zip(shifts.ravel().tolist(), axes.ravel().tolist()):
        ax = normalize_axis(ax, ndim)
        total[ax] = total.get(ax, 0) + s
    result = a
    for ax, s in sorted(total.items()):
        length = _shape(a)[ax]
        if length == 0 or s % length == 0:
            continue
        cut = length - s % length  # the last s elements come first
        before = (slice(None),) * ax
        result = concatenate([result[before + (slice(cut, None),)],
                              result[before + (slice(None, cut),)]], axis=ax)
    return _new_array(result, a)


def _static_ints(value, what):
    if isinstance(value, (list, tuple)):
        return _np.array([_static_int(v, what) for v in value], _np.int64)
    return _np.array(_static_int(value, what), _np.int64)


def _new_array(result, a):
    """NumPy's roll, tile and repeat give a new array even where nothing moves."""
    if isinstance(result, Tracer):
        return aliases.copy(a) if result is a else result
    return _np.array(result, copy=True) if _np.shares_memory(result, a) else result


def tile(A, reps):
    reps = tuple(_static_int(r, "tile: reps") for r in
                 (reps if isinstance(reps, (list, tuple)) or _ndim(reps) else [reps]))
    A = asarray(A)
    ndim = max(len(reps), _ndim(A))
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - _ndim(A)) + tuple(_shape(A))
    # NumPy repeats only a non-empty array (where a negative count raises); an empty one
    # is reshaped to the product shape, which a negative count leaves empty only
    # along an axis of length 0
    if any(r < 0 for r in reps) and (math.prod(shape) > 0 or
                                     any(r * s < 0 for r, s in zip(reps, shape))):
        raise ValueError(at_user_line(f"tile: negative dimensions are not allowed, got "
                                      f"reps {reps}"))
    reps = tuple(max(r, 0) for r in reps)  # (left: axes of length 0, which stay so)
    # each axis of length s repeated r times: (1, s) broadcast to (r, s), then joined
    spread = ops.broadcast_to(ops.reshape(A, [d for s in shape for d in (1, s)]),
                              [d for r, s in zip(reps, shape) for d in (r, s)])
    return _new_array(ops.reshape(spread, [r * s for r, s in zip(reps, shape)]), A)


def repeat(a, repeats, axis=None):
    a = asarray(a)
    if axis is None or _ndim(a) == 0:  # NumPy repeats a scalar as a 1-d array
        a, axis = ravel(a), 0 if axis is None else axis
    axis = normalize_axis(axis, _ndim(a))
    counts = _static_ints(repeats, "repeat: repeats")
    length = _shape(a)[axis]
    if counts.ndim > 1 or counts.size not in (1, length):
        raise ValueError(at_user_line(f"repeat: operands could not be broadcast together "
                                      f"with shape ({length},) (repeats {counts.shape})"))
    if (_np.broadcast_to(counts.reshape(-1), (length,)) < 0).any():
        raise ValueError(at_user_line(f"repeat: negative dimensions are not allowed "
                                      f"(repeats {repeats!r})"))
    if counts.size == 1:
        # every element r times: (n, 1) broadcast to (n, r), then joined
        r = max(int(counts.reshape(())), 0)  # (negative only for an empty axis)
        shape = _shape(a)
        inner = shape[:axis + 1] + (1,) + shape[axis + 1:]
        spread = ops.broadcast_to(ops.reshape(a, inner),
                                  shape[:axis + 1] + (r,) + shape[axis + 1:])
        return _new_array(ops.reshape(spread, shape[:axis] + (length * r,) +
                                      shape[axis + 1:]), a)
    return take(a, _np.repeat(_np.arange(length), counts), axis=axis)


_NO_VALUE = _np._NoValue


def diff(a, n=1, axis=-1, prepend=_NO_VALUE, append=_NO_VALUE):
    n = _static_int(n, "diff: n")
    if n == 0:
        return a
    if n < 0:
        raise ValueError(at_user_line(f"order must be non-negative but got {n!r}"))
    a = asarray(a)
    if _ndim(a) == 0:
        raise ValueError(at_user_line("diff requires input that is at least one "
                                      "dimensional"))
    axis = normalize_axis(axis, _ndim(a))
    parts = [_edge(prepend, a, axis), a, _edge(append, a, axis)]
    parts = [p for p in parts if p is not None]
    if len(parts) > 1:
        a = concatenate(parts, axis=axis)
    # booleans differ where they are unequal (NumPy has no boolean subtraction)
    op = ops.not_equal if _dtype_of(a) == _np.bool_ else ops.subtract
    before = (slice(None),) * axis
    for _ in range(n):
        a = op(a[before + (slice(1, None),)], a[before + (slice(None, -1),)])
    return a


def _edge(values, a, axis):
    """prepend= or append=: a scalar becomes a slice of length 1 along `axis`."""
    if values is _NO_VALUE:
        return None
    values = asarray(values)
    if _ndim(values) == 0:
        shape = list(_shape(a))
        shape[axis] = 1
        values = broadcast_to(values, shape)
    return values


__all__ = ["diff", "flip", "fliplr", "flipud", "repeat", "roll", "rot90", "tile"]
