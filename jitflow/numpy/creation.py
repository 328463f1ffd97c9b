"""Array creation (asarray, zeros, arange, linspace, ...) and array facts (shape, ndim,
size, result_type)."""
import builtins
import math

import numpy as _np

from .. import ops
from ..errors import at_user_line
from ..ir.types import as_dtype
from ..trace import Tracer, aliases, is_tracing
from ._common import _dtype_of, _ndim, _python_scalar, _shape, _static_shape, _strong
from .elementwise import astype
from .shapes import stack


def asarray(a, dtype=None):
    if isinstance(a, Tracer):
        if dtype is not None:
            return _an_array(astype(a, dtype))
        if aliases.is_array(a):
            return a
        # a Python or NumPy scalar: a new 0-d array, strongly typed as NumPy's asarray
        return _an_array(aliases.copy(_strong(a)))
    if isinstance(a, (list, tuple)) and _holds_tracer(a):
        return stack([asarray(v, dtype) for v in a])
    result = _np.asarray(a, dtype=dtype)
    as_dtype(result.dtype, what="asarray")
    return result


def _an_array(result):
    """NumPy's creation functions give arrays, 0-d ones too (not NumPy scalars, which
    are immutable): writes into them are writes (writes.py)."""
    if isinstance(result, Tracer) and result.ndim == 0:
        aliases.mark_array(result)
    return result


def _holds_tracer(nested):
    return builtins.any(isinstance(v, Tracer) or
                        (isinstance(v, (list, tuple)) and _holds_tracer(v)) for v in nested)


def array(a, dtype=None, copy=True):
    result = asarray(a, dtype)
    return result.copy() if copy and isinstance(result, (_np.ndarray, Tracer)) else result


def full(shape, fill_value, dtype=None):
    shape = _static_shape(shape, "full")
    if isinstance(fill_value, Tracer):
        fill_value = fill_value if dtype is None else astype(fill_value, dtype)
        return _an_array(ops.broadcast_to(fill_value, shape))
    dtype = as_dtype(dtype if dtype is not None else _np.asarray(fill_value).dtype,
                     what="full")
    if not is_tracing():
        return _np.full(shape, fill_value, dtype)
    return _an_array(ops.broadcast_to(_np.asarray(fill_value, dtype), shape))


def zeros(shape, dtype=float):
    return full(shape, 0, dtype)


def ones(shape, dtype=float):
    return full(shape, 1, dtype)


def _like(a, dtype, shape):
    return (_shape(a) if shape is None else shape), (_dtype_of(a) if dtype is None
                                                     else dtype)


def full_like(a, fill_value, dtype=None, shape=None):
    same_shape = shape is None
    shape, dtype = _like(a, dtype, shape)
    result = full(shape, fill_value, dtype)
    if same_shape and isinstance(result, Tracer) and _layout_may_differ(a):
        aliases.mark_order_unknown(result)  # NumPy gives it a's memory order
    return result


def _layout_may_differ(a):
    if isinstance(a, Tracer):
        return aliases.unknown_layout(a)
    return isinstance(a, _np.ndarray) and not a.flags.c_contiguous


def zeros_like(a, dtype=None, shape=None):
    return full_like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    return full_like(a, 1, dtype, shape)


def arange(start, stop=None, step=1, dtype=None):
    if stop is None:
        start, stop = 0, start
    for name, value in (("start", start), ("stop", stop), ("step", step)):
        _python_scalar(value, f"arange {name}")
    if step == 0:
        raise ZeroDivisionError("arange: step must not be zero")
    length = builtins.max(math.ceil((stop - start) / step), 0)
    dtype = as_dtype(dtype if dtype is not None else _np.result_type(start, stop, step),
                     what="arange")
    if not is_tracing():
        return _np.arange(start, stop, step, dtype=dtype)
    # As NumPy: the first two values are converted to dtype, the rest step by their
    # difference in dtype (so arange(0, 2, 0.5, dtype=int) is all zeros).
    first, second = (_np.array(v).astype(dtype) for v in (start, start + step))
    if dtype == _np.bool_:
        if length > 2:
            raise TypeError(at_user_line("arange() is only supported for booleans when "
                                         "the result has at most length 2."))
        return _np.array([first, second][:length], dtype=dtype)
    with _np.errstate(all="ignore"):
        delta = second - first
    counts = ops.iota((length,), dtype)
    values = ops.add(first, ops.multiply(counts, delta))
    # Positions 0 and 1 hold the converted values themselves (-0.0, inf * 0, rounding).
    return ops.where(ops.equal(counts, 0), first,
                     ops.where(ops.equal(counts, 1), second, values))


def linspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    traced = isinstance(start, Tracer) or isinstance(stop, Tracer)
    if not traced and not is_tracing():
        return _np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype, axis=axis)
    if traced or _ndim(start) or _ndim(stop) or axis != 0:
        return _traced_linspace(start, stop, num, endpoint, dtype, axis)
    _python_scalar(start, "linspace start"), _python_scalar(stop, "linspace stop")
    if num < 0:
        raise ValueError(at_user_line(f"Number of samples, {num}, must be non-negative."))
    div = (num - 1) if endpoint else num
    delta = float(stop) - float(start)
    counts = ops.iota((num,), _np.float64)
    # NumPy's three cases: counts * step; counts / div * delta when the step underflows
    # to 0; counts * delta when there is no step (a single point).
    step = delta / div if div > 0 else None
    if step:
        values = ops.multiply(counts, step)
    elif div > 0:
        values = ops.multiply(ops.divide(counts, div), delta)
    else:
        values = ops.multiply(counts, delta)
    values = ops.add(values, float(start))
    if endpoint and num > 1:  # NumPy sets the last point to `stop` exactly
        values = ops.where(ops.equal(counts, num - 1), float(stop), values)
    if dtype is None:
        return values
    if as_dtype(dtype, what="linspace").kind == "i":
        values = ops.floor(values)  # NumPy rounds down to integers, not toward zero
    return astype(values, dtype)


def _traced_linspace(start, stop, num, endpoint, dtype, axis):
    """NumPy's recipe with traced endpoints (scalars or arrays): in the endpoints'
    inexact dtype, counts times the step, or divided by the count of steps and times
    the distance where a step underflows to 0; the last point set to stop."""
    num = _static_shape(num, "linspace: num")[0]
    if num < 0:
        raise ValueError(at_user_line(f"Number of samples, {num}, must be non-negative."))
    div = (num - 1) if endpoint else num
    dt = _np.result_type(*(_dtype_of(e) if isinstance(e, Tracer) else e
                           for e in (start, stop)))
    dt = dt if dt.kind == "f" else _np.dtype(_np.float64)
    start, stop = (ops.cast(e, dt) if isinstance(e, Tracer) else _np.asarray(e, dt)
                   for e in (start, stop))
    delta = ops.subtract(stop, start)
    rank = len(ops.shape_of(delta))
    counts = ops.iota((num,) + (1,) * rank, dt)
    if div > 0:
        step = ops.divide(delta, _np.asarray(div, dt))
        underflow = ops.reduce_max(ops.equal(step, 0), axes=tuple(range(rank))) if rank \
            else ops.equal(step, 0)
        values = ops.where(underflow,
                           ops.multiply(ops.divide(counts, _np.asarray(div, dt)), delta),
                           ops.multiply(counts, step))
    else:
        values = ops.multiply(counts, delta)
    values = ops.add(values, start)
    if endpoint and num > 1:
        last = ops.equal(ops.iota((num,) + (1,) * rank, _np.int64), num - 1)
        values = ops.where(last, stop, values)
    if axis != 0:
        axis = axis % (rank + 1)
        values = ops.transpose(values, list(range(1, axis + 1)) + [0] +
                               list(range(axis + 1, rank + 1)))
    if dtype is None:
        return values
    if as_dtype(dtype, what="linspace").kind == "i":
        values = ops.floor(values)
    return astype(values, dtype)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop), as NumPy computes it (a Python number as base
    stays weakly typed: float32 exponents give float32 powers)."""
    exponents = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    if _ndim(base):
        raise NotImplementedError(at_user_line(
            "jitflow.numpy.logspace: an array of bases is not supported"))
    values = ops.power(base, exponents)
    return values if dtype is None else astype(values, dtype)


def empty(shape, dtype=float):
    """NumPy leaves the values unset; jitflow's are zeros."""
    return zeros(shape, dtype)


def empty_like(prototype, dtype=None, shape=None):
    return zeros_like(prototype, dtype, shape)


def copy(a):
    a = asarray(a)
    return a.copy(order="K")  # NumPy's function keeps the order; its method makes C


def shape(a):
    return _shape(a)


def ndim(a):
    return _ndim(a)


def size(a):
    return math.prod(_shape(a))


def result_type(*args):
    return _np.result_type(*(a.dtype if isinstance(a, Tracer) else a for a in args))


__all__ = ["copy", "empty", "empty_like", "arange", "array", "asarray", "full", "full_like", "linspace", "logspace", "ndim", "ones", "ones_like", "result_type", "shape", "size", "zeros", "zeros_like"]
