"""NumPy indexing of traced values: basic slicing, integer-array indexing, masks.

x[index] becomes at most: one `slice` (all basic slicing), one `reshape` (dropping integer
axes, inserting None axes), a `transpose` (when separated array indices move their axes to
the front, as NumPy does) and one `gather` (the integer arrays).
"""
import numpy as np

from . import ops
from .errors import BooleanIndexError, at_user_line
from .trace import Tracer


def getitem(x, index):
    entries = _expand(x, index if isinstance(index, tuple) else (index,))
    has_arrays = any(_is_array(e) for e in entries)
    if has_arrays:  # NumPy treats integers as arrays once any array index is present
        entries = [np.asarray(e) if _is_int(e) else e for e in entries]
    x, rest = _apply_basic(x, entries)
    if has_arrays:
        x = _apply_arrays(x, rest)
    return x


def _is_int(entry):
    return isinstance(entry, (int, np.integer)) and not isinstance(entry, (bool, np.bool_))


def _is_array(entry):
    return isinstance(entry, (Tracer, np.ndarray))


def _expand(x, index):
    """Entries with Ellipsis expanded, constant lists as arrays, and masks as positions."""
    entries = []
    for entry in index:
        if isinstance(entry, (list, np.ndarray)) or isinstance(entry, (bool, np.bool_)):
            entry = np.asarray(entry)
            if entry.dtype == np.bool_:  # a constant mask: its positions are known now
                if entry.ndim == 0:
                    raise IndexError(at_user_line("indexing with a scalar bool is not "
                                                  "supported"))
                entries.extend(np.nonzero(entry))
                continue
            if entry.dtype.kind != "i":
                raise IndexError(at_user_line(
                    f"arrays used as indices must be of integer type, got {entry.dtype}"))
        elif isinstance(entry, Tracer) and entry.dtype == np.bool_:
            raise BooleanIndexError(at_user_line(
                f"boolean mask indexing of a traced value (mask {entry.type}) has a shape "
                f"that depends on the data, which tracing cannot know; use "
                f"jitflow.numpy.where(mask, x, 0) to keep the shape, or reduce with "
                f"jitflow.numpy.sum(jitflow.numpy.where(mask, x, 0))"))
        elif isinstance(entry, Tracer) and entry.dtype.kind != "i":
            raise IndexError(at_user_line(
                f"arrays used as indices must be of integer type, got {entry.dtype}"))
        elif not (entry is None or entry is Ellipsis or isinstance(entry, slice)
                  or _is_int(entry) or isinstance(entry, Tracer)):
            raise IndexError(at_user_line(
                f"only integers, slices, None, Ellipsis and integer arrays are valid "
                f"indices, got {entry!r}"))
        entries.append(entry)
    return _expand_ellipsis(x, entries)


def _expand_ellipsis(x, entries):
    consumed = sum(1 for e in entries if e is not None and e is not Ellipsis)
    if consumed > x.ndim:
        raise IndexError(at_user_line(
            f"too many indices for array: array is {x.ndim}-dimensional, but {consumed} "
            f"were indexed"))
    ellipses = [i for i, e in enumerate(entries) if e is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError(at_user_line("an index can only have a single ellipsis ('...')"))
    at = ellipses[0] if ellipses else len(entries)
    fill = [slice(None)] * (x.ndim - consumed)
    return entries[:at] + fill + entries[at + 1:]


def _apply_basic(x, entries):
    """Slice and drop integer axes; returns the array and the entries left for arrays."""
    starts, steps, sizes, shape, rest = [], [], [], [], []
    axis = 0
    for entry in entries:
        if entry is None:
            shape.append(1)
            rest.append(slice(None))
            continue
        length = x.shape[axis]
        if _is_int(entry):
            if not -length <= entry < length:
                raise IndexError(at_user_line(
                    f"index {entry} is out of bounds for axis {axis} with size {length}"))
            starts.append(int(entry) % length), steps.append(1), sizes.append(1)
        elif isinstance(entry, slice):
            start, stop, step = entry.indices(length)
            size = len(range(start, stop, step))
            starts.append(start if size else 0), steps.append(step), sizes.append(size)
            shape.append(size)
            rest.append(slice(None))
        else:
            starts.append(0), steps.append(1), sizes.append(length)
            shape.append(length)
            rest.append(entry)
        axis += 1
    if tuple(sizes) != x.shape or any(s != 1 for s in steps):
        x = ops.slice_array(x, starts=starts, steps=steps, sizes=sizes)
    if tuple(shape) != x.shape:
        x = ops.reshape(x, shape)
    return x, rest


def _apply_arrays(x, rest):
    positions = [i for i, e in enumerate(rest) if _is_array(e)]
    arrays = [rest[i] for i in positions]
    if positions != list(range(positions[0], positions[-1] + 1)):
        # Separated array indices: NumPy puts their broadcast axes first.
        perm = positions + [i for i in range(x.ndim) if i not in positions]
        x = ops.transpose(x, perm)
        positions = list(range(len(positions)))
    return ops.gather(x, *arrays, axis=positions[0])
