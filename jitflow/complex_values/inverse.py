"""Complex inverse trigonometric and hyperbolic functions on (real, imaginary) parts,
giving what NumPy gives (glibc's casin, cacos, catan, casinh, cacosh, catanh): C99's
branch cuts, infinities and signed zeros, and values within a few roundings.

arcsin and arccos follow Hull, Fairgrieve and Tang's algorithm (ACM TOMS 23, 1997),
which keeps full accuracy near the branch points +-1 and the real axis, where the
textbook -i log(iz + sqrt(1 - z^2)) cancels; arctanh is Kahan's log1p and atan2 form.
arcsinh, arccosh and arctan are those at iz, as C99 defines them. Both precisions are
computed in float64 (complex64's then rounded once), so one set of thresholds serves.

Their derivatives are f'(z) (1 / sqrt(1 - z^2) and its kin, DERIVATIVES), given by
rule: the formulas work on |x| and |y| and restore the signs with copysign, whose
derivative is 0 across the axes (|x|' = 0 at 0), where f' is not.
"""
import numpy as np

from .. import numpy as jnp
from . import elementary, formulas
from .formulas import part_dtype_of

_CROSS_A, _CROSS_B = 1.5, 0.6417  # Hull, Fairgrieve and Tang's crossover points
_HUGE = 2.0 ** 52  # past it, arcsin z is -i log(2iz) to float64's precision
_HALF_PI = np.pi / 2


def _is(part, value):
    return jnp.equal(part, value)


# --- arcsin and arccos: Hull, Fairgrieve and Tang -------------------------------------------

def _hull_parts(x, y):
    """For x, y >= 0 in float64 (no NaN): (Re arcsin, Re arccos, |Im|) of x + iy."""
    huge = jnp.logical_or(jnp.greater(x, _HUGE), jnp.greater(y, _HUGE))
    sine, cosine, imag = _hull_moderate(jnp.where(huge, 0.5, x), jnp.where(huge, 0.5, y))
    far_imag = jnp.add(elementary.log_magnitude(x, y, jnp.maximum(x, y)),
                       np.log(2))  # arcsin z ~ -i log(2iz)
    return (jnp.where(huge, jnp.arctan2(x, y), sine),
            jnp.where(huge, jnp.arctan2(y, x), cosine),
            jnp.where(huge, far_imag, imag))


def _hull_moderate(x, y):
    r, s = jnp.hypot(jnp.add(x, 1), y), jnp.hypot(jnp.subtract(x, 1), y)
    a = jnp.multiply(jnp.add(r, s), 0.5)  # (|z + 1| + |z - 1|) / 2 >= 1
    b = jnp.divide(x, a)
    r_x1 = jnp.add(r, jnp.add(x, 1))
    below = jnp.less_equal(x, 1)
    # t: tan(Re arccos) * x, computed without cancellation on either side of x = 1
    a_x = jnp.add(a, x)
    t_below = jnp.sqrt(jnp.multiply(jnp.multiply(a_x, 0.5), jnp.add(
        jnp.divide(jnp.square(y), r_x1), jnp.add(s, jnp.subtract(1, x)))))
    s_above = jnp.where(below, 1.0, jnp.add(s, jnp.subtract(x, 1)))
    t_above = jnp.multiply(y, jnp.sqrt(jnp.multiply(jnp.add(
        jnp.divide(a_x, r_x1), jnp.divide(a_x, s_above)), 0.5)))
    t = jnp.where(below, t_below, t_above)
    small_b = jnp.less_equal(b, _CROSS_B)
    sine = jnp.where(small_b, jnp.arcsin(jnp.minimum(b, 1.0)), jnp.arctan(jnp.divide(x, t)))
    cosine = jnp.where(small_b, jnp.arccos(jnp.minimum(b, 1.0)), jnp.arctan(jnp.divide(t, x)))
    return sine, cosine, _hull_imag(x, y, r_x1, s, a)


def _hull_imag(x, y, r_x1, s, a):
    """log(A + sqrt(A^2 - 1)), as log1p(A - 1 + sqrt((A - 1)(A + 1))) near A = 1 with
    A - 1 formed without cancellation (y times a root where x < 1, as y^2 underflows)."""
    inside = jnp.less(x, 1)
    s_1x = jnp.where(inside, jnp.add(s, jnp.subtract(1, x)), 1.0)
    inverse_sum = jnp.add(jnp.divide(1, r_x1), jnp.divide(1, s_1x))
    am1_inside = jnp.multiply(jnp.multiply(jnp.square(y), 0.5), inverse_sum)
    root_inside = jnp.multiply(y, jnp.sqrt(jnp.multiply(jnp.multiply(jnp.add(a, 1), 0.5),
                                                        inverse_sum)))
    twice_am1_outside = jnp.add(jnp.divide(jnp.square(y), r_x1), jnp.add(s, jnp.subtract(x, 1)))
    am1_outside = jnp.multiply(twice_am1_outside, 0.5)
    # (halving a subnormal twice A - 1 first would drop its last bit)
    root_outside = jnp.sqrt(jnp.multiply(twice_am1_outside, jnp.multiply(jnp.add(a, 1), 0.5)))
    near = jnp.log1p(jnp.where(inside, jnp.add(am1_inside, root_inside),
                               jnp.add(am1_outside, root_outside)))
    far = jnp.log(jnp.add(a, jnp.sqrt(jnp.multiply(jnp.subtract(a, 1), jnp.add(a, 1)))))
    return jnp.where(jnp.less_equal(a, _CROSS_A), near, far)


# --- arctanh: Kahan ----------------------------------------------------------------------

def _atanh_parts(x, y):
    """For x, y >= 0 in float64 (no NaN): arctanh(x + iy)."""
    huge = jnp.logical_or(jnp.greater(x, _HUGE), jnp.greater(y, _HUGE))
    mx, my = jnp.where(huge, 0.5, x), jnp.where(huge, 0.5, y)
    one, tiny_y = _is(mx, 1), jnp.less(my, float(np.sqrt(np.finfo(np.float64).eps)))
    real = jnp.multiply(jnp.log1p(jnp.divide(jnp.multiply(mx, 4), jnp.add(
        jnp.square(jnp.subtract(mx, 1)), jnp.square(my)))), 0.25)
    # at x = 1 the sum of squares is y^2, which underflows: log(2 / y), exactly
    real = jnp.where(jnp.logical_and(one, tiny_y),
                     jnp.multiply(jnp.subtract(np.log(2), jnp.log(my)), 0.5), real)
    gap = jnp.multiply(jnp.subtract(1, mx), jnp.add(1, mx))
    imag = jnp.multiply(jnp.arctan2(jnp.multiply(my, 2), jnp.subtract(gap, jnp.square(my))),
                        0.5)
    on_axis = jnp.logical_and(_is(y, 0), jnp.less_equal(x, 1))  # arctanh of a real
    real = jnp.where(on_axis, jnp.arctanh(jnp.minimum(x, 1.0)), real)
    imag = jnp.where(on_axis, 0.0, imag)
    return (jnp.where(huge, _reciprocal_real(x, y), real),
            jnp.where(huge, _HALF_PI, imag))


def _reciprocal_real(x, y):
    """Re 1/(x + iy) = x / (x^2 + y^2) for large x, y >= 0 (0 when either is inf)."""
    larger = jnp.maximum(x, y)
    finite = jnp.isfinite(larger)
    safe = jnp.where(finite, jnp.maximum(larger, 1.0), 1.0)
    u, v = jnp.divide(x, safe), jnp.divide(y, safe)
    quotient = jnp.divide(jnp.divide(u, jnp.add(jnp.square(u), jnp.square(v))), safe)
    return jnp.where(finite, quotient, 0.0)


# --- the six functions, on float64 parts of any sign --------------------------------------

def _arcsin(x, y):
    sine, _, imag = _hull_parts(jnp.abs(x), jnp.abs(y))
    return jnp.copysign(sine, x), jnp.copysign(imag, y)


def _arccos(x, y):
    _, cosine, imag = _hull_parts(jnp.abs(x), jnp.abs(y))
    real = jnp.where(jnp.signbit(x), jnp.subtract(np.pi, cosine), cosine)
    return real, jnp.copysign(imag, jnp.negative(y))


def _arcsinh(x, y):  # -i arcsin(iz)
    sine, _, imag = _hull_parts(jnp.abs(y), jnp.abs(x))
    return jnp.copysign(imag, x), jnp.copysign(sine, y)


def _arccosh(x, y):  # +-i arccos(z), whichever has a real part >= 0
    cosine, imag = _arccos(x, y)
    return jnp.abs(imag), jnp.copysign(cosine, y)


def _arctanh(x, y):
    real, imag = _atanh_parts(jnp.abs(x), jnp.abs(y))
    return jnp.copysign(real, x), jnp.copysign(imag, y)


def _arctan(x, y):  # -i arctanh(iz)
    real, imag = _atanh_parts(jnp.abs(y), jnp.abs(x))
    return jnp.copysign(imag, x), jnp.copysign(real, y)


# Where a part is NaN, C99 (and glibc) give NaN + NaN i but in these cases, keyed by
# which part is NaN and what the other is: (real, imag), a constant or fn(x, y).
_NAN_CASES = {
    "arcsin": {"y inf": (np.nan, lambda x, y: y), "x zero": (lambda x, y: x, np.nan),
               "x inf": (np.nan, np.inf)},
    "arccos": {"y inf": (np.nan, lambda x, y: jnp.negative(y)), "x zero": (_HALF_PI, np.nan),
               "x inf": (np.nan, -np.inf)},
    "arctan": {"y zero": (np.nan, lambda x, y: y),
               "y inf": (np.nan, lambda x, y: jnp.copysign(0.0, y)),
               "x inf": (lambda x, y: jnp.copysign(_HALF_PI, x), 0.0)},
    "arcsinh": {"y zero": (np.nan, lambda x, y: y), "y inf": (np.inf, np.nan),
                "x inf": (lambda x, y: x, np.nan)},
    "arccosh": {"y inf": (np.inf, np.nan), "x zero": (np.nan, _HALF_PI),
                "x inf": (np.inf, np.nan)},
    "arctanh": {"y inf": (0.0, lambda x, y: jnp.copysign(_HALF_PI, y)),
                "x zero": (lambda x, y: x, np.nan),
                "x inf": (lambda x, y: jnp.copysign(0.0, x), np.nan)},
}


def _with_nan_cases(name, x, y, real, imag):
    x_nan, y_nan = jnp.isnan(x), jnp.isnan(y)
    masks = {"y inf": jnp.logical_and(x_nan, jnp.isinf(y)),
             "y zero": jnp.logical_and(x_nan, _is(y, 0)),
             "x inf": jnp.logical_and(y_nan, jnp.isinf(x)),
             "x zero": jnp.logical_and(y_nan, _is(x, 0))}
    some_nan = jnp.logical_or(x_nan, y_nan)
    real, imag = jnp.where(some_nan, np.nan, real), jnp.where(some_nan, np.nan, imag)
    for case, (case_real, case_imag) in _NAN_CASES[name].items():
        real = jnp.where(masks[case], _case_value(case_real, x, y), real)
        imag = jnp.where(masks[case], _case_value(case_imag, x, y), imag)
    return real, imag


def _case_value(value, x, y):
    return value(x, y) if callable(value) else value


def _in_float64(name, formula):
    """formula on the parts in float64, NaN cases applied, rounded to the parts' dtype."""
    def parts(x, y):
        dtype = part_dtype_of(x)
        x64, y64 = jnp.astype(x, np.float64), jnp.astype(y, np.float64)
        with np.errstate(all="ignore"):  # (computed eagerly: the branches not taken)
            real, imag = _with_nan_cases(name, x64, y64, *formula(x64, y64))
        return jnp.astype(real, dtype), jnp.astype(imag, dtype)
    parts.__name__ = name
    return parts


# --- derivatives: f'(z) times the tangent -------------------------------------------------

def _one_plus_square(x, y, sign):
    """1 + sign z^2, as parts."""
    square_r, square_i = formulas.multiply(x, y, x, y)
    return jnp.add(1, jnp.multiply(square_r, sign)), jnp.multiply(square_i, sign)


def _inverse_root(x, y, sign):
    """1 / sqrt(1 + sign z^2)."""
    return formulas.reciprocal(*elementary.sqrt(*_one_plus_square(x, y, sign)))


def _arccos_derivative(x, y):
    real, imag = _inverse_root(x, y, -1)
    return jnp.negative(real), jnp.negative(imag)


def _arccosh_derivative(x, y):
    """1 / (sqrt(z - 1) sqrt(z + 1)): the principal branch's, on both half-planes."""
    below = elementary.sqrt(jnp.subtract(x, 1), y)
    above = elementary.sqrt(jnp.add(x, 1), y)
    return formulas.reciprocal(*formulas.multiply(*below, *above))


DERIVATIVES = {  # f'(z), parts -> parts
    "arcsin": lambda x, y: _inverse_root(x, y, -1),
    "arccos": _arccos_derivative,
    "arctan": lambda x, y: formulas.reciprocal(*_one_plus_square(x, y, 1)),
    "arcsinh": lambda x, y: _inverse_root(x, y, 1),
    "arccosh": _arccosh_derivative,
    "arctanh": lambda x, y: formulas.reciprocal(*_one_plus_square(x, y, -1)),
}


# The functions' values, by name (wrapped with their derivatives and installed as
# NumPy's functions from autodiff/holomorphic.py: custom_jvp sits in a layer above).
VALUES = {name: _in_float64(name, formula) for name, formula in (
    ("arcsin", _arcsin), ("arccos", _arccos), ("arctan", _arctan),
    ("arcsinh", _arcsinh), ("arccosh", _arccosh), ("arctanh", _arctanh))}
