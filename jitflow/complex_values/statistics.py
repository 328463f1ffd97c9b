"""NumPy's statistics of complex arrays, each as NumPy computes it: running products
(cumprod, nancumprod, cumulative_prod; cumulative_sum), the nan-functions (an element
is NaN when either part is), ptp, median, cov and corrcoef, trapezoid, interp of
complex values, and searchsorted and lexsort in NumPy's order of complex numbers."""
import numpy as np

from .. import numpy as jnp
from .. import ops
from ..errors import at_user_line
from ..ir.types import normalize_axis
from ..numpy.searching import check_search
from .functions import IMPLEMENTATIONS, _complex, _named, _no_out, as_complex
from .ordering import _axes
from .parts import is_complex, parts_of, result_dtype


def _call(name, *args, **kwargs):
    return IMPLEMENTATIONS[name](*args, **kwargs)


def _only(name, given, **allowed):
    """Refuses by name the keywords jitflow does not take here."""
    extra = sorted(k for k, v in given.items() if v is not None and k not in allowed)
    if extra:
        raise TypeError(at_user_line(f"jitflow.numpy.{name} of complex values: "
                                     f"{', '.join(extra)} not supported"))


# --- the nan-functions --------------------------------------------------------------------

def _nan_replaced(z, value):
    """z with every NaN element (a NaN in either part) replaced by the complex `value`."""
    nan = _call("isnan", z)
    return _complex(jnp.where(nan, value.real, z.real), jnp.where(nan, value.imag, z.imag),
                    z.dtype)


@_named("nanprod")
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False):
    _no_out("nanprod", out, True, {"dtype": dtype})
    return _call("prod", _nan_replaced(as_complex(a), 1), axis, keepdims=keepdims)


@_named("nancumsum")
def nancumsum(a, axis=None, dtype=None, out=None):
    _no_out("nancumsum", out, True, {"dtype": dtype})
    return _call("cumsum", _nan_replaced(as_complex(a), 0), axis)


# --- running products ---------------------------------------------------------------------

@_named("cumprod")
def cumprod(a, axis=None, dtype=None, out=None):
    """NumPy's running product, multiplied in order along the axis."""
    _no_out("cumprod", out, True, {"dtype": dtype})
    z = as_complex(a)
    if axis is None:
        z, axis = _call("ravel", z), 0
    axis = normalize_axis(axis, z.ndim)
    return _complex(*ops.complex_cumprod(z.real, z.imag, axis=axis), z.dtype)


@_named("nancumprod")
def nancumprod(a, axis=None, dtype=None, out=None):
    _no_out("nancumprod", out, True, {"dtype": dtype})
    return cumprod(_nan_replaced(as_complex(a), 1), axis)


def _cumulative(name, scan, initial):
    """NumPy 2.1's cumulative_sum / cumulative_prod of complex values."""
    def apply(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        _no_out(name, out, True, {"dtype": dtype})
        z = as_complex(x)
        if z.ndim == 0:
            z = _call("reshape", z, (1,))
        if axis is None:
            if z.ndim > 1:
                raise ValueError(at_user_line(
                    f"{name}: for arrays which have more than one dimension ``axis`` "
                    f"argument is required."))
            axis = 0
        axis = normalize_axis(axis, z.ndim)
        result = scan(z, axis)
        if not include_initial:
            return result
        shape = tuple(1 if k == axis else n for k, n in enumerate(result.shape))
        first = _complex(jnp.full(shape, initial, result.real.dtype),
                         jnp.zeros(shape, result.real.dtype), result.dtype)
        return _call("concatenate", [first, result], axis)
    _named(name)(apply)


_cumulative("cumulative_prod", lambda z, axis: cumprod(z, axis), 1)
_cumulative("cumulative_sum", lambda z, axis: _call("cumsum", z, axis), 0)


def _counted(z, axis, keepdims):
    """(the sum of z's non-NaN elements, how many there are (int64))."""
    kept = jnp.logical_not(_call("isnan", z))
    total = _call("sum", _nan_replaced(z, 0), axis, keepdims=keepdims)
    return total, jnp.sum(kept, axis=axis, dtype=np.int64, keepdims=keepdims)


@_named("nanmean")
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    """NumPy's sum of the non-NaN elements divided by their count (NaN for an all-NaN
    slice)."""
    _no_out("nanmean", out, True, {"dtype": dtype})
    z = as_complex(a)
    total, count = _counted(z, axis, keepdims)
    return _mean_of(total, count)


def _mean_of(total, count):
    """NumPy's in-place total / count: a complex128 division (a complex and an int64),
    rounded back to the total's dtype."""
    return _call("astype", _call("divide", total, count), total.dtype)


@_named("nanvar")
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """NumPy's: the sum of |z - mean|^2 over the non-NaN elements, divided by their
    count less ddof (NaN where that is not positive); a real array."""
    _no_out("nanvar", out, True, {"dtype": dtype})
    z = as_complex(a)
    total, count = _counted(z, axis, True)
    centred = _nan_replaced(_call("subtract", z, _mean_of(total, count)), 0)
    squares = jnp.add(jnp.multiply(centred.real, centred.real),
                      jnp.multiply(centred.imag, centred.imag))
    dof = jnp.subtract(jnp.sum(jnp.logical_not(_call("isnan", z)), axis=axis,
                               dtype=np.int64, keepdims=keepdims), ddof)
    variance = jnp.divide(jnp.sum(squares, axis=axis, keepdims=keepdims), dof)
    return jnp.astype(jnp.where(jnp.less_equal(dof, 0), np.nan, variance), squares.dtype)


@_named("nanstd")
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return jnp.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims))


_FILL = {"max": -np.inf, "min": np.inf}


def _nan_arg_extreme(name, chooser):
    """NumPy's: argmax (argmin) with NaN elements read as -inf (+inf) + 0j; an all-NaN
    slice gives -1, as jitflow's nanargmax of real values does (NumPy raises)."""
    def reduce(a, axis=None, out=None, *, keepdims=False):
        _no_out(name, out, True, {})
        z = as_complex(a)
        index = _call(chooser, _nan_replaced(z, complex(_FILL[chooser[3:]], 0)), axis,
                      keepdims=keepdims)
        all_nan = jnp.all(_call("isnan", z), axis=axis, keepdims=keepdims)
        return jnp.where(all_nan, -1, index)
    _named(name)(reduce)


_nan_arg_extreme("nanargmax", "argmax")
_nan_arg_extreme("nanargmin", "argmin")


# --- spread, middle, integrals ------------------------------------------------------------

@_named("ptp")
def ptp(a, axis=None, out=None, keepdims=False):
    _no_out("ptp", out, True, {})
    return _call("subtract", _call("max", a, axis, keepdims=keepdims),
                 _call("min", a, axis, keepdims=keepdims))


def _lines(z, axis):
    """(z's reduced axes as one last axis, in C order, the kept shape, the reduced axes)."""
    axes = _axes(z, axis)
    kept = [d for d in range(z.ndim) if d not in axes]
    length = int(np.prod([z.shape[d] for d in axes], dtype=np.int64))
    shape = tuple(z.shape[d] for d in kept)
    lines = _call("reshape", _call("transpose", z, kept + axes), shape + (length,))
    return lines, shape, axes


def _kept_dims(z, result, axes, keepdims):
    if not keepdims:
        return result
    return _call("reshape", result, tuple(1 if d in axes else z.shape[d] for d in range(z.ndim)))


def _nan_filled(shape, z):
    return _complex(jnp.full(shape, np.nan, z.real.dtype), jnp.full(shape, np.nan, z.real.dtype),
                    z.dtype)


@_named("median")
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """NumPy's: the middle element in NumPy's sort order, or the mean of the middle two;
    a slice holding a NaN gives its largest element (a NaN: NaNs sort last)."""
    _no_out("median", out, True, {})
    z = as_complex(a)
    lines, shape, axes = _lines(z, axis)
    length = lines.shape[-1]
    if length == 0:
        result = _nan_filled(shape, z)
    else:
        ordered = _call("sort", lines, -1)
        middle = _call("getitem", ordered, (Ellipsis, slice((length - 1) // 2,
                                                            length // 2 + 1)))
        result = _call("mean", middle, -1)
        last = _call("getitem", ordered, (Ellipsis, -1))
        nan = _call("isnan", last)
        result = _complex(jnp.where(nan, last.real, result.real),
                          jnp.where(nan, last.imag, result.imag), z.dtype)
    return _kept_dims(z, result, axes, keepdims)


_SMALL_LINES = 600  # NumPy's nanmedian takes a masked median of shorter lines


@_named("nanmedian")
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """NumPy's: the median of each line's elements that are not NaN (in either part).
    NumPy computes it two ways, and jitflow as it does: over the whole array (axis None,
    or every axis), or along lines of 600 or more, np.median of the rest, and a line of
    NaNs gives its last element; along shorter lines, a masked median, whose middle
    element is averaged with itself, and a line of NaNs gives nan+0j."""
    _no_out("nanmedian", out, True, {})
    z = as_complex(a)
    if z.size == 0:
        return _call("nanmean", z, axis=axis, keepdims=keepdims)
    lines, shape, axes = _lines(z, axis)
    length = lines.shape[-1]
    nan = _call("isnan", lines)
    count = jnp.sum(jnp.logical_not(nan), axis=-1, keepdims=True)
    if shape and length < _SMALL_LINES:
        result, all_nan = _masked_median(lines, nan, count), _complex(
            *(np.dtype(z.real.dtype).type(v) for v in (np.nan, 0.0)), z.dtype)
    else:  # np.median of the rest, the mean of its middle one or two (NaNs sort last)
        low, high = _middle_two(_call("sort", lines, -1), count)
        pair_mean = _call("mean", _call("concatenate", [low, high], axis=-1), -1)
        odd = jnp.equal(jnp.remainder(count[..., 0], 2), 1)
        middle = _call("mean", low, -1)  # (dividing by 1 takes -0j to 0j)
        result = _complex(jnp.where(odd, middle.real, pair_mean.real),
                          jnp.where(odd, middle.imag, pair_mean.imag), z.dtype)
        all_nan = _call("getitem", lines, (Ellipsis, -1))
    none = jnp.equal(count[..., 0], 0)
    result = _complex(jnp.where(none, all_nan.real, result.real),
                      jnp.where(none, all_nan.imag, result.imag), z.dtype)
    return _kept_dims(z, result, axes, keepdims)


def _middle_positions(count):
    """Where a sorted line's middle one or two are: (count - 1) // 2 and count // 2."""
    return (jnp.maximum(jnp.floor_divide(count - 1, 2), 0), jnp.floor_divide(count, 2))


def _middle_two(ordered, count):
    return tuple(_call("take_along_axis", ordered, position, -1)
                 for position in _middle_positions(count))


def _masked_median(lines, nan, count):
    """NumPy's masked median (np.ma.median): the NaNs, masked, are sorted as inf + 0j
    (after a tie, here; NumPy's sort leaves that order open), and one that lands in the
    middle is read as inf + infj; the middle two are averaged, as one is with itself."""
    inf = np.dtype(lines.real.dtype).type(np.inf)
    filled = _complex(jnp.where(nan, inf, lines.real), jnp.where(nan, 0, lines.imag),
                      lines.dtype)
    order = _call("argsort", filled, -1)
    ordered = _call("take_along_axis", filled, order, -1)
    masked = jnp.take_along_axis(nan, order, -1)
    pair = []
    for position in _middle_positions(count):
        value = _call("take_along_axis", ordered, position, -1)
        read_as_inf = jnp.take_along_axis(masked, position, -1)
        pair.append(_complex(jnp.where(read_as_inf, inf, value.real),
                             jnp.where(read_as_inf, inf, value.imag), lines.dtype))
    return _call("mean", _call("concatenate", pair, axis=-1), -1)


@_named("trapezoid")
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """NumPy's sum of d * (y[1:] + y[:-1]) / 2.0 along the axis."""
    y = as_complex(y) if getattr(y, "_complex_parts", None) is not None or \
        np.iscomplexobj(y) else jnp.asarray(y)
    ndim = jnp.ndim(y)
    if x is None:
        d = dx
    elif jnp.ndim(x) == 1:
        d = jnp.diff(x)
        d = jnp.reshape(d, tuple(jnp.shape(d)[0] if k == axis % ndim else 1
                                 for k in range(ndim)))
    else:
        d = jnp.diff(x, axis=axis)
    later, earlier = [slice(None)] * ndim, [slice(None)] * ndim
    later[axis], earlier[axis] = slice(1, None), slice(None, -1)
    pairs = jnp.add(y[tuple(later)], y[tuple(earlier)])
    return jnp.sum(jnp.divide(jnp.multiply(d, pairs), 2.0), axis=axis)


@_named("interp")
def interp(x, xp, fp, left=None, right=None, period=None):
    """Complex fp (and left / right): each part interpolated as NumPy's complex loop
    does, between the same points."""
    dtype = np.dtype(np.complex128)
    ends = [(None, None) if v is None else parts_of(v, dtype) for v in (left, right)]
    real, imag = parts_of(fp, dtype)
    return _complex(jnp.interp(x, xp, real, ends[0][0], ends[1][0], period),
                    jnp.interp(x, xp, imag, ends[0][1], ends[1][1], period), dtype)


# --- covariance ---------------------------------------------------------------------------

@_named("cov")
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """The covariance of complex variables, E[(x - mean x) conj(y - mean y)], from the
    real covariance of their parts stacked: [[rr, ri], [ir, ii]] gives (rr + ii) +
    i (ir - ri). Weights, ddof and bias are the real cov's."""
    dtype = np.dtype(dtype) if dtype is not None else \
        np.result_type(result_dtype(m, *([] if y is None else [y]))[0], np.float64)
    variables = _variables(m, rowvar, dtype)
    if y is not None:
        variables = _call("concatenate", [variables, _variables(y, rowvar, dtype)], 0)
    n = variables.shape[0]
    if n == 0:
        return np.array([], dtype).reshape(0, 0)
    stacked = jnp.concatenate([variables.real, variables.imag], axis=0)
    blocks = jnp.cov(stacked, bias=bias, ddof=ddof, fweights=fweights, aweights=aweights)
    rr, ri, ir, ii = blocks[:n, :n], blocks[:n, n:], blocks[n:, :n], blocks[n:, n:]
    return _call("squeeze", _complex(jnp.add(rr, ii), jnp.subtract(ir, ri), dtype))


def _variables(m, rowvar, dtype):
    """m as complex variables in rows, as NumPy's cov lays them out."""
    z = as_complex(m, dtype)
    if z.ndim > 2:
        raise ValueError(at_user_line(f"cov: m has more than 2 dimensions (shape "
                                      f"{z.shape})"))
    matrix = _call("reshape", z, (1,) * (2 - z.ndim) + tuple(z.shape))
    if not rowvar and matrix.shape[0] != 1:
        matrix = _call("transpose", matrix)
    return matrix


@_named("corrcoef")
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """cov / sqrt(diag's real part) on each side, each part then clipped to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim < 1:
        return _call("divide", c, c)
    stddev = jnp.sqrt(jnp.diagonal(c.real))
    c = _call("divide", c, jnp.reshape(stddev, (-1, 1)))
    c = _call("divide", c, jnp.reshape(stddev, (1, -1)))
    return _complex(jnp.clip(c.real, -1, 1), jnp.clip(c.imag, -1, 1), c.dtype)


# --- searching ----------------------------------------------------------------------------

def _sort_keys(z):
    """Keys whose lexicographic order is NumPy's sort order of complex numbers: every
    R + Rj, then R + nanj, nan + Rj and nan + nanj, each group by its known parts."""
    group = jnp.add(jnp.multiply(jnp.astype(jnp.isnan(z.real), np.int8), 2),
                    jnp.astype(jnp.isnan(z.imag), np.int8))
    known = [jnp.where(jnp.isnan(part), 0, part) for part in (z.real, z.imag)]
    return [group] + known


def _sorts_before(x, y):
    """x < y in NumPy's sort order of complex numbers."""
    before, tied = False, True
    for kx, ky in zip(_sort_keys(x), _sort_keys(y)):
        before = jnp.logical_or(before, jnp.logical_and(tied, jnp.less(kx, ky)))
        tied = jnp.logical_and(tied, jnp.equal(kx, ky))
    return before


@_named("lexsort")
def lexsort(keys, axis=-1):
    """The last key first; a complex key as NumPy orders complex numbers (its keys
    from _sort_keys, most significant last here)."""
    keys = keys if isinstance(keys, (list, tuple)) else [keys[i] for i in range(keys.shape[0])]
    real_keys = []
    for key in keys:
        real_keys += list(reversed(_sort_keys(as_complex(key)))) if is_complex(key) else [key]
    return jnp.lexsort(tuple(real_keys), axis=axis)


@_named("searchsorted")
def searchsorted(a, v, side="left", sorter=None):
    """The insertion points as jitflow's real searchsorted finds them: how many of a's
    elements sort before v (side='left') or not after it ('right')."""
    dtype, _ = result_dtype(a, v)
    a, v = as_complex(a, dtype), as_complex(v, dtype)
    check_search(a.shape, side)
    if sorter is not None:
        a = _call("take", a, sorter)
    elements = _call("reshape", a, (1,) * v.ndim + a.shape)
    values = _call("reshape", v, v.shape + (1,))
    before = _sorts_before(elements, values) if side == "left" else \
        jnp.logical_not(_sorts_before(values, elements))
    return jnp.sum(before, axis=-1, dtype=np.int64)
