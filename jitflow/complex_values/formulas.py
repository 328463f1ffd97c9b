"""Complex arithmetic on (real, imaginary) parts, as NumPy's complex loops compute it.

Each function takes and returns parts (real Tracers or arrays of one float dtype) and
computes with jitflow.numpy's real functions, so it is traced, fused, compiled and
differentiated like any real code. Where a formula divides in one of two ways, both are
computed and one is chosen, with the other's divisor made harmless, so that the
derivative of the branch not taken is never inf * 0.
"""
import numpy as np

from .. import numpy as jnp

_EXP_LIMIT = {4: 88.0, 8: 709.0}  # below these e^x is finite in float32, float64


def part_dtype_of(part):
    """The float dtype of a part (a Tracer or array)."""
    return np.dtype(getattr(part, "dtype", None) or np.result_type(part))


def add(ar, ai, br, bi):
    return jnp.add(ar, br), jnp.add(ai, bi)


def subtract(ar, ai, br, bi):
    return jnp.subtract(ar, br), jnp.subtract(ai, bi)


def multiply(ar, ai, br, bi):
    """(ar br - ai bi) + (ar bi + ai br) i: NumPy's product, no special cases."""
    return (jnp.subtract(jnp.multiply(ar, br), jnp.multiply(ai, bi)),
            jnp.add(jnp.multiply(ar, bi), jnp.multiply(ai, br)))


def divide(ar, ai, br, bi):
    """NumPy's quotient: Smith's method, scaled by the larger part of the divisor; a
    zero divisor gives ar / 0 and ai / 0."""
    by_real = jnp.greater_equal(jnp.abs(br), jnp.abs(bi))  # (False when a part is NaN)
    zero = jnp.logical_and(jnp.equal(br, 0), jnp.equal(bi, 0))
    real_first = jnp.logical_and(by_real, jnp.logical_not(zero))
    # |br| >= |bi|, divisor not 0: rat = bi / br
    br_safe = jnp.where(real_first, br, 1)
    rat = jnp.divide(bi, br_safe)
    scale = jnp.divide(1, jnp.add(br_safe, jnp.multiply(bi, rat)))
    real_first_r = jnp.multiply(jnp.add(ar, jnp.multiply(ai, rat)), scale)
    real_first_i = jnp.multiply(jnp.subtract(ai, jnp.multiply(ar, rat)), scale)
    # |br| < |bi| (or NaN): rat = br / bi
    bi_safe = jnp.where(by_real, 1, bi)
    rat2 = jnp.divide(br, bi_safe)
    scale2 = jnp.divide(1, jnp.add(bi_safe, jnp.multiply(br, rat2)))
    imag_first_r = jnp.multiply(jnp.add(jnp.multiply(ar, rat2), ai), scale2)
    imag_first_i = jnp.multiply(jnp.subtract(jnp.multiply(ai, rat2), ar), scale2)
    # a zero divisor
    zero_divisor = jnp.abs(jnp.where(zero, br, 1))
    real = jnp.where(by_real, jnp.where(zero, jnp.divide(ar, zero_divisor), real_first_r),
                     imag_first_r)
    imag = jnp.where(by_real, jnp.where(zero, jnp.divide(ai, zero_divisor), real_first_i),
                     imag_first_i)
    return real, imag


def negative(ar, ai):
    return jnp.negative(ar), jnp.negative(ai)


def conjugate(ar, ai):
    return ar, jnp.negative(ai)


def absolute(ar, ai):
    return jnp.hypot(ar, ai)


def angle(ar, ai):
    return jnp.arctan2(ai, ar)


def equal(ar, ai, br, bi):
    return jnp.logical_and(jnp.equal(ar, br), jnp.equal(ai, bi))


def not_equal(ar, ai, br, bi):
    return jnp.logical_or(jnp.not_equal(ar, br), jnp.not_equal(ai, bi))


def isnan(ar, ai):
    return jnp.logical_or(jnp.isnan(ar), jnp.isnan(ai))


def isinf(ar, ai):
    return jnp.logical_or(jnp.isinf(ar), jnp.isinf(ai))


def isfinite(ar, ai):
    return jnp.logical_and(jnp.isfinite(ar), jnp.isfinite(ai))


def exp(ar, ai):
    """e^ar (cos ai + i sin ai), with C99's special values as glibc's cexp gives them:
    an imaginary part of zero is kept exactly (e^x + 0i), e^-inf times anything
    not finite is 0, and e^+inf times it is inf + nan i. Where e^ar overflows it is
    taken in two halves, so that a product that fits does not overflow on the way."""
    cos, sin = jnp.cos(ai), jnp.sin(ai)
    fits = jnp.less(ar, _EXP_LIMIT[part_dtype_of(ar).itemsize])
    whole = jnp.exp(jnp.where(fits, ar, 0))
    half = jnp.exp(jnp.multiply(jnp.where(fits, 0, ar), 0.5))
    real = jnp.where(fits, jnp.multiply(whole, cos),
                     jnp.multiply(jnp.multiply(half, cos), half))
    imag = jnp.where(fits, jnp.multiply(whole, sin),
                     jnp.multiply(jnp.multiply(half, sin), half))
    zero_imag = jnp.equal(ai, 0)  # (NaN + 0i too: C99's exp of it is NaN + 0i)
    exp_real = jnp.exp(ar)
    real = jnp.where(zero_imag, exp_real, real)
    # ai e^ar is the zero ai itself, and has e^ar cos(ai) = e^ar as its derivative in ai
    # (ai alone would have 1); where e^ar is not finite, ai times 1
    imag = jnp.where(zero_imag, jnp.multiply(ai, finite_or_one(exp_real)), imag)
    unbounded = jnp.logical_and(jnp.isinf(ar), jnp.logical_not(jnp.isfinite(ai)))
    minus_inf = jnp.less(ar, 0)
    real = jnp.where(unbounded, jnp.where(minus_inf, 0.0, ar), real)
    imag = jnp.where(unbounded, jnp.where(minus_inf, jnp.copysign(0.0, ai),
                                          jnp.subtract(ai, ai)), imag)
    return real, imag


def reciprocal(ar, ai):
    """NumPy's 1 / z: scaled by the larger part, as its division."""
    by_real = jnp.less_equal(jnp.abs(ai), jnp.abs(ar))
    ar_safe = jnp.where(by_real, ar, 1)
    ratio = jnp.divide(ai, ar_safe)
    den = jnp.add(ar_safe, jnp.multiply(ai, ratio))
    ai_safe = jnp.where(by_real, 1, ai)
    ratio2 = jnp.divide(ar, ai_safe)
    den2 = jnp.add(jnp.multiply(ar, ratio2), ai_safe)
    real = jnp.where(by_real, jnp.divide(1, den), jnp.divide(ratio2, den2))
    imag = jnp.where(by_real, jnp.negative(jnp.divide(ratio, den)),
                     jnp.negative(jnp.divide(1, den2)))
    return real, imag


def sign(ar, ai):
    """NumPy 2's z / |z|: 0 for 0; for one infinite part, the unit in its direction
    (whatever the other part); NaN for two infinite parts, or a NaN and no infinity.
    z is first divided by its larger part, so that |z| cannot overflow: NumPy's does,
    near the dtype's largest number (sign(-3e38 + 3e38j) in complex64 is 1j there,
    and (-0.7071 + 0.7071j) here)."""
    zero = jnp.logical_and(jnp.equal(ar, 0), jnp.equal(ai, 0))
    larger = jnp.where(zero, 1, jnp.maximum(jnp.abs(ar), jnp.abs(ai)))
    ar_scaled, ai_scaled = jnp.divide(ar, larger), jnp.divide(ai, larger)
    magnitude = jnp.hypot(ar_scaled, ai_scaled)
    real, imag = jnp.divide(ar_scaled, magnitude), jnp.divide(ai_scaled, magnitude)
    real_inf, imag_inf = jnp.isinf(ar), jnp.isinf(ai)
    real = jnp.where(real_inf, jnp.copysign(1.0, ar), jnp.where(imag_inf, 0.0, real))
    imag = jnp.where(imag_inf, jnp.copysign(1.0, ai), jnp.where(real_inf, 0.0, imag))
    some_inf = jnp.logical_or(real_inf, imag_inf)
    undefined = jnp.logical_or(jnp.logical_and(real_inf, imag_inf), jnp.logical_and(
        jnp.logical_not(some_inf), jnp.logical_or(jnp.isnan(ar), jnp.isnan(ai))))
    real = jnp.where(zero, 0.0, jnp.where(undefined, np.nan, real))
    imag = jnp.where(zero, 0.0, jnp.where(undefined, np.nan, imag))
    return real, imag


def c_multiply(ar, ai, br, bi):
    """The product as C's complex `*` gives it (C99 Annex G, GCC's __muldc3): the
    formula, and where both its parts are NaN but an operand or a partial product is
    infinite, the infinity it stands for is recovered."""
    ac, bd = jnp.multiply(ar, br), jnp.multiply(ai, bi)
    ad, bc = jnp.multiply(ar, bi), jnp.multiply(ai, br)
    real, imag = jnp.subtract(ac, bd), jnp.add(ad, bc)
    both_nan = jnp.logical_and(jnp.isnan(real), jnp.isnan(imag))
    first_inf = jnp.logical_or(jnp.isinf(ar), jnp.isinf(ai))
    second_inf = jnp.logical_or(jnp.isinf(br), jnp.isinf(bi))
    partial_inf = jnp.logical_or(jnp.logical_or(jnp.isinf(ac), jnp.isinf(bd)),
                                 jnp.logical_or(jnp.isinf(ad), jnp.isinf(bc)))
    partial_inf = jnp.logical_and(partial_inf, jnp.logical_not(
        jnp.logical_or(first_inf, second_inf)))
    a, b = _boxed(ar, first_inf), _boxed(ai, first_inf)
    c, d = _boxed(br, second_inf), _boxed(bi, second_inf)
    a, b = _nan_to_zero(a, jnp.logical_or(second_inf, partial_inf)), \
        _nan_to_zero(b, jnp.logical_or(second_inf, partial_inf))
    c, d = _nan_to_zero(c, jnp.logical_or(first_inf, partial_inf)), \
        _nan_to_zero(d, jnp.logical_or(first_inf, partial_inf))
    recover = jnp.logical_and(both_nan, jnp.logical_or(jnp.logical_or(first_inf, second_inf),
                                                       partial_inf))
    infinity = jnp.where(recover, np.inf, jnp.ones_like(real))  # (1 elsewhere: no inf * 0)
    recovered_real = jnp.multiply(infinity, jnp.subtract(jnp.multiply(a, c), jnp.multiply(b, d)))
    recovered_imag = jnp.multiply(infinity, jnp.add(jnp.multiply(a, d), jnp.multiply(b, c)))
    return jnp.where(recover, recovered_real, real), jnp.where(recover, recovered_imag, imag)


def _boxed(part, infinite_operand):
    """An infinite operand's part as copysign(1 or 0, part), NaN as a signed 0."""
    unit = jnp.copysign(jnp.where(jnp.isinf(part), 1.0, jnp.zeros_like(part)), part)
    return jnp.where(infinite_operand, unit, part)


def _nan_to_zero(part, where):
    return jnp.where(jnp.logical_and(where, jnp.isnan(part)), jnp.copysign(0.0, part), part)


def finite_or_one(factor):
    """factor where it is finite, else 1: a zero times it keeps its sign and gets
    factor as its derivative, without inf * 0."""
    return jnp.where(jnp.isfinite(factor), factor, jnp.ones_like(factor))
