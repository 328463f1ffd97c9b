"""median, percentile, quantile and their NaN-ignoring forms, read off a sort.

The reduced axes are moved to the front and flattened, the values sorted along them
(NaN last), and each quantile taken at NumPy's positions with NumPy's arithmetic: the
virtual index of every `method` NumPy 2 offers, and the same interpolation between
its neighbours (its lerp, which counts from the nearer side), so values and dtypes
are NumPy's (a Python float q is weakly typed, an array q is not). A q known when the
function is traced picks its positions then; a traced q picks them at run time, where
a check raises NumPy's ValueError for a q outside [0, 1]. A slice holding NaN gives
NaN; the nan- forms skip NaN instead, their positions computed from each slice's count
of numbers at run time. quantile and percentile take NumPy's weights= (method
"inverted_cdf" only, as NumPy's): the first value whose weighted cdf reaches q.
Their derivatives are those of the sort and the interpolation.
"""
import warnings
from types import SimpleNamespace

import numpy as _np

from .. import ops
from ..errors import at_user_line
from ..ops.debug import raise_at_run_time
from ..ir.types import normalize_axes, normalize_axis
from ..trace import Tracer
from . import arithmetic as _arithmetic
from . import elementwise as _elementwise
from ._common import _dtype_of, _ndim, _no_out, _shape
from .assorted import take_along_axis
from .creation import asarray
from .elementwise import astype, isnan, logical_not, where
from .reductions import mean, sum
from .shapes import broadcast_to, moveaxis, reshape, take, transpose

# The functions _virtual_index needs, traced (NumPy's own compute positions known now).
_TRACED = SimpleNamespace(floor=_elementwise.floor, ceil=_elementwise.ceil,
                          where=_elementwise.where, astype=_elementwise.astype,
                          rint=_arithmetic.rint)

# alpha and beta of the continuous methods of Hyndman and Fan
CONTINUOUS = {"interpolated_inverted_cdf": (0, 1), "hazen": (0.5, 0.5),
              "weibull": (0, 0), "median_unbiased": (1 / 3.0, 1 / 3.0),
              "normal_unbiased": (3 / 8.0, 3 / 8.0)}
# methods whose virtual index is a whole position: no interpolation
DISCRETE = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")
METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
           *CONTINUOUS, "linear", "lower", "higher", "midpoint", "nearest")


def _boundary(xp, index, pick_previous):
    """The neighbour of `index` chosen by pick_previous(gamma, index), at least 0."""
    previous = xp.floor(index)
    position = xp.astype(xp.where(pick_previous(index - previous, index), previous,
                                  previous + 1), _np.int64)
    return xp.where(position < 0, 0, position)


def _virtual_index(xp, method, n, q):
    """Where quantile q falls among n sorted values: NumPy's formula for each method,
    computed by NumPy for n known now (xp = numpy), else traced (xp = jitflow.numpy)
    for an array of counts."""
    if method == "linear":
        return (n - 1) * q
    if method in CONTINUOUS:
        alpha, beta = CONTINUOUS[method]
        return n * q + (alpha + q * (1 - alpha - beta)) - 1
    if method == "averaged_inverted_cdf":
        return n * q - 1
    if method == "inverted_cdf":
        return _boundary(xp, n * q - 1, lambda gamma, _: gamma == 0)
    if method == "closest_observation":
        return _boundary(xp, n * q - 1 - 0.5,
                         lambda gamma, index: (gamma == 0) & (xp.floor(index) % 2 == 1))
    if method == "lower":
        return xp.astype(xp.floor((n - 1) * q), _np.int64)
    if method == "higher":
        return xp.astype(xp.ceil((n - 1) * q), _np.int64)
    if method == "midpoint":
        return 0.5 * (xp.floor((n - 1) * q) + xp.ceil((n - 1) * q))
    return xp.astype(xp.rint((n - 1) * q), _np.int64)  # nearest: half to even


def _gamma(xp, method, virtual, previous):
    """The weight of the upper neighbour."""
    gamma = virtual - previous
    if method == "averaged_inverted_cdf":
        gamma = xp.where(gamma == 0, 0.5, 1.0)
    elif method == "midpoint":
        gamma = xp.where(virtual % 1 == 0, 0.0, 0.5)
    return xp.astype(gamma, _dtype_of(virtual))


def _neighbours(xp, virtual, n):
    """The positions below and above each virtual index: both the last (-1) from n - 1
    on, both the first below 0, as NumPy clips them."""
    previous = xp.floor(virtual)
    above, below = virtual >= n - 1, virtual < 0
    following = xp.where(above, -1, xp.where(below, 0, previous + 1))
    previous = xp.where(above, -1, xp.where(below, 0, previous))
    return xp.astype(previous, _dtype_of(virtual)), following


def _lerp(low, high, t, rest, upper):
    """NumPy's interpolation: low + (high - low) t where t < 0.5, else back from the
    upper one, high - (high - low) (1 - t) (`rest`), where `upper` (t >= 0.5)."""
    step = high - low
    if not isinstance(upper, Tracer):  # known now (q is): only the sides needed
        if _np.all(upper):
            return high - step * rest
        if not _np.any(upper):
            return low + step * t
    return where(upper, high - step * rest, low + step * t)


class _Sorted:
    """The values of `a` sorted along its reduced axes, moved to the front and
    flattened, and how to put a result back in NumPy's shape."""

    def __init__(self, a, axis, keepdims, weights=None):
        """weights: an array of a's shape, sorted alongside (self.weights)."""
        shape = _shape(a)
        self.axes = normalize_axes(axis, _ndim(a))
        kept = [i for i in range(len(shape)) if i not in self.axes]
        self.kept_shape = tuple(shape[i] for i in kept)
        self.n = int(_np.prod([shape[i] for i in self.axes], dtype=_np.int64))

        def lines(x):  # the reduced axes moved to the front and flattened
            return reshape(transpose(x, list(self.axes) + kept), (self.n,) + self.kept_shape)
        if weights is None:
            self.values = ops.sort(lines(a), axis=0)
        else:
            order = ops.argsort(lines(a), axis=0)
            self.values = take_along_axis(lines(a), order, axis=0)
            self.weights = take_along_axis(lines(weights), order, axis=0)
        self.shape, self.keepdims = shape, keepdims

    def at(self, positions):
        """values[positions] for positions known now (an int array; -1 is the last),
        the positions' axes in front."""
        positions = _np.asarray(positions, dtype=_np.int64) % max(self.n, 1)
        taken = take(self.values, positions.ravel(), axis=0)
        return reshape(taken, positions.shape + self.kept_shape)

    def along(self, positions, q_shape):
        """values[positions[..., j], j] for traced positions of shape q_shape +
        kept_shape."""
        flat = reshape(positions, (-1,) + self.kept_shape)
        return reshape(take_along_axis(self.values, flat, axis=0), q_shape + self.kept_shape)

    def last(self):
        return self.values[-1]

    def shaped(self, result):
        """With keepdims, the reduced axes put back as 1s among the last axes (the
        leading ones are q's, as NumPy adds them)."""
        if not self.keepdims:
            return result
        shape = _shape(result)
        lead = len(shape) - len(self.kept_shape)
        trailing = iter(shape[lead:])
        return reshape(result, shape[:lead] + tuple(1 if i in self.axes else next(trailing)
                                                    for i in range(len(self.shape))))


def _numpy_on_empty(function, a, *args, **kwargs):
    """NumPy's own result for an empty `a`, which depends on its shape and dtype alone
    (an all-NaN result, its NaN as NumPy makes it, or NumPy's error)."""
    try:
        with _np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return asarray(function(_np.zeros(_shape(a), _dtype_of(a)), *args, **kwargs))
    except (IndexError, ValueError, TypeError) as error:
        raise type(error)(at_user_line(f"{function.__name__}: {error}")) from None


def _check_q(name, q, percent):
    """(q as a fraction, whether it is weakly typed), checked as NumPy checks it."""
    if isinstance(q, Tracer):
        return _checked_at_run_time(name, q, percent), q.type.weak
    weak = type(q) in (int, float)
    q = _np.true_divide(q, 100) if percent else _np.asanyarray(q)
    if _np.asarray(q).dtype.kind not in "biuf":
        raise TypeError(at_user_line(f"{name}: q must be real numbers, got {q.dtype}"))
    if q.size and not _in_range(q):
        raise ValueError(at_user_line(_range_message(percent)))
    if q.ndim > 2:
        raise ValueError(at_user_line("q must be a scalar or 1d"))
    return _np.asarray(q), weak


def _in_range(q):
    return _np.all(q >= 0) and _np.all(q <= 1)


def _range_message(percent):
    return ("Percentiles must be in the range [0, 100]" if percent
            else "Quantiles must be in the range [0, 1]")


def _checked_at_run_time(name, q, percent):
    """A traced q, as a fraction, checked at every call (a callback into Python)."""
    if q.dtype.kind not in "biuf":
        raise TypeError(at_user_line(f"{name}: q must be real numbers, got {q.type}"))
    if q.ndim > 2:
        raise ValueError(at_user_line("q must be a scalar or 1d"))
    q = _elementwise.true_divide(q, 100) if percent else q
    raise_at_run_time(lambda values: _np.size(values) and not _in_range(values),
                      _range_message(percent), f"{name}: q in range", q)
    return q


def _check_call(name, a, out, method, weights):
    _no_out(name, out)
    if weights is not None and method != "inverted_cdf":
        raise ValueError(at_user_line(f"Only method 'inverted_cdf' supports weights. "
                                      f"Got: {method}."))
    if method not in METHODS:
        raise ValueError(at_user_line(f"{method!r} is not a valid method. Use one of: "
                                      f"{METHODS}"))
    a = asarray(a)
    if _dtype_of(a).kind not in "biuf":
        raise TypeError(at_user_line("a must be an array of real numbers"))
    return a


def _empty(name, a, q, axis, method, keepdims, weights=None):
    """NumPy's result for an empty `a`, or None."""
    if _np.prod(_shape(asarray(a))) != 0:
        return None
    if isinstance(q, Tracer):  # NumPy's NaNs (or error) depend on q's shape and dtype
        q = _np.zeros(q.shape, q.dtype) if not q.type.weak else 0.0
    options = {} if weights is None else \
        {"weights": _np.zeros(_shape(asarray(weights)), _dtype_of(asarray(weights)))}
    return _numpy_on_empty(getattr(_np, name), a, q, axis=axis, method=method,
                           keepdims=keepdims, **options)


def _quantiles(name, a, q, axis, out, method, keepdims, weights, percent, nan=False):
    """nan: for the nan- forms of an array that cannot hold NaN."""
    a = _check_call(name, a, out, method, weights)
    empty = _empty(name, a, q, axis, method, keepdims, weights)
    if empty is not None:
        return empty
    q, weak = _check_q(name, q, percent)
    if weights is not None:
        return _weighted(name, a, q, axis, keepdims, weights)
    data = _Sorted(a, axis, keepdims)
    if isinstance(q, Tracer):
        result = _at_run_time(data, method, q, data.n, weak, _dtype_of(a),
                              lambda positions: where(positions < 0, data.n - 1, positions))
    else:
        result = _known_now(data, method, q, weak)
    if _dtype_of(a).kind == "f":  # a slice holding NaN: its quantiles are (its last) NaN
        result = where(isnan(data.last()), data.last(), result)
    return data.shaped(_as_applied(result, data, q) if nan else result)


def _weighted(name, a, q, axis, keepdims, weights, nan=False):
    """method="inverted_cdf" with weights, as NumPy 2 computes it: the values sorted
    with their weights, whose running sum (float64) over the total is the cdf, and for
    each q the first value whose cdf reaches q (cdf[i-1] < q <= cdf[i]; a leading zero
    of the cdf read as -1, so that q = 0 skips values of weight 0). Negative weights,
    and weights whose total is not a positive number, raise NumPy's ValueError at run
    time. nan: the nan- forms', where each NaN leaves with its weight (a slice of NaN
    only gives NaN)."""
    weights = _weights_like(a, weights, axis)
    raise_at_run_time(lambda w: _np.any(w < 0), "Weights must be non-negative.",
                      f"{name}: weights", weights)
    if nan:
        weights = where(isnan(a), 0, weights)
    data = _Sorted(a, axis, keepdims, weights)
    cdf = ops.cumsum(astype(data.weights, _np.float64), axis=0)
    cdf = cdf / cdf[-1]
    # (a slice of NaN only has no numbers to weigh: NumPy gives NaN, not this error)
    numbers = sum(logical_not(isnan(data.values)), axis=0) if nan else \
        ops.broadcast_to(_np.int64(data.n), _shape(cdf)[1:])
    raise_at_run_time(lambda total, numbers: _np.any(_np.isnan(total) & (numbers > 0)),
                      "Weights included NaN, inf or were all zero.", f"{name}: weights",
                      cdf[-1], numbers)
    if _dtype_of(q).kind == "f":  # NumPy compares in q's dtype
        cdf = astype(cdf, _dtype_of(q))
    cdf = where(cdf == 0, -1, cdf)
    q_shape = _shape(q)
    qs = reshape(q, q_shape + (1,) * (1 + len(data.kept_shape)))
    below = sum(astype(cdf < qs, _np.int64), axis=len(q_shape))
    positions = _elementwise.minimum(below, data.n - 1)
    result = data.along(positions, q_shape)
    if nan:
        result = where(numbers == 0, _np.nan, result)
    elif _dtype_of(a).kind == "f":  # a slice holding NaN: its quantiles are (its last) NaN
        result = where(isnan(data.last()), data.last(), result)
    return data.shaped(result)


def _check_slice_weights(name, a, axis, weights):
    """NumPy 2.4's nan- forms index weights given along `axis` only per slice, as if
    they had a's shape: an IndexError where a has more than one slice."""
    _weights_like(a, weights, axis)  # (NumPy checks their shape first)
    shape = _shape(a)
    if axis is None or len(shape) == 1 or _shape(asarray(weights)) == shape:
        return
    axes = normalize_axes(axis, len(shape))
    if _np.prod([n for i, n in enumerate(shape) if i not in axes]) > 1:
        raise IndexError(at_user_line(
            f"{name}: NumPy raises IndexError for weights along the axis only of an "
            f"array of several slices (it indexes them per slice as if they had the "
            f"array's shape): pass weights of a's shape {shape} (np.broadcast_to)"))


def _weights_like(a, weights, axis):
    """weights broadcast to a's shape, after NumPy's checks: of a's shape, or of its
    shape along `axis` (an int or tuple)."""
    weights = asarray(weights)
    shape, given = _shape(a), _shape(weights)
    if given == shape:
        return weights
    if axis is None:
        raise TypeError(at_user_line("Axis must be specified when shapes of a and weights "
                                     "differ."))
    axes = tuple(normalize_axis(i, len(shape)) for i in
                 (axis if isinstance(axis, (tuple, list)) else (axis,)))  # in their order
    if given != tuple(shape[i] for i in axes):
        raise ValueError(at_user_line("Shape of weights must be consistent with shape of "
                                      "a along specified axis."))
    weights = transpose(weights, tuple(int(i) for i in _np.argsort(axes)))
    weights = reshape(weights, tuple(size if i in axes else 1 for i, size in enumerate(shape)))
    return broadcast_to(weights, shape)


def _known_now(data, method, q, weak):
    """The quantiles at positions NumPy computes now, for a q known while tracing."""
    virtual = _np.asanyarray(_virtual_index(_np, method, data.n, q))
    if method in DISCRETE or (method == "linear" and virtual.dtype.kind in "iu"):
        result = data.at(virtual)
    else:
        previous, following = _neighbours(_np, virtual, data.n)
        gamma = _gamma(_np, method, virtual, previous)
        if weak:
            t = float(gamma)
        else:
            t = gamma.reshape(gamma.shape + (1,) * len(data.kept_shape))
        result = _lerp(data.at(previous), data.at(following), t, 1 - t, t >= 0.5)
    return result


def _at_run_time(data, method, q, count, weak, dtype, last_for):
    """The quantiles at positions computed at run time: for a traced q, or for the
    nan- forms (count: each slice's numbers). last_for(positions) puts the position
    of each slice's last value where a position says -1."""
    qs = reshape(q, _shape(q) + (1,) * len(data.kept_shape))
    virtual = _virtual_index(_TRACED, method, count, qs)
    shape = _shape(q) + data.kept_shape

    def at(positions):
        return data.along(broadcast_to(last_for(positions), shape), _shape(q))
    if method in DISCRETE or (method == "linear" and _dtype_of(virtual).kind in "iu"):
        return at(astype(virtual, _np.int64))
    previous, following = _neighbours(_TRACED, virtual, count)
    gamma = _gamma(_TRACED, method, virtual, previous)
    t, rest = gamma, 1 - gamma
    if weak:  # a Python float q: weights rounded to the values' dtype, as NumPy's
        weights = _np.result_type(dtype, 1.0)
        t, rest = astype(t, weights), astype(rest, weights)
    return _lerp(at(astype(previous, _np.int64)), at(astype(following, _np.int64)),
                 t, rest, gamma >= 0.5)


def _as_applied(result, data, q):
    """NumPy's nan-quantiles over several axes leave the axes of a q of 2 or more axes
    where its apply_along_axis puts them: q's last axis first, its others after the
    kept axes."""
    if len(data.axes) < 2 or not data.kept_shape or q.ndim < 2:
        return result
    as_applied = moveaxis(result, tuple(range(q.ndim)), tuple(range(-q.ndim, 0)))
    return moveaxis(as_applied, [-1] + list(range(q.ndim - 1)), list(range(q.ndim)))


def _nan_quantiles(name, a, q, axis, out, method, keepdims, weights, percent):
    """The quantiles of each slice's numbers, NaN where a slice has none."""
    a = _check_call(name, a, out, method, weights)
    if weights is not None and _np.prod(_shape(a)) != 0:
        _check_slice_weights(name, a, axis, weights)
    if _dtype_of(a).kind != "f":
        return _quantiles(name, a, q, axis, out, method, keepdims, weights, percent, True)
    empty = _empty(name, a, q, axis, method, keepdims, weights)
    if empty is not None:
        return empty
    q, weak = _check_q(name, q, percent)
    if weights is not None:
        return _weighted(name, a, q, axis, keepdims, weights, nan=True)
    data = _Sorted(a, axis, keepdims)
    if q.size == 0:  # (NumPy's float64, whatever the data)
        return data.shaped(asarray(_np.zeros(q.shape + data.kept_shape)))
    count = sum(logical_not(isnan(data.values)), axis=0)  # NaN sort last: numbers first
    if q.dtype.kind == "f":  # as NumPy's Python int count times q
        count = astype(count, q.dtype)
    last = astype(count, _np.int64) - 1

    def last_number(positions):  # -1 is each slice's last number (none: any place)
        positions = where(positions < 0, last, positions)
        return where(positions < 0, 0, positions)
    result = _at_run_time(data, method, q, count, weak, _dtype_of(a), last_number)
    result = where(last < 0, _np.nan, result)  # a slice of NaN only
    return data.shaped(_as_applied(result, data, q))


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    return _quantiles("quantile", a, q, axis, out, method, keepdims, weights, False)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    return _quantiles("percentile", a, q, axis, out, method, keepdims, weights, True)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    return _nan_quantiles("nanquantile", a, q, axis, out, method, keepdims, weights, False)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    return _nan_quantiles("nanpercentile", a, q, axis, out, method, keepdims, weights, True)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The mean of the middle one or two sorted values, as NumPy takes it; NaN where a
    slice holds NaN (and for an empty one)."""
    _no_out("median", out)
    a = asarray(a)
    if _np.prod(_shape(a)) == 0:
        return _numpy_on_empty(_np.median, a, axis=axis, keepdims=keepdims)
    data = _Sorted(a, axis, keepdims)
    half = data.n // 2
    result = mean(data.values[half - 1 + data.n % 2:half + 1], axis=0)
    if _dtype_of(a).kind == "f":  # a slice holding NaN: its median is (its last) NaN
        result = where(isnan(data.last()), data.last(), result)
    return data.shaped(result)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median of each slice's numbers: its middle one, or the mean of its middle
    two; NaN where a slice has none."""
    _no_out("nanmedian", out)
    a = asarray(a)
    if _np.prod(_shape(a)) == 0:  # before the dtype: NumPy's nanmean of any empty array
        return _numpy_on_empty(_np.nanmedian, a, axis=axis, keepdims=keepdims)
    if _dtype_of(a).kind != "f":
        return median(a, axis=axis, keepdims=keepdims)
    data = _Sorted(a, axis, keepdims)
    count = sum(logical_not(isnan(data.values)), axis=0)
    upper = count // 2
    lower = where(upper > 0, upper - 1 + count % 2, 0)
    low = data.along(lower, ())
    high = data.along(upper, ())
    # NumPy's loop over one slice (or over slices of 600 and more) takes the mean of the
    # middle one or two, a sum from +0.0 (-0.0 comes out as 0.0); its sort of several
    # shorter slices adds the two middle ones, the middle one twice for an odd count,
    # and halves the sum (float32's largest number comes out as inf)
    one_slice = axis is None or _ndim(a) == 1
    looped = one_slice or data.n >= 600
    pair = (low + high + 0.0) / 2
    result = where(count % 2 == 1, low + 0.0, pair) if looped else pair
    # a slice of NaN only: the loop returns its last element, the sort a NaN of its own
    return data.shaped(where(count == 0, data.last() if looped else _np.nan, result))


__all__ = ["median", "nanmedian", "nanpercentile", "nanquantile", "percentile", "quantile"]
