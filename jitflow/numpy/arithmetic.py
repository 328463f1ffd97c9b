"""Ufuncs that are exact compositions of the primitives: fabs, reciprocal, trunc, fix,
rint, fmax, fmin, fmod (a primitive of its own), modf, frexp, heaviside, degrees, radians,
deg2rad, rad2deg.

Each computes in the dtypes of NumPy's loop (_loops.py) and gives NumPy's values bit for
bit, NaN, infinities and signed zeros included; derivatives follow from the primitives.
"""
import numpy as _np


from .. import ops
from ..errors import at_user_line
from ._common import _dtype_of, _no_out, _strong
from ._loops import composite_ufunc, in_loop_dtypes
from .creation import asarray


@composite_ufunc(_np.fabs)
def fabs(x, *, dtype):
    """|x| of a float."""
    return ops.absolute(x)


@composite_ufunc(_np.reciprocal)
def reciprocal(x, *, dtype):
    """1 / x; an integer's is NumPy's 1.0 / x converted back: 1 and -1 stay, 0 gives inf
    converted as this machine converts it (the smallest int32 or int64, so 0 for the
    narrower and the unsigned dtypes), others 0."""
    if dtype.kind == "f":
        return ops.divide(_np.array(1, dtype), x)
    with _np.errstate(invalid="ignore"):
        of_zero = _np.array(_np.inf).astype(dtype)
    return ops.where(ops.equal(x, 0), of_zero,
                     ops.where(ops.equal(ops.absolute(x), 1), x, _np.array(0, dtype)))


def _truncated(x, dtype):
    """Toward zero: floor above zero, ceil below; -0.0 and NaN stay themselves."""
    if dtype.kind != "f":
        return ops.cast(x, dtype)  # a new array of the same integers
    return ops.where(ops.less(x, 0), ops.ceil(x), ops.floor(x))


@composite_ufunc(_np.trunc)
def trunc(x, *, dtype):
    """x rounded toward zero."""
    return _truncated(x, dtype)


def fix(x, out=None):
    """NumPy's fix: x rounded toward zero (as trunc, for every dtype)."""
    _no_out("fix", out)
    return trunc(x)


@composite_ufunc(_np.rint)
def rint(x, *, dtype):
    """x rounded to the nearest integer, halves to the even one; the sign of a zero
    result is x's (rint(-0.4) is -0.0)."""
    below = ops.floor(x)
    fraction = ops.subtract(x, below)  # exact: x and floor(x) are within 1
    up = ops.add(below, _np.array(1, dtype))
    odd = ops.not_equal(ops.remainder(below, _np.array(2, dtype)), 0)
    rounded = ops.where(ops.greater(fraction, 0.5), up,
                        ops.where(ops.less(fraction, 0.5), below,
                                  ops.where(odd, up, below)))
    return ops.where(ops.equal(rounded, 0), _signed_zero(x, dtype), rounded)


def _signed_zero(x, dtype):
    """0.0 with the sign of x (for x that are zero or round to zero)."""
    negative = ops.logical_or(ops.less(x, 0),
                              ops.less(ops.divide(_np.array(1, dtype), x), 0))
    return ops.where(negative, _np.array(-0.0, dtype), _np.array(0.0, dtype))


def _ignoring_nan(extremum):
    """fmax and fmin: the other operand where one is NaN (NaN only where both are)."""
    def body(x, y, *, dtype):
        if dtype.kind != "f":
            return extremum(x, y)
        return ops.where(ops.isnan(y), x, ops.where(ops.isnan(x), y, extremum(x, y)))
    body.__doc__ = (f"The {extremum.__name__} of x and y ignoring NaN; of 0.0 and -0.0 "
                    f"it keeps y, as NumPy's array loop does.")
    return body


# (in half: NumPy's maximum and minimum of halves keep x on ties, the primitives' too)
fmax = composite_ufunc(_np.fmax, half_in_float32=False)(_ignoring_nan(ops.maximum))
fmin = composite_ufunc(_np.fmin, half_in_float32=False)(_ignoring_nan(ops.minimum))


@composite_ufunc(_np.fmod)
def fmod(x, y, *, dtype):
    """The remainder of x / y with the sign of x (remainder's has the sign of y); of
    integers, a division by zero gives 0, as in NumPy."""
    return ops.fmod(x, y)


def modf(x, out1=None, out2=None, /, *, out=(None, None)):
    """(fraction, integral part) of x, both with x's sign; inf's fraction is 0."""
    _no_out("modf", out1 if out1 is not None else out2)
    _no_out("modf", None if out == (None, None) else out)
    (x,), dtype = in_loop_dtypes(_np.modf, asarray(x))
    integral = _truncated(x, dtype)
    fraction = ops.where(ops.isinf(x), _np.array(0, dtype), ops.subtract(x, integral))
    return _strong(ops.copysign(fraction, x)), _strong(integral)


def frexp(x, out1=None, out2=None, /, *, out=(None, None)):
    """(mantissa, exponent): x = mantissa 2**exponent with 0.5 <= |mantissa| < 1, the
    exponent int32; zero, infinities and NaN are their own mantissa with exponent 0.
    The exponent is log2|x| (in float64, so float32's subnormals too) corrected by one
    where rounding put it off; the mantissa is then exact (ldexp)."""
    _no_out("frexp", out1 if out1 is not None else out2)
    _no_out("frexp", None if out == (None, None) else out)
    (x,), exponent_dtype = in_loop_dtypes(_np.frexp, asarray(x))
    dtype = _dtype_of(x)
    regular = ops.logical_and(ops.not_equal(x, 0), ops.logical_not(
        ops.logical_or(ops.isnan(x), ops.isinf(x))))
    magnitude = ops.where(regular, ops.cast(ops.absolute(x), _np.float64), 1.0)
    estimate = ops.floor(ops.divide(ops.log(magnitude), _np.log(2.0)))
    exponent = ops.add(ops.cast(estimate, exponent_dtype), _np.int32(1))
    scaled = ops.absolute(ops.ldexp(x, ops.negative(exponent)))
    exponent = ops.where(ops.greater_equal(scaled, _np.array(1, dtype)),
                         ops.add(exponent, _np.int32(1)),
                         ops.where(ops.less(scaled, _np.array(0.5, dtype)),
                                   ops.subtract(exponent, _np.int32(1)), exponent))
    exponent = ops.where(regular, exponent, _np.int32(0))
    return _strong(ops.ldexp(x, ops.negative(exponent))), _strong(exponent)


@composite_ufunc(_np.heaviside)
def heaviside(x1, x2, *, dtype):
    """0 below zero, 1 above, x2 at zero, NaN where x1 is NaN."""
    zero, one = _np.array(0, dtype), _np.array(1, dtype)
    return ops.where(ops.less(x1, 0), zero,
                     ops.where(ops.greater(x1, 0), one,
                               ops.where(ops.equal(x1, 0), x2, x1)))


def _scaled_by(numerator, denominator):
    """x times numerator / denominator, that ratio rounded in the loop's dtype, as
    NumPy's degrees and radians compute it."""
    def body(x, *, dtype):
        return ops.multiply(x, dtype.type(numerator) / dtype.type(denominator))
    return body


degrees = rad2deg = composite_ufunc(_np.degrees)(_scaled_by(180, _np.pi))
radians = deg2rad = composite_ufunc(_np.radians)(_scaled_by(_np.pi, 180))


def round(a, decimals=0, out=None):
    """NumPy's round: rint of a scaled by 10**decimals (the scale a Python float, so in
    a's dtype), then scaled back; integers are copies for decimals >= 0, and rounded
    through float64 for decimals < 0."""
    _no_out("round", out)
    a = asarray(a)
    decimals = int(decimals)
    if _dtype_of(a) == _np.bool_:  # NumPy rounds bool in float16, or fails to cast
        if decimals != 0:
            raise TypeError(at_user_line(f"numpy.round of bool to {decimals} decimals: "
                                         f"NumPy cannot cast the result back to bool"))
        return rint(a)
    if _dtype_of(a).kind in "iu":  # (NumPy's test: bfloat16 is rounded as a float)
        if decimals < 0:
            return _integers_to_tens(a, decimals)
        return ops.cast(a, _dtype_of(a))
    if decimals == 0:
        return rint(a)
    scale, dtype = _power_of_ten(abs(decimals)), _dtype_of(a)
    first, then = (ops.multiply, ops.divide) if decimals > 0 else (ops.divide, ops.multiply)
    # NumPy writes each step into an array of a's dtype: bfloat16 times a Python float
    # computes in float32, rounded to bfloat16 there
    scaled = rint(_as_dtype(first(a, scale), dtype))
    return _as_dtype(then(scaled, scale), dtype)


def _power_of_ten(n):
    """10.0 ** n as NumPy's round computes it: exact up to 1e8, then multiplied by ten
    in turn (1e23 is not Python's 10.0 ** 23), inf past float64's range."""
    scale = 10.0 ** min(n, 8)
    for _ in range(n - 8):
        scale *= 10.0
    return scale


def _integers_to_tens(a, decimals):
    """NumPy's round of integers to tens, hundreds, ...: a / 10**-decimals in float64,
    rint, times the scale, cast back as NumPy casts (uint8 255 rounds to 260, which
    wraps to 4)."""
    scale = _power_of_ten(-decimals)
    scaled = rint(ops.divide(ops.cast(a, _np.dtype(_np.float64)), scale))
    return ops.cast(ops.multiply(scaled, scale), _dtype_of(a))


def _as_dtype(x, dtype):
    return x if _dtype_of(x) == dtype else ops.cast(x, dtype)


around = round


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN and the infinities replaced by finite numbers (the dtype's extremes by
    default); other dtypes are copied."""
    x = asarray(x)
    dtype = _dtype_of(x)
    if dtype.kind != "f":
        return ops.cast(x, dtype)
    info = _np.finfo(dtype)
    big = _np.array(info.max if posinf is None else posinf).astype(dtype)
    small = _np.array(info.min if neginf is None else neginf).astype(dtype)
    infinite = ops.isinf(x)
    return ops.where(ops.isnan(x), _np.array(nan).astype(dtype),
                     ops.where(ops.logical_and(infinite, ops.greater(x, 0)), big,
                               ops.where(infinite, small, x)))


__all__ = ["around", "nan_to_num", "round", "deg2rad", "degrees", "fabs", "fix", "fmax", "fmin", "fmod", "frexp", "modf", "heaviside", "rad2deg", "radians", "reciprocal", "rint", "trunc"]
