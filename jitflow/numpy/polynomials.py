"""NumPy's polynomial functions on coefficient arrays, highest power first: polyadd,
polysub, polymul, polydiv, polyder, polyint, polyfit, vander and poly (polyval is in
assorted).

NumPy's polymul first trims leading zero coefficients (poly1d does), which makes the
length of its result depend on values; traced coefficients are taken as they are (the
leading ones assumed nonzero, as JAX assumes), eager ones are trimmed as NumPy trims.
"""
import operator
import warnings
from types import SimpleNamespace

import numpy as _np

from ..contract import matmul, outer
from ..errors import at_user_line
from ..trace import Tracer
from ._common import _dtype_of, _ndim, _shape
from .assorted import convolve
from .creation import asarray, ones, zeros
from .decompositions import inv, lstsq
from .elementwise import add, astype, divide, multiply, negative, sqrt, subtract
from .reductions import sum
from .scans import cumprod
from .shapes import broadcast_to, concatenate, expand_dims, stack
from .stacking import atleast_1d


def _aligned(a1, a2):
    """Both coefficient arrays at the same length, zeros put in front of the shorter."""
    a1, a2 = atleast_1d(a1), atleast_1d(a2)
    extra = _shape(a2)[0] - _shape(a1)[0]
    if extra > 0:
        a1 = concatenate([zeros(extra, _dtype_of(a1)), a1])
    elif extra < 0:
        a2 = concatenate([zeros(-extra, _dtype_of(a2)), a2])
    return a1, a2


def polyadd(a1, a2):
    return add(*_aligned(a1, a2))


def polysub(a1, a2):
    return subtract(*_aligned(a1, a2))


def _trimmed(p):
    """poly1d's coefficients: eager leading zeros dropped (one zero kept if all are)."""
    p = atleast_1d(p)
    if isinstance(p, Tracer):
        return p
    nonzero = _np.flatnonzero(_np.asarray(p))
    return p[nonzero[0]:] if len(nonzero) else zeros(1, _dtype_of(p))


def polymul(a1, a2):
    return convolve(_trimmed(a1), _trimmed(a2))


def _order(m, name, other):
    m = operator.index(m) if not isinstance(m, float) else int(m)
    if m < 0:
        raise ValueError(at_user_line(f"Order of {name} must be positive (see {other})"))
    return m


def _coefficients(p):
    p = asarray(p)
    if _ndim(p) == 0:  # (NumPy takes its len())
        raise TypeError(at_user_line("len() of unsized object"))
    return p


def polyder(p, m=1):
    m = _order(m, "derivative", "polyint")
    p = _coefficients(p)
    for _ in range(m):
        p = multiply(p[:-1], _np.arange(_shape(p)[0] - 1, 0, -1))
    # NumPy computes one product more than it returns: for a 2-D p whose columns do not
    # broadcast against the factors, that one raises its ValueError.
    rows = max(_shape(p)[0] - 1, 0)
    _np.broadcast_shapes((rows,) + tuple(_shape(p)[1:]), (rows,))
    return p


def polyint(p, m=1, k=None):
    """Each integration divides by the powers and appends the next constant of k."""
    m = _order(m, "integral", "polyder")
    constants = atleast_1d(zeros(m) if k is None else k)
    if _shape(constants)[0] == 1 and m > 1:
        constants = multiply(constants[0], ones(m))
    if _shape(constants)[0] < m:
        raise ValueError(at_user_line("k must be a scalar or a rank-1 array of length 1 "
                                      "or >m."))
    p = _coefficients(p)
    for i in range(m):
        p = concatenate([divide(p, _np.arange(_shape(p)[0], 0, -1)), constants[i:i + 1]])
    return p


def vander(x, N=None, increasing=False):
    """Columns 1, x, x*x, ... (a running product, NumPy's order of multiplications)."""
    x = asarray(x)
    if _ndim(x) != 1:
        raise ValueError(at_user_line("x must be a one-dimensional array or sequence."))
    count = _shape(x)[0]
    columns = count if N is None else operator.index(N)
    dtype = _np.promote_types(_dtype_of(x), _np.int64)
    x = astype(x, dtype)
    parts = [ones((count, min(columns, 1)), dtype)]
    if columns > 1:
        parts.append(cumprod(broadcast_to(expand_dims(x, 1), (count, columns - 1)), axis=1))
    result = concatenate(parts, axis=1)
    return result if increasing else result[:, ::-1]


def poly(seq_of_zeros):
    """The coefficients of the polynomial with the given real roots."""
    roots = atleast_1d(seq_of_zeros)
    shape = _shape(roots)
    if len(shape) != 1:  # (a square matrix: complex_values/polynomials.py)
        raise ValueError(at_user_line("input must be 1d or non-empty square 2d array."))
    if shape[0] == 0:
        return 1.0
    dtype = _np.float32 if _dtype_of(roots) == _np.float32 else _np.float64
    roots = astype(roots, dtype)
    coefficients = ones(1, dtype)
    for i in range(shape[0]):
        factor = concatenate([ones(1, dtype), negative(roots[i:i + 1])])
        coefficients = convolve(coefficients, factor)
    return coefficients


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """NumPy's recipe (least_squares_fit) on real values."""
    return least_squares_fit(_REAL, x, y, deg, rcond, full, w, cov)


def least_squares_fit(xp, x, y, deg, rcond, full, w, cov):
    """NumPy's polyfit with the functions of namespace `xp` (the complex values' fit
    passes jitflow.numpy, whose functions take them): the Vandermonde matrix of x, rows
    weighted by w, each column divided by the root of its squares summed (complex
    squares, as NumPy 2.4's), solved by least squares and unscaled; cov from the inverse
    of lhs.T @ lhs (not conjugated), as NumPy's."""
    order = operator.index(deg) + 1
    x, y = xp.add(xp.asarray(x), 0.0), xp.add(xp.asarray(y), 0.0)
    _check_fit_arguments(x, y, deg)
    if rcond is None:
        rcond = xp.shape(x)[0] * _np.finfo(x.dtype).eps
    lhs, rhs = xp.vander(x, order), y
    if w is not None:
        w = xp.add(xp.asarray(w), 0.0)
        check_fit_weights(w, y)
        lhs = xp.multiply(lhs, w[:, None])
        rhs = xp.multiply(rhs, w[:, None] if xp.ndim(rhs) == 2 else w)
    scale = xp.sqrt(xp.sum(xp.multiply(lhs, lhs), axis=0))
    lhs = xp.divide(lhs, scale)
    c, residuals, rank, s = xp.linalg.lstsq(lhs, rhs, rcond)
    c = xp.divide(c.T, scale).T
    if not isinstance(rank, Tracer) and int(rank) != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", _np.exceptions.RankWarning,
                      stacklevel=2)
    if full:
        return c, residuals, rank, s, rcond
    if not cov:
        return c
    base = xp.divide(xp.linalg.inv(xp.matmul(lhs.T, lhs)), xp.outer(scale, scale))
    if cov == "unscaled":
        factor = 1
    else:
        if xp.shape(x)[0] <= order:
            raise ValueError(at_user_line("the number of data points must exceed order "
                                          "to scale the covariance matrix"))
        factor = xp.divide(residuals, xp.shape(x)[0] - order)
    return c, xp.multiply(base if xp.ndim(y) == 1 else base[:, :, None], factor)


_REAL = SimpleNamespace(
    add=add, asarray=asarray, shape=_shape, ndim=_ndim, vander=vander, multiply=multiply,
    divide=divide, sqrt=sqrt, sum=sum, matmul=matmul, outer=outer,
    linalg=SimpleNamespace(lstsq=lstsq, inv=inv))


def check_fit_weights(w, y):
    """NumPy's checks of polyfit's weights: one per point."""
    if _ndim(w) != 1:
        raise TypeError(at_user_line("expected a 1-d array for weights"))
    if _shape(w)[0] != _shape(y)[0]:
        raise TypeError(at_user_line("expected w and y to have the same length"))


def _check_fit_arguments(x, y, deg):
    if deg < 0:
        raise ValueError(at_user_line("expected deg >= 0"))
    if _ndim(x) != 1:
        raise TypeError(at_user_line("expected 1D vector for x"))
    if _shape(x)[0] == 0:
        raise TypeError(at_user_line("expected non-empty vector for x"))
    if not 1 <= _ndim(y) <= 2:
        raise TypeError(at_user_line("expected 1D or 2D array for y"))
    if _shape(x)[0] != _shape(y)[0]:
        raise TypeError(at_user_line("expected x and y to have same length"))


def polydiv(u, v, *, trim_leading_zeros=True):
    """(quotient, remainder) of u divided by v, by NumPy's long division (the same
    roundings). NumPy then drops the remainder's leading coefficients while they are
    within 1e-8 of 0, which makes its length depend on values: traced coefficients
    whose values are not known need trim_leading_zeros=False (as JAX's), which keeps
    all len(u) of them (the first ones what the division left: 0 or a rounding)."""
    if isinstance(u, _np.poly1d) or isinstance(v, _np.poly1d):
        return _np.polydiv(u, v)  # constants: NumPy's own, as poly1d objects
    u, v = add(atleast_1d(u), 0.0), add(atleast_1d(v), 0.0)
    if 0 in (_shape(u)[0], _shape(v)[0]):  # NumPy reads both leading coefficients
        raise IndexError(at_user_line("index 0 is out of bounds for axis 0 with size 0"))
    dtype = _np.result_type(_dtype_of(u), _dtype_of(v))
    m, n = _shape(u)[0] - 1, _shape(v)[0] - 1
    scale = divide(1.0, v[0])
    r, quotient = astype(u, dtype), []
    for k in range(m - n + 1):
        d = multiply(scale, r[k])
        quotient.append(astype(d, dtype))
        r = concatenate([r[:k], subtract(r[k:k + n + 1], multiply(d, v)), r[k + n + 1:]])
    q = stack(quotient) if quotient else zeros((1,), dtype)
    return q, (_trimmed_remainder(r) if trim_leading_zeros else r)


_TRIMMED = "jitflow.numpy.polydiv's remainder, whose leading coefficients near 0 are dropped,"
_KEEP_THEM = ("pass trim_leading_zeros=False to jitflow.numpy.polydiv: the remainder then "
              "keeps all len(u) coefficients, as JAX's does")


def known_remainder(r):
    """The value of a remainder whose leading near-zero coefficients are to be dropped:
    a ConcretizationError with the way out where it is not known while tracing."""
    return _np.asarray(r._value(_TRIMMED, _KEEP_THEM) if isinstance(r, Tracer) else r)


def leading_near_zeros(known):
    """How many leading coefficients NumPy's polydiv drops: those within 1e-8 of 0
    (its allclose, complex ones by their magnitude), one kept at least."""
    start = 0
    while start < known.shape[0] - 1 and _np.allclose(known[start], 0, rtol=1e-14):
        start += 1
    return start


def _trimmed_remainder(r):
    return r[leading_near_zeros(known_remainder(r)):]


__all__ = ["poly", "polyadd", "polyder", "polydiv", "polyfit", "polyint", "polymul", "polysub",
           "vander"]
