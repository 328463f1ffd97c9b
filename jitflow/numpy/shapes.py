"""Shape functions: reshape, transpose, squeeze, concatenate, stack, pad, take, ..."""
import builtins
import math

import numpy as _np

from .. import ops
from ..errors import at_user_line
from ..ir.types import normalize_axes, normalize_axis
from ..trace import Tracer, aliases
from ._common import (_dtype_of, _ndim, _no_out, _python_scalar, _shape, _static_shape,
                      _strong)
from .elementwise import astype


def reshape(a, *dims, shape=None, order="C", newshape=None, copy=None):
    """np.reshape(a, shape) (shape= or newshape= by keyword too), and the method's
    a.reshape(2, 3) with the dimensions as separate arguments."""
    if order != "C":
        raise NotImplementedError("jitflow supports only C-order reshapes")
    if shape is None:
        shape = newshape if newshape is not None else dims[0] if len(dims) == 1 else dims
    elif dims:
        raise TypeError(at_user_line("reshape: shape given twice"))
    shape = _resolve_shape(_static_shape(shape, "reshape"), _shape(a))
    if isinstance(a, Tracer) and aliases.unknown_layout(a):
        # NumPy's reshape is a view only where the memory layout allows: unknown here,
        # so neither a write into it nor a later write into `a` while it lives has a
        # result jitflow can know.
        result = aliases.derived_view(a, ops.reshape(a, shape), _unknown_since_written,
                                      None)
        return aliases.mark_readonly(result, _RESHAPED)
    return _reshaped(a, shape)


_RESHAPED = ("the reshape of an argument, a closed-over array, a view, or a value "
             "computed from one (NumPy keeps its operands' memory order), which NumPy "
             "writes through only when its memory layout allows; write into a .copy() "
             "of the reshape, or into the array itself")


def _unknown_since_written(base):
    raise ValueError(at_user_line(
        "this write changes an array (an argument, a closed-over array, a view, or a "
        "value computed from one) whose reshape was taken before and is still in use; "
        "NumPy's reshape of it is a view or a copy depending on its memory layout at run "
        "time, so whether that reshape sees the write is not known; reshape a .copy(), "
        "or reshape after writing"))


def _reshaped(a, shape):
    """reshape, squeeze, expand_dims: where NumPy gives a view, writes into the result
    reach `a` (writes.py)."""
    result = ops.reshape(a, shape)
    if not isinstance(a, Tracer):
        return result
    return aliases.derived_view(a, result, lambda base: ops.reshape(base, shape),
                                lambda base, value: ops.reshape(value, base.shape),
                                contiguous=not aliases.unknown_layout(a))


def _transposed(a, perm):
    """transpose, swapaxes, moveaxis: views in NumPy, written through (writes.py)."""
    result = ops.transpose(a, perm)
    if not isinstance(a, Tracer):
        return result
    inverse = tuple(int(i) for i in _np.argsort(perm))
    return aliases.derived_view(a, result, lambda base: ops.transpose(base, perm),
                                lambda base, value: ops.transpose(value, inverse))


def _resolve_shape(shape, old):
    size = math.prod(old)
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1:
        raise ValueError(at_user_line("reshape: can only specify one unknown dimension"))
    if unknown:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or size % known:
            raise ValueError(at_user_line(f"cannot reshape array of size {size} into "
                                          f"shape {shape}"))
        shape = tuple(size // known if d == -1 else d for d in shape)
    return tuple(int(d) for d in shape)


def ravel(a, order="C"):
    return reshape(a, (-1,), order=order)


def transpose(a, axes=None):
    ndim = _ndim(a)
    perm = tuple(reversed(range(ndim))) if axes is None else \
        tuple(normalize_axis(ax, ndim) for ax in axes)
    return _transposed(a, perm)


def swapaxes(a, axis1, axis2):
    perm = list(range(_ndim(a)))
    i, j = normalize_axis(axis1, len(perm)), normalize_axis(axis2, len(perm))
    perm[i], perm[j] = perm[j], perm[i]
    return _transposed(a, perm)


def moveaxis(a, source, destination):
    ndim = _ndim(a)
    sources = _distinct_axes(source, ndim, "source")
    dests = _distinct_axes(destination, ndim, "destination")
    if len(sources) != len(dests):
        raise ValueError(at_user_line("moveaxis: `source` and `destination` arguments "
                                      "must have the same number of elements"))
    order = [i for i in range(ndim) if i not in sources]
    for dest, src in sorted(zip(dests, sources)):
        order.insert(dest, src)
    return _transposed(a, order)


def _distinct_axes(axes, ndim, what):
    axes = [normalize_axis(a, ndim, what=what)
            for a in (axes if isinstance(axes, (tuple, list)) else [axes])]
    if len(set(axes)) != len(axes):
        raise ValueError(at_user_line(f"repeated axis in `{what}` argument"))
    return axes


def squeeze(a, axis=None):
    shape = _shape(a)
    axes = [i for i, d in enumerate(shape) if d == 1] if axis is None else \
        normalize_axes(axis, len(shape))
    if builtins.any(shape[i] != 1 for i in axes):
        raise ValueError(at_user_line(f"squeeze: cannot select an axis to squeeze out "
                                      f"which has size not equal to one (shape {shape}, "
                                      f"axis {axis})"))
    return _reshaped(a, tuple(d for i, d in enumerate(shape) if i not in axes))


def expand_dims(a, axis):
    shape = list(_shape(a))
    axes = normalize_axes(axis, len(shape) + (len(axis) if isinstance(axis, (tuple, list))
                                              else 1))
    for ax in axes:
        shape.insert(ax, 1)
    return _reshaped(a, tuple(shape))


def broadcast_to(array, shape):
    # an array even from a Python number, as NumPy's (to its own shape too)
    shape = _static_shape(shape, "broadcast_to")
    result = _strong(ops.broadcast_to(array, shape))
    if isinstance(result, Tracer):
        result = aliases.readonly_view(array, result,
                                       lambda base: _strong(ops.broadcast_to(base, shape)),
                                       "numpy.broadcast_to gives a read-only view")
    return result


def concatenate(arrays, axis=0, out=None):
    _no_out("concatenate", out)
    arrays = list(arrays)
    if not arrays:
        raise ValueError(at_user_line("need at least one array to concatenate"))
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    axis = normalize_axis(axis, _ndim(arrays[0]))
    return ops.concatenate(arrays, axis=axis)


def stack(arrays, axis=0, out=None):
    _no_out("stack", out)
    arrays = list(arrays)
    if not arrays:
        raise ValueError(at_user_line("need at least one array to stack"))
    shapes = {_shape(a) for a in arrays}
    if len(shapes) > 1:
        raise ValueError(at_user_line(f"all input arrays must have the same shape, got "
                                      f"{sorted(shapes)}"))
    axis = normalize_axis(axis, _ndim(arrays[0]) + 1)
    return ops.concatenate([expand_dims(a, axis) for a in arrays], axis=axis)


# Modes whose padding copies elements of the array: each axis is a gather by the
# positions NumPy's own pad gives an arange of its length.
COPYING_MODES = ("edge", "reflect", "symmetric", "wrap")


def pad(array, pad_width, mode="constant", constant_values=0, **kwargs):
    ndim = _ndim(array)
    widths = _np.broadcast_to(_np.asarray(pad_width, dtype=_np.int64), (ndim, 2))
    if mode == "constant" and not kwargs:
        return ops.pad(array, widths=[(int(lo), int(hi)) for lo, hi in widths],
                       value=_python_scalar(constant_values, "constant_values"))
    if mode not in COPYING_MODES or kwargs:
        raise NotImplementedError(at_user_line(
            f"pad: mode={mode!r}{' with ' + ', '.join(kwargs) if kwargs else ''} is not "
            f"supported; modes 'constant', {', '.join(map(repr, COPYING_MODES))} are"))
    for axis, (lo, hi) in enumerate(widths):
        if lo or hi:
            positions = _np.pad(_np.arange(_shape(array)[axis]), (int(lo), int(hi)),
                                mode=mode)
            array = ops.gather(array, positions, axis=axis)
    return array



def _signed_positions(indices):
    """Unsigned indices as int64 (gather's positions). A traced uint64 index could pass
    int64's end and wrap to a negative one (which counts from the end) where NumPy
    raises IndexError: refused."""
    if isinstance(indices, Tracer) and indices.dtype.itemsize == 8:
        raise TypeError(at_user_line("take: traced uint64 indices are not supported "
                                     "(values past int64's end would wrap); cast them "
                                     "to int64 first"))
    if not isinstance(indices, Tracer) and indices.size and \
            indices.max() > _np.iinfo(_np.int64).max:
        raise IndexError(at_user_line(f"take: index {indices.max()} is out of bounds"))
    return astype(indices, _np.int64)


def take(a, indices, axis=None, out=None, mode="raise"):
    _no_out("take", out)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(at_user_line(f"clipmode must be one of 'clip', 'raise', or "
                                      f"'wrap' (got {mode!r})"))
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis(axis, _ndim(a))
    if not isinstance(indices, Tracer):
        given, indices = indices, _np.asarray(indices)
        if indices.size == 0 and not isinstance(given, _np.ndarray):
            indices = indices.astype(_np.int64)  # [] are no positions, not float64 ones
    # NumPy casts indices to integers 'safely': bools are 0 and 1, floats an error.
    if _dtype_of(indices).kind not in "biu":
        raise TypeError(at_user_line(f"take: indices must be integers, got "
                                     f"{_dtype_of(indices)}"))
    if _dtype_of(indices).kind == "u":
        indices = _signed_positions(indices)
    if _dtype_of(indices) == _np.bool_:
        indices = astype(indices, _np.int64)
    if mode != "raise":
        indices = _brought_into_range(indices, _shape(a)[axis], mode)
    if math.prod(_shape(a)[:axis]) == 0:  # nothing is taken: NumPy checks no index
        return reshape(a, _shape(a)[:axis] + _shape(indices) + _shape(a)[axis + 1:])
    return ops.gather(a, indices, axis=axis)


def _brought_into_range(indices, length, mode):
    """take's indices under mode 'wrap' (modulo the axis length) or 'clip' (into
    [0, length - 1]); an empty axis has no index to give (IndexError, as in NumPy)."""
    if length == 0:
        if math.prod(_shape(indices)):
            raise IndexError(at_user_line("cannot do a non-empty take from an empty axes."))
        return indices
    if mode == "wrap":
        return ops.remainder(indices, length)
    return ops.minimum(ops.maximum(indices, 0), length - 1)


__all__ = ["broadcast_to", "concatenate", "expand_dims", "moveaxis", "pad", "ravel", "reshape", "squeeze", "stack", "swapaxes", "take", "transpose"]
