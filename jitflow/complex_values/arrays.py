"""NumPy's functions of whole complex arrays: shapes and indexing (each part alike),
sums, products, statistics and norms, joining and choosing, matrix products, and
sorting in NumPy's order of complex numbers. Registered by name in functions.py's
table."""
import numpy as np

from .. import numpy as jnp
from .. import writes
from ..contract import as_array
from ..errors import at_user_line
from ..numpy.sorting import _partition_options
from . import formulas
from .functions import _complex, _named, _no_out, IMPLEMENTATIONS, as_complex, astype
from .parts import is_complex, part_dtype, parts_of, result_dtype


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


@_named("mean")
def mean(z, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """The sum divided by the count as NumPy divides it: a complex division by n + 0i,
    so that an infinite part makes the other one NaN (np.mean([-inf + 3j]) is
    -inf + nanj), and an empty mean is NaN in both parts."""
    total = IMPLEMENTATIONS["sum"](z, axis, dtype, out, keepdims, **kwargs)
    count = as_complex(z).size // total.size if total.size else 1
    count, zero = (np.asarray(c, total.real.dtype) for c in (count, 0))
    return _complex(*formulas.divide(total.real, total.imag, count, zero), total.dtype)


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


for _name in ("tril_indices_from", "triu_indices_from", "diag_indices_from"):
    _named(_name)(lambda arr, *args, _name=_name, **kwargs:
                  getattr(jnp, _name)(as_complex(arr).real, *args, **kwargs))


@_named("partition")
def partition(z, kth, axis=-1, kind="introselect", order=None):
    """Sorted, which partitions at every kth (as jitflow's real partition is)."""
    z = as_complex(z)
    _partition_options(z.real, kth, axis, kind, order)  # NumPy's checks of kth
    return sort(z, axis)


@_named("argpartition")
def argpartition(z, kth, axis=-1, kind="introselect", order=None):
    z = as_complex(z)
    _partition_options(z.real, kth, axis, kind, order)
    return argsort(z, axis)


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

def _array_operand(value):
    """An operand as NumPy's products see it: they make arrays of their operands, so
    that no Python scalar is weakly typed there (np.dot(complex64, 2j) is complex128)."""
    if getattr(value, "_complex_parts", None) is not None:
        return _complex(value.real, value.imag, value.dtype) if value.weak else value
    return as_array(value)


def _bilinear(function, name, summed=True):
    """A product linear in each operand (matmul, dot, outer, ...): four real products.
    Where the products are summed (matmul, dot: BLAS, whose zero signs and inf * 0 terms
    follow its own order), a real operand takes two; outer and kron are NumPy's
    elementwise complex multiplications, every term computed."""
    def apply(a, b, *args, **kwargs):
        a, b = _array_operand(a), _array_operand(b)
        dtype, _ = result_dtype(a, b)
        real = part_dtype(dtype)
        if summed and not is_complex(a):
            (br, bi), a = parts_of(b, dtype), jnp.astype(a, real)
            return _complex(function(a, br, *args, **kwargs),
                            function(a, bi, *args, **kwargs), dtype)
        if summed and not is_complex(b):
            (ar, ai), b = parts_of(a, dtype), jnp.astype(b, real)
            return _complex(function(ar, b, *args, **kwargs),
                            function(ai, b, *args, **kwargs), dtype)
        (ar, ai), (br, bi) = parts_of(a, dtype), parts_of(b, dtype)
        product = lambda x, y: function(x, y, *args, **kwargs)  # noqa: E731
        return _complex(jnp.subtract(product(ar, br), product(ai, bi)),
                        jnp.add(product(ar, bi), product(ai, br)), dtype)
    _named(name)(apply)


for _name in ("matmul", "dot", "inner", "tensordot"):
    _bilinear(getattr(jnp, _name), _name)
for _name in ("outer", "kron"):
    _bilinear(getattr(jnp, _name), _name, summed=False)


@_named("vdot")
def vdot(a, b):
    """The dot product of the flattened arrays, the first one conjugated."""
    a, b = _array_operand(a), _array_operand(b)
    dtype, _ = result_dtype(a, b)
    return IMPLEMENTATIONS["dot"](conjugate_of(jnp_ravel(a, dtype)), jnp_ravel(b, dtype))


def conjugate_of(z):
    return _complex(z.real, jnp.negative(z.imag), z.dtype)


def jnp_ravel(value, dtype):
    z = as_complex(value, dtype)
    return _complex(jnp.ravel(z.real), jnp.ravel(z.imag), dtype)


for _name in ("cross", "linalg.cross"):
    _bilinear(jnp.cross if _name == "cross" else jnp.linalg.cross, _name, summed=False)


@_named("linalg.matmul")
def linalg_matmul(x1, x2, /):
    return IMPLEMENTATIONS["matmul"](x1, x2)


@_named("linalg.tensordot")
def linalg_tensordot(x1, x2, /, *, axes=2):
    return IMPLEMENTATIONS["tensordot"](x1, x2, axes)


@_named("linalg.outer")
def linalg_outer(x1, x2, /):
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        raise ValueError(at_user_line(f"Input arrays must be one-dimensional, got "
                                      f"shapes {np.shape(x1)} and {np.shape(x2)}"))
    return IMPLEMENTATIONS["outer"](x1, x2)


@_named("linalg.matrix_transpose")
def linalg_matrix_transpose(x, /):
    return IMPLEMENTATIONS["matrix_transpose"](x)


@_named("linalg.diagonal")
def linalg_diagonal(x, /, *, offset=0):
    return IMPLEMENTATIONS["diagonal"](x, offset, -2, -1)


@_named("linalg.trace")
def linalg_trace(x, /, *, offset=0, dtype=None):
    """The sum of each matrix's diagonal (the last two axes), as NumPy's."""
    if dtype is not None and np.dtype(dtype).kind != "c":
        raise TypeError(at_user_line(f"jitflow.numpy.linalg.trace of complex values with "
                                     f"the real dtype {np.dtype(dtype)}"))
    z = as_complex(x, None if dtype is None else np.dtype(dtype))
    return _complex(jnp.linalg.trace(z.real, offset=offset),
                    jnp.linalg.trace(z.imag, offset=offset), z.dtype)


@_named("vecdot", "linalg.vecdot")
def vecdot(x1, x2, /, *, out=None, axes=None, axis=-1, dtype=None):
    """sum(conj(x1) * x2) along `axis`, the operands broadcast: NumPy's vecdot, which
    conjugates its first operand."""
    if out is not None or axes is not None or dtype is not None:
        raise TypeError(at_user_line("jitflow.numpy.vecdot of complex values: out=, axes= "
                                     "and dtype= are not supported"))
    x1, x2 = _array_operand(x1), _array_operand(x2)
    dtype, _ = result_dtype(x1, x2)
    x1, x2 = (IMPLEMENTATIONS["moveaxis"](as_complex(x, dtype), axis, -1) for x in (x1, x2))
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(at_user_line(f"vecdot: the vectors' lengths differ ({x1.shape[-1]} "
                                      f"and {x2.shape[-1]}) along axis {axis}"))
    product = IMPLEMENTATIONS["multiply"](conjugate_of(x1), x2)
    return IMPLEMENTATIONS["sum"](product, axis=-1)
