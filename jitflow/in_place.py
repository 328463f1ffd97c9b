"""NumPy's functions that write into their first argument, on traced values: copyto,
put, putmask, place, fill_diagonal and put_along_axis.

Each computes the written array out of place (a scatter at the positions written, or a
where over a mask) and rebinds the target to it (writes.assign), so every reference to
the target and its views sees the write, and a derivative flows from the values written
while the entries they overwrite get none. They return None, as NumPy's do.

The target may be a traced array (made by the function or given to it) or a NumPy array
the function closes over, which gets the write after each call (its later reads through
NumPy then raise: watched_arrays.py). NumPy's own checks (casting rules, sizes, axes,
constant indices out of range) are NumPy's: its function runs first on stand-ins of the
traced values, zeros of their shapes and dtypes, and its exception is the user's.
Traced indices out of range raise IndexError when the compiled code runs, as scatter
checks them.
"""
import numpy as np

from . import numpy as jnp
from . import ops
from .errors import at_user_line
from .indexing import holds_tracer
from .trace import Tracer, innermost_builder, read_stateful
from .writes import assign, is_array, updated


def copyto(dst, src, casting="same_kind", where=True):
    """np.copyto: src (broadcast, cast under `casting`) written where `where` is True."""
    src, where = _operand(src), _operand(where)
    target = _destination(np.copyto, dst, src, where)
    if target is None:
        return np.copyto(dst, src, casting=casting, where=where)
    _checked_by_numpy(np.copyto, target, src, casting=casting, where=where)
    value = ops.broadcast_to(_cast(src, target.dtype), target.shape)
    if not (isinstance(where, (bool, np.bool_)) and where):
        value = ops.where(_cast(where, np.dtype(bool)), value, target)
    assign(target, value)


def put(a, ind, v, mode="raise"):
    """np.put: a.flat[ind] = v, v repeated cyclically over the indices; mode 'wrap'
    takes indices modulo a.size, 'clip' clips them to [0, a.size - 1]."""
    ind, v = _operand(ind), _operand(v)
    target = _destination(np.put, a, ind, v)
    if target is None:
        return np.put(a, ind, v, mode=mode)
    _checked_by_numpy(np.put, target, ind, v, mode=mode)
    positions = _cast(jnp.ravel(ind), np.dtype(np.int64))  # NumPy casts them unsafely
    count = jnp.size(positions)
    if count == 0 or jnp.size(v) == 0:
        return  # nothing to write, as in NumPy
    if mode == "wrap":
        positions = jnp.remainder(positions, target.size)
    elif mode == "clip":
        positions = jnp.clip(positions, 0, target.size - 1)
    values = _cycled(_cast(v, target.dtype), count)
    unique = not isinstance(positions, Tracer) and np.unique(
        np.where(positions < 0, positions + target.size, positions)).size == count
    _write_flat(target, values, positions, unique)


def putmask(a, mask, values):
    """np.putmask: a[i] = values.flat[i % values.size] wherever mask.flat[i]."""
    mask, values = _operand(mask), _operand(values)
    target = _destination(np.putmask, a, mask, values)
    if target is None:
        return np.putmask(a, mask, values)
    _checked_by_numpy(np.putmask, target, mask, values)
    if jnp.size(values) == 0:
        return  # nothing to write, as in NumPy
    cycled = jnp.reshape(_cycled(_cast(values, target.dtype), target.size), target.shape)
    assign(target, ops.where(_flat_mask(mask, target), cycled, target))


def place(arr, mask, vals):
    """np.place: the True positions of mask, in order, take vals cyclically. The value
    each one takes is found from the running count of Trues before it, so a traced mask
    makes no shape that depends on its values."""
    mask, vals = _operand(mask), _operand(vals)
    target = _destination(np.place, arr, mask, vals)
    if target is None:
        return np.place(arr, mask, vals)
    _checked_by_numpy(np.place, target, mask, vals)
    if jnp.size(vals) == 0:
        if isinstance(mask, Tracer):
            raise ValueError(at_user_line(
                "numpy.place with no values and a traced mask: NumPy raises when the mask "
                "has any True element, which is known only at run time; give at least "
                "one value"))
        return  # a mask with no True element (NumPy checked)
    flags = _flat_mask(mask, target)
    chosen = jnp.cumsum(jnp.ravel(flags)) - 1  # the how-manieth True each one is
    taken = jnp.take(jnp.ravel(_cast(vals, target.dtype)),
                     jnp.remainder(chosen, jnp.size(vals)))
    assign(target, ops.where(flags, jnp.reshape(taken, target.shape), target))


def fill_diagonal(a, val, wrap=False):
    """np.fill_diagonal: the main diagonal (every index equal) set to val, repeated
    cyclically; for a tall 2-D array, wrap=True restarts it every ncols + 1 rows."""
    val = _operand(val)
    target = _destination(np.fill_diagonal, a, val)
    if target is None:
        return np.fill_diagonal(a, val, wrap=wrap)
    _checked_by_numpy(np.fill_diagonal, target, val, wrap=wrap)
    marks = np.zeros(target.shape, bool)
    np.fill_diagonal(marks, True, wrap=wrap)  # NumPy finds the positions
    positions = np.flatnonzero(marks)
    if positions.size == 0 or jnp.size(val) == 0:
        return
    _write_flat(target, _cycled(_cast(val, target.dtype), positions.size), positions,
                unique=True)


def put_along_axis(arr, indices, values, axis):
    """np.put_along_axis: arr at indices along `axis` (every other axis matched
    position by position) set to values, as take_along_axis reads them."""
    indices, values = _operand(indices), _operand(values)
    target = _destination(np.put_along_axis, arr, indices, values)
    if target is None:
        return np.put_along_axis(arr, indices, values, axis)
    _checked_by_numpy(np.put_along_axis, target, indices, values, axis)
    if axis is None:
        flat = ops.reshape(target, (target.size,))
        assign(target, ops.reshape(updated(flat, (indices,), values), target.shape))
        return
    axis = axis + target.ndim if axis < 0 else axis
    index = tuple(indices if k == axis else
                  np.arange(n).reshape([-1 if j == k else 1 for j in range(target.ndim)])
                  for k, n in enumerate(target.shape))
    assign(target, updated(target, index, values))


def flat_write(a, index, value):
    """a.flat[index] = value: the flat positions the index names take value repeated
    cyclically (as np.put); a traced boolean mask's True positions take it in order
    (as np.place)."""
    index, value = _operand(index), _operand(value)
    target = _destination(np.put, a, index, value)
    stand_in = np.zeros(target.shape, target.dtype)
    try:
        stand_in.flat[_stand_in(index)] = _stand_in(value)  # NumPy's checks
    except (TypeError, ValueError, IndexError, OverflowError) as error:
        raise _same_error(error) from None
    if isinstance(index, Tracer) and index.dtype == np.bool_:
        place(target, index, value)
    elif isinstance(index, Tracer):
        put(target, index, value)
    else:
        put(target, np.arange(target.size)[index], value)


# --- the target ------------------------------------------------------------------------

def _destination(function, target, *operands):
    """The Tracer that `function` writes into; None when nothing is traced and NumPy
    does it all (jitflow.numpy's function called on NumPy arrays)."""
    name = function.__name__
    if isinstance(target, Tracer):
        if not is_array(target):
            raise TypeError(at_user_line(
                f"numpy.{name}: a traced NumPy scalar ({target.type}) cannot be written "
                f"into; write into an array"))
        return target
    if not isinstance(target, np.ndarray):
        raise TypeError(at_user_line(
            f"numpy.{name}() argument 1 must be numpy.ndarray, not "
            f"{type(target).__name__}"))
    if not any(isinstance(o, Tracer) for o in operands):
        return None
    builder = innermost_builder()
    tracer = builder.array_input(target) if builder is not None else None
    note_write = getattr(target, "_jitflow_note_write", None)  # a named array's view
    if tracer is None or note_write is None:
        raise TypeError(at_user_line(
            f"numpy.{name} of traced values into a NumPy array the function made: "
            f"NumPy's own reads of that array later in the function would not see the "
            f"write; make it a traced array first (a = jitflow.numpy.asarray(a), or "
            f"build it with jitflow.numpy.zeros)"))
    note_write()  # later NumPy reads of it raise (watched_arrays.py)
    return tracer


def _operand(value):
    """A value argument: a Variable's value, a list holding traced values stacked."""
    value = read_stateful(value)
    if isinstance(value, (list, tuple)) and holds_tracer(value):
        return jnp.asarray(value)
    return value


# --- NumPy's checks on stand-ins ----------------------------------------------------------

def _checked_by_numpy(function, target, *args, **kwargs):
    """Run NumPy's `function` on stand-ins (zeros of the traced values' types) for its
    exceptions: casting rules, sizes, axes, constant indices out of range."""
    stand_in = np.zeros(target.shape, target.dtype)  # (only while tracing)
    try:
        function(stand_in, *map(_stand_in, args),
                 **{key: _stand_in(value) for key, value in kwargs.items()})
    except (TypeError, ValueError, IndexError, OverflowError) as error:
        raise _same_error(error) from None


def _stand_in(value):
    if not isinstance(value, Tracer):
        return value
    if value.type.weak:  # a Python number: NumPy casts it by its value's kind (NEP 50)
        return {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}[value.dtype.kind]
    zero = np.zeros((), value.dtype)
    return np.broadcast_to(zero, value.shape) if is_array(value) else zero[()]


def _same_error(error):
    message = at_user_line(str(error))
    if isinstance(error, np.exceptions.AxisError):
        return np.exceptions.AxisError(message)
    return type(error)(message)


# --- values ---------------------------------------------------------------------------------

def _cast(value, dtype):
    """value in `dtype` (NumPy checked the cast): traced, or a NumPy array. A Python int
    passed in (weakly typed) goes into an integer dtype through an addition, which
    checks at run time that it fits (OverflowError, as NumPy raises; a cast wraps)."""
    if isinstance(value, Tracer):
        if value.type.weak and value.dtype.kind in "iu" and dtype.kind in "iu":
            return ops.add(value, np.zeros((), dtype))
        return value if value.dtype == dtype else ops.cast(value, dtype)
    value = np.asarray(value)
    return value.astype(dtype) if value.dtype != dtype else value


def _cycled(values, count):
    """values flat, repeated cyclically to `count` elements (np.resize's order)."""
    flat = jnp.ravel(values)
    size = jnp.size(flat)
    return flat if size == count else jnp.take(flat, np.arange(count) % size)


def _flat_mask(mask, target):
    """mask (of target's size) as a bool array of target's shape."""
    return jnp.reshape(_cast(mask, np.dtype(bool)), target.shape)


def _write_flat(target, values, positions, unique):
    flat = ops.reshape(target, (target.size,))
    written = ops.scatter(flat, values, positions, axis=0, unique=unique)
    assign(target, ops.reshape(written, target.shape))


__all__ = ["copyto", "put", "putmask", "place", "fill_diagonal", "put_along_axis"]


def _export_from_numpy_namespace():
    """jitflow.numpy offers these functions too, installed there from this layer as the
    Tracer's methods are (array_methods.py): jitflow.numpy cannot import this module,
    which imports writes, which imports jitflow.numpy."""
    for name in __all__:
        function = globals()[name]
        function.__module__ = jnp.__name__  # pickle finds it as jitflow.numpy.<name>
        setattr(jnp, name, function)
    jnp.__all__ = list(jnp.__all__) + [n for n in __all__ if n not in jnp.__all__]


_export_from_numpy_namespace()
