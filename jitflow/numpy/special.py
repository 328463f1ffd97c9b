"""Special functions, windows and sequences written with the others, each by NumPy's
own recipe so values agree to rounding: sinc, i0 (the Chebyshev series of the modified
Bessel function of order 0), kaiser (with a traced beta), the windows of a static
length (bartlett, blackman, hamming, hanning: constants), unwrap, geomspace (with traced
endpoints), isposinf and isneginf."""
import numpy as _np
from numpy.lib import _function_base_impl as _numpy_function_base

from ..errors import at_user_line
from ..trace import Tracer
from ._common import _dtype_of, _ndim, _no_out, _python_scalar, _shape
from .creation import asarray, logspace
from .elementwise import (abs, astype, divide, equal, exp, greater, less, log10, logical_and,
                          logical_not, logical_or, mod, multiply, sign, signbit, sin, sqrt,
                          subtract, where, add, isinf)
from .reductions import cumsum
from .rearranging import diff
from .shapes import broadcast_to, concatenate, moveaxis

# The Chebyshev coefficients of exp(-x) I0(x) on [0, 8] and of exp(-x) sqrt(x) I0(x)
# on (8, inf) (Cephes), read from NumPy so both evaluate the same series.
_I0_SMALL = tuple(float(c) for c in _numpy_function_base._i0A)
_I0_LARGE = tuple(float(c) for c in _numpy_function_base._i0B)


# Below this |pi x|, sinc is its Taylor series: sin(y) / y loses its derivative there,
# (y cos y - sin y) / y**2 cancelling to rounding noise (at x = 1e-8, 30% off; found by
# the fuzzer). The series' next term, y**8 / 9!, is below 1e-21 there.
SINC_SERIES_BELOW = 1e-2


def sinc(x):
    """sin(pi x) / (pi x), with eps in place of 0 (NumPy's: its sinc(0) is 1); its
    Taylor series 1 - y**2/6 + y**4/120 - y**6/5040 near 0, for its derivative."""
    x = multiply(_np.pi, asarray(x))
    eps = _np.finfo(_dtype_of(x)).eps
    y = where(equal(x, 0), eps, x)
    square = multiply(x, x)
    series = add(1.0, multiply(square, add(-1 / 6, multiply(
        square, subtract(1 / 120, multiply(square, 1 / 5040))))))
    return where(less(abs(x), SINC_SERIES_BELOW), series, divide(sin(y), y))


def _chebyshev(x, coefficients):
    """Clenshaw's recurrence in NumPy's order."""
    b0, b1, b2 = coefficients[0], 0.0, 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = add(subtract(multiply(x, b1), b2), c)
    return multiply(0.5, subtract(b0, b2))


def i0(x):
    """Both series evaluated on every element, each kept where it applies."""
    x = asarray(x)
    if _dtype_of(x).kind != "f":
        x = astype(x, _np.float64)
    x = abs(x)
    small = multiply(exp(x), _chebyshev(subtract(divide(x, 2.0), 2), _I0_SMALL))
    # 32 / x at x <= 8 is only discarded: a safe 8 there keeps it finite
    far = where(greater(x, 8.0), x, 8.0)
    large = divide(multiply(exp(far), _chebyshev(subtract(divide(32.0, far), 2.0),
                                                 _I0_LARGE)), sqrt(far))
    return where(greater(x, 8.0), large, small)


def kaiser(M, beta):
    """NumPy's Kaiser window of M points (M static, beta may be traced), float64."""
    M = float(_python_scalar(M, "jitflow.numpy.kaiser: M"))
    beta = astype(asarray(beta), _np.result_type(_np.float64, _dtype_of(beta)))
    if M == 1:
        return add(multiply(beta, 0.0), _np.ones(1))
    n = _np.arange(0, M)
    alpha = (M - 1) / 2.0
    return divide(i0(multiply(beta, _np.sqrt(1 - ((n - alpha) / alpha) ** 2.0))), i0(beta))


def _window(numpy_window, M):
    """NumPy's window of M points. M must be known when a function is traced, so the
    window is a constant of the graph: NumPy's own values."""
    return numpy_window(_python_scalar(M, f"jitflow.numpy.{numpy_window.__name__}: M"))


def bartlett(M):
    return _window(_np.bartlett, M)


def blackman(M):
    return _window(_np.blackman, M)


def hamming(M):
    return _window(_np.hamming, M)


def hanning(M):
    return _window(_np.hanning, M)


def unwrap(p, discont=None, axis=-1, *, period=2 * _np.pi):
    """NumPy's recipe: each step wrapped into [-period/2, period/2), steps at least
    `discont` corrected, the corrections summed along the axis."""
    p = asarray(p)
    steps = diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    dtype = _np.result_type(_dtype_of(steps), _np.asarray(period).dtype
                            if not isinstance(period, (int, float)) else period)
    if dtype.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    low = -high
    wrapped = add(mod(subtract(steps, low), period), low)
    if ambiguous:  # a step of exactly +period/2 keeps its sign
        wrapped = where(logical_and(equal(wrapped, low), greater(steps, 0)), high, wrapped)
    correction = where(less(abs(steps), discont), 0, subtract(wrapped, steps))
    axis_index = axis % _ndim(p)
    rest = [slice(None)] * _ndim(p)
    first = list(rest)
    rest[axis_index], first[axis_index] = slice(1, None), slice(None, 1)
    corrected = add(p[tuple(rest)], cumsum(correction, axis=axis_index))
    return concatenate([astype(p[tuple(first)], dtype), astype(corrected, dtype)],
                       axis=axis_index)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """NumPy's recipe: start rotated to positive by its sign, logspace between the
    logarithms, the endpoints put back exactly, the sign restored. A traced zero
    endpoint, which NumPy refuses, gives NaN (no value is known to raise on)."""
    start, stop = asarray(start), asarray(stop)
    for end in (start, stop):
        if not isinstance(end, Tracer) and _np.any(_np.asarray(end) == 0):
            raise ValueError(at_user_line("Geometric sequence cannot include zero"))
    # NumPy's result_type(start, stop, float(num), zeros((), dtype)): a float at least
    computed = _np.result_type(_dtype_of(start), _dtype_of(stop),
                               _np.float64 if dtype is None else dtype, float(num))
    start, stop = astype(start, computed), astype(stop, computed)
    traced = isinstance(start, Tracer) or isinstance(stop, Tracer)
    zero = logical_or(equal(start, 0), equal(stop, 0)) if traced else None
    start_sign = sign(start)
    start, stop = divide(start, start_sign), divide(stop, start_sign)
    result = logspace(log10(start), log10(stop), num=num, endpoint=endpoint,
                      dtype=computed)
    if num > 0:  # the endpoints exactly (10 ** log10(x) may differ from x)
        shape = (1,) + _np.broadcast_shapes(_shape(start), _shape(stop))
        ends = [broadcast_to(start, shape), broadcast_to(stop, shape)]
        result = concatenate([ends[0], result[1:-1], ends[1]] if num > 1 and endpoint
                             else [ends[0], result[1:]], axis=0)
    result = multiply(result, start_sign)
    if traced:
        result = where(zero, _np.nan, result)
    if axis != 0:
        result = moveaxis(result, 0, axis)
    return astype(result, computed if dtype is None else dtype)


def isposinf(x, out=None):
    _no_out("isposinf", out)
    return logical_and(isinf(x), logical_not(signbit(x)))


def isneginf(x, out=None):
    _no_out("isneginf", out)
    return logical_and(isinf(x), signbit(x))


__all__ = ["bartlett", "blackman", "geomspace", "hamming", "hanning", "i0", "isneginf", "isposinf", "kaiser", "sinc", "unwrap"]
