"""Complex square root, logarithms and hyperbolic and trigonometric functions on
(real, imaginary) parts, giving what NumPy gives: C99's special values (infinities,
NaN, signed zeros) as glibc's csqrt, clog, csinh, ccosh and ctanh return them, and
NumPy's own formulas for log1p, expm1, exp2, log10 and log2.

The sine, cosine and tangent follow from the hyperbolic functions as C99 defines them:
sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz).
"""
import numpy as np

from .. import numpy as jnp
from .formulas import exp, finite_or_one, part_dtype_of

_LARGE = {4: 44.0, 8: 354.0}  # past these |x|, e^|x| squared would overflow


def _is_zero(part):
    return jnp.equal(part, 0)


def _not_finite(part):
    return jnp.logical_not(jnp.isfinite(part))


# --- square root --------------------------------------------------------------------------

def sqrt(x, y):
    """t = sqrt((|x| + |z|) / 2); x >= 0: t + i y / 2t, else |y| / 2t + i copysign(t, y).
    Tiny arguments are scaled up by an even power of two first, so no bit is lost."""
    dtype = part_dtype_of(x)
    tiny = {4: 2.0 ** -60, 8: 2.0 ** -500}[dtype.itemsize]
    up = {4: 2.0 ** 80, 8: 2.0 ** 600}[dtype.itemsize]
    huge = float(np.finfo(dtype).max) / 4  # past it |z| may overflow: scaled by 1/4
    a, b = jnp.abs(x), jnp.abs(y)
    small = jnp.logical_and(jnp.less(a, tiny), jnp.less(b, tiny))
    large = jnp.logical_or(jnp.greater(a, huge), jnp.greater(b, huge))
    scale = jnp.where(small, up, jnp.where(large, 0.25, jnp.ones_like(a)))
    sa, sb = jnp.multiply(a, scale), jnp.multiply(b, scale)
    s = jnp.hypot(sa, sb)
    t = jnp.sqrt(jnp.add(jnp.multiply(sa, 0.5), jnp.multiply(s, 0.5)))
    t = jnp.where(small, jnp.multiply(t, float(np.sqrt(1 / up))),
                  jnp.where(large, jnp.multiply(t, 2.0), t))
    twice = jnp.multiply(jnp.where(jnp.equal(t, 0), 1, t), 2)
    nonnegative = jnp.greater_equal(x, 0)
    real = jnp.where(nonnegative, t, jnp.divide(b, twice))
    imag = jnp.where(nonnegative, jnp.divide(y, twice), jnp.copysign(t, y))
    zero = jnp.logical_and(_is_zero(x), _is_zero(y))
    real, imag = jnp.where(zero, 0.0, real), jnp.where(zero, y, imag)
    return _sqrt_special_values(x, y, real, imag)


def _sqrt_special_values(x, y, real, imag):
    inf = np.inf
    x_inf, y_inf, y_nan = jnp.isinf(x), jnp.isinf(y), jnp.isnan(y)
    plus, minus = jnp.logical_and(x_inf, jnp.greater(x, 0)), jnp.logical_and(x_inf, jnp.less(x, 0))
    real = jnp.where(jnp.logical_and(minus, y_nan), np.nan, jnp.where(minus, 0.0, real))
    real = jnp.where(plus, inf, real)
    imag = jnp.where(plus, jnp.where(y_nan, y, jnp.copysign(0.0, y)),
                     jnp.where(minus, jnp.where(y_nan, inf, jnp.copysign(inf, y)), imag))
    nan = jnp.logical_or(jnp.isnan(x), jnp.logical_and(y_nan, jnp.isfinite(x)))
    real, imag = jnp.where(nan, np.nan, real), jnp.where(nan, np.nan, imag)
    return jnp.where(y_inf, inf, real), jnp.where(y_inf, y, imag)


# --- logarithms ---------------------------------------------------------------------------

def log_magnitude(x, y, larger):
    """log |z|; where |z| overflows with finite parts (both near the largest float),
    log of the larger part plus half log1p of the smaller one's ratio squared."""
    magnitude = jnp.hypot(x, y)
    overflows = jnp.logical_and(jnp.isinf(magnitude), jnp.isfinite(larger))
    safe_larger = jnp.where(overflows, larger, 1.0)
    ratio = jnp.divide(jnp.minimum(jnp.abs(x), jnp.abs(y)), safe_larger)
    scaled = jnp.add(jnp.log(safe_larger), jnp.multiply(0.5, jnp.log1p(jnp.square(ratio))))
    return jnp.where(overflows, scaled, jnp.log(magnitude))


def log(x, y):
    """log|z| + i atan2(y, x). Near |z| = 1, log|z| is log1p(x^2 + y^2 - 1) / 2 with
    x^2 + y^2 - 1 summed exactly (double-double, in float64), as glibc's clog keeps it
    accurate there."""
    dtype = part_dtype_of(x)
    x64, y64 = jnp.astype(x, np.float64), jnp.astype(y, np.float64)
    a, b = jnp.abs(x64), jnp.abs(y64)
    larger = jnp.maximum(a, b)
    near_one = jnp.logical_and(jnp.greater(larger, 0.5), jnp.less(larger, 2.0))
    a_safe = jnp.where(near_one, a, 1.0)
    b_safe = jnp.where(near_one, b, 0.0)
    near = jnp.multiply(jnp.log1p(_squares_minus_one(a_safe, b_safe)), 0.5)
    far = log_magnitude(x64, y64, larger)
    real = jnp.astype(jnp.where(near_one, near, far), dtype)
    return real, jnp.arctan2(y, x)


def _squares_minus_one(a, b):
    """a^2 + b^2 - 1 with every rounding error kept (Dekker's products, Knuth's sums)."""
    a_hi, a_lo = _square(a)
    b_hi, b_lo = _square(b)
    s1, e1 = _two_sum(a_hi, -1.0)
    s2, e2 = _two_sum(s1, b_hi)
    return jnp.add(s2, jnp.add(jnp.add(e1, e2), jnp.add(a_lo, b_lo)))


def _square(a):
    """(a^2 rounded, its rounding error), exactly, without a fused multiply-add."""
    c = jnp.multiply(a, 134217729.0)  # 2^27 + 1: Veltkamp's split
    high = jnp.subtract(c, jnp.subtract(c, a))
    low = jnp.subtract(a, high)
    square = jnp.multiply(a, a)
    error = jnp.add(jnp.add(jnp.subtract(jnp.multiply(high, high), square),
                            jnp.multiply(jnp.multiply(high, low), 2.0)),
                    jnp.multiply(low, low))
    return square, error


def _two_sum(a, b):
    s = jnp.add(a, b)
    bb = jnp.subtract(s, a)
    return s, jnp.add(jnp.subtract(a, jnp.subtract(s, bb)), jnp.subtract(b, bb))


def _scaled_log(constant):
    def scaled(x, y):
        real, imag = log(x, y)
        factor = part_dtype_of(x).type(constant)
        return jnp.multiply(real, factor), jnp.multiply(imag, factor)
    return scaled


log10 = _scaled_log(np.log10(np.e))
log2 = _scaled_log(np.log2(np.e))


def log1p(x, y):
    """NumPy's own: log|z + 1| + i atan2(y, x + 1)."""
    shifted = jnp.add(x, 1)
    return jnp.log(jnp.hypot(shifted, y)), jnp.arctan2(y, shifted)


def expm1(x, y):
    """NumPy's own: expm1(x) cos y - 2 sin(y/2)^2 + i e^x sin y."""
    half = jnp.sin(jnp.divide(y, 2))
    real = jnp.subtract(jnp.multiply(jnp.expm1(x), jnp.cos(y)),
                        jnp.multiply(jnp.multiply(half, half), 2))
    return real, jnp.multiply(jnp.exp(x), jnp.sin(y))


def exp2(x, y):
    """NumPy's own: e^(z ln 2)."""
    ln2 = part_dtype_of(x).type(np.log(2))
    return exp(jnp.multiply(x, ln2), jnp.multiply(y, ln2))


# --- hyperbolic functions -------------------------------------------------------------------

def _exp_split(x):
    """(e^|x| / 2 as two factors whose product it is, whether |x| is large): sinh and
    cosh of a large |x| overflow where their product with cos y or sin y may not."""
    limit = _LARGE[part_dtype_of(x).itemsize]
    large = jnp.greater(jnp.abs(x), limit)
    half = jnp.exp(jnp.multiply(jnp.where(large, jnp.abs(x), 0), 0.5))
    return half, large


def _large_product(half, factor):
    """e^|x| / 2 times factor, as (e^(|x|/2) / 2 factor) e^(|x|/2)."""
    return jnp.multiply(jnp.multiply(jnp.multiply(half, 0.5), factor), half)


def sinh(x, y):
    half, large = _exp_split(x)
    cos, sin = jnp.cos(y), jnp.sin(y)
    real = jnp.where(large, jnp.multiply(_large_product(half, cos), jnp.copysign(1.0, x)),
                     jnp.multiply(jnp.sinh(jnp.where(large, 0, x)), cos))
    imag = jnp.where(large, _large_product(half, sin),
                     jnp.multiply(jnp.cosh(jnp.where(large, 0, x)), sin))
    x_zero, x_inf, y_bad = _is_zero(x), jnp.isinf(x), _not_finite(y)
    real = jnp.where(jnp.logical_and(x_zero, y_bad), x, real)
    imag = jnp.where(jnp.logical_and(x_zero, y_bad), np.nan, imag)
    real = jnp.where(jnp.logical_and(x_inf, y_bad), np.inf, real)
    imag = jnp.where(jnp.logical_and(x_inf, y_bad), np.nan, imag)
    # sinh(x) + iy, whatever x (e^|x| may overflow to inf * 0): y cosh(x), the zero y
    # with cosh(x) as its derivative
    y_zero = _is_zero(y)
    real = jnp.where(jnp.logical_and(y_zero, jnp.logical_not(jnp.isfinite(x))), x, real)
    return real, jnp.where(y_zero, jnp.multiply(y, finite_or_one(jnp.cosh(x))), imag)


def cosh(x, y):
    half, large = _exp_split(x)
    cos, sin = jnp.cos(y), jnp.sin(y)
    real = jnp.where(large, _large_product(half, cos),
                     jnp.multiply(jnp.cosh(jnp.where(large, 0, x)), cos))
    imag = jnp.where(large, jnp.multiply(_large_product(half, sin), jnp.copysign(1.0, x)),
                     jnp.multiply(jnp.sinh(jnp.where(large, 0, x)), sin))
    x_zero, x_inf, x_nan, y_bad = _is_zero(x), jnp.isinf(x), jnp.isnan(x), _not_finite(y)
    y_zero = _is_zero(y)
    real = jnp.where(jnp.logical_and(x_zero, y_bad), np.nan, real)
    imag = jnp.where(jnp.logical_and(x_zero, y_bad), 0.0, imag)
    real = jnp.where(jnp.logical_and(x_inf, y_bad), np.inf, real)
    imag = jnp.where(jnp.logical_and(x_inf, y_bad), np.nan, imag)
    signed_zero = jnp.multiply(jnp.copysign(0.0, x), jnp.copysign(1.0, y))
    real = jnp.where(jnp.logical_and(x_inf, y_zero), np.inf, real)
    # (e^|x| may overflow to inf * 0): y sinh(x), a zero signed as x y, with sinh(x) as
    # its derivative
    sinh_x = jnp.sinh(x)
    zero_imag = jnp.multiply(y, jnp.where(jnp.isfinite(sinh_x), sinh_x, jnp.copysign(1.0, x)))
    imag = jnp.where(y_zero, jnp.where(x_inf, signed_zero, zero_imag), imag)
    return real, jnp.where(jnp.logical_and(x_nan, y_zero), y, imag)


def tanh(x, y):
    """(sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y), glibc's ctanh; for a
    large |x|, copysign(1, x) + 4i sin y cos y e^(-2|x|)."""
    limit = _LARGE[part_dtype_of(x).itemsize]
    large = jnp.greater(jnp.abs(x), limit)
    moderate_x = jnp.where(large, 0, x)
    cos, sin = jnp.cos(y), jnp.sin(y)
    sinh_x, cosh_x = jnp.sinh(moderate_x), jnp.cosh(moderate_x)
    eps = np.finfo(part_dtype_of(x)).eps
    cos2 = jnp.multiply(cos, cos)
    den = jnp.where(jnp.greater(jnp.abs(sinh_x), jnp.multiply(jnp.abs(cos), eps)),
                    jnp.add(jnp.multiply(sinh_x, sinh_x), cos2), cos2)
    real = jnp.divide(jnp.multiply(sinh_x, cosh_x), den)
    imag = jnp.divide(jnp.multiply(sin, cos), den)
    decay = jnp.exp(jnp.multiply(jnp.where(large, jnp.abs(x), 0), -2))
    real = jnp.where(large, jnp.copysign(1.0, x), real)
    imag = jnp.where(large, jnp.multiply(jnp.multiply(jnp.multiply(sin, cos), 4), decay), imag)
    x_inf, y_finite = jnp.isinf(x), jnp.isfinite(y)
    over_one = jnp.logical_and(y_finite, jnp.greater(jnp.abs(y), 1))
    inf_imag = jnp.where(over_one, jnp.copysign(0.0, jnp.multiply(sin, cos)),
                         jnp.copysign(0.0, jnp.where(jnp.isnan(y), 1.0, y)))
    real = jnp.where(x_inf, jnp.copysign(1.0, x), real)
    imag = jnp.where(x_inf, inf_imag, imag)
    bad_y = jnp.logical_and(jnp.isfinite(x), jnp.logical_not(y_finite))
    real = jnp.where(bad_y, jnp.where(_is_zero(x), x, np.nan), real)
    imag = jnp.where(bad_y, np.nan, imag)
    nan_x = jnp.isnan(x)  # NaN + 0i keeps its zero; NaN + iy is NaN + NaN i
    return real, jnp.where(nan_x, jnp.where(_is_zero(y), y, np.nan), imag)


# --- trigonometric functions: the hyperbolic ones at iz -------------------------------------

def sin(x, y):
    """(glibc's csin gives +inf for the imaginary part of sin(x + i inf), x inf or NaN,
    whose sign C99 leaves open)"""
    u, v = sinh(jnp.negative(y), x)
    both = jnp.logical_and(jnp.isinf(y), jnp.logical_not(jnp.isfinite(x)))
    return v, jnp.where(both, np.inf, jnp.negative(u))


def cos(x, y):
    return cosh(jnp.negative(y), x)


def tan(x, y):
    u, v = tanh(jnp.negative(y), x)
    return v, jnp.negative(u)
