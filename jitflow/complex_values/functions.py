"""The NumPy functions jitflow computes on complex values, by name.

call(name, *args) runs one of them; a name not listed here raises TypeError naming
the function, so that no function made for real numbers is ever applied to complex
ones by accident (var, sort or max would give other answers than NumPy's).
"""
import warnings

import numpy as np

from .. import numpy as jnp
from .. import writes
from ..errors import at_user_line
from . import elementary, formulas, powers
from . import tracer
from .parts import is_complex, part_dtype, parts_of, result_dtype
from .tracer import ComplexTracer

IMPLEMENTATIONS = {}


def call(name, *args, **kwargs):
    implementation = IMPLEMENTATIONS.get(name)
    if implementation is None:
        raise TypeError(at_user_line(
            f"jitflow.numpy.{name} of complex values is not supported; on complex values "
            f"jitflow computes {', '.join(sorted(IMPLEMENTATIONS))}"))
    return implementation(*args, **kwargs)


def _named(*names):
    def register(fn):
        for name in names:
            IMPLEMENTATIONS[name] = fn
        return fn
    return register


def _complex(real, imag, dtype, weak=False):
    return ComplexTracer(real, imag, dtype, weak and np.ndim(real) == 0)


def as_complex(value, dtype=None):
    """`value` as a ComplexTracer (of `dtype`, or its own complex dtype)."""
    if dtype is None:
        dtype, weak = result_dtype(value)
    else:
        weak = False
    if getattr(value, "_complex_parts", None) is not None and value.dtype == dtype:
        return value
    return _complex(*parts_of(value, dtype), dtype, weak)


# --- elementwise --------------------------------------------------------------------------

def _unary(formula, names, real_result=False):
    def apply(z, out=None, where=True, **kwargs):
        _no_out(names[0], out, where, kwargs)
        z = as_complex(z)
        result = formula(z.real, z.imag)
        return result if real_result else _complex(*result, z.dtype, z.weak)
    _named(*names)(apply)


def _binary(formula, names, real_result=False):
    def apply(a, b, out=None, where=True, **kwargs):
        _no_out(names[0], out, where, kwargs)
        dtype, weak = result_dtype(a, b)
        result = formula(*parts_of(a, dtype), *parts_of(b, dtype))
        return result if real_result else _complex(*result, dtype, weak)
    _named(*names)(apply)


def _no_out(name, out, where, kwargs):
    if out is not None or where is not True or kwargs.get("dtype") is not None:
        raise TypeError(at_user_line(f"jitflow.numpy.{name} of complex values: out=, "
                                     f"where= and dtype= are not supported"))


_unary(formulas.negative, ("negative",))
_unary(formulas.reciprocal, ("reciprocal",))
_unary(formulas.sign, ("sign",))
_unary(lambda r, i: (writes.copy(r), writes.copy(i)), ("positive",))
_unary(lambda r, i: formulas.conjugate(writes.copy(r), i), ("conjugate", "conj"))
_unary(formulas.exp, ("exp",))
_unary(lambda r, i: formulas.multiply(r, i, r, i), ("square",))
for _name in ("sqrt", "log", "log10", "log2", "log1p", "expm1", "exp2", "sinh", "cosh",
              "tanh", "sin", "cos", "tan"):
    _unary(getattr(elementary, _name), (_name,))
_unary(formulas.absolute, ("absolute", "abs"), real_result=True)
_unary(formulas.isnan, ("isnan",), real_result=True)
_unary(formulas.isinf, ("isinf",), real_result=True)
_unary(formulas.isfinite, ("isfinite",), real_result=True)
_binary(formulas.add, ("add",))
_binary(formulas.subtract, ("subtract",))
_binary(formulas.multiply, ("multiply",))
_binary(formulas.divide, ("divide", "true_divide"))
_binary(formulas.equal, ("equal",), real_result=True)
_binary(formulas.not_equal, ("not_equal",), real_result=True)


@_named("real")
def real(z):
    return as_complex(z).real


@_named("imag")
def imag(z):
    return as_complex(z).imag


@_named("angle")
def angle(z, deg=False):
    z = as_complex(z)
    radians = formulas.angle(z.real, z.imag)
    return jnp.multiply(radians, 180 / np.pi) if deg else radians


@_named("ndim")
def ndim(z):
    return as_complex(z).ndim


@_named("shape")
def shape(z):
    return as_complex(z).shape


@_named("size")
def size(z, axis=None):
    z = as_complex(z)
    return z.size if axis is None else z.shape[axis]


@_named("iscomplexobj")
def iscomplexobj(z):
    return True


@_named("isrealobj")
def isrealobj(z):
    return False


_FAST_POWERS = {2: "square", -1: "reciprocal", 0.5: "sqrt"}


def operator_power(a, b):
    """a ** b: for the exponents 2, -1 and 0.5, NumPy's operator calls square,
    reciprocal and sqrt instead of power."""
    if isinstance(b, (int, float, np.integer, np.floating)) and not isinstance(b, bool) \
            and b in _FAST_POWERS and is_complex(a):
        return call(_FAST_POWERS[b], a)
    return call("power", a, b)


@_named("power")
def power(a, b, out=None, where=True):
    """NumPy's complex power: 1 for a zero exponent; for a zero base, 0 (a positive real
    exponent) or NaN; for a real integer exponent n, |n| < 100, NumPy's products
    (binary powering, 1/that for negative n); otherwise e^(b log a), as glibc's cpow."""
    _no_out("power", out, where, {})
    dtype, weak = result_dtype(a, b)
    (ar, ai), (br, bi) = parts_of(a, dtype), parts_of(b, dtype)
    return _complex(*powers.power(ar, ai, br, bi), dtype, weak)


# --- writes --------------------------------------------------------------------------------

def setitem(z, index, value):
    """z[index] = value, each part written as jitflow writes real arrays (views of z see
    it); the value cast to z's dtype as NumPy's assignment casts it."""
    real, imag = parts_of(value, z.dtype)
    writes.setitem(z.real, index, real)
    writes.setitem(z.imag, index, imag)


def inplace(name, z, other):
    """z <op>= other: the result written into z (NumPy's same-kind cast to z's dtype)."""
    result = call(name, z, other)
    if getattr(result, "_complex_parts", None) is None:
        raise TypeError(at_user_line(f"in-place {name} of a traced complex value: the result "
                                     f"is real, which cannot be written into it"))
    setitem(z, Ellipsis, result)
    return z


# --- conversions --------------------------------------------------------------------------

@_named("astype")
def astype(z, dtype, copy=True):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":  # (a new array, as NumPy's astype makes: writes leave z alone)
        z = as_complex(z, dtype)
        return _complex(writes.copy(z.real), writes.copy(z.imag), dtype)
    z = as_complex(z)
    if dtype == np.bool_:
        return formulas.not_equal(z.real, z.imag, 0, 0)
    warnings.warn("Casting complex values to real discards the imaginary part",
                  np.exceptions.ComplexWarning, stacklevel=3)
    return jnp.astype(z.real, dtype)


@_named("asarray", "array", "asanyarray")
def asarray(z, dtype=None, copy=None, **kwargs):
    return as_complex(z) if dtype is None else astype(z, dtype)


# --- partwise: shapes, indexing, sums -----------------------------------------------------

def _partwise(function, names):
    def apply(z, *args, **kwargs):
        z = as_complex(z)
        return _complex(function(z.real, *args, **kwargs),
                        function(z.imag, *args, **kwargs), z.dtype, z.weak)
    _named(*names)(apply)


for _name in ("reshape", "transpose", "ravel", "squeeze", "expand_dims", "broadcast_to",
              "swapaxes", "moveaxis", "flip", "fliplr", "flipud", "roll", "copy",
              "diagonal", "take", "repeat", "tile", "matrix_transpose", "triu", "tril",
              "atleast_1d", "atleast_2d", "atleast_3d", "trace", "cumsum", "rot90",
              "diag", "pad"):
    _partwise(getattr(jnp, _name), (_name,))
_partwise(lambda part, index: part[index], ("getitem",))
_partwise(jnp.fft.fftshift, ("fft.fftshift",))
_partwise(jnp.fft.ifftshift, ("fft.ifftshift",))


def _summed(function, name):
    def apply(z, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        _no_out(name, out, kwargs.pop("where", True), {})
        if kwargs:
            raise TypeError(at_user_line(f"jitflow.numpy.{name} of complex values: "
                                         f"{', '.join(kwargs)} not supported"))
        if dtype is not None and np.dtype(dtype).kind != "c":
            raise TypeError(at_user_line(f"jitflow.numpy.{name} of complex values with "
                                         f"the real dtype {np.dtype(dtype)}"))
        z = as_complex(z, None if dtype is None else np.dtype(dtype))
        return _complex(function(z.real, axis=axis, keepdims=keepdims),
                        function(z.imag, axis=axis, keepdims=keepdims), z.dtype)
    _named(name)(apply)


_summed(jnp.sum, "sum")
_summed(jnp.mean, "mean")


@_named("prod")
def prod(z, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """The product over `axis`, multiplied pairwise (halves, then halves of those): the
    same products as NumPy's up to the order of rounding."""
    _no_out("prod", out, kwargs.pop("where", True), {})
    if kwargs or (dtype is not None and np.dtype(dtype).kind != "c"):
        raise TypeError(at_user_line("jitflow.numpy.prod of complex values: only axis=, "
                                     "keepdims= and a complex dtype= are supported"))
    z = as_complex(z, None if dtype is None else np.dtype(dtype))
    axes = tuple(range(z.ndim)) if axis is None else \
        tuple(a % z.ndim for a in ((axis,) if isinstance(axis, int) else axis))
    kept = [a for a in range(z.ndim) if a not in axes]
    moved = [jnp.transpose(p, kept + list(axes)) for p in (z.real, z.imag)]
    shape = tuple(z.shape[a] for a in kept)
    length = int(np.prod([z.shape[a] for a in axes], dtype=np.int64))
    real, imag = (jnp.reshape(p, shape + (length,)) for p in moved)
    real, imag = _product_of_last_axis(real, imag)
    if keepdims:
        full = tuple(1 if a in axes else z.shape[a] for a in range(z.ndim))
        real, imag = jnp.reshape(real, full), jnp.reshape(imag, full)
    return _complex(real, imag, z.dtype)


def _product_of_last_axis(real, imag):
    length = real.shape[-1]
    if length == 0:
        return (jnp.ones(real.shape[:-1], real.dtype),
                jnp.zeros(real.shape[:-1], real.dtype))
    if length == 1:  # (a new array, not a view of the operand)
        return writes.copy(real[..., 0]), writes.copy(imag[..., 0])
    even = length - length % 2
    half = even // 2
    paired = formulas.multiply(real[..., :half], imag[..., :half],
                               real[..., half:even], imag[..., half:even])
    result = _product_of_last_axis(*paired)
    if length % 2:
        result = formulas.multiply(*result, real[..., -1], imag[..., -1])
    return result


# --- statistics and norms: functions of |z| ------------------------------------------------

@_named("var")
def var(z, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """The mean of |z - mean z|^2: the real part's variance plus the imaginary part's
    (a real array, as NumPy's)."""
    _no_out("var", out, kwargs.pop("where", True), {})
    if kwargs or dtype is not None:
        raise TypeError(at_user_line("jitflow.numpy.var of complex values: only axis=, "
                                     "ddof= and keepdims= are supported"))
    z = as_complex(z)
    return jnp.add(jnp.var(z.real, axis=axis, ddof=ddof, keepdims=keepdims),
                   jnp.var(z.imag, axis=axis, ddof=ddof, keepdims=keepdims))


@_named("std")
def std(z, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    return jnp.sqrt(var(z, axis, dtype, out, ddof, keepdims, **kwargs))


@_named("linalg.norm")
def norm(z, ord=None, axis=None, keepdims=False):
    """Every norm that depends on the magnitudes alone (vector norms; a matrix's
    Frobenius, 1, -1, inf and -inf norms) is the real norm of |z|; the spectral and
    nuclear norms need a complex SVD, which jitflow does not compute."""
    z = as_complex(z)
    matrix = (axis is None and z.ndim == 2) or (isinstance(axis, tuple) and len(axis) == 2)
    if matrix and ord in (2, -2, "nuc"):
        raise TypeError(at_user_line(f"jitflow.numpy.linalg.norm(ord={ord!r}) of a complex "
                                     f"matrix needs its singular values, which jitflow does "
                                     f"not compute for complex matrices"))
    return jnp.linalg.norm(formulas.absolute(z.real, z.imag), ord, axis, keepdims)


# --- sorting: NumPy's order of complex numbers -------------------------------------------

def _lexicographic_order(z, axis):
    """Positions that sort z by real part, ties by imaginary part, in NumPy's order of
    the NaNs: every R + Rj first, then R + nanj, nan + Rj and nan + nanj."""
    nans = jnp.add(jnp.multiply(jnp.astype(jnp.isnan(z.real), np.int8), 2),
                   jnp.astype(jnp.isnan(z.imag), np.int8))
    return jnp.lexsort((z.imag, z.real, nans), axis=axis)


@_named("argsort")
def argsort(z, axis=-1, kind=None, order=None, *, stable=None):
    z = as_complex(z)
    if axis is None:
        z, axis = as_complex(jnp_ravel(z, z.dtype)), -1
    return _lexicographic_order(z, axis)


@_named("sort")
def sort(z, axis=-1, kind=None, order=None, *, stable=None):
    z = as_complex(z)
    if axis is None:
        z, axis = jnp_ravel(z, z.dtype), -1
    positions = _lexicographic_order(z, axis)
    return _complex(jnp.take_along_axis(z.real, positions, axis),
                    jnp.take_along_axis(z.imag, positions, axis), z.dtype)


@_named("sort_complex")
def sort_complex(a):
    """Sorted along the last axis, as complex numbers: a real input becomes complex128
    (complex64 from 8- and 16-bit integers), as NumPy's does."""
    if not is_complex(a):
        small = np.dtype(jnp.asarray(a).dtype).char in "bhBH"
        a = astype(a, np.complex64 if small else np.complex128)
    return sort(a)


def _joined(function, name):
    """concatenate, stack and their kind: every array in the complex dtype of all."""
    def apply(arrays, *args, **kwargs):
        arrays = list(arrays)
        dtype, _ = result_dtype(*arrays)
        parts = [parts_of(a, dtype) for a in arrays]
        return _complex(function([p[0] for p in parts], *args, **kwargs),
                        function([p[1] for p in parts], *args, **kwargs), dtype)
    _named(name)(apply)


for _name in ("concatenate", "stack", "hstack", "vstack", "column_stack", "dstack"):
    _joined(getattr(jnp, _name), _name)


@_named("where")
def where(condition, x=None, y=None):
    if x is None or y is None:
        raise TypeError(at_user_line("jitflow.numpy.where of a complex condition"))
    dtype, weak = result_dtype(x, y)
    (xr, xi), (yr, yi) = parts_of(x, dtype), parts_of(y, dtype)
    return _complex(jnp.where(condition, xr, yr), jnp.where(condition, xi, yi), dtype, weak)


# --- products -----------------------------------------------------------------------------

def _bilinear(function, name):
    """A product linear in each operand (matmul, dot, outer, ...): four real products, or
    two when an operand is real."""
    def apply(a, b, *args, **kwargs):
        dtype, _ = result_dtype(a, b)
        real = part_dtype(dtype)
        if not is_complex(a):
            (br, bi), a = parts_of(b, dtype), jnp.astype(a, real)
            return _complex(function(a, br, *args, **kwargs),
                            function(a, bi, *args, **kwargs), dtype)
        if not is_complex(b):
            (ar, ai), b = parts_of(a, dtype), jnp.astype(b, real)
            return _complex(function(ar, b, *args, **kwargs),
                            function(ai, b, *args, **kwargs), dtype)
        (ar, ai), (br, bi) = parts_of(a, dtype), parts_of(b, dtype)
        product = lambda x, y: function(x, y, *args, **kwargs)  # noqa: E731
        return _complex(jnp.subtract(product(ar, br), product(ai, bi)),
                        jnp.add(product(ar, bi), product(ai, br)), dtype)
    _named(name)(apply)


for _name in ("matmul", "dot", "outer", "inner", "tensordot", "kron"):
    _bilinear(getattr(jnp, _name), _name)


@_named("vdot")
def vdot(a, b):
    """The dot product of the flattened arrays, the first one conjugated."""
    dtype, _ = result_dtype(a, b)
    return IMPLEMENTATIONS["dot"](conjugate_of(jnp_ravel(a, dtype)), jnp_ravel(b, dtype))


def conjugate_of(z):
    return _complex(z.real, jnp.negative(z.imag), z.dtype)


def jnp_ravel(value, dtype):
    z = as_complex(value, dtype)
    return _complex(jnp.ravel(z.real), jnp.ravel(z.imag), dtype)


tracer.functions.call = call
tracer.functions.setitem = setitem
tracer.functions.inplace = inplace
tracer.functions.operator_power = operator_power
