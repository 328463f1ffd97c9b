"""NumPy indexing of traced values: basic slicing, integer-array indexing, masks.

x[index] becomes at most: one `slice` (all basic slicing), one `reshape` (dropping integer
axes, inserting None axes), a `transpose` (when separated array indices move their axes to
the front, as NumPy does) and one `gather` (the integer arrays).
"""
import numpy as np

from . import numpy as jnp
from . import ops
from .errors import BooleanIndexError, at_user_line
from .trace import Tracer, fixed_while_traced


def getitem(x, index):
    entries = [_entry(e) for e in (index if isinstance(index, tuple) else (index,))]
    entries = _masks_as_positions(x, _expand_ellipsis(x, entries))
    has_arrays = any(_is_array(e) or _is_bool(e) for e in entries)
    if has_arrays:  # NumPy treats integers as arrays once any array index is present
        entries = [np.asarray(e) if _is_int(e) else e for e in entries]
    x, rest = _apply_basic(x, entries)
    if has_arrays:
        x = _apply_arrays(x, rest)
    return x


def basic_only(index):
    """Whether `index` is basic indexing only (integers, slices, None, Ellipsis, scalar
    bools): NumPy then gives a view (or a scalar)."""
    entries = index if isinstance(index, tuple) else (index,)
    return all(e is None or e is Ellipsis or isinstance(e, (slice, bool, np.bool_))
               or _is_int(e) for e in entries)


def expand_ellipsis(x, entries):
    """Index entries with Ellipsis (or what is left unindexed) as full slices."""
    return _expand_ellipsis(x, [_entry(e) for e in entries])


def _is_int(entry):
    return isinstance(entry, (int, np.integer)) and not isinstance(entry, (bool, np.bool_))


def _is_bool(entry):
    return isinstance(entry, bool)


def _is_array(entry):
    return isinstance(entry, (Tracer, np.ndarray))


def _is_mask(entry):
    return isinstance(entry, np.ndarray) and entry.dtype == np.bool_


def _entry(entry):
    """One index entry checked, with constant sequences as arrays and a scalar bool as a
    Python bool; constant masks stay masks until the axes they cover are known."""
    if isinstance(entry, (bool, np.bool_)):
        return bool(entry)  # adds an axis, see _apply_basic
    if isinstance(entry, (list, tuple)) and holds_tracer(entry):
        entry = jnp.asarray(entry)  # x[[i, j]]: NumPy stacks the values into one array
    if isinstance(entry, np.ndarray) and entry.dtype == np.bool_:
        fixed_while_traced(entry)  # its True positions decide shapes
    if isinstance(entry, (list, tuple, np.ndarray)):
        return _constant_index(entry)
    if isinstance(entry, Tracer) and entry.dtype == np.bool_:
        raise BooleanIndexError(at_user_line(
            f"boolean mask indexing of a traced value (mask {entry.type}) has a shape "
            f"that depends on the data, which tracing cannot know; use "
            f"jitflow.numpy.where(mask, x, 0) to keep the shape, or reduce with "
            f"jitflow.numpy.sum(jitflow.numpy.where(mask, x, 0))"))
    if isinstance(entry, Tracer) and entry.dtype.kind == "u":
        return _signed_index(entry)
    if isinstance(entry, Tracer) and entry.dtype.kind != "i":
        raise IndexError(at_user_line(
            f"arrays used as indices must be of integer type, got {entry.dtype}"))
    if not (entry is None or entry is Ellipsis or isinstance(entry, slice)
            or _is_int(entry) or isinstance(entry, Tracer)):
        raise IndexError(at_user_line(
            f"only integers, slices, None, Ellipsis and integer arrays are valid "
            f"indices, got {entry!r}"))
    return entry


def _signed_index(entry):
    """An unsigned traced index as int64, which holds every uint8, uint16 and uint32
    value; a uint64 one could wrap to a negative index (which counts from the end),
    where NumPy raises IndexError."""
    if entry.dtype.itemsize == 8:
        raise TypeError(at_user_line(
            "indexing with a traced uint64 array is not supported: its values past "
            "int64's range would wrap to negative indices; cast it to int64 first"))
    return ops.cast(entry, np.dtype(np.int64))


def holds_tracer(sequence):
    return any(isinstance(e, Tracer) or (isinstance(e, (list, tuple)) and holds_tracer(e))
               for e in sequence)


def _constant_index(entry):
    """A constant list or array as an integer index array, a mask or a scalar bool."""
    array = np.asarray(entry)
    if array.size == 0 and not isinstance(entry, np.ndarray):
        array = array.astype(np.int64)  # NumPy indexes with [] as with an int array
    if array.dtype == np.bool_ and array.ndim == 0:
        return bool(array)
    if array.dtype.kind == "u":  # valid in NumPy; positions are int64 in jitflow
        if array.size and array.max() > np.iinfo(np.int64).max:
            raise IndexError(at_user_line(f"index {array.max()} is out of bounds"))
        array = array.astype(np.int64)
    if array.dtype != np.bool_ and array.dtype.kind != "i":
        raise IndexError(at_user_line(
            f"arrays used as indices must be of integer type, got {array.dtype}"))
    return array


def _axes_used(entry):
    """How many axes of x an entry indexes: a mask one per dimension, None and a scalar
    bool none (both add an axis)."""
    if entry is None or entry is Ellipsis or _is_bool(entry):
        return 0
    return entry.ndim if _is_mask(entry) else 1


def _expand_ellipsis(x, entries):
    consumed = sum(_axes_used(e) for e in entries)
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


def bool_axis_fits(length, size):
    """Whether a boolean index's axis of `size` fits an axis of `length`: NumPy takes
    one of length 0 whatever the axis's length."""
    return size == length or size == 0


def _masks_as_positions(x, entries):
    """Each constant mask as the integer arrays of its True positions. Its shape must be
    that of the axes it covers (an axis of length 0 fits any, as in NumPy): a smaller
    mask would silently select the wrong elements."""
    result, axis = [], 0
    for entry in entries:
        if _is_mask(entry):
            covered = x.shape[axis:axis + entry.ndim]
            for i, (length, size) in enumerate(zip(covered, entry.shape)):
                if not bool_axis_fits(length, size):
                    raise IndexError(at_user_line(
                        f"boolean index did not match indexed array along axis "
                        f"{axis + i}; size of axis is {length} but size of corresponding "
                        f"boolean axis is {size}"))
            result.extend(np.nonzero(entry))
        else:
            result.append(entry)
        axis += _axes_used(entry)
    return result


def _apply_basic(x, entries):
    """Slice and drop integer axes; returns the array and the entries left for arrays."""
    starts, steps, sizes, shape, rest = [], [], [], [], []
    axis = 0
    for entry in entries:
        if entry is None or _is_bool(entry):
            shape.append(1)
            # x[True] adds an axis of length 1 and x[False] one of length 0: a new axis
            # that an index array [0] or [] (broadcast with any other arrays) selects from.
            rest.append(np.zeros(int(entry), np.int64) if _is_bool(entry) else slice(None))
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
