"""The operations the program fuzzer (test_program_fuzzer.py) draws, each as NumPy code
over a namespace `xp` (numpy or jitflow.numpy), and the kinds they fall into: exact or
rounded differently by native code, differentiable smoothly or with a kink."""
import numpy as np

from jitflow.ops.contraction import matmul_p
from jitflow.trace import bind

from test_compositions import LITERALS

# Python literals: the simplifier's identities and IEEE corners (test_compositions.py),
# and integers that int32 cannot hold, where NumPy 2 raises OverflowError. (Integers
# beyond int64 raise in jitflow: tests/test_ops.py.)
BIG_INTS = [2**31, -2**31 - 1, 2**40, -2**40, 2**63 - 1, -2**63]
# ... and those beyond the narrow and unsigned dtypes (int8, uint8, int16, uint16, uint32)
NARROW_INTS = [128, -129, 255, 256, 32768, 65536, 2**32, -1]
FUZZ_LITERALS = LITERALS + BIG_INTS + NARROW_INTS + [3, -2, 127, True, False, 1e300, -1.5, 1.5, -0.5]

UNARY = {
    "negative": lambda xp, x: -x,
    "positive": lambda xp, x: +x,
    "abs": lambda xp, x: xp.abs(x),
    "floor": lambda xp, x: xp.floor(x),
    "ceil": lambda xp, x: xp.ceil(x),
    "sign": lambda xp, x: xp.sign(x),
    "square": lambda xp, x: xp.square(x),
    "sqrt": lambda xp, x: xp.sqrt(x),
    "logical_not": lambda xp, x: xp.logical_not(x),
    "isnan": lambda xp, x: xp.isnan(x),
    "isinf": lambda xp, x: xp.isinf(x),
    "isfinite": lambda xp, x: xp.isfinite(x),
    "invert": lambda xp, x: ~x,
    "exp": lambda xp, x: xp.exp(x),
    "log": lambda xp, x: xp.log(x),
    "tanh": lambda xp, x: xp.tanh(x),
    "sin": lambda xp, x: xp.sin(x),
    "arctan": lambda xp, x: xp.arctan(x),
    "arcsin": lambda xp, x: xp.arcsin(x),
    "arccos": lambda xp, x: xp.arccos(x),
    "cbrt": lambda xp, x: xp.cbrt(x),
    "spacing": lambda xp, x: xp.spacing(x),
    # built from other primitives (jitflow/numpy/arithmetic.py, transcendental.py)
    "fabs": lambda xp, x: xp.fabs(x),
    "reciprocal": lambda xp, x: xp.reciprocal(x),
    "trunc": lambda xp, x: xp.trunc(x),
    "rint": lambda xp, x: xp.rint(x),
    "degrees": lambda xp, x: xp.degrees(x),
    "radians": lambda xp, x: xp.radians(x),
    "exp2": lambda xp, x: xp.exp2(x),
    "sinh": lambda xp, x: xp.sinh(x),
    "cosh": lambda xp, x: xp.cosh(x),
    "arcsinh": lambda xp, x: xp.arcsinh(x),
    "arccosh": lambda xp, x: xp.arccosh(x),
    "arctanh": lambda xp, x: xp.arctanh(x),
    "round": lambda xp, x: xp.round(x),
    "round_1": lambda xp, x: xp.round(x, 1),
    "nan_to_num": lambda xp, x: xp.nan_to_num(x),
    "signbit": lambda xp, x: xp.signbit(x),
    "modf_fraction": lambda xp, x: xp.modf(x)[0],
    "modf_integral": lambda xp, x: xp.modf(x)[1],
    # jitflow/numpy/assorted.py, fft.py
    "conj": lambda xp, x: xp.conj(x),
    "imag": lambda xp, x: xp.imag(x),
    "angle": lambda xp, x: xp.angle(x),
    "ediff1d": lambda xp, x: xp.ediff1d(x),
    "diagflat": lambda xp, x: xp.diagflat(x),
    "fftshift": lambda xp, x: xp.fft.fftshift(x),
    "pad_wrap": lambda xp, x: xp.pad(x, 2, mode="wrap"),
    "pad_edge": lambda xp, x: xp.pad(x, 1, mode="edge"),
    # jitflow/numpy/special.py, polynomials.py
    "sinc": lambda xp, x: xp.sinc(x),
    "polyder": lambda xp, x: xp.polyder(x),
    "polyint": lambda xp, x: xp.polyint(x),
}

BINARY = {
    "add": lambda xp, x, y: x + y,
    "subtract": lambda xp, x, y: x - y,
    "multiply": lambda xp, x, y: x * y,
    "divide": lambda xp, x, y: x / y,
    "power": lambda xp, x, y: x ** y,
    "remainder": lambda xp, x, y: x % y,
    "floor_divide": lambda xp, x, y: x // y,
    "maximum": lambda xp, x, y: xp.maximum(x, y),
    "minimum": lambda xp, x, y: xp.minimum(x, y),
    "greater": lambda xp, x, y: x > y,
    "less_equal": lambda xp, x, y: x <= y,
    "equal": lambda xp, x, y: x == y,
    "not_equal": lambda xp, x, y: x != y,
    "logical_and": lambda xp, x, y: xp.logical_and(x, y),
    "logical_or": lambda xp, x, y: xp.logical_or(x, y),
    "logical_xor": lambda xp, x, y: xp.logical_xor(x, y),
    "bitwise_and": lambda xp, x, y: x & y,
    "bitwise_or": lambda xp, x, y: x | y,
    "where_greater": lambda xp, x, y: xp.where(x > y, x, y),
    "fmax": lambda xp, x, y: xp.fmax(x, y),
    "fmin": lambda xp, x, y: xp.fmin(x, y),
    "fmod": lambda xp, x, y: xp.fmod(x, y),
    "copysign": lambda xp, x, y: xp.copysign(x, y),
    "arctan2": lambda xp, x, y: xp.arctan2(x, y),
    "left_shift": lambda xp, x, y: x << y,
    "right_shift": lambda xp, x, y: x >> y,
    "ldexp": lambda xp, x, y: xp.ldexp(x, y),
    "nextafter": lambda xp, x, y: xp.nextafter(x, y),
    "heaviside": lambda xp, x, y: xp.heaviside(x, y),
    "logaddexp": lambda xp, x, y: xp.logaddexp(x, y),
    "logaddexp2": lambda xp, x, y: xp.logaddexp2(x, y),
    "hypot": lambda xp, x, y: xp.hypot(x, y),
    "float_power": lambda xp, x, y: xp.float_power(x, y),
    "isclose": lambda xp, x, y: xp.isclose(x, y),
    "convolve": lambda xp, x, y: xp.convolve(xp.ravel(x), xp.ravel(y)),
    "correlate_same": lambda xp, x, y: xp.correlate(xp.ravel(x), xp.ravel(y), "same"),
}

def _masked_update(xp, x, y):
    """x[m] *= 2; x[m] += y[m] with a mask computed from x (traced: masked_selection).
    The copy of x is traced when y is: NumPy's own array cannot take a traced value."""
    out = xp.where(xp.any(xp.asarray(y) == 0) | True, x, x)
    mask = out > 0
    out[mask] *= 2
    out[mask] += xp.broadcast_to(y, out.shape)[mask]
    return out


BINARY["masked_update"] = _masked_update


def _accumulate_at(xp, x):
    """np.add.at into a copy of x at repeated and negative indices of its first axis,
    of x's own values there (ufunc_at.py)."""
    out = xp.where(True, x, x)  # a copy, traced when x is
    if out.ndim == 0 or out.shape[0] == 0 or out.dtype == np.bool_:
        return out
    index = np.array([0, out.shape[0] - 1, 0, -1])
    np.add.at(out, index, x[index])
    return out


UNARY["add_at"] = _accumulate_at

def _sized(xp, name, x, size, fill, **kwargs):
    """jitflow's `name`(x, size=, fill_value=) (value-dependent lengths, traced), and
    NumPy's result cut to `size` or filled past its count as jitflow's is."""
    result = getattr(xp, name)(x, **kwargs) if xp is np else \
        getattr(xp, name)(x, size=size, fill_value=fill, **kwargs)
    result = result[0] if isinstance(result, tuple) else result
    if xp is not np:
        return result
    kept = result[:size]
    padding = np.full((size - kept.shape[0],) + kept.shape[1:], fill, kept.dtype)
    return np.concatenate([kept, padding])


def _unique_sized(xp, x):
    """unique(x, size=4) filled (as jitflow's default) with the smallest value."""
    if xp is not np:
        return xp.unique(x, size=4)
    values = np.unique(x)
    fill = values[0] if values.size else np.zeros((), values.dtype)
    return np.concatenate([values[:4], np.full(max(0, 4 - values.size), fill,
                                               values.dtype)])


def _set_sized(name, size=3):
    """jitflow's set function `name`(x, y, size=) and NumPy's result cut to `size` or
    filled past its count with its first value (0 if empty), as jitflow's is."""
    def call(xp, *arrays):
        if xp is not np:
            return getattr(xp, name)(*arrays, size=size)
        result = getattr(np, name)(*arrays)
        fill = result[0] if result.size else np.zeros((), result.dtype)
        return np.concatenate([result[:size], np.full(max(0, size - result.size), fill,
                                                      result.dtype)])
    return call


def _unique_counts_sized(xp, x):
    """The counts of unique_counts(x, size=4): 0 past the count of values."""
    if xp is not np:
        return xp.unique_counts(x, size=4).counts
    counts = np.unique_counts(x).counts
    return np.concatenate([counts[:4], np.zeros(max(0, 4 - counts.size), counts.dtype)])


def _small_indices(xp, x, n):
    """Integers in [0, n) made from x (floats by comparisons, as their casts of NaN and
    infinities are not NumPy's to define)."""
    if x.dtype.kind == "f":
        return (x > 0).astype(np.int64) + (x > 1)
    return x.astype(np.int64) % n


def _trimmed_sized(xp, x):
    """trim_zeros of x flattened, held to 4 elements (filled with 0) as jitflow's
    size=4 is when traced."""
    if xp is not np:
        return xp.trim_zeros(xp.ravel(x), size=4)
    kept = np.trim_zeros(np.ravel(x))[:4]
    return np.concatenate([kept, np.zeros(4 - kept.size, kept.dtype)])


def _quotient(xp, x, y):
    """polydiv's quotient of x and y flattened (traced: the remainder untrimmed)."""
    u, v = xp.ravel(x), xp.ravel(y)
    return np.polydiv(u, v)[0] if xp is np else xp.polydiv(u, v,
                                                           trim_leading_zeros=False)[0]


def _histogram2d(xp, x, y):
    x, y = (xp.ravel(v) for v in xp.broadcast_arrays(x, y))
    return xp.histogram2d(x, y, 3, [(-2, 2), (-1, 3)])[0]


def _small_counts(xp, x):
    """bincount of small non-negative integers made from x (length known: 5)."""
    v = xp.ravel(x)
    if v.dtype.kind == "f":
        v = (v > 0).astype(np.int64) + (v > 1)
    else:
        v = v.astype(np.int64) % 5
    return xp.bincount(v, minlength=5) if xp is np else xp.bincount(v, length=5)


def _frexp_parts(xp, x):
    """mantissa times exponent (exact: few bits each). NumPy's frexp of bools has a
    float16 mantissa, which jitflow refuses: bools are taken as float32."""
    mantissa, exponent = xp.frexp(x.astype(np.float32) if x.dtype == np.bool_ else x)
    return mantissa * exponent


REDUCEAT_INDICES = (0, 0, 2, 1)  # repeated and decreasing


def reduceat_indices(length):
    """The indices the reduceat steps use along an axis of `length`."""
    return [i for i in REDUCEAT_INDICES if i < length]


def _reduceat(ufunc):
    """ufunc.reduceat along the last axis at repeated and decreasing indices."""
    def reduce(xp, x):
        x = xp.reshape(x, (1,)) if x.ndim == 0 else x
        return ufunc.reduceat(x, reduceat_indices(x.shape[-1]), axis=-1)
    return reduce


# jitflow/numpy/selecting.py, uniques.py, binning.py, membership.py, integer_ufuncs.py
UNARY.update({
    "flatnonzero_sized": lambda xp, x: _sized(xp, "flatnonzero", x, 4, -1),
    "nonzero_sized": lambda xp, x: _sized(xp, "nonzero", x, 3, 7),
    "argwhere_sized": lambda xp, x: _sized(xp, "argwhere", x, 3, 0),
    "extract_sized": lambda xp, x: _sized(xp, "extract", x, 3, 0, arr=x),
    "unique_sized": _unique_sized,
    "unique_counts_sized": _unique_counts_sized,
    # jitflow/numpy/bits.py, selecting.py, special.py (windows), binning.py
    "packbits": lambda xp, x: xp.packbits(x > 0, axis=-1, bitorder="little"),
    "unpackbits": lambda xp, x: xp.unpackbits(xp.packbits(x > 0, axis=-1), axis=-1,
                                              count=-3),
    "trim_zeros_sized": _trimmed_sized,
    "times_hanning": lambda xp, x: x * xp.hanning(x.shape[-1] if x.ndim else 1),
    "histogram_bin_edges": lambda xp, x: xp.histogram_bin_edges(x, 3, range=(-1, 2)),
    # jitflow/numpy/dtype_queries.py: NumPy's answers about what a traced value stands for
    "cast_if_safe": lambda xp, x: x.astype(np.float32) if xp.can_cast(x, np.float32)
    else x,
    "astype_common_type": lambda xp, x: x.astype(xp.common_type(x)),
    # jitflow/numpy/flat_indices.py, index_grids.py (out of range: ValueError at run time)
    "unravel_index": lambda xp, x: xp.unravel_index(x, (2, 3))[0],
    "unravel_index_in_range": lambda xp, x: xp.unravel_index(_small_indices(xp, x, 24),
                                                             (2, 3, 4), order="F")[1],
    "add_indices": lambda xp, x: x + xp.sum(xp.indices(x.shape, np.int8), axis=0),
    "fromfunction": lambda xp, x: xp.fromfunction(lambda *i: sum(i, 0 * x), x.shape,
                                                  dtype=np.int16),
    "bincount_length": _small_counts,
    "digitize": lambda xp, x: xp.digitize(x, [-1.0, 0.0, 2.5]),
    "histogram_range": lambda xp, x: xp.histogram(x, 3, range=(-2, 2))[0],
    "interp": lambda xp, x: xp.interp(x, [-1.0, 0.0, 2.0], [0.5, -1.0, 3.0]),
    "frexp": _frexp_parts,
    "bitwise_count": lambda xp, x: xp.bitwise_count(x),
    "asarray_chkfinite": lambda xp, x: xp.asarray_chkfinite(x),
    "nanargmax_last": lambda xp, x: xp.nanargmax(x, axis=-1 if x.ndim else None),
    "nanargmin": lambda xp, x: xp.nanargmin(x),
    "add_reduceat": _reduceat(np.add),
    "maximum_reduceat": _reduceat(np.maximum),
})
BINARY.update({
    "isin": lambda xp, x, y: xp.isin(x, y),
    "intersect1d_sized": _set_sized("intersect1d"),
    "union1d_sized": _set_sized("union1d", 4),
    "setdiff1d_sized": _set_sized("setdiff1d"),
    "setxor1d_sized": _set_sized("setxor1d"),
    "ravel_multi_index": lambda xp, x, y: xp.ravel_multi_index((x, y), (3, 4)),
    "polydiv_quotient": _quotient,
    "histogram2d": _histogram2d,
    "ravel_multi_index_wrap": lambda xp, x, y: xp.ravel_multi_index(
        (x, y), (3, 4), mode=("wrap", "clip"), order="F"),
    "gcd": lambda xp, x, y: xp.gcd(x, y),
    "lcm": lambda xp, x, y: xp.lcm(x, y),
})

# NumPy's functions that write into their first argument (in_place.py), each into a
# copy, traced when an operand is.

def _put(xp, x):
    """np.put of x's own last values at a repeated and a negative flat index (the
    values cycle over the three indices)."""
    out = xp.where(True, x, x)
    if out.size == 0:
        return out
    np.put(out, [0, -1, 0], xp.ravel(x)[::-1][:2])
    return out


def _putmask(xp, x):
    """np.putmask of 2 x (cycled from a shorter array where x has more elements) where
    x < 1."""
    out = xp.where(True, x, x)
    if out.dtype == np.bool_:
        return out
    np.putmask(out, xp.asarray(x) < 1, xp.ravel(x * 2)[:3])
    return out


def _fill_diagonal(xp, x):
    """np.fill_diagonal of a 2-D copy with x's first row, wrapping on tall arrays."""
    out = xp.where(True, x, x)
    if out.ndim != 2 or out.size == 0:
        return out
    np.fill_diagonal(out, x[0], wrap=True)
    return out


def _copyto_where(xp, x, y):
    """np.copyto of y into x and y broadcast together, where x > 0."""
    out = xp.where(True, x, y)  # a copy of their broadcast shape and promoted dtype
    np.copyto(out, y, where=xp.asarray(x) > 0)
    return out


UNARY.update(put=_put, putmask=_putmask, fill_diagonal=_fill_diagonal)
BINARY["copyto_where"] = _copyto_where

TERNARY = {
    "clip": lambda xp, x, low, high: xp.clip(x, low, high),
    "where": lambda xp, c, x, y: xp.where(c, x, y),
}

REDUCTIONS = {
    "sum": lambda xp, x, axis, keepdims: x.sum(axis=axis, keepdims=keepdims),
    "mean": lambda xp, x, axis, keepdims: xp.mean(x, axis=axis, keepdims=keepdims),
    "max": lambda xp, x, axis, keepdims: xp.max(x, axis=axis, keepdims=keepdims),
    "min": lambda xp, x, axis, keepdims: x.min(axis=axis, keepdims=keepdims),
    "prod": lambda xp, x, axis, keepdims: xp.prod(x, axis=axis, keepdims=keepdims),
    "any": lambda xp, x, axis, keepdims: xp.any(x, axis=axis, keepdims=keepdims),
    "all": lambda xp, x, axis, keepdims: xp.all(x, axis=axis, keepdims=keepdims),
    # jitflow/numpy/statistics.py, linalg.py
    "nansum": lambda xp, x, axis, keepdims: xp.nansum(x, axis=axis, keepdims=keepdims),
    "nanprod": lambda xp, x, axis, keepdims: xp.nanprod(x, axis=axis, keepdims=keepdims),
    "nanmean": lambda xp, x, axis, keepdims: xp.nanmean(x, axis=axis, keepdims=keepdims),
    "nanmax": lambda xp, x, axis, keepdims: xp.nanmax(x, axis=axis, keepdims=keepdims),
    "nanmin": lambda xp, x, axis, keepdims: xp.nanmin(x, axis=axis, keepdims=keepdims),
    "ptp": lambda xp, x, axis, keepdims: xp.ptp(x, axis=axis, keepdims=keepdims),
    # jitflow/numpy/quantiles.py
    "median": lambda xp, x, axis, keepdims: xp.median(x, axis=axis, keepdims=keepdims),
    "nanmedian": lambda xp, x, axis, keepdims: xp.nanmedian(x, axis=axis,
                                                            keepdims=keepdims),
    "quantile": lambda xp, x, axis, keepdims: xp.quantile(x, [0.3, 0.75], axis=axis,
                                                          keepdims=keepdims),
    "percentile_nearest": lambda xp, x, axis, keepdims: xp.percentile(
        x, 40, axis=axis, keepdims=keepdims, method="nearest"),
    # weights 0, 1, 2, 0, ... (all zero for one element: NumPy's ValueError)
    "quantile_weighted": lambda xp, x, axis, keepdims: xp.quantile(
        x, [0.0, 0.3, 1.0], axis=axis, keepdims=keepdims, method="inverted_cdf",
        weights=np.arange(np.size(x)).reshape(np.shape(x)) % 3),
    "nanquantile_weighted": lambda xp, x, axis, keepdims: xp.nanquantile(
        x, [0.0, 0.6, 1.0], axis=axis, keepdims=keepdims, method="inverted_cdf",
        weights=np.arange(np.size(x)).reshape(np.shape(x)) % 3),
    "average": lambda xp, x, axis, keepdims: xp.average(x, axis=axis, keepdims=keepdims),
    # (of all the elements, a Python int, weakly typed: made an array as NumPy's runs
    # make every value, so that later steps promote alike)
    "count_nonzero": lambda xp, x, axis, keepdims: xp.asarray(xp.count_nonzero(
        x, axis=axis, keepdims=keepdims)),
}

# Reductions over one axis (or all of them).
SINGLE_AXIS = {
    "argmax": lambda xp, x, axis: xp.argmax(x, axis=axis),
    "argmin": lambda xp, x, axis: x.argmin(axis=axis),
    "cumsum": lambda xp, x, axis: xp.cumsum(x, axis=axis),
    "cumprod": lambda xp, x, axis: xp.cumprod(x, axis=axis),
    "nancumsum": lambda xp, x, axis: xp.nancumsum(x, axis=axis),
    # (NumPy's default kind orders ties, -0.0 and 0.0, its own way: its stable sort)
    "sort": lambda xp, x, axis: xp.sort(x, axis=axis, kind="stable"),
    "argsort": lambda xp, x, axis: xp.argsort(x, axis=axis, kind="stable"),
    # jitflow/numpy/summing.py (cumulative_sum of more than one axis needs an axis)
    "cumulative_sum": lambda xp, x, axis: xp.cumulative_sum(x, axis=axis,
                                                            include_initial=True),
    "trapezoid": lambda xp, x, axis: xp.trapezoid(x, axis=-1 if axis is None else axis),
}

SHAPE_OPS = {
    "transpose": lambda xp, x, perm: xp.transpose(x, perm),
    "reshape": lambda xp, x, shape: x.reshape(shape),
    "ravel": lambda xp, x: xp.ravel(x),
    "broadcast_to": lambda xp, x, shape: xp.broadcast_to(x, shape),
    "slice": lambda xp, x, index: x[index],
    "expand_dims": lambda xp, x, axis: xp.expand_dims(x, axis),
    "squeeze": lambda xp, x, axis: xp.squeeze(x, axis),
    "swapaxes": lambda xp, x, a, b: xp.swapaxes(x, a, b),
    "moveaxis": lambda xp, x, a, b: xp.moveaxis(x, a, b),
    "pad": lambda xp, x, width, value: xp.pad(x, width, constant_values=value),
    "astype": lambda xp, x, dtype: x.astype(dtype),
    "concatenate": lambda xp, x, y, axis: xp.concatenate([x, y], axis=axis),
    "stack": lambda xp, x, y, axis: xp.stack([x, y], axis=axis),
    "matmul": lambda xp, x, y: x @ y,
    "matmul_bfloat16": lambda xp, x, y: _bfloat16_product(xp, xp.atleast_2d(x), y),
}


def _bfloat16_product(xp, x, y):
    """x (as float32) @ y, a float32 matrix, with matmul precision "bfloat16" (what a
    product traced under jitflow.config.matmul_precision = "bfloat16" is): the
    primitive itself, and its NumPy implementation as the reference."""
    x = x.astype(np.float32)
    if xp is np:
        return matmul_p.impl(x, y, precision="bfloat16")
    return bind(matmul_p, x, y, precision="bfloat16")

# Indices are constants of the program (NumPy arrays), as a user's code holds them.
INDEXING = {
    "take": lambda xp, x, indices, axis: xp.take(x, indices, axis=axis),
    "index_array": lambda xp, x, indices: x[indices],
    "index_array_axis1": lambda xp, x, indices: x[:, indices],
    "mask": lambda xp, x, mask: x[mask],
}

# Joining, splitting and rearranging (jitflow/numpy/stacking.py, rearranging.py).
REARRANGING = {
    "flip": lambda xp, x, axis: xp.flip(x, axis),
    "rot90": lambda xp, x, k, axes: xp.rot90(x, k, axes),
    "roll": lambda xp, x, shift, axis: xp.roll(x, shift, axis),
    "tile": lambda xp, x, reps: xp.tile(x, reps),
    "repeat": lambda xp, x, repeats, axis: xp.repeat(x, repeats, axis),
    "diff": lambda xp, x, n, axis: xp.diff(x, n, axis),
    "vstack": lambda xp, x, y: xp.vstack([x, y]),
    "hstack": lambda xp, x, y: xp.hstack([x, y]),
    "column_stack": lambda xp, x, y: xp.column_stack([x, y]),
    "split_piece": lambda xp, x, sections, axis, piece: xp.array_split(
        x, sections, axis)[piece],
    # jitflow/numpy/matrices.py, linalg.py
    "diagonal": lambda xp, x, offset: xp.diagonal(x, offset, -1, 0),
    "trace": lambda xp, x, offset: xp.trace(x, offset),
    "diag": lambda xp, x, k: xp.diag(x, k),
    "kron": lambda xp, x, y: xp.kron(x, y),
    "vecdot": lambda xp, x, y: xp.vecdot(x, y),
    "norm": lambda xp, x, ord, axis: xp.linalg.norm(x, ord, axis),
    "searchsorted": lambda xp, a, v, side: xp.searchsorted(a, v, side),
    "tril": lambda xp, x, k: xp.tril(x, k),
    "triu": lambda xp, x, k: xp.triu(x, k),
    "matrix_transpose": lambda xp, x: xp.matrix_transpose(x),
    "append": lambda xp, x, y: xp.append(x, y),
    # jitflow/numpy/editing.py, summing.py
    "delete": lambda xp, x, obj, axis: xp.delete(x, obj, axis),
    "insert": lambda xp, x, obj, value, axis: xp.insert(x, obj, value, axis),
    "vdot": lambda xp, x, y: xp.vdot(x, y),
    # jitflow/numpy/sorting.py (partition's other elements are in no set order)
    "partition_kth": lambda xp, x, kth, axis:
    xp.take(xp.partition(x, kth, axis=axis), kth, axis=axis),
    "lexsort": lambda xp, x, y: xp.lexsort((y, x)),
}

CONSTANT = {"constant": lambda xp, c: xp.asarray(c)}

OPS = {**UNARY, **BINARY, **TERNARY, **REDUCTIONS, **SINGLE_AXIS, **SHAPE_OPS,
       **INDEXING, **REARRANGING, **CONSTANT}

TRANSCENDENTAL = {"exp", "log", "tanh", "sin", "arctan", "arcsin", "arccos", "arctan2", "cbrt",
                  "exp2", "sinh", "cosh", "arcsinh", "sinc",
                  "arccosh", "arctanh", "logaddexp", "logaddexp2", "hypot", "float_power"}
# NumPy's fmax and fmin keep the first of 0.0 and -0.0 on one element, the second on
# arrays (its vector loop); jitflow keeps the second.
# (the sorted ones, unique and the set functions: which zero NumPy's sort keeps)
# (the order statistics too: NumPy selects with introselect, which is not stable, so
# which of a tied -0.0 and 0.0 it takes is its algorithm's choice; found by the fuzzer:
# the 40th percentile, nearest, of [-0.0, 0.0, 1.0, -1.0] is 0.0 in NumPy)
OPEN_ZERO_SIGN = {"max", "min", "clip", "fmax", "fmin", "nanmax", "nanmin", "ptp",
                  "maximum_reduceat", "unique_sized", "intersect1d_sized",
                  "union1d_sized", "setdiff1d_sized", "setxor1d_sized", "median",
                  "nanmedian", "quantile", "percentile_nearest", "quantile_weighted",
                  "nanquantile_weighted"}
SUMS = {"sum", "mean", "prod", "cumsum", "matmul", "matmul_bfloat16", "nansum", "nanprod",
        "nanmean", "average", "trace", "vecdot", "norm", "add_at", "add_reduceat",
        "cumulative_sum", "trapezoid", "vdot", "convolve", "correlate_same"}
EXACT_EXPONENTS = {0, 1, 2, 0.0, 1.0, 2.0}  # x ** 2 is x * x, rounded once


# --- derivatives -------------------------------------------------------------------------

def _into_the_unit_interval(xp, x):
    """x / sqrt(4 + x^2): in (-1, 1), where arcsin, arccos and arctanh are smooth, and
    smooth itself. (x / (2 + |x|) was not: its second derivative jumps at 0, so central
    differences there are off by a multiple of the step, 8e-5 at the iterative ops'
    1e-4; found by the fuzzer.)"""
    return x / xp.sqrt(4.0 + x * x)


def _gram(xp, x):
    """x's last axis as vectors v (a 0-d x as one of length 1) made into v v^T + 3 I:
    symmetric, positive definite, its eigenvalues 3 and 3 + |v|^2, so the solvers and
    factorizations of numpy.linalg are smooth functions of x there."""
    v = x if x.ndim else xp.reshape(x, (1,))
    return xp.expand_dims(v, -1) * xp.expand_dims(v, -2) + 3.0 * xp.eye(v.shape[-1])


def _positive_diagonal(xp, r):
    """R of a QR with its rows signed so that its diagonal is positive: the one smooth
    choice. LAPACK's own signs jump where a column's part below the diagonal is exactly
    0 (it reflects nothing there), as at a diagonal gram matrix."""
    signs = xp.sign(xp.diagonal(r, axis1=-2, axis2=-1))
    return r * xp.expand_dims(signs, -1)


def _solve_gram(xp, x):
    v = x if x.ndim else xp.reshape(x, (1,))
    return xp.linalg.solve(_gram(xp, x), xp.expand_dims(v, -1))[..., 0]


def _fit_line(xp, x):
    """polyfit of x flattened against as many points evenly spread over [-1, 1], of
    degree up to 2 (a well-conditioned least-squares problem)."""
    y = xp.ravel(x)
    n = y.shape[0]
    return xp.polyfit(np.linspace(-1.0, 1.0, n), y, min(2, n - 1))


SMOOTH_UNARY = {
    "negative": lambda xp, x: -x,
    "tanh": lambda xp, x: xp.tanh(x),
    "sin": lambda xp, x: xp.sin(x),
    "square": lambda xp, x: x * x,
    "cube": lambda xp, x: x ** 3,
    "bounded": lambda xp, x: x / (1.0 + x * x),
    "hypot_one": lambda xp, x: xp.sqrt(1.0 + x * x),
    "exp_tanh": lambda xp, x: xp.exp(xp.tanh(x)),
    "sinh": lambda xp, x: xp.sinh(x),
    "cosh": lambda xp, x: xp.cosh(x),
    "arcsinh": lambda xp, x: xp.arcsinh(x),
    "exp2": lambda xp, x: xp.exp2(x),
    "arctanh_bounded": lambda xp, x: xp.arctanh(_into_the_unit_interval(xp, x)),
    "arccosh_shifted": lambda xp, x: xp.arccosh(1.5 + x * x),
    "arctan": lambda xp, x: xp.arctan(x),
    "cbrt_shifted": lambda xp, x: xp.cbrt(1.5 + x * x),
    "arcsin_bounded": lambda xp, x: xp.arcsin(_into_the_unit_interval(xp, x)),
    "arccos_bounded": lambda xp, x: xp.arccos(_into_the_unit_interval(xp, x)),
    "sinc": lambda xp, x: xp.sinc(x),
    # numpy.linalg (jitflow/numpy/decompositions.py: LAPACK in native code)
    "solve_gram": _solve_gram,
    "inv_gram": lambda xp, x: xp.linalg.inv(_gram(xp, x)),
    "det_gram": lambda xp, x: xp.linalg.det(_gram(xp, x)),
    "slogdet_gram": lambda xp, x: xp.linalg.slogdet(_gram(xp, x))[1],
    "cholesky_gram": lambda xp, x: xp.linalg.cholesky(_gram(xp, x)),
    "qr_r_gram": lambda xp, x: _positive_diagonal(xp, xp.linalg.qr(_gram(xp, x), mode="r")),
    "pinv_gram": lambda xp, x: xp.linalg.pinv(_gram(xp, x)),
    # (the largest eigenvalue, 3 + |v|^2, the one not repeated)
    "eigvalsh_top_gram": lambda xp, x: xp.linalg.eigvalsh(_gram(xp, x))[..., -1],
    "matrix_power_gram": lambda xp, x: xp.linalg.matrix_power(_gram(xp, x) / 4.0, -2),
    # (the characteristic polynomial, through the eigenvalues, 3 repeated among them)
    "poly_gram": lambda xp, x: xp.poly(_gram(xp, xp.ravel(x))),
    "polyfit": _fit_line,
    "add_reduceat": _reduceat(np.add),
    "put": _put,
    "fill_diagonal": _fill_diagonal,
}

SMOOTH_BINARY = {
    "add": lambda xp, x, y: x + y,
    "subtract": lambda xp, x, y: x - y,
    "multiply": lambda xp, x, y: x * y,
    "divide_positive": lambda xp, x, y: x / (1.5 + y * y),
    "where": lambda xp, x, y, mask: xp.where(mask, x, y),
    "logaddexp": lambda xp, x, y: xp.logaddexp(x, y),
    "logaddexp2": lambda xp, x, y: xp.logaddexp2(x, y),
}

# Derivatives with a kink (at ties, at 0, at the bounds): compiled gradients must still
# be the eager ones, but central differences do not check them there.
KINKED_UNARY = {
    "abs": lambda xp, x: xp.abs(x),
    "relu": lambda xp, x: xp.maximum(x, 0.0),
    "clip": lambda xp, x: xp.clip(x, -1.0, 1.0),
    "leaky_relu": lambda xp, x: xp.where(x > 0, x, 0.5 * x),
    "plus_floor": lambda xp, x: x + xp.floor(x),
    "abs_power": lambda xp, x: xp.abs(x) ** 1.5,
    "through_float32": lambda xp, x: x.astype(np.float32).astype(np.float64),
    "fabs": lambda xp, x: xp.fabs(x),
    "extract_sized": lambda xp, x: _sized(xp, "extract", x > 0, 3, 0.5, arr=x),
    "interp": lambda xp, x: xp.interp(x, [-1.0, 0.0, 2.0], [0.5, -1.0, 3.0]),
}
KINKED_BINARY = {
    "maximum": lambda xp, x, y: xp.maximum(x, y),
    "minimum": lambda xp, x, y: xp.minimum(x, y),
    "where_greater": lambda xp, x, y: xp.where(x > y, x, y),
    "masked_update": _masked_update,
    "copyto_where": _copyto_where,
    "fmax": lambda xp, x, y: xp.fmax(x, y),
    "fmin": lambda xp, x, y: xp.fmin(x, y),
    "hypot": lambda xp, x, y: xp.hypot(x, y),
    "arctan2": lambda xp, x, y: xp.arctan2(x, y),  # jumps by 2 pi across y = 0, x < 0
}
KINKED = {*KINKED_UNARY, *KINKED_BINARY, "max", "min", "ptp", "norm", "sort", "median",
          "quantile", "partition_kth"}  # (sorting ones: a kink where values tie)

DIFFERENTIABLE_UNARY = {**SMOOTH_UNARY, **KINKED_UNARY}
DIFFERENTIABLE_BINARY = {**SMOOTH_BINARY, **KINKED_BINARY}
GRAD_OPS = {**DIFFERENTIABLE_UNARY, **DIFFERENTIABLE_BINARY,
            **{k: OPS[k] for k in ("sum", "mean", "max", "min", "prod", "transpose",
                                   "reshape", "slice", "broadcast_to", "take",
                                   "index_array", "index_array_axis1", "mask",
                                   "concatenate", "stack", "matmul", "pad", "expand_dims",
                                   "cumsum", "nansum", "nanmean", "average", "ptp",
                                   "sort", "median", "quantile",
                                   *[k for k in REARRANGING if k not in ("searchsorted",
                                                                       "lexsort")])}}
