"""jitflow.numpy: NumPy's names and signatures, on NumPy arrays and on traced values.

On plain arrays every function runs eagerly and returns what NumPy returns (to rounding).
Inside a trace it records the graph. Python-operator arithmetic on Python scalars stays
weakly typed, as in Python; NumPy functions return strongly typed results, as np.* does.
"""
import builtins
import math

import numpy as _np

from . import ops
from .contract import dot, einsum, inner, matmul, outer, tensordot  # noqa: F401
from .errors import at_user_line
from .ir.types import (as_dtype, normalize_axes, normalize_axis, promotion_operand,
                       result_dtype, type_of_value)
from .trace import Tracer, constant_type, is_tracing

bool_, int32, int64, float32, float64 = (_np.bool_, _np.int32, _np.int64, _np.float32,
                                         _np.float64)
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None
ndarray = _np.ndarray


def _strong(x):
    """NumPy functions give strongly typed results even from Python scalars."""
    if isinstance(x, Tracer) and x.type.weak:
        return ops.cast(x, x.dtype)
    return x


def _no_out(name, out, where=True):
    if out is not None:
        raise TypeError(at_user_line(f"jitflow.numpy.{name}: out= is not supported; "
                                     f"arrays are immutable under tracing"))
    if where is not True:
        raise TypeError(at_user_line(f"jitflow.numpy.{name}: where= is not supported"))


def _ufunc(name, op):
    def function(*args, out=None, where=True, dtype=None):
        _no_out(name, out, where)
        if dtype is not None:
            args = _cast_for_loop(name, args, dtype)
        return _strong(op(*args))
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"NumPy's {name}, on arrays and traced values."
    return function


def _cast_for_loop(name, args, dtype):
    """NumPy's dtype= of a ufunc picks the loop whose output is `dtype`: the operands are
    cast to that loop's inputs ('same_kind'), and no such loop is a TypeError (less with
    dtype=float32; add(1.5, x, dtype=int32))."""
    ufunc = getattr(_np, name)
    operands = tuple(promotion_operand(constant_type(a)) for a in args)
    try:
        loop = ufunc.resolve_dtypes(operands + (None,), casting="same_kind",
                                    signature=(None,) * len(args) + (as_dtype(dtype),))
    except TypeError as error:
        raise TypeError(at_user_line(f"{name}: {error}")) from None
    return [a if _dtype_of(a) == d else astype(a, d) for a, d in zip(args, loop)]


negative = _ufunc("negative", ops.negative)
absolute = abs = _ufunc("absolute", ops.absolute)
sign = _ufunc("sign", ops.sign)
exp = _ufunc("exp", ops.exp)
log = _ufunc("log", ops.log)
log1p = _ufunc("log1p", ops.log1p)
expm1 = _ufunc("expm1", ops.expm1)
sqrt = _ufunc("sqrt", ops.sqrt)
sin = _ufunc("sin", ops.sin)
cos = _ufunc("cos", ops.cos)
tan = _ufunc("tan", ops.tan)
tanh = _ufunc("tanh", ops.tanh)
floor = _ufunc("floor", ops.floor)
ceil = _ufunc("ceil", ops.ceil)
isnan = _ufunc("isnan", ops.isnan)
isinf = _ufunc("isinf", ops.isinf)
logical_not = _ufunc("logical_not", ops.logical_not)
invert = bitwise_not = _ufunc("invert", ops.invert)
add = _ufunc("add", ops.add)
subtract = _ufunc("subtract", ops.subtract)
multiply = _ufunc("multiply", ops.multiply)
divide = true_divide = _ufunc("divide", ops.divide)
floor_divide = _ufunc("floor_divide", ops.floor_divide)
remainder = mod = _ufunc("remainder", ops.remainder)
power = _ufunc("power", ops.power)
maximum = _ufunc("maximum", ops.maximum)
minimum = _ufunc("minimum", ops.minimum)
equal = _ufunc("equal", ops.equal)
not_equal = _ufunc("not_equal", ops.not_equal)
less = _ufunc("less", ops.less)
less_equal = _ufunc("less_equal", ops.less_equal)
greater = _ufunc("greater", ops.greater)
greater_equal = _ufunc("greater_equal", ops.greater_equal)
logical_and = _ufunc("logical_and", ops.logical_and)
logical_or = _ufunc("logical_or", ops.logical_or)
logical_xor = _ufunc("logical_xor", ops.logical_xor)
bitwise_and = _ufunc("bitwise_and", ops.bitwise_and)
bitwise_or = _ufunc("bitwise_or", ops.bitwise_or)
bitwise_xor = _ufunc("bitwise_xor", ops.bitwise_xor)


def positive(x):
    if not isinstance(x, Tracer):
        return _np.positive(x)
    if x.dtype == _np.bool_:
        raise TypeError(at_user_line("numpy.positive is not defined for bool (NumPy has "
                                     "no loop for it)"))
    return _strong(x)


def square(x, out=None):
    _no_out("square", out)
    if _dtype_of(x) == _np.bool_:  # x * x would be bool; NumPy's square of bool is int8
        raise TypeError(at_user_line("NumPy computes square of bool in int8, which "
                                     "jitflow does not support; cast the input first"))
    return _strong(ops.multiply(x, x))


def isfinite(x, out=None):
    _no_out("isfinite", out)
    return logical_not(logical_or(isnan(x), isinf(x)))


def log2(x):
    return _strong(ops.divide(ops.log(x), math.log(2)))


def log10(x):
    return _strong(ops.divide(ops.log(x), math.log(10)))


def where(condition, x=None, y=None):
    if x is None or y is None:
        raise TypeError(at_user_line(
            "jitflow.numpy.where(condition) (the indices of non-zero elements) has a "
            "shape that depends on the data; use the three-argument form where(c, x, y)"))
    if _dtype_of(condition) != _np.bool_:
        condition = ops.not_equal(condition, 0)
    return _strong(ops.where(condition, x, y))


def _beyond(bound, a, upper):
    """Whether `bound` is a Python int past the end of a's integer dtype on the side
    where it clips nothing; NumPy then ignores it (past the other end, it raises)."""
    if not isinstance(bound, int) or isinstance(bound, bool) or _dtype_of(a).kind != "i":
        return False
    info = _np.iinfo(_dtype_of(a))
    return bound > info.max if upper else bound < info.min


def clip(a, a_min=None, a_max=None, out=None):
    _no_out("clip", out)
    if _beyond(a_min, a, upper=False):
        a_min = None
    if _beyond(a_max, a, upper=True):
        a_max = None
    if a_min is None and a_max is None:
        return positive(a)  # what NumPy 2 computes: a copy (and an error for bool)
    # NumPy's clip is one ufunc of all three: compute in their common dtype, so that a
    # Python float bound is not first rounded to a float32 x and then widened.
    operands = [v for v in (a, a_min, a_max) if v is not None]
    common, _ = result_dtype(*(constant_type(v) for v in operands))
    a = a if _dtype_of(a) == common else astype(a, common)
    # maximum and minimum return their second operand on ties (-0.0 against 0.0). With
    # one bound NumPy calls maximum(x, bound) or minimum(x, bound): ties give the bound.
    # With both, NumPy's clip loop keeps x when both bounds are single values, and
    # otherwise computes min(max(x, lo), hi), where ties give the bound (hi last).
    if a_max is None:
        return _strong(ops.maximum(a, a_min))
    if a_min is None:
        return _strong(ops.minimum(a, a_max))
    if math.prod(_shape(a_min)) == 1 and math.prod(_shape(a_max)) == 1:
        return _strong(ops.minimum(a_max, ops.maximum(a_min, a)))
    return _strong(ops.minimum(ops.maximum(a, a_min), a_max))


def astype(x, dtype, copy=True):
    dtype = as_dtype(dtype, what="astype")
    if isinstance(x, Tracer):
        return ops.cast(x, dtype)
    return _np.asarray(x).astype(dtype, copy=copy)


# --- reductions -------------------------------------------------------------------------

def _ndim(x):
    return x.ndim if isinstance(x, Tracer) else _np.ndim(x)


def _shape(x):
    return x.shape if isinstance(x, Tracer) else _np.shape(x)


def _dtype_of(x):
    return x.dtype if isinstance(x, Tracer) else type_of_value(x).dtype


def _reduce(name, op, a, axis, dtype, out, keepdims):
    _no_out(name, out)
    if dtype is not None:
        a = astype(a, dtype)
    result = op(a, axes=normalize_axes(axis, _ndim(a)), keepdims=keepdims)
    return result if dtype is None else astype(result, dtype)


def sum(a, axis=None, dtype=None, out=None, keepdims=False):
    return _reduce("sum", ops.reduce_sum, a, axis, dtype, out, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False):
    return _reduce("prod", ops.reduce_prod, a, axis, dtype, out, keepdims)


def max(a, axis=None, out=None, keepdims=False):
    return _reduce("max", ops.reduce_max, a, axis, None, out, keepdims)


def min(a, axis=None, out=None, keepdims=False):
    return _reduce("min", ops.reduce_min, a, axis, None, out, keepdims)


amax, amin = max, min


def any(a, axis=None, out=None, keepdims=False):
    # A count rather than a max, so that any() of nothing is False, as in NumPy.
    count = _reduce("any", ops.reduce_sum, ops.not_equal(a, 0), axis, None, out, keepdims)
    return ops.greater(count, 0)


def all(a, axis=None, out=None, keepdims=False):
    count = _reduce("all", ops.reduce_sum, ops.equal(a, 0), axis, None, out, keepdims)
    return ops.equal(count, 0)


def argmax(a, axis=None, out=None, keepdims=False):
    _no_out("argmax", out)
    axis = None if axis is None else normalize_axis(axis, _ndim(a))
    return ops.argmax(a, axis=axis, keepdims=keepdims)


def argmin(a, axis=None, out=None, keepdims=False):
    _no_out("argmin", out)
    axis = None if axis is None else normalize_axis(axis, _ndim(a))
    return ops.argmin(a, axis=axis, keepdims=keepdims)


def _count(a, axis):
    shape = _shape(a)
    return math.prod(shape[i] for i in normalize_axes(axis, len(shape)))


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    _no_out("mean", out)
    if dtype is None and _dtype_of(a).kind in "bi":
        dtype = _np.float64  # NumPy averages integers in float64
    if dtype is not None:
        a = astype(a, dtype)
    total = sum(a, axis=axis, keepdims=keepdims)
    return _strong(ops.divide(total, _count(a, axis)))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    _no_out("var", out)
    centered = ops.subtract(a, mean(a, axis=axis, dtype=dtype, keepdims=True))
    squares = ops.multiply(centered, centered)
    # NumPy sums the squares in `dtype` too: an int array's float64 squares in float32.
    total = sum(squares, axis=axis, dtype=dtype, keepdims=keepdims)
    return _strong(ops.divide(total, builtins.max(_count(a, axis) - ddof, 0)))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return sqrt(var(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims))


def cumsum(a, axis=None, dtype=None, out=None):
    _no_out("cumsum", out)
    if axis is None:
        a, axis = ravel(a), 0
    if dtype is not None:
        a = astype(a, dtype)
    result = ops.cumsum(a, axis=normalize_axis(axis, _ndim(a)))
    return result if dtype is None else astype(result, dtype)


def logsumexp(a, axis=None, keepdims=False):
    """log(sum(exp(a))) without overflow: the max is taken out before exponentiating."""
    peak = max(a, axis=axis, keepdims=True)
    peak = where(isfinite(peak), peak, 0)  # keeps inf and all -inf rows exact
    total = sum(exp(ops.subtract(a, peak)), axis=axis, keepdims=True)
    result = ops.add(log(total), peak)
    return result if keepdims else squeeze(result, axis=axis)


def softmax(x, axis=-1):
    shifted = ops.subtract(x, max(x, axis=axis, keepdims=True))
    exps = exp(shifted)
    return ops.divide(exps, sum(exps, axis=axis, keepdims=True))


def log_softmax(x, axis=-1):
    # (x - peak) - log(sum(exp(x - peak))), not x - logsumexp(x): the latter rounds
    # logsumexp at the magnitude of x (1000.69 in float32) before cancelling it.
    peak = max(x, axis=axis, keepdims=True)
    shifted = ops.subtract(x, where(isfinite(peak), peak, 0))
    return ops.subtract(shifted, log(sum(exp(shifted), axis=axis, keepdims=True)))


def relu(x):
    return maximum(x, 0)


def sigmoid(x):
    return ops.logistic(x)


logistic = sigmoid


# --- shapes ---------------------------------------------------------------------------------

def reshape(a, *dims, shape=None, order="C", newshape=None, copy=None):
    """np.reshape(a, shape) (shape= or newshape= by keyword too), and the method's
    a.reshape(2, 3) with the dimensions as separate arguments."""
    if order != "C":
        raise NotImplementedError("jitflow supports only C-order reshapes")
    if shape is None:
        shape = newshape if newshape is not None else dims[0] if len(dims) == 1 else dims
    elif dims:
        raise TypeError(at_user_line("reshape: shape given twice"))
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    return ops.reshape(a, _resolve_shape(shape, _shape(a)))


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
    return ops.transpose(a, perm)


def swapaxes(a, axis1, axis2):
    perm = list(range(_ndim(a)))
    i, j = normalize_axis(axis1, len(perm)), normalize_axis(axis2, len(perm))
    perm[i], perm[j] = perm[j], perm[i]
    return ops.transpose(a, perm)


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
    return ops.transpose(a, order)


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
    return ops.reshape(a, [d for i, d in enumerate(shape) if i not in axes])


def expand_dims(a, axis):
    shape = list(_shape(a))
    axes = normalize_axes(axis, len(shape) + (len(axis) if isinstance(axis, (tuple, list))
                                              else 1))
    for ax in axes:
        shape.insert(ax, 1)
    return ops.reshape(a, shape)


def broadcast_to(array, shape):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return ops.broadcast_to(array, shape)


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


def pad(array, pad_width, mode="constant", constant_values=0):
    if mode != "constant":
        raise NotImplementedError(f"pad: only mode='constant' is supported, got {mode!r}")
    ndim = _ndim(array)
    widths = _np.broadcast_to(_np.asarray(pad_width, dtype=_np.int64), (ndim, 2))
    return ops.pad(array, widths=[(int(lo), int(hi)) for lo, hi in widths],
                   value=_python_scalar(constant_values, "constant_values"))


def _python_scalar(value, what):
    if isinstance(value, Tracer) or _np.ndim(value) != 0:
        raise TypeError(at_user_line(f"{what} must be a constant scalar"))
    return _np.asarray(value).item()


def take(a, indices, axis=None):
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis(axis, _ndim(a))
    if not isinstance(indices, Tracer):
        given, indices = indices, _np.asarray(indices)
        if indices.size == 0 and not isinstance(given, _np.ndarray):
            indices = indices.astype(_np.int64)  # [] are no positions, not float64 ones
    # NumPy casts indices to integers 'safely': bools are 0 and 1, floats an error.
    if _dtype_of(indices).kind not in "bi":
        raise TypeError(at_user_line(f"take: indices must be integers, got "
                                     f"{_dtype_of(indices)}"))
    if _dtype_of(indices) == _np.bool_:
        indices = astype(indices, _np.int64)
    return ops.gather(a, indices, axis=axis)


# --- creation ------------------------------------------------------------------------------

def asarray(a, dtype=None):
    if isinstance(a, Tracer):
        return a if dtype is None else astype(a, dtype)
    if isinstance(a, (list, tuple)) and _holds_tracer(a):
        return stack([asarray(v, dtype) for v in a])
    result = _np.asarray(a, dtype=dtype)
    as_dtype(result.dtype, what="asarray")
    return result


def _holds_tracer(nested):
    return builtins.any(isinstance(v, Tracer) or
                        (isinstance(v, (list, tuple)) and _holds_tracer(v)) for v in nested)


def array(a, dtype=None, copy=True):
    result = asarray(a, dtype)
    return result.copy() if copy and isinstance(result, _np.ndarray) else result


def full(shape, fill_value, dtype=None):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if isinstance(fill_value, Tracer):
        fill_value = fill_value if dtype is None else astype(fill_value, dtype)
        return ops.broadcast_to(fill_value, shape)
    dtype = as_dtype(dtype if dtype is not None else _np.asarray(fill_value).dtype,
                     what="full")
    if not is_tracing():
        return _np.full(shape, fill_value, dtype)
    return ops.broadcast_to(_np.asarray(fill_value, dtype), shape)


def zeros(shape, dtype=float):
    return full(shape, 0, dtype)


def ones(shape, dtype=float):
    return full(shape, 1, dtype)


def _like(a, dtype, shape):
    return (_shape(a) if shape is None else shape), (_dtype_of(a) if dtype is None
                                                     else dtype)


def full_like(a, fill_value, dtype=None, shape=None):
    shape, dtype = _like(a, dtype, shape)
    return full(shape, fill_value, dtype)


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


def linspace(start, stop, num=50, endpoint=True, dtype=None):
    _python_scalar(start, "linspace start"), _python_scalar(stop, "linspace stop")
    if not is_tracing():
        return _np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    if num < 0:
        raise ValueError(at_user_line(f"Number of samples, {num}, must be non-negative."))
    div = (num - 1) if endpoint else num
    delta = float(stop) - float(start)
    counts = ops.iota((num,), float64)
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


def shape(a):
    return _shape(a)


def ndim(a):
    return _ndim(a)


def size(a):
    return math.prod(_shape(a))


def result_type(*args):
    return _np.result_type(*(a.dtype if isinstance(a, Tracer) else a for a in args))


dtype = _np.dtype
finfo, iinfo = _np.finfo, _np.iinfo
__all__ = [name for name in dir() if not name.startswith("_") and name not in
           ("builtins", "math", "ops", "Tracer", "is_tracing", "as_dtype", "at_user_line",
            "normalize_axes", "normalize_axis", "type_of_value",
            "result_dtype", "constant_type", "promotion_operand")]
