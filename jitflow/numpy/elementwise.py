"""Ufuncs and the other elementwise functions (where, clip, astype), with NumPy's loop
dtypes."""
import math

import numpy as _np

from .. import ops
from ..errors import at_user_line
from ..ir.types import (as_dtype, is_bfloat16, promotion_operand, result_dtype,
                        ufunc_loop_dtypes)
from ..trace import Tracer, aliases, constant_type
from ._common import _dtype_of, _no_out, _shape, _strong


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
copysign = _ufunc("copysign", ops.copysign)
arctan = _ufunc("arctan", ops.arctan)
arcsin = _ufunc("arcsin", ops.arcsin)
arccos = _ufunc("arccos", ops.arccos)
arctan2 = _ufunc("arctan2", ops.arctan2)
left_shift = bitwise_left_shift = _ufunc("left_shift", ops.left_shift)
right_shift = bitwise_right_shift = _ufunc("right_shift", ops.right_shift)
ldexp = _ufunc("ldexp", ops.ldexp)
cbrt = _ufunc("cbrt", ops.cbrt)
nextafter = _ufunc("nextafter", ops.nextafter)


def spacing(x, out=None, where=True):
    """NumPy's spacing: the distance from x to the next float away from zero (negative
    for negative x, positive for both zeros); NaN for infinities and NaN."""
    _no_out("spacing", out, where)
    x = x if isinstance(x, Tracer) else _np.asarray(x)
    if _dtype_of(x).kind != "f":
        x = astype(x, _np.result_type(_np.spacing(_np.zeros(1, _dtype_of(x)))))
    infinity = _dtype_of(x).type(_np.inf)
    # toward +inf from either zero (NumPy's spacing of -0.0 is positive)
    away = ops.where(ops.equal(x, 0), infinity, ops.copysign(infinity, x))
    steps = ops.subtract(ops.nextafter(x, away), x)
    return _strong(ops.where(ops.isinf(x), _dtype_of(x).type(_np.nan), steps))  # NumPy's NaN
signbit = _ufunc("signbit", lambda x: ops.signbit(
    astype(x, _np.float32) if _dtype_of(x) == _np.bool_ else x))  # NumPy: in float16


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
        x = astype(x, _np.int8)
    return _strong(ops.multiply(x, x))


def isfinite(x, out=None):
    _no_out("isfinite", out)
    return logical_not(logical_or(isnan(x), isinf(x)))


def log2(x):
    return _log_in_base(x, 2)


def log10(x):
    return _log_in_base(x, 10)


def _log_in_base(x, base):
    if is_bfloat16(_dtype_of(x)):  # ml_dtypes' loop: in float32, rounded once
        return astype(_log_in_base(astype(x, _np.float32), base), _dtype_of(x))
    return _strong(ops.divide(ops.log(x), math.log(base)))


def where(condition, x, y):
    """x where condition, else y (the one-argument form is selecting.py's)."""
    if _dtype_of(condition) != _np.bool_:
        condition = ops.not_equal(condition, 0)
    result = _strong(ops.where(condition, x, y))
    if isinstance(result, Tracer) and result.ndim == 0:
        aliases.mark_array(result)  # NumPy's where gives an array, 0-d too (not a scalar)
    return result


def _beyond(bound, a, upper):
    """Whether `bound` is a Python int at or past the end of a's integer dtype on the
    side where it clips nothing; NumPy then ignores it (past the other end, it raises)."""
    if not isinstance(bound, int) or isinstance(bound, bool) or _dtype_of(a).kind not in "iu":
        return False
    info = _np.iinfo(_dtype_of(a))
    return bound >= info.max if upper else bound <= info.min


def _ignored_at_run_time(bound, a, other, upper):
    """A Python int bound passed in (known only at run time) where NumPy ignores it (at
    or past the end of a's integer dtype on the side where it clips nothing) replaced by
    the end of the dtype the clip computes in, where it clips nothing either; past the
    other end the integer loop's check raises OverflowError, as NumPy does. `other` is
    the other bound, which may widen that dtype (clip(int8, int32 128, 2**31) is 128)."""
    dtype = _dtype_of(a)
    if not (isinstance(bound, Tracer) and bound.type.weak and bound.dtype.kind == "i"
            and (dtype.kind == "u" or dtype.kind == "i" and dtype.itemsize < 8)):
        return bound
    if upper and _np.iinfo(dtype).max > _np.iinfo(bound.dtype).max:
        return bound  # every Python int jitflow takes (an int64) is below uint64's end
    strong = [constant_type(v) for v in (a, other) if v is not None]
    computed_in = _np.dtype(result_dtype(*strong)[0])
    info = _np.iinfo(dtype)
    if computed_in.kind == "f":  # a float other bound: the clip is computed in floats
        if upper:
            return ops.where(ops.greater_equal(bound, int(info.max)), _np.inf, bound)
        return ops.where(ops.less_equal(bound, int(info.min)), -_np.inf, bound)
    wide = _np.iinfo(computed_in)
    if upper and wide.max > _np.iinfo(bound.dtype).max:
        raise TypeError(at_user_line(
            f"numpy.clip of {dtype} with a uint64 bound and a Python int upper bound "
            f"passed in: jitflow cannot tell at trace time whether NumPy would ignore "
            f"it; make the upper bound a uint64 array or a constant"))
    if upper:
        return ops.where(ops.greater_equal(bound, int(info.max)), int(wide.max), bound)
    return ops.where(ops.less_equal(bound, int(info.min)), int(wide.min), bound)


def clip(a, a_min=None, a_max=None, out=None):
    _no_out("clip", out)
    if _beyond(a_min, a, upper=False):
        a_min = None
    if _beyond(a_max, a, upper=True):
        a_max = None
    a_min, a_max = (_ignored_at_run_time(a_min, a, a_max, upper=False),
                    _ignored_at_run_time(a_max, a, a_min, upper=True))
    if a_min is None and a_max is None:
        return positive(a)  # what NumPy 2 computes: a copy (and an error for bool)
    # NumPy's clip is one ufunc of all three: compute in their common dtype, so that a
    # Python float bound is not first rounded to a float32 x and then widened.
    # (The dtype of that ufunc's loop: bfloat16, which has no clip loop, is clipped in
    # float32.)
    common = ufunc_loop_dtypes(_np._core.umath.clip, [constant_type(v) for v in (
        a, a_min if a_min is not None else a, a_max if a_max is not None else a)])[-1]
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


__all__ = ["abs", "absolute", "add", "cbrt", "nextafter", "spacing", "bitwise_left_shift", "bitwise_right_shift", "ldexp", "left_shift", "right_shift", "arccos", "arcsin", "arctan", "arctan2", "astype", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "ceil", "clip", "copysign", "cos", "divide", "equal", "exp", "expm1", "floor", "floor_divide", "greater", "greater_equal", "invert", "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log10", "log1p", "log2", "logical_and", "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "mod", "multiply", "negative", "not_equal", "positive", "power", "remainder", "sign", "signbit", "sin", "sqrt", "square", "subtract", "tan", "tanh", "true_divide"]
