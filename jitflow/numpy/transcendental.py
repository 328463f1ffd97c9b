"""Transcendental ufuncs built from exp, expm1, log, log1p, sqrt and pow: exp2,
logaddexp, logaddexp2, float_power, hypot, sinh, cosh, arcsinh, arccosh, arctanh.

Each follows the classic libm recipe for its function (no overflow before the result
does, expm1 and log1p where the result is near zero), computed in the dtype of NumPy's
loop, so it lies within a few units in the last place of NumPy's result, with NumPy's
NaN, infinities and signed zeros. Where a recipe has several ranges, each range's
formula sees a harmless value outside its range (the `where` trick), so that the
derivative, which the primitives give, is never 0 * inf = NaN from a branch not taken.
"""
import math

import numpy as _np

from .. import ops
from ._loops import composite_ufunc

LN2 = math.log(2)


def _c(value, dtype):
    """A constant in the loop's dtype (a Python number would stay weak)."""
    return _np.array(value, dtype)


def _in_range(inside, x, harmless):
    """x where `inside`, `harmless` elsewhere: the operand of one range's formula."""
    return ops.where(inside, x, harmless)


def _odd(x, magnitude, dtype):
    """An odd function from its value at |x|: the sign of x, and zeros kept as x."""
    signed = ops.where(ops.less(x, 0), ops.negative(magnitude), magnitude)
    return ops.where(ops.equal(x, 0), x, signed)


@composite_ufunc(_np.exp2)
def exp2(x, *, dtype):
    """2 ** x, as pow computes it (within an ulp of exp2)."""
    return ops.power(_c(2, dtype), x)


@composite_ufunc(_np.float_power)
def float_power(x, y, *, dtype):
    """x ** y in float64 (NumPy's only real loop), as C's pow gives it. (NumPy's power
    of a scalar exponent 0.5 is sqrt, which jitflow's power follows: sqrt(-0.0) is -0.0
    and sqrt(-inf) NaN, where pow gives 0.0 and inf.)"""
    result = ops.power(x, y)
    half = ops.equal(y, _c(0.5, dtype))
    zero = ops.equal(x, _c(0, dtype))
    minus_inf = ops.equal(x, _c(-_np.inf, dtype))
    result = ops.where(ops.logical_and(half, zero), _c(0, dtype), result)
    return ops.where(ops.logical_and(half, minus_inf), _c(_np.inf, dtype), result)


def _log_add(x, y, dtype, log1p_of, tie_value):
    """max + log1p_of(-|x - y|): NumPy's logaddexp and logaddexp2, with the tie (equal
    operands, infinities too) given by tie_value(max)."""
    tie = ops.equal(x, y)
    difference = ops.where(tie, _c(0, dtype), ops.subtract(x, y))  # no inf - inf
    larger = ops.maximum(x, y)  # at a tie, the derivative splits equally
    spread = ops.add(larger, log1p_of(ops.negative(ops.absolute(difference))))
    return ops.where(tie, tie_value(larger), spread)


@composite_ufunc(_np.logaddexp)
def logaddexp(x1, x2, *, dtype):
    """log(exp(x1) + exp(x2)) without overflow."""
    return _log_add(x1, x2, dtype, lambda z: ops.log1p(ops.exp(z)),
                    lambda larger: ops.add(larger, _c(LN2, dtype)))


@composite_ufunc(_np.logaddexp2)
def logaddexp2(x1, x2, *, dtype):
    """log2(2**x1 + 2**x2) without overflow."""
    return _log_add(x1, x2, dtype,
                    lambda z: ops.multiply(ops.log1p(ops.power(_c(2, dtype), z)),
                                           _c(1 / LN2, dtype)),
                    lambda larger: ops.add(larger, _c(1, dtype)))


@composite_ufunc(_np.hypot)
def hypot(x1, x2, *, dtype):
    """sqrt(x1**2 + x2**2) without overflow or underflow: the larger magnitude times
    sqrt(1 + ratio**2); inf if either is infinite, even with a NaN (as C's hypot)."""
    a, b = ops.absolute(x1), ops.absolute(x2)
    larger, smaller = ops.maximum(a, b), ops.minimum(a, b)
    degenerate = ops.logical_or(ops.equal(larger, 0), ops.isinf(larger))
    scale = _in_range(degenerate, _c(1, dtype), larger)
    ratio = ops.divide(_in_range(degenerate, _c(0, dtype), smaller), scale)
    scaled = ops.multiply(scale, ops.sqrt(ops.add(_c(1, dtype),
                                                   ops.multiply(ratio, ratio))))
    infinite = ops.logical_or(ops.isinf(x1), ops.isinf(x2))
    return ops.where(infinite, _c(_np.inf, dtype),
                     ops.where(ops.equal(larger, 0), _c(0, dtype), scaled))


# Past MODERATE, e**-|x| is below half an ulp of e**|x|; past LARGE, e**|x| overflows
# though cosh(x) and sinh(x) do not yet: there they are (e**(|x|/2) / 2) e**(|x|/2).
MODERATE = 20.0
LARGE = {_np.dtype(_np.float32): 88.0, _np.dtype(_np.float64): 709.0}


def _half_exp(a, dtype):
    """e**a / 2 for a >= MODERATE, overflowing only where the result does."""
    large = ops.greater_equal(a, LARGE[dtype])
    direct = ops.multiply(ops.exp(_in_range(large, _c(MODERATE, dtype), a)),
                          _c(0.5, dtype))
    root = ops.exp(ops.multiply(_in_range(large, a, _c(LARGE[dtype], dtype)),
                                _c(0.5, dtype)))
    return ops.where(large, ops.multiply(ops.multiply(root, _c(0.5, dtype)), root), direct)


@composite_ufunc(_np.sinh)
def sinh(x, *, dtype):
    """(e**x - e**-x) / 2; near zero from expm1: with t = expm1(|x|), it is
    (t + t / (t + 1)) / 2, a sum of two terms of the same sign."""
    a = ops.absolute(x)
    moderate = ops.greater_equal(a, MODERATE)  # NaN takes the small range
    t = ops.expm1(_in_range(moderate, _c(0, dtype), a))
    small = ops.multiply(ops.add(t, ops.divide(t, ops.add(t, _c(1, dtype)))),
                         _c(0.5, dtype))
    large = _half_exp(_in_range(moderate, a, _c(MODERATE, dtype)), dtype)
    return _odd(x, ops.where(moderate, large, small), dtype)


@composite_ufunc(_np.cosh)
def cosh(x, *, dtype):
    """(e**|x| + e**-|x|) / 2."""
    a = ops.absolute(x)
    moderate = ops.greater_equal(a, MODERATE)
    e = ops.exp(_in_range(moderate, _c(0, dtype), a))
    small = ops.multiply(ops.add(e, ops.divide(_c(1, dtype), e)), _c(0.5, dtype))
    large = _half_exp(_in_range(moderate, a, _c(MODERATE, dtype)), dtype)
    return ops.where(moderate, large, small)


# Past HUGE, x**2 + 1 is x**2 to the dtype's precision: asinh and acosh are log(2 x).
HUGE = 2.0 ** 28


def _log_twice(a, huge, dtype):
    """log(2 a) for a >= HUGE, as log(a) + log(2) (2 a could overflow)."""
    return ops.add(ops.log(_in_range(huge, a, _c(HUGE, dtype))), _c(LN2, dtype))


@composite_ufunc(_np.arcsinh)
def arcsinh(x, *, dtype):
    """log(|x| + sqrt(x**2 + 1)) with the sign of x, as
    log1p(|x| + x**2 / (1 + sqrt(1 + x**2))) so that it is exact near zero."""
    a = ops.absolute(x)
    huge = ops.greater_equal(a, HUGE)
    s = _in_range(huge, _c(1, dtype), a)
    square = ops.multiply(s, s)
    one = _c(1, dtype)
    near = ops.log1p(ops.add(s, ops.divide(square, ops.add(one, ops.sqrt(
        ops.add(one, square))))))
    return _odd(x, ops.where(huge, _log_twice(a, huge, dtype), near), dtype)


@composite_ufunc(_np.arccosh)
def arccosh(x, *, dtype):
    """log(x + sqrt(x**2 - 1)), as log1p(t + sqrt(t (t + 2))) with t = x - 1 exact near
    1; NaN below 1."""
    huge = ops.greater_equal(x, HUGE)
    t = ops.subtract(_in_range(huge, _c(2, dtype), x), _c(1, dtype))
    near = ops.log1p(ops.add(t, ops.sqrt(ops.multiply(t, ops.add(t, _c(2, dtype))))))
    # (below -1, t (t + 2) is positive again: NaN said explicitly)
    return ops.where(huge, _log_twice(x, huge, dtype),
                     ops.where(ops.less(x, 1), _c(_np.nan, dtype), near))


@composite_ufunc(_np.arctanh)
def arctanh(x, *, dtype):
    """log((1 + |x|) / (1 - |x|)) / 2 with the sign of x, as log1p(2a + 2a a / (1 - a))
    / 2 below a = 1/2 (exact near zero) and log1p(2a / (1 - a)) / 2 above."""
    a = ops.absolute(x)
    half = _c(0.5, dtype)
    small = ops.less(a, half)  # NaN takes the other range
    one, two = _c(1, dtype), _c(2, dtype)
    s = _in_range(small, a, _c(0, dtype))
    twice = ops.multiply(two, s)
    near_zero = ops.add(twice, ops.divide(ops.multiply(twice, s), ops.subtract(one, s)))
    b = _in_range(small, half, a)
    far = ops.divide(ops.multiply(two, b), ops.subtract(one, b))
    magnitude = ops.multiply(ops.log1p(ops.where(small, near_zero, far)), half)
    return _odd(x, magnitude, dtype)


__all__ = ["arccosh", "arcsinh", "arctanh", "cosh", "exp2", "float_power", "hypot", "logaddexp", "logaddexp2", "sinh"]
