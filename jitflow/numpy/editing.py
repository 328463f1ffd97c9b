"""Editing arrays at positions known when the function is traced: delete, insert,
block, resize, rollaxis, choose, piecewise, apply_along_axis and apply_over_axes.

Positions are static: NumPy's own delete and insert, applied to the positions 0..N-1 of
the axis, say which element of the input each element of the result is (their errors
are NumPy's own), and one gather takes them, so the derivative scatters back.
"""
import builtins
import math

import numpy as _np

from ..errors import at_user_line
from ..ir.types import normalize_axis, result_dtype
from ..trace import Tracer, constant_type
from ._common import _dtype_of, _ndim, _shape, _static_shape
from .assorted import take_along_axis
from .creation import asarray, zeros
from .elementwise import astype, clip, logical_not, logical_or, mod, where
from .shapes import (broadcast_to, concatenate, expand_dims, moveaxis, ravel, reshape,
                     stack, take, transpose)
from .stacking import vstack


def _static_positions(name, obj):
    if isinstance(obj, Tracer) or (isinstance(obj, (list, tuple)) and
                                   builtins.any(isinstance(o, Tracer) for o in obj)):
        raise TypeError(at_user_line(
            f"jitflow.numpy.{name}: obj must be known when the function is traced (an "
            f"int, slice, list or NumPy array), not a traced value; mark the argument "
            f"it comes from static (jitflow.function(fn, static_argnames=...))"))
    return obj


def _flat_or_axis(arr, axis):
    arr = asarray(arr)
    if axis is None:
        return ravel(arr), 0
    return arr, normalize_axis(axis, _ndim(arr))


def delete(arr, obj, axis=None):
    obj = _static_positions("delete", obj)
    arr, axis = _flat_or_axis(arr, axis)
    kept = _np.delete(_np.arange(_shape(arr)[axis]), obj)
    return take(arr, kept, axis=axis)


def insert(arr, obj, values, axis=None):
    """The values, cast to arr's dtype and broadcast as NumPy broadcasts them, joined
    after arr along the axis; one gather puts every element in its place."""
    obj = _static_positions("insert", obj)
    arr, axis = _flat_or_axis(arr, axis)
    size = _shape(arr)[axis]
    indices = _np.arange(*obj.indices(size)) if isinstance(obj, slice) else _np.array(obj)
    if indices.dtype == bool:
        if indices.ndim != 1:
            raise ValueError(at_user_line("boolean array argument obj to insert must be "
                                          "one dimensional"))
        indices = _np.flatnonzero(indices)
    elif indices.ndim > 1:
        raise ValueError(at_user_line("index array argument obj to insert must be one "
                                      "dimensional or scalar"))
    values = astype(asarray(values), _dtype_of(arr))
    if indices.size == 1:
        # one position: values gain leading axes up to arr's; a scalar position puts
        # the first of them along `axis` (NumPy's a[:, i:i+1] = values)
        values = reshape(values, (1,) * (_ndim(arr) - _ndim(values)) + _shape(values))
        if indices.ndim == 0:
            values = moveaxis(values, 0, axis)
        count = _shape(values)[axis]
    else:
        count = len(indices)
    shape = list(_shape(arr))
    shape[axis] = count
    values = broadcast_to(values, tuple(shape))
    order = _np.insert(_np.arange(size), obj, size + _np.arange(count))
    return take(concatenate([arr, values], axis=axis), order, axis=axis)


def block(arrays):
    """Nested lists of arrays joined along the last axes, innermost lists along the
    last one; every array first gains leading axes up to the result's rank."""
    depth, rank = _block_depth(arrays, "arrays")
    rank = max(depth, rank)

    def join(item, level):
        if level == depth:
            item = asarray(item)
            return reshape(item, (1,) * (rank - _ndim(item)) + _shape(item))
        return concatenate([join(part, level + 1) for part in item], axis=level - depth)
    return join(arrays, 0)


def _block_depth(item, where):
    """The depth of nested lists at `item` and the largest rank of its arrays."""
    if isinstance(item, tuple):
        raise TypeError(at_user_line(f"{where} is a tuple. Only lists can be used to "
                                     f"arrange blocks, and np.block does not allow "
                                     f"implicit conversion from tuple to ndarray."))
    if not isinstance(item, list):
        return 0, _ndim(item)
    if not item:
        raise ValueError(at_user_line(f"List at {where} cannot be empty"))
    found = [_block_depth(part, f"{where}[{i}]") for i, part in enumerate(item)]
    if len({d for d, _ in found}) > 1:
        raise ValueError(at_user_line(
            f"List depths are mismatched. The depths of the lists in {where} differ: "
            f"{sorted({d for d, _ in found})}"))
    return found[0][0] + 1, max(r for _, r in found)


row_stack = vstack


def rollaxis(a, axis, start=0):
    a = asarray(a)
    n = _ndim(a)
    axis = normalize_axis(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise _np.exceptions.AxisError(at_user_line(
            f"'start' arg requires {-n} <= start < {n + 1}"))
    if axis < start:
        start -= 1
    axes = [i for i in range(n) if i != axis]
    axes.insert(start, axis)
    return transpose(a, axes)


def resize(a, new_shape):
    """a's elements in order, repeated as often as the new shape needs."""
    a = ravel(asarray(a))
    shape = _static_shape(new_shape, "jitflow.numpy.resize: new_shape")
    if builtins.any(size < 0 for size in shape):
        raise ValueError(at_user_line("all elements of `new_shape` must be non-negative"))
    count, size = math.prod(shape), _shape(a)[0]
    if count == 0 or size == 0:
        return zeros(shape, _dtype_of(a))
    return reshape(take(a, _np.arange(count) % size), shape)


def choose(a, choices, out=None, mode="raise"):
    """choices[a[i]][i], everything broadcast together. With mode='raise', an index out
    of range raises: eagerly NumPy's ValueError; traced, at run time, the gather's
    IndexError (negative indices are sent out of range first, as NumPy refuses them)."""
    if out is not None:
        raise TypeError(at_user_line("jitflow.numpy.choose: out= is not supported"))
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(at_user_line(f"clipmode must be one of 'clip', 'raise', or "
                                      f"'wrap' (got {mode!r})"))
    a = asarray(a)
    if _dtype_of(a).kind not in "biu":
        raise TypeError(at_user_line(f"jitflow.numpy.choose: a must hold integers, got "
                                     f"{_dtype_of(a)}"))
    choices = list(choices)
    if not choices:
        raise ValueError(at_user_line("0-length sequence."))
    dtype, _ = result_dtype(*(constant_type(c) for c in choices))
    choices = [asarray(c) for c in choices]
    shape = _np.broadcast_shapes(_shape(a), *map(_shape, choices))
    stacked = stack([broadcast_to(astype(c, dtype), shape) for c in choices])
    index = broadcast_to(astype(a, _np.int64), shape)
    n = len(choices)
    if mode == "wrap":
        index = mod(index, n)
    elif mode == "clip":
        index = clip(index, 0, n - 1)
    elif isinstance(index, Tracer):
        index = where(logical_or(index < 0, index >= n), n, index)
    elif _np.any((_np.asarray(index) < 0) | (_np.asarray(index) >= n)):
        raise ValueError(at_user_line("invalid entry in choice array"))
    return take_along_axis(stacked, expand_dims(index, 0), 0)[0]


def piecewise(x, condlist, funclist, *args, **kw):
    """NumPy's piecewise, except that each function is called once on the whole of x
    (not on the elements its condition picks) and `where` keeps its values where the
    condition holds: every function is evaluated on every element, so it must accept
    all of x (a log on negative numbers gives NaN there, unseen in the result)."""
    x = asarray(x)
    if _np.isscalar(condlist) or (_ndim(x) != 0 and _single_condition(condlist)):
        condlist = [condlist]
    conditions = [astype(asarray(c), _np.bool_) for c in condlist]
    if len(conditions) == len(funclist) - 1:
        taken = conditions[0]
        for condition in conditions[1:]:
            taken = logical_or(taken, condition)
        conditions.append(logical_not(taken))
    elif len(conditions) != len(funclist):
        raise ValueError(at_user_line(
            f"with {len(conditions)} condition(s), either {len(conditions)} or "
            f"{len(conditions) + 1} functions are expected"))
    dtype = _dtype_of(x)
    result = zeros(_shape(x), dtype)
    for condition, function in zip(conditions, funclist):
        value = function(x, *args, **kw) if callable(function) else function
        result = where(condition, astype(asarray(value), dtype), result)
    return result


def _single_condition(condlist):
    """NumPy's test: a condition list whose first entry is not a list or array is one
    condition (a traced array of one axis stands for an ndarray whose entries are
    scalars)."""
    if isinstance(condlist, Tracer):
        return _ndim(condlist) <= 1
    first = condlist[0]
    return not isinstance(first, (list, _np.ndarray, Tracer))


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d on every 1-D slice along `axis` (a Python loop over the static slices),
    the results stacked where the axis was, in the first result's dtype."""
    arr = asarray(arr)
    ndim = _ndim(arr)
    axis = normalize_axis(axis, ndim)
    moved = moveaxis(arr, axis, -1)
    outer = _shape(moved)[:-1]
    if 0 in outer:
        raise ValueError(at_user_line("Cannot apply_along_axis when any iteration "
                                      "dimensions are 0"))
    results = [asarray(func1d(moved[index], *args, **kwargs)) for index in _np.ndindex(outer)]
    dtype, rank = _dtype_of(results[0]), _ndim(results[0])
    joined = reshape(stack([astype(r, dtype) for r in results]),
                     outer + _shape(results[0]))
    return moveaxis(joined, list(range(ndim - 1, ndim - 1 + rank)),
                    list(range(axis, axis + rank)))


def apply_over_axes(func, a, axes):
    value = asarray(a)
    n = _ndim(a)
    for axis in (axes,) if _np.ndim(axes) == 0 else axes:
        if axis < 0:
            axis += n
        result = asarray(func(value, axis))
        if _ndim(result) != _ndim(value):
            result = expand_dims(result, axis)
            if _ndim(result) != _ndim(value):
                raise ValueError(at_user_line("function is not returning an array of "
                                              "the correct shape"))
        value = result
    return value


__all__ = ["apply_along_axis", "apply_over_axes", "block", "choose", "delete", "insert",
           "piecewise", "resize", "rollaxis", "row_stack"]
