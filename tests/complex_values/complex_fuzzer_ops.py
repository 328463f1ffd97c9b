"""The complex fuzzer's operations (test_complex_fuzzer.py): each a function of
(xp, operands..., params) run with NumPy and with jitflow.numpy, grouped by how their
results are compared, and the sets that say how each is rounded."""
import numpy as np

from fuzzer_ops import _quotient, _sized


def _unique_sized(xp, x, sorted_path):
    """unique(x, size=4) as jitflow gives it: NumPy's values cut to 4 or filled past
    their count with the smallest one. sorted_path: asked with its counts too, when
    NumPy sorts (and keeps another of the values holding a NaN than its hash table)."""
    if xp is not np:
        result = xp.unique(x, size=4, return_counts=sorted_path)
        return result[0] if sorted_path else result
    values = np.unique(x, return_counts=True)[0] if sorted_path else np.unique(x)
    fill = values[0] if values.size else np.zeros((), values.dtype)
    return np.concatenate([values[:4], np.full(max(0, 4 - values.size), fill,
                                               values.dtype)])


def _set_sized(name):
    """jitflow's set function `name`(x, y, size=4), NumPy's cut or filled past its
    count with its first value (0 if empty), as jitflow's is."""
    def call(xp, x, y):
        if xp is not np:
            return getattr(xp, name)(x, y, size=4)
        values = getattr(np, name)(x, y)
        fill = values[0] if values.size else np.zeros((), values.dtype)
        return np.concatenate([values[:4], np.full(max(0, 4 - values.size), fill,
                                                   values.dtype)])
    return call


EXACT_OPS = {
    "add": lambda xp, x, y: x + y,
    "subtract": lambda xp, x, y: xp.subtract(x, y),
    "equal": lambda xp, x, y: x == y,
    "not_equal": lambda xp, x, y: xp.not_equal(x, y),
    "negative": lambda xp, x: -x,
    "conj": lambda xp, x: xp.conj(x),
    "conj_method": lambda xp, x: x.conj(),
    "asarray_chkfinite": lambda xp, x: xp.asarray_chkfinite(x),
    "real": lambda xp, x: xp.real(x),
    "imag_attribute": lambda xp, x: x.imag,
    "isnan": lambda xp, x: xp.isnan(x),
    "isinf": lambda xp, x: xp.isinf(x),
    "isfinite": lambda xp, x: xp.isfinite(x),
    "logical_xor": lambda xp, x, y: xp.logical_xor(x, y),  # true where a part is nonzero
    "rint": lambda xp, x: xp.rint(x),
    "where": lambda xp, condition, x, y: xp.where(condition, x, y),
    "astype": lambda xp, x, dtype: x.astype(dtype),
    "reshape": lambda xp, x, shape: xp.reshape(x, shape),
    "transpose": lambda xp, x, perm: xp.transpose(x, perm),
    "flip": lambda xp, x, axis: xp.flip(x, axis),
    "roll": lambda xp, x, shift, axis: xp.roll(x, shift, axis),
    "getitem": lambda xp, x, index: x[index],
    "take_along_first": lambda xp, x, indices: x[indices],
    "concatenate": lambda xp, x, y, axis: xp.concatenate([x, y], axis=axis),
    "stack": lambda xp, x, y, axis: xp.stack([x, y], axis=axis),
    # NumPy's order of complex numbers (real part, then imaginary part; NaN apart)
    "less": lambda xp, x, y: x < y,
    "greater_equal": lambda xp, x, y: xp.greater_equal(x, y),
    **{name: (lambda name: lambda xp, x, y: getattr(xp, name)(x, y))(name)
       for name in ("maximum", "minimum", "fmax", "fmin")},
    "max": lambda xp, x, axis, keepdims: xp.max(x, axis=axis, keepdims=keepdims),
    "argmin": lambda xp, x, axis: xp.argmin(x, axis=axis),
    **{name: (lambda name: lambda xp, x, axis, keepdims:
              getattr(xp, name)(x, axis=axis, keepdims=keepdims))(name)
       for name in ("nanmax", "nanmin", "ptp")},
    "clip": lambda xp, x, low, high: xp.clip(x, low, high),
    "isin": lambda xp, x, y: xp.isin(x, y),
    "searchsorted": lambda xp, x, v, side:
    xp.searchsorted(xp.sort(xp.ravel(x)), v, side=side),
    "unique": _unique_sized,
    **{name: _set_sized(name) for name in ("union1d", "intersect1d", "setdiff1d",
                                           "setxor1d")},
    # elements moved, never computed: order statistics, sorting keys, selections
    # (traced ones sized, as tests/fuzzer_ops.py's), triangles
    "partition_kth": lambda xp, x, kth, axis:
    xp.take(xp.partition(x, kth, axis=axis), kth, axis=axis),
    "lexsort": lambda xp, x, y: xp.lexsort((y, x)),
    "nonzero_sized": lambda xp, x: _sized(xp, "nonzero", x, 3, 7),
    "flatnonzero_sized": lambda xp, x: _sized(xp, "flatnonzero", x, 4, -1),
    "extract_sized": lambda xp, x: _sized(xp, "extract", x != 0, 3, 0, arr=x),
    "compress": lambda xp, x, condition, axis: xp.compress(condition, x, axis=axis),
    "unstack_last": lambda xp, x, axis: xp.unstack(x, axis=axis)[-1],
    **{name: (lambda name: lambda xp, x, k: getattr(xp, name)(x, k))(name)
       for name in ("tril", "triu", "diagflat")},
}
EXTREMES = ["max", "nanmax", "nanmin", "ptp"]
ORDERED_BINARY = ["less", "greater_equal", "maximum", "minimum", "fmax", "fmin"]

# Elementwise steps NumPy rounds its own way: a multiply (and so square and powers) is
# not the plain formula in NumPy's loops; exp, abs and angle are transcendental.
ELEMENTWISE_OPS = {
    "multiply": lambda xp, x, y: x * y,
    "divide": lambda xp, x, y: x / y,
    "square": lambda xp, x: xp.square(x),
    "power": lambda xp, x, n: xp.power(x, n),
    # ndarray's ** takes np.reciprocal for n = -1, np.square for 2, where np.power's
    # loop multiplies 1 * z first: (inf + 3j) ** -1 is 0-0j but np.power(inf + 3j, -1)
    # nan+nanj. jitflow computes np.power's for both, so the operator is drawn with
    # other exponents only (and 2, whose square differs where it overflows alone).
    "power_operator": lambda xp, x, n: x ** n,
    "exp": lambda xp, x: xp.exp(x),
    "abs": lambda xp, x: xp.abs(x),
    "angle": lambda xp, x, deg: xp.angle(x, deg=deg),
}
# C99's functions (glibc's in NumPy): their special values are compared exactly, and
# their ordinary ones relative to the result's magnitude (`_elementary_scale`).
INVERSE = {"arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"}
ELEMENTARY = {"sqrt", "log", "log2", "log10", "log1p", "expm1", "exp2", "sin", "cos",
              "tan", "sinh", "cosh", "tanh", "reciprocal", "sign", *INVERSE}
ELEMENTWISE_OPS.update({name: (lambda name: lambda xp, x: getattr(xp, name)(x))(name)
                        for name in sorted(ELEMENTARY)})

SUM_OPS = {
    "sum": lambda xp, x, axis, keepdims: x.sum(axis=axis, keepdims=keepdims),
    "mean": lambda xp, x, axis, keepdims: xp.mean(x, axis=axis, keepdims=keepdims),
    "cumsum": lambda xp, x, axis: xp.cumsum(x, axis=axis),
    "nancumsum": lambda xp, x, axis: xp.nancumsum(x, axis=axis),
    "cumprod": lambda xp, x, axis: xp.cumprod(x, axis=axis),
    "nanmean": lambda xp, x, axis, keepdims: xp.nanmean(x, axis=axis, keepdims=keepdims),
    "median": lambda xp, x, axis, keepdims: xp.median(x, axis=axis, keepdims=keepdims),
    "nanmedian": lambda xp, x, axis, keepdims: xp.nanmedian(x, axis=axis, keepdims=keepdims),
}

PRODUCT_OPS = {
    "matmul": lambda xp, x, y: x @ y,
    "dot": lambda xp, x, y: xp.dot(x, y),
    "outer": lambda xp, x, y: xp.outer(x, y),
    "vdot": lambda xp, x, y: xp.vdot(x, y),
}


def _one_d(name):
    return lambda xp, x, n, axis, norm: getattr(xp.fft, name)(x, n=n, axis=axis, norm=norm)


def _n_d(name):
    return lambda xp, x, s, axes, norm: getattr(xp.fft, name)(x, s=s, axes=axes, norm=norm)


# Transforms that take complex input, and those that take real input (rfft, ihfft).
FFT_OPS = {name: _one_d(name) for name in ("fft", "ifft", "irfft", "hfft", "rfft",
                                           "ihfft")}
FFT_OPS.update({name: _n_d(name) for name in ("fft2", "fftn", "irfftn", "rfftn")})
REAL_INPUT_FFTS = {"rfft", "ihfft", "rfftn"}
HALF_SPECTRUM_FFTS = {"irfft", "hfft", "irfftn"}  # (signals built by mirroring)



def _gram(xp, x):
    """x's last axis as vectors v made into v v^H + 3 I: Hermitian, positive definite,
    its eigenvalues 3 and 3 + |v|^2, so its condition number is at most 1 + |v|^2 / 3
    and numpy.linalg's functions of it are well defined."""
    outer = x[..., :, None] * xp.conj(x)[..., None, :]
    return outer + 3 * xp.eye(x.shape[-1])


# numpy.linalg of complex matrices (LAPACK's complex routines on both sides), on grams.
LINALG_OPS = {
    "det": lambda xp, x: xp.linalg.det(_gram(xp, x)),
    "slogdet_sign": lambda xp, x: xp.linalg.slogdet(_gram(xp, x))[0],
    "slogdet_log": lambda xp, x: xp.linalg.slogdet(_gram(xp, x))[1],
    "inv": lambda xp, x: xp.linalg.inv(_gram(xp, x)),
    "solve": lambda xp, x: xp.linalg.solve(_gram(xp, x), x[..., None])[..., 0],
    "eigvalsh": lambda xp, x: xp.linalg.eigvalsh(_gram(xp, x)),
    "cholesky": lambda xp, x: xp.linalg.cholesky(_gram(xp, x)),
    "svdvals": lambda xp, x: xp.linalg.svdvals(_gram(xp, x)),
    "norm_nuc": lambda xp, x: xp.linalg.norm(_gram(xp, x), "nuc"),
}



def fit_points(n):
    """n points evenly spread over [-1, 1], and the degree (up to 2) fitted to them:
    their Vandermonde matrix is well conditioned."""
    return np.linspace(-1.0, 1.0, n), min(2, n - 1)


def _fit(xp, x):
    """polyfit of x flattened against `fit_points`."""
    y = xp.ravel(x)
    points, degree = fit_points(y.shape[0])
    return xp.polyfit(points, y, degree)


# Polynomials: least squares through LAPACK's SVD, and division (`_quotient`).
POLYNOMIAL_OPS = {"polyfit": _fit, "polydiv_quotient": _quotient}

OPS = {**EXACT_OPS, **ELEMENTWISE_OPS, **SUM_OPS, **PRODUCT_OPS, **FFT_OPS, **LINALG_OPS,
       **POLYNOMIAL_OPS}
INEXACT = set(OPS) - set(EXACT_OPS)
# Where an operand holds inf or NaN, or the result overflows, these compare by class
# only (see `compare`). exp does not: NumPy's is C99's (glibc's cexp) in every loop,
# and jitflow's gives its special values part for part.
LOOSE_ON_NON_FINITE = {"multiply", "divide", "square", "power", "power_operator",
                       "cumprod"} | \
    set(PRODUCT_OPS) | set(FFT_OPS) | set(LINALG_OPS) | set(POLYNOMIAL_OPS)

# Steps whose results are sums (of products, of roots of unity times values): rounded
# and overflowing in an order of their own.
# (Not a division or negative power: their bounds overflow where the divisor is 0, and
# there NumPy's inf and NaN are compared.)
ROUNDED_SUMS = {"multiply", "square"} | set(SUM_OPS) | set(PRODUCT_OPS) | set(FFT_OPS) | \
    set(LINALG_OPS) | set(POLYNOMIAL_OPS)
