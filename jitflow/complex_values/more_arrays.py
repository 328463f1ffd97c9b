"""More of NumPy's functions of complex arrays, each built from the parts or from the
complex operations already here: truth tests (any, all, count_nonzero, isreal,
iscomplex, array_equal, isclose, allclose), rounding and nan_to_num (part by part, as
NumPy does), the split family, diff, append and nansum (part by part), and the
products einsum (one or two operands), convolve, correlate, polyval and average."""
import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from .arrays import _bilinear, conjugate_of
from .functions import IMPLEMENTATIONS, _complex, _named, as_complex
from .parts import parts_of, result_dtype


def _call(name, *args, **kwargs):
    return IMPLEMENTATIONS[name](*args, **kwargs)


# --- truth tests --------------------------------------------------------------------------

def _nonzero(z):
    z = as_complex(z)
    return jnp.logical_or(jnp.not_equal(z.real, 0), jnp.not_equal(z.imag, 0))


for _name in ("any", "all", "count_nonzero"):
    _named(_name)(lambda z, *args, _name=_name, **kwargs:
                  getattr(jnp, _name)(_nonzero(z), *args, **kwargs))


@_named("isreal")
def isreal(z):
    return jnp.equal(as_complex(z).imag, 0)


@_named("iscomplex")
def iscomplex(z):
    return jnp.not_equal(as_complex(z).imag, 0)


@_named("array_equal")
def array_equal(a1, a2, equal_nan=False):
    dtype, _ = result_dtype(a1, a2)
    a, b = as_complex(a1, dtype), as_complex(a2, dtype)
    if a.shape != b.shape:
        return False
    same = _call("equal", a, b)
    if equal_nan:
        same = jnp.logical_or(same, jnp.logical_and(_call("isnan", a), _call("isnan", b)))
    return jnp.all(same)


@_named("isclose")
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """NumPy's |a - b| <= atol + rtol |b| where b is finite, and a == b anywhere (so
    equal infinities are close); NaNs close to each other with equal_nan."""
    difference = _call("abs", _call("subtract", a, b))
    scale = jnp.add(atol, jnp.multiply(rtol, _call("abs", b)))
    close = jnp.logical_or(jnp.logical_and(jnp.less_equal(difference, scale),
                                           _call("isfinite", b)), _call("equal", a, b))
    if equal_nan:
        close = jnp.logical_or(close, jnp.logical_and(_call("isnan", a), _call("isnan", b)))
    return close


@_named("allclose")
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return jnp.all(isclose(a, b, rtol, atol, equal_nan))


# --- part by part -------------------------------------------------------------------------

def _each_part(function, name):
    def apply(z, *args, **kwargs):
        z = as_complex(z)
        return _complex(function(z.real, *args, **kwargs), function(z.imag, *args, **kwargs),
                        z.dtype, z.weak)
    _named(name)(apply)


for _name in ("round", "around", "nan_to_num", "rollaxis", "resize", "take_along_axis"):
    _each_part(getattr(jnp, _name), _name)


def _each_piece(function, name):
    """Functions returning a list of pieces of z (the split family)."""
    def apply(z, *args, **kwargs):
        z = as_complex(z)
        return [_complex(real, imag, z.dtype) for real, imag in
                zip(function(z.real, *args, **kwargs), function(z.imag, *args, **kwargs))]
    _named(name)(apply)


for _name in ("split", "array_split", "hsplit", "vsplit", "dsplit"):
    _each_piece(getattr(jnp, _name), _name)


@_named("diff")
def diff(a, n=1, axis=-1, prepend=None, append=None):
    """Differences of each part; prepend and append take the result's dtype first."""
    prepend, append = _strong(prepend), _strong(append)
    extra = [v for v in (prepend, append) if v is not None]
    dtype, _ = result_dtype(a, *extra)
    (ar, ai) = parts_of(a, dtype)
    ends = [(None, None) if v is None else parts_of(v, dtype) for v in (prepend, append)]
    real = jnp.diff(ar, n, axis, **_given(prepend=ends[0][0], append=ends[1][0]))
    imag = jnp.diff(ai, n, axis, **_given(prepend=ends[0][1], append=ends[1][1]))
    return _complex(real, imag, dtype)


def _strong(value):
    """NumPy's append and diff make arrays of Python numbers (and lists) first: they
    take part in the result's dtype as float64 or complex128 arrays, not weakly."""
    return np.asarray(value) if isinstance(value, (int, float, complex, list, tuple)) \
        else value


def _given(**kwargs):
    return {k: v for k, v in kwargs.items() if v is not None}


@_named("append")
def append(arr, values, axis=None):
    values = _strong(values)
    dtype, _ = result_dtype(arr, values)
    (ar, ai), (vr, vi) = parts_of(arr, dtype), parts_of(values, dtype)
    return _complex(jnp.append(ar, vr, axis), jnp.append(ai, vi, axis), dtype)


@_named("nansum")
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """The sum with NaN elements (a NaN in either part) taken as 0, as NumPy's."""
    z = as_complex(a)
    nan = _call("isnan", z)
    kept = _complex(jnp.where(nan, 0, z.real), jnp.where(nan, 0, z.imag), z.dtype)
    return _call("sum", kept, axis, dtype, out, keepdims, **kwargs)


# --- products -----------------------------------------------------------------------------

@_named("einsum")
def einsum(subscripts, *operands, **kwargs):
    """One operand: each part. Two: the four real contractions of their parts."""
    if not isinstance(subscripts, str) or len(operands) not in (1, 2):
        raise TypeError(at_user_line("jitflow.numpy.einsum of complex values takes a "
                                     "subscripts string and one or two operands"))
    if len(operands) == 1:
        z = as_complex(operands[0])
        return _complex(jnp.einsum(subscripts, z.real, **kwargs),
                        jnp.einsum(subscripts, z.imag, **kwargs), z.dtype)
    return IMPLEMENTATIONS["einsum.pair"](*operands, subscripts, **kwargs)


_bilinear(lambda a, b, subscripts, **kwargs: jnp.einsum(subscripts, a, b, **kwargs),
          "einsum.pair")
_bilinear(jnp.convolve, "convolve")
_bilinear(jnp.correlate, "correlate.plain")


@_named("correlate")
def correlate(a, v, mode="valid"):
    """NumPy's correlate conjugates its second operand."""
    dtype, _ = result_dtype(a, v)
    return _call("correlate.plain", a, conjugate_of(as_complex(v, dtype)), mode)


@_named("polyval")
def polyval(p, x):
    """Horner's rule, as NumPy's: y = y x + p[k] from y = zeros_like(x)."""
    coefficients = p if isinstance(p, (list, tuple)) else \
        [p[k] for k in range(jnp.shape(p)[0])]
    y = _call("zeros_like", x) if getattr(x, "_complex_parts", None) is not None else \
        jnp.zeros_like(x)
    for coefficient in coefficients:
        y = _call("add", _call("multiply", y, x), coefficient)
    return y


@_named("average")
def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """The mean, or sum(a w) / sum(w) (a complex division, as NumPy's)."""
    if returned:
        raise TypeError(at_user_line("jitflow.numpy.average of complex values: returned=True "
                                     "is not supported; sum the weights separately"))
    if weights is None:
        return _call("mean", a, axis, keepdims=keepdims)
    if axis is not None and jnp.ndim(weights) != jnp.ndim(a):
        weights = _along(weights, jnp.ndim(a), axis)
    return _call("divide", _sum(_call("multiply", a, weights), axis, keepdims),
                 _sum(jnp.broadcast_to(weights, jnp.shape(a)) if jnp.ndim(weights) else
                      weights, axis, keepdims))


def _sum(value, axis, keepdims):
    if getattr(value, "_complex_parts", None) is not None:
        return _call("sum", value, axis, keepdims=keepdims)
    return jnp.sum(value, axis=axis, keepdims=keepdims)


def _along(weights, ndim, axis):
    """1-d weights shaped to lie along `axis` of an ndim array."""
    shape = [1] * ndim
    shape[axis] = jnp.shape(weights)[0]
    return jnp.reshape(weights, shape)
