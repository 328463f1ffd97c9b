"""Writes into traced values, functionalized: `x[index] = v`, `x += y` and ufuncs with
`out=` compute the new array out of place (a `scatter`, or the operation cast back to
x's dtype) and rebind the Tracer x to it. Every Python reference to x sees the new
value, as every reference to an ndarray sees its writes.

A view made by basic indexing (`v = x[1:]`) remembers its base and index: a write into
it writes the base at that index, and every live view of a written array is recomputed
from the new base, so later reads of x, v, and other views of x see the write.

NumPy's rules are kept: an in-place operation keeps x's dtype, with the same-kind casting
check (`i += 1.5` on an int array raises); an assignment casts the value as NumPy's
assignment does (floats into an int array truncate) and broadcasts it to the region.
0-d results of indexing and reductions are NumPy scalars, immutable: for them `s += 1`
makes a new value, as in NumPy.
"""
import weakref

import numpy as np

from . import numpy as jnp
from . import ops
from .errors import at_user_line
from .indexing import basic_only, bool_axis_fits, expand_ellipsis, getitem, holds_tracer
from .ir.types import ShapeError, broadcast_shapes
from .trace import Tracer, constant_type
# What a Tracer knows of its memory is the trace layer's (trace/aliases.py); this module
# writes through it and offers its functions too.
from .trace.aliases import (Alias, alias_of, copy, derived_view, is_array,  # noqa: F401
                            mark_array, mark_order_unknown, mark_readonly,
                            unknown_layout)


def view(base, index):
    """base[index] (a basic index): a Tracer that writes through to base."""
    result = getitem(base, index)
    if result.ndim == 0 and _is_scalar_index(base, index):
        # NumPy gives a scalar: a new value, immutable
        return result if result is not base else Tracer(base._var, base._builder)
    return derived_view(base, result, lambda b: getitem(b, index),
                        lambda b, value: updated(b, index, value))


def _is_scalar_index(base, index):
    entries = index if isinstance(index, tuple) else (index,)
    return len(entries) == base.ndim and all(
        isinstance(e, (int, np.integer)) and not isinstance(e, (bool, np.bool_))
        for e in entries)


# --- item assignment ------------------------------------------------------------------

def setitem(x, index, value):
    """x[index] = value."""
    if not is_array(x):
        raise TypeError(at_user_line(
            f"a traced NumPy scalar ({x.type}) does not support item assignment"))
    assign(x, updated(x, index, value))


def updated(x, index, value):
    """The array x with x[index] = value (a new value; x is unchanged)."""
    if basic_only(index):
        return _basic_update(x, index, value)
    if isinstance(index, Tracer) and index.dtype == np.bool_:
        return _masked_update(x, index, value)
    block = _traced_block(x, index)
    if block is not None:
        axis, arrays = block
        region = x.shape[:axis] + broadcast_shapes(*(constant_type(a).shape
                                                     for a in arrays)) + \
            x.shape[axis + len(arrays):]
        return ops.scatter(x, _fitted(value, region, x.dtype), *arrays, axis=axis)
    return _indexed_update(x, index, value)


def selects_nothing(x, mask):
    """Whether `mask` has no element, no more axes than x, and each of its axes x's
    length there or 0: NumPy then selects nothing (x[np.array([], bool)] of an x of
    shape (1,) is empty), as an axis of length 0 matches any (bool_axis_fits)."""
    return 0 in mask.shape and mask.ndim <= x.ndim and all(
        bool_axis_fits(length, size) for length, size in zip(x.shape, mask.shape))


def _masked_update(x, mask, value):
    """x[mask] = value for a traced mask: where(mask, value, x). Its leading axes are
    the mask's; the value must be one element, since how many the mask selects is
    known only at run time, or a selection that knows where its elements go
    (`x[mask] = y[mask]`, `x[mask] += v`: masked_selection.py)."""
    if selects_nothing(x, mask):
        selected = (0,) + tuple(x.shape[mask.ndim:])
        try:
            broadcast_shapes(constant_type(value).shape, selected)
        except ShapeError:
            raise ValueError(at_user_line(
                f"shape mismatch: a value of shape {constant_type(value).shape} cannot be "
                f"assigned to an empty boolean selection of shape {selected}")) from None
        return x
    if mask.ndim > x.ndim or mask.shape != x.shape[:mask.ndim]:
        raise IndexError(at_user_line(
            f"boolean index of shape {mask.shape} does not match the indexed array of "
            f"shape {x.shape}"))
    assigned_at = getattr(type(value), "assigned_at", None)
    if assigned_at is not None:
        return assigned_at(value, x, mask)
    trailing = x.shape[mask.ndim:]  # the selection is (how many) + trailing
    shape = constant_type(value).shape
    leading = len(shape) - len(trailing)
    if leading > 0 and any(size != 1 for size in shape[:leading]):
        raise ValueError(at_user_line(
            f"assigning an array of shape {shape} at a traced boolean mask: how many "
            f"elements the mask selects is known only at run time, so assign a value "
            f"that broadcasts to any selection (shape {trailing} or one element), or "
            f"use jitflow.numpy.where(mask, values, x)"))
    if leading > 0:
        value = ops.reshape(value, shape[leading:])
    value = _fitted(value, trailing, x.dtype)
    mask = ops.reshape(mask, mask.shape + (1,) * (x.ndim - mask.ndim))
    return ops.where(mask, value, x)


def _traced_block(x, index):
    """(axis, arrays) when index is integer arrays, traced ones among them, on
    consecutive axes from `axis`, and full slices elsewhere: a scatter there, as gather
    reads it (else None)."""
    entries = expand_ellipsis(x, list(_entries(index)))
    arrays = [k for k, e in enumerate(entries) if not _is_full_slice(e)]
    if not arrays or arrays != list(range(arrays[0], arrays[-1] + 1)) or \
            len(entries) != x.ndim:
        return None
    chosen = [entries[k] for k in arrays]
    if not any(isinstance(e, Tracer) for e in chosen) or not all(
            isinstance(e, (Tracer, np.ndarray)) and e.dtype.kind == "i" for e in chosen):
        return None
    return arrays[0], chosen


def _is_full_slice(entry):
    return isinstance(entry, slice) and entry == slice(None)


def _basic_update(x, index, value):
    region, mesh = _mesh(x, index)
    value = _fitted(value, region, x.dtype)
    if 0 in region or 0 in (len(m) for m in mesh):
        return x  # nothing selected (the value was still checked)
    updates = ops.reshape(value, tuple(len(m) for m in mesh))
    if all(np.array_equal(m, np.arange(n)) for m, n in zip(mesh, x.shape)):
        return updates  # the whole array, in order (x[...] = v, x[:] = v)
    indices = [m.reshape([-1 if a == k else 1 for a in range(len(mesh))])
               for k, m in enumerate(mesh)]
    return ops.scatter(x, updates, *indices, axis=0, unique=True)


def _mesh(x, index):
    """The shape x[index] has (NumPy checks the index), and the positions the index
    selects along each axis of x, in the order it walks them."""
    region = _numpy_index(np.broadcast_to(np.zeros((), bool), x.shape), index).shape
    mesh, axis = [], 0
    for entry in expand_ellipsis(x, list(_entries(index))):
        if entry is None or isinstance(entry, (bool, np.bool_)):
            continue  # a new axis of x[index]: none of x's
        along = np.arange(x.shape[axis], dtype=np.int64)
        mesh.append(along[entry] if isinstance(entry, slice) else along[[entry]])
        axis += 1
    return region, mesh


def _indexed_update(x, index, value):
    """Integer-array and mask indices: x flat, written at the flat positions x[index]
    selects (NumPy's own indexing of a constant array of positions finds them)."""
    positions = np.arange(x.size, dtype=np.int64).reshape(x.shape)
    if any(isinstance(e, Tracer) for e in _entries(index)):
        selected = getitem(positions, index)
        unique = False
    else:
        selected = _numpy_index(positions, index)
        unique = np.unique(selected).size == selected.size
    region = constant_type(selected).shape
    value = _fitted(value, region, x.dtype)
    flat = ops.reshape(x, (x.size,))
    written = ops.scatter(flat, value, selected, axis=0, unique=unique)
    return ops.reshape(written, x.shape)


def _entries(index):
    return index if isinstance(index, tuple) else (index,)


def _numpy_index(array, index):
    try:
        return array[index]
    except IndexError as error:
        raise IndexError(at_user_line(str(error))) from None


def _fitted(value, shape, dtype):
    """`value` as NumPy's assignment into a region of `shape` and `dtype` takes it: cast
    (unsafe: floats into ints truncate; a constant that does not fit raises as in
    NumPy) and broadcast (leading length-1 axes beyond the region's dropped)."""
    if isinstance(value, (list, tuple)) and holds_tracer(value):
        value = jnp.asarray(value)  # x[:2] = [a, b]: NumPy stacks the values
    if isinstance(value, Tracer):
        value = _scalar_checked_to_fit(value, dtype)
        value = value if value.dtype == dtype else ops.cast(value, dtype)
    else:
        converted = np.empty(np.shape(value), dtype)
        converted[...] = value  # raises as NumPy does: NaN, inf, too large an int
        value = converted
    vshape = constant_type(value).shape
    while len(vshape) > len(shape) and vshape[0] == 1:
        vshape = vshape[1:]
    try:
        if len(vshape) > len(shape) or broadcast_shapes(vshape, shape) != tuple(shape):
            raise ShapeError
    except ShapeError:
        raise ValueError(at_user_line(
            f"could not broadcast input array from shape {constant_type(value).shape} "
            f"into shape {tuple(shape)}")) from None
    if vshape != constant_type(value).shape:
        value = ops.reshape(value, vshape)
    return ops.broadcast_to(value, shape) if vshape != tuple(shape) else value


def _scalar_checked_to_fit(value, dtype):
    """NumPy assigns a scalar (not an array) to an integer array as a Python number:
    it raises when the value does not fit (OverflowError; ValueError for NaN), where an
    array's values are cast. An integer scalar is checked so at run time: taken as a
    Python int (weakly typed) into an operation in `dtype`, which checks that it fits as
    NumPy checks Python ints (NEP 50). A float scalar's checks (NaN, inf, range) are not
    compiled: it is refused."""
    if dtype.kind not in "iu" or is_array(value) or \
            np.can_cast(value.dtype, dtype, casting="safe"):
        return value
    if value.dtype.kind in "iu":
        as_python_int = ops.cast(value, np.dtype(np.int64), weak=True)
        return ops.add(as_python_int, np.zeros((), dtype))  # checked: OverflowError
    raise TypeError(at_user_line(
        f"assigning a traced {value.dtype} scalar into a {dtype} array: NumPy checks "
        f"at run time that the number is not NaN or infinite and fits (raising "
        f"ValueError or OverflowError), which jitflow does not do for floats; cast it "
        f"first (value.astype(numpy.{dtype}), which truncates as NumPy's astype does)"))


# --- in-place operators and out= --------------------------------------------------------

def inplace(x, operation, other, name):
    """x <op>= other: the result cast back to x's dtype under NumPy's same-kind rule,
    written into x; for a NumPy or Python scalar, the new value."""
    result = operation(x, other)
    return write_result(x, result, name) if is_array(x) else result


def write_result(x, result, name):
    """Write `result` of ufunc `name` into x, as NumPy's out=x does (checking the cast,
    then the shape)."""
    assign(x, written_value(x, result, name))
    return x


def written_value(x, result, name):
    """`result` of ufunc `name` as NumPy's out=x would hold it: cast to x's dtype where
    NumPy's same-kind rule allows, raising NumPy's errors where it does not or where the
    shapes differ. x is a Tracer or an ndarray."""
    result_type = constant_type(result)
    if not np.can_cast(result_type.dtype, x.dtype, casting="same_kind"):
        raise TypeError(at_user_line(
            f"Cannot cast ufunc '{name}' output from dtype('{result_type.dtype}') to "
            f"dtype('{x.dtype}') with casting rule 'same_kind'"))
    if result_type.shape != x.shape:
        raise ValueError(at_user_line(
            f"non-broadcastable output operand with shape {x.shape} doesn't match the "
            f"broadcast shape {result_type.shape}"))
    if result_type.dtype != x.dtype or not isinstance(result, Tracer):
        result = ops.cast(result, x.dtype)
    return result


# --- rebinding ----------------------------------------------------------------------

def assign(x, value):
    """From now on x stands for `value` (a Tracer of x's type): through x's base if x
    is a view, and every live view of x's base sees it."""
    if not isinstance(value, Tracer):  # a constant (the whole array, under a tape)
        value = ops.where(True, value, x)
    alias = x._alias
    if alias is not None and alias.readonly:
        raise ValueError(at_user_line(f"assignment destination is read-only: "
                                      f"{alias.readonly}"))
    if value._builder is not x._builder:
        raise TypeError(at_user_line(
            f"writing into a traced value {x.type} of '{x._builder.name}' from inside "
            f"'{value._builder.name}' (a transformation, branch or loop body) is not "
            f"supported; return the new value from there and write it outside"))
    if alias is not None and alias.base is not None:
        assign(alias.base, alias.write(alias.base, value))
        return
    _rebind(x, value._var)


def _rebind(x, var):
    x._var = var
    alias = x._alias
    if alias is None or not alias.views:
        return
    live = [ref() for ref in alias.views]
    alias.views = [weakref.ref(v) for v in live if v is not None]
    for view_ in live:
        if view_ is not None:
            _rebind(view_, view_._alias.read(x)._var)


__all__ = ["setitem", "inplace", "write_result", "view", "derived_view", "assign",
           "mark_array", "mark_readonly", "mark_order_unknown", "is_array", "copy",
           "unknown_layout"]
