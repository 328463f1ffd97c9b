"""Taking parts of arrays and putting them back: slice, gather, scatter_add, scatter,
concatenate and pad. Each one's derivative is another of them: the cotangent of a slice is padded
back into place, that of a gather is scattered back (adding where indices repeat)."""
import numpy as np

from ..ir.primitive import Primitive, register
from ..ir.types import (ShapeError, TensorType, broadcast_shapes, result_dtype,
                        stored_like_np_pad)
from ..trace import bind, constant_type
from .elementwise import equal
from .select import cast, where
from .shapes import broadcast_to, reshape


def shape_of(x):
    return constant_type(x).shape


def zeros(shape, dtype):
    return broadcast_to(np.dtype(dtype).type(0), shape)  # a constant (autodiff's zeros)


# --- slice ---------------------------------------------------------------------------------

def _slice_type(x, *, starts, steps, sizes):
    if not len(starts) == len(steps) == len(sizes) == x.ndim:
        raise ShapeError(f"slice of a {x.ndim}-d array needs {x.ndim} starts, steps, sizes")
    for dim, start, step, size in zip(x.shape, starts, steps, sizes):
        last = start + step * (size - 1)
        if step == 0 or size < 0 or (size and not (0 <= start < dim and 0 <= last < dim)):
            raise IndexError(f"slice start {start}, step {step}, size {size} is out of "
                             f"bounds for an axis of length {dim}")
    return x.with_shape(sizes)


def _slice_impl(x, *, starts, steps, sizes):
    index = []
    for start, step, size in zip(starts, steps, sizes):
        stop = start + step * size
        index.append(slice(start, None if stop < 0 else stop, step))
    return np.asarray(x)[tuple(index)]


def unslice(ct, shape, starts, steps, sizes):
    """The array of `shape` that is zero except where the slice took its elements from,
    which hold `ct`: the slice's transpose."""
    if any(step < 0 for step in steps):  # walk every axis upwards
        ct = slice_array(ct, starts=[size - 1 if step < 0 else 0
                                     for step, size in zip(steps, sizes)],
                         steps=[-1 if step < 0 else 1 for step in steps], sizes=sizes)
    widths = []
    for axis, (dim, start, step, size) in enumerate(zip(shape, starts, steps, sizes)):
        if size == 0:
            widths.append((0, dim))
            continue
        if abs(step) > 1 and size > 1:
            ct = _interleave_zeros(ct, axis, abs(step))
        low = start if step > 0 else start + step * (size - 1)
        widths.append((low, dim - low - (size - 1) * abs(step) - 1))
    return pad(ct, widths=widths)


def _interleave_zeros(x, axis, step):
    """Put step - 1 zeros after each element along `axis`, but the last."""
    shape = shape_of(x)
    size = shape[axis]
    spaced = pad(reshape(x, shape[:axis + 1] + (1,) + shape[axis + 1:]),
                 widths=[(0, step - 1) if a == axis + 1 else (0, 0)
                         for a in range(len(shape) + 1)])
    spaced = reshape(spaced, shape[:axis] + (size * step,) + shape[axis + 1:])
    keep = list(shape)
    keep[axis] = (size - 1) * step + 1
    return slice_array(spaced, starts=[0] * len(shape), steps=[1] * len(shape), sizes=keep)


# x[start : start + step*size : step] on every axis: all of basic slicing, normalized.
slice_p = register(Primitive(
    "slice", _slice_type, _slice_impl,
    vjp=lambda ct, x, *, starts, steps, sizes, out: [
        unslice(ct, shape_of(x), starts, steps, sizes)],
    jvp=lambda tangents, x, *, starts, steps, sizes, out: slice_array(
        tangents[0], starts=starts, steps=steps, sizes=sizes)))


def slice_array(x, *, starts, steps, sizes):
    return bind(slice_p, x, starts=tuple(starts), steps=tuple(steps), sizes=tuple(sizes))


# --- gather and scatter_add ----------------------------------------------------------------

def _check_indices(indices):
    for index in indices:
        if index.dtype.kind != "i":
            raise IndexError(f"arrays used as indices must be of integer type, got "
                             f"{index.dtype}")


def _gathered_shape(shape, indices, axis):
    batch = broadcast_shapes(*(i.shape for i in indices))
    return shape[:axis] + batch + shape[axis + len(indices):]


def _gather_type(x, *indices, axis):
    if not indices or axis + len(indices) > x.ndim:
        raise IndexError(f"too many indices for array of shape {x.shape}")
    _check_indices(indices)
    return x.with_shape(_gathered_shape(x.shape, indices, axis))


def _gather_impl(x, *indices, axis):
    return np.asarray(x)[(slice(None),) * axis + tuple(indices)]


# x[:, ..., i, j, ...] with integer arrays i, j (broadcast together) on consecutive axes
# from `axis`. Indices out of bounds raise IndexError, as in NumPy.
gather_p = register(Primitive(
    "gather", _gather_type, _gather_impl,
    vjp=lambda ct, x, *indices, axis, out: [
        scatter_add(ct, *indices, axis=axis, shape=shape_of(x))] + [None] * len(indices),
    jvp=lambda tangents, x, *indices, axis, out: gather(tangents[0], *indices, axis=axis)))


def gather(x, *indices, axis): return bind(gather_p, x, *indices, axis=axis)


def _scatter_add_type(updates, *indices, axis, shape):
    if not indices or axis + len(indices) > len(shape):
        raise IndexError(f"too many indices for array of shape {shape}")
    _check_indices(indices)
    expected = _gathered_shape(tuple(shape), indices, axis)
    if updates.shape != expected:
        raise ShapeError(f"scatter_add into shape {shape}: updates have shape "
                         f"{updates.shape}, the indices select shape {expected}")
    return TensorType(tuple(shape), updates.dtype)


def _scatter_add_impl(updates, *indices, axis, shape):
    updates = np.asarray(updates)
    out = np.zeros(shape, updates.dtype)
    np.add.at(out, (slice(None),) * axis + tuple(indices), updates)
    return out


# zeros(shape) with `updates` added at [:, ..., i, j, ...] (as gather reads them); repeated
# indices add up. It is the transpose of gather.
scatter_add_p = register(Primitive(
    "scatter_add", _scatter_add_type, _scatter_add_impl,
    vjp=lambda ct, updates, *indices, axis, shape, out: [
        gather(ct, *indices, axis=axis)] + [None] * len(indices),
    jvp=lambda tangents, updates, *indices, axis, shape, out: scatter_add(
        tangents[0], *indices, axis=axis, shape=shape)))


def scatter_add(updates, *indices, axis, shape):
    return bind(scatter_add_p, updates, *indices, axis=axis, shape=tuple(shape))


# --- scatter: writing into an array --------------------------------------------------------

def _scatter_type(x, updates, *indices, axis, unique):
    if not indices or axis + len(indices) > x.ndim:
        raise IndexError(f"too many indices for array of shape {x.shape}")
    _check_indices(indices)
    expected = _gathered_shape(x.shape, indices, axis)
    if updates.shape != expected:
        raise ShapeError(f"scatter into shape {x.shape}: updates have shape "
                         f"{updates.shape}, the indices select shape {expected}")
    if updates.dtype != x.dtype:
        raise TypeError(f"scatter into a {x.dtype} array: updates are {updates.dtype} "
                        f"(cast them first)")
    return x


def _scatter_impl(x, updates, *indices, axis, unique):
    out = np.array(x, copy=True)
    out[(slice(None),) * axis + tuple(indices)] = updates
    return out


def _last_writes(x, updates, indices, axis):
    """Where each update is the one that stays (repeated indices: the last in C order,
    as NumPy's assignment leaves it)."""
    shape = shape_of(updates)
    ids = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    written = scatter(broadcast_to(np.int64(-1), shape_of(x)), ids, *indices, axis=axis)
    return equal(gather(written, *indices, axis=axis), ids)


def _scatter_vjp(ct, x, updates, *indices, axis, unique, out):
    cleared = scatter(ct, zeros(shape_of(updates), constant_type(ct).dtype), *indices,
                      axis=axis, unique=unique)
    taken = gather(ct, *indices, axis=axis)
    if not unique:
        taken = where(_last_writes(x, updates, indices, axis), taken, 0)
    return [cleared, taken] + [None] * len(indices)


def _scatter_jvp(tangents, x, updates, *indices, axis, unique, out):
    tx, tu = tangents[:2]
    if tx is None and tu is None:
        return None
    dtype = constant_type(out).dtype
    tx = zeros(shape_of(x), dtype) if tx is None else tx
    tu = zeros(shape_of(updates), dtype) if tu is None else tu
    return scatter(tx, tu, *indices, axis=axis, unique=unique)


# x with x[:, ..., i, j, ...] = updates (the indices as gather reads them): item
# assignment, functionalized. Repeated indices keep the last update in C order, as
# NumPy's assignment does; `unique` says no index repeats (basic slicing), so every
# update is kept and the derivative needs no mask.
scatter_p = register(Primitive(
    "scatter", _scatter_type, _scatter_impl, vjp=_scatter_vjp, jvp=_scatter_jvp))


def scatter(x, updates, *indices, axis, unique=False):
    return bind(scatter_p, x, updates, *indices, axis=axis, unique=bool(unique))


# --- concatenate ---------------------------------------------------------------------------

def _concatenate_type(*xs, axis):
    first = xs[0]
    for x in xs:
        if x.ndim != first.ndim or x.ndim == 0:
            raise ShapeError("all the input arrays must have the same number (> 0) of "
                             f"dimensions, got shapes {[t.shape for t in xs]}")
        if any(a != b for i, (a, b) in enumerate(zip(x.shape, first.shape)) if i != axis):
            raise ShapeError(f"all the input array dimensions except for the "
                             f"concatenation axis {axis} must match exactly, got shapes "
                             f"{[t.shape for t in xs]}")
    dtype, _ = result_dtype(*(t.strong() for t in xs))
    size = sum(x.shape[axis] for x in xs)
    return TensorType(first.shape[:axis] + (size,) + first.shape[axis + 1:], dtype)


def _concatenate_vjp(ct, *xs, axis, out):
    pieces, start = [], 0
    for x in xs:
        shape = shape_of(x)
        starts = [start if a == axis else 0 for a in range(len(shape))]
        pieces.append(slice_array(ct, starts=starts, steps=[1] * len(shape), sizes=shape))
        start += shape[axis]
    return pieces


def _concatenate_jvp(tangents, *xs, axis, out):
    dtype = constant_type(out).dtype
    return concatenate([zeros(shape_of(x), dtype) if t is None else cast(t, dtype)
                        for t, x in zip(tangents, xs)], axis=axis)


concatenate_p = register(Primitive(
    "concatenate", _concatenate_type, lambda *xs, axis: np.concatenate(xs, axis=axis),
    vjp=_concatenate_vjp, jvp=_concatenate_jvp))


def concatenate(xs, *, axis): return bind(concatenate_p, *xs, axis=axis)


# --- pad -----------------------------------------------------------------------------------

def _pad_type(x, *, widths, value):
    if len(widths) != x.ndim or any(lo < 0 or hi < 0 for lo, hi in widths):
        raise ShapeError(f"pad widths {widths} do not fit an array of shape {x.shape} "
                         f"(one non-negative (before, after) pair per axis)")
    if x.ndim:  # NumPy converts the value (inf or NaN into an int raises) unless 0-d
        stored_like_np_pad(value, x.dtype)
    return x.with_shape(tuple(d + lo + hi for d, (lo, hi) in zip(x.shape, widths)))


def _pad_impl(x, *, widths, value):
    """np.pad's constant mode, without its Python overhead (about 75 us a call)."""
    x = np.asarray(x)
    if x.ndim == 0:  # no padding, and NumPy leaves the value unconverted
        return np.array(x)
    out = np.empty(tuple(d + lo + hi for d, (lo, hi) in zip(x.shape, widths)), x.dtype)
    out[...] = stored_like_np_pad(value, x.dtype)  # raises where NumPy's does
    out[tuple(slice(lo, lo + d) for d, (lo, _) in zip(x.shape, widths))] = x
    return out


def _pad_vjp(ct, x, *, widths, value, out):
    shape = shape_of(x)
    return [slice_array(ct, starts=[lo for lo, _ in widths], steps=[1] * len(shape),
                        sizes=shape)]


pad_p = register(Primitive(
    "pad", _pad_type, _pad_impl, vjp=_pad_vjp,
    jvp=lambda tangents, x, *, widths, value, out: pad(tangents[0], widths=widths)))


def pad(x, *, widths, value=0):
    return bind(pad_p, x, widths=tuple(map(tuple, widths)), value=value)
