"""erf, erfc and the standard normal CDF, composed of jitflow.numpy functions (jitflow has
no erf primitive), so that they run eagerly and traced and are differentiable.

The method and coefficients are fdlibm's (s_erf.c): rational approximations on |x| in
[0, 0.84375), [0.84375, 1.25), [1.25, 1/0.35) and [1/0.35, 28], the last two for
erfc(x) = exp(-x^2 - 0.5625 + R/S(1/x^2)) / x. Against the C library's erf and erfc, in
float64 and float32 (tests/nn/test_erf.py): erf is within 1 ulp, erfc within 4 and
normal_cdf within 6 wherever the result is a normal number, computed with NumPy's exp;
with native code's exp (within 4 ulp itself) erfc is within 6 and normal_cdf within 8.

    Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
    Developed at SunPro, a Sun Microsystems, Inc. business.
    Permission to use, copy, modify, and distribute this software is freely granted,
    provided that this notice is preserved.

Every interval's formula is computed and `where` picks one (values are not known while
tracing). Each formula gets its input clamped to its own interval, so that the formulas
not picked stay finite.

Their derivatives are the exact ones, written as custom_jvp rules: 2 / sqrt(pi)
exp(-x^2) for erf, and the normal density for normal_cdf. Differentiating the four
rational approximations instead would give a slightly different, far costlier
derivative (a GELU layer's gradient took over ten times as long).
"""
import numpy as np

from .. import numpy as jnp
from ..autodiff import custom_jvp

_ERX = 0.8450629115104675  # erf(1) to 24 bits: erf on [0.84375, 1.25) is _ERX + P/Q
# erf(x) = x + x P(x^2) / Q(x^2) on [0, 0.84375); coefficients lowest degree first.
_SMALL_P = (0.12837916709551256, -0.3250421072470015, -0.02848174957559851,
            -0.005770270296489442, -2.3763016656650163e-05)
_SMALL_Q = (1.0, 0.39791722395915535, 0.0650222499887673, 0.005081306281875766,
            0.00013249473800432164, -3.960228278775368e-06)
# erf(1 + s) = _ERX + P(s) / Q(s) on [0.84375, 1.25).
_NEAR_ONE_P = (-0.0023621185607526594, 0.41485611868374833, -0.3722078760357013,
               0.31834661990116175, -0.11089469428239668, 0.035478304325618236,
               -0.002166375594868791)
_NEAR_ONE_Q = (1.0, 0.10642088040084423, 0.540397917702171, 0.07182865441419627,
               0.12617121980876164, 0.01363708391202905, 0.011984499846799107)
# log(x erfc(x)) + x^2 + 0.5625 = R(1/x^2) / S(1/x^2) on [1.25, 1/0.35) ...
_TAIL_R = (-0.009864944034847148, -0.6938585727071818, -10.558626225323291,
           -62.375332450326006, -162.39666946257347, -184.60509290671104,
           -81.2874355063066, -9.814329344169145)
_TAIL_S = (1.0, 19.651271667439257, 137.65775414351904, 434.56587747522923,
           645.3872717332679, 429.00814002756783, 108.63500554177944, 6.570249770319282,
           -0.0604244152148581)
# ... and on [1/0.35, 28].
_FAR_R = (-0.0098649429247001, -0.799283237680523, -17.757954917754752,
          -160.63638485582192, -637.5664433683896, -1025.0951316110772, -483.5191916086514)
_FAR_S = (1.0, 30.33806074348246, 325.7925129965739, 1536.729586084437,
          3199.8582195085955, 2553.0504064331644, 474.52854120695537, -22.44095244658582)

# Veltkamp's splitting constants 2^s + 1: c - (c - v), c = v (2^s + 1), is v rounded to
# its leading p - s bits (p the precision): 21 bits in float64, 11 in float32, so that
# -v^2 - 0.5625 is exact in the tail (fdlibm zeroes the low word for the same reason),
# and exp(-v^2) keeps full relative accuracy where erfc is tiny.
_SPLITTERS = {np.dtype(np.float32): 2.0 ** 13 + 1, np.dtype(np.float64): 2.0 ** 32 + 1}
_SQRT_HALF = 0.7071067811865476


def erf(x):
    """The error function, elementwise; float32 stays float32, integers give float64."""
    return _erf(as_float(x))


@custom_jvp
def _erf(x):
    a = jnp.absolute(x)
    small = _small(x)
    magnitude = jnp.where(a < 1.25, _ERX + _near_one(a), 1.0 - _tail(a, a, 1.0))
    return jnp.where(a < 0.84375, x + small, jnp.where(x < 0, -magnitude, magnitude))


def erfc(x):
    """1 - erf(x), elementwise, accurate where it is tiny (x up to ~26.5 in float64)."""
    return _erfc_of(as_float(x))


@custom_jvp
def _erfc_of(x):
    return _erfc(x, x, 1.0)


def normal_cdf(x):
    """The standard normal distribution's CDF, erfc(-x / sqrt(2)) / 2, elementwise.

    Its tail takes x^2 / 2 from x itself, not from the rounded x / sqrt(2), whose
    rounding error exp(-t^2) would magnify by 2 t^2 (over 1000 ulp at x = -38).
    """
    return _normal_cdf(as_float(x))


@custom_jvp
def _normal_cdf(x):
    return 0.5 * _erfc(x * -_SQRT_HALF, x, 0.5)


@_erf.defjvp
def _erf_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _erf(x), t * _scaled_gaussian(x, 1.0, 2 / np.sqrt(np.pi))


@_erfc_of.defjvp
def _erfc_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _erfc_of(x), t * _scaled_gaussian(x, 1.0, -2 / np.sqrt(np.pi))


@_normal_cdf.defjvp
def _normal_cdf_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _normal_cdf(x), t * _scaled_gaussian(x, 0.5, 1 / np.sqrt(2 * np.pi))


def _scaled_gaussian(x, rate, scale):
    """scale * exp(-rate x^2) in x's dtype."""
    return jnp.astype(scale * jnp.exp(-rate * (x * x)), jnp.result_type(x))


def _erfc(t, v, half_or_one):
    """erfc(t), where t^2 = half_or_one * v^2 (1.0 for erfc, 0.5 for normal_cdf): the
    tail computes exp(-t^2) from v."""
    a = jnp.absolute(t)
    small = _small(t)
    # Near 1/4 and above, 1 - (t + small) would lose the last bits; 0.5 - ... does not.
    near_zero = jnp.where(t < 0.25, 1.0 - (t + small), 0.5 - (small + (t - 0.5)))
    near_one = _near_one(a)
    near_one = jnp.where(t < 0, 1.0 + (_ERX + near_one), (1.0 - _ERX) - near_one)
    tail = _tail(a, jnp.absolute(v), half_or_one)
    tail = jnp.where(t < 0, 2.0 - tail, tail)
    return jnp.where(a < 0.84375, near_zero,
                     jnp.where(a < 1.25, near_one, tail))


def _small(t):
    """t P(t^2) / Q(t^2) for |t| < 0.84375 (erf(t) - t)."""
    t = _clamp(t, -0.84375, 0.84375)
    z = t * t
    return t * (_polynomial(_SMALL_P, z) / _polynomial(_SMALL_Q, z))


def _near_one(a):
    """erf(a) - _ERX for 0.84375 <= a < 1.25."""
    s = _clamp(a, 0.84375, 1.25) - 1.0
    return _polynomial(_NEAR_ONE_P, s) / _polynomial(_NEAR_ONE_Q, s)


def _tail(a, v, half_or_one):
    """erfc(a) for 1.25 <= a <= 28, where a^2 = half_or_one * v^2 and v >= 0.

    Beyond 28, erfc underflows: clamping there keeps infinite inputs finite. v's lower
    bound is below a's, so that the rounding of a = v sqrt(half_or_one) never clamps v
    where a is not clamped."""
    scale = half_or_one ** -0.5
    a = _clamp(a, 1.25, 28.0)
    v = _clamp(v, 1.0 * scale, 28.0 * scale)
    s = 1.0 / (a * a)
    near = _polynomial(_TAIL_R, s) / _polynomial(_TAIL_S, s)
    far = _polynomial(_FAR_R, s) / _polynomial(_FAR_S, s)
    ratio = jnp.where(a < 1 / 0.35, near, far)
    # -a^2 = -half_or_one * (lead^2 + (v - lead)(v + lead)), lead^2 exact and short.
    lead = _leading_bits(v)
    square = half_or_one * (lead * lead)
    rest = half_or_one * ((v - lead) * (v + lead))
    return jnp.exp(-square - 0.5625) * jnp.exp(ratio - rest) / a


def _clamp(v, low, high):
    """v limited to [low, high], NaN kept. Unlike clip (min and max share the derivative
    with the bound on ties), the derivative is 1 on the closed interval, bounds included:
    at x = 1.25 the tail is taken, and must see x move."""
    return jnp.where(v < low, low, jnp.where(v > high, high, v))


def _leading_bits(v):
    """v rounded to its leading bits (Veltkamp's split, see _SPLITTERS)."""
    c = v * _SPLITTERS[jnp.result_type(v)]
    return c - (c - v)


def _polynomial(coefficients, z):
    """coefficients[0] + coefficients[1] z + ..., by Horner's rule."""
    result = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = result * z + c
    return result


def float_dtype(x):
    """x's dtype if it is a float dtype, else float64, in which NumPy's ufuncs compute
    integers and bools."""
    dtype = jnp.result_type(x)
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def as_float(x):
    """x in float_dtype(x)."""
    return x if jnp.result_type(x).kind == "f" else jnp.astype(x, np.float64)
