"""Diagonals, triangles and products of vectors and matrices: eye, identity, tri, tril,
triu, diagonal, diag, trace, kron, vecdot, matvec, vecmat, matrix_transpose.

diagonal gathers with constant indices (a read-only view in NumPy, refused for writes
here too); diag builds its matrix by selecting, kron by broadcasting a product; the
vector and matrix products are matmul with a unit axis.
"""
import numpy as _np

from .. import ops
from ..contract import matmul
from ..errors import at_user_line
from ..ir.types import normalize_axis
from ..ir.types import as_dtype
from ..trace import Tracer, aliases, is_tracing
from ._common import _dtype_of, _ndim, _no_out, _shape
from .creation import asarray
from .reductions import sum
from .shapes import moveaxis, swapaxes


def _from_mask(mask, dtype):
    """1 where `mask`, 0 elsewhere, in `dtype`: NumPy's array eagerly, a traced array
    (which writes may change) while tracing."""
    dtype = as_dtype(dtype, what="eye")
    if not is_tracing():
        return mask.astype(dtype)
    return ops.where(mask, _np.ones((), dtype), _np.zeros((), dtype))


def eye(N, M=None, k=0, dtype=float):
    return _from_mask(_np.eye(N, M, k, dtype=bool), dtype)


def identity(n, dtype=float):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=float):
    return _from_mask(_np.tri(N, M, k, dtype=bool), dtype)


def _triangle(name, keep_below):
    def function(m, k=0):
        m = asarray(m)
        if _ndim(m) == 0:
            raise TypeError(at_user_line(f"{name}: tri() missing 1 required positional "
                                         f"argument: 'N' (a 0-d input)"))
        # as NumPy: the mask of the last two axes (of a vector, a square one)
        below = _np.tri(*_shape(m)[-2:], k=int(k) - (0 if keep_below else 1), dtype=bool)
        return ops.where(below if keep_below else ~below, m,
                         _np.zeros((), _dtype_of(m)))
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"NumPy's {name}, on arrays and traced values."
    return function


tril = _triangle("tril", keep_below=True)
triu = _triangle("triu", keep_below=False)


def matrix_transpose(x, /):
    if _ndim(x) < 2:
        raise ValueError(at_user_line(f"Input array must be at least 2-dimensional, got "
                                      f"shape {_shape(x)}"))
    return swapaxes(x, -1, -2)


def _diagonal_indices(rows, columns, offset):
    """The (row, column) positions of the offset-th diagonal of a rows x columns matrix."""
    if offset >= 0:
        length = max(0, min(rows, columns - offset))
        return _np.arange(length), _np.arange(length) + offset
    length = max(0, min(rows + offset, columns))
    return _np.arange(length) - offset, _np.arange(length)


def diagonal(a, offset=0, axis1=0, axis2=1):
    a = asarray(a)
    ndim = _ndim(a)
    if ndim < 2:
        raise ValueError(at_user_line(f"diag requires an array of at least two "
                                      f"dimensions, got shape {_shape(a)}"))
    first = normalize_axis(axis1, ndim, what="axis1")
    second = normalize_axis(axis2, ndim, what="axis2")
    if first == second:
        raise ValueError(at_user_line("axis1 and axis2 cannot be the same"))
    offset = int(offset)

    def read(base):
        matrices = moveaxis(base, (first, second), (-2, -1))
        rows, columns = _diagonal_indices(*_shape(matrices)[-2:], offset)
        return matrices[..., rows, columns]
    result = read(a)
    if isinstance(result, Tracer):
        return aliases.readonly_view(a, result, read, "numpy.diagonal gives a read-only view")
    result.flags.writeable = False  # as NumPy's
    return result




def diag(v, k=0):
    v = asarray(v)
    if _ndim(v) == 2:
        return diagonal(v, k)
    if _ndim(v) != 1:
        raise ValueError(at_user_line(f"diag: Input must be 1- or 2-d, got shape "
                                      f"{_shape(v)}"))
    k = int(k)
    size = _shape(v)[0] + abs(k)
    rows, columns = _np.indices((size, size))
    # row i holds v[i] at column i + k (k >= 0); column j holds v[j] at row j - k
    padded = ops.pad(v, widths=[(0, abs(k))])
    spread = ops.reshape(padded, (size, 1) if k >= 0 else (1, size))
    zero = _np.zeros((), _dtype_of(v))
    return ops.where(columns - rows == k, spread, zero)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    _no_out("trace", out)
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def kron(a, b):
    a, b = asarray(a), asarray(b)
    ndim = max(_ndim(a), _ndim(b))
    shape_a = (1,) * (ndim - _ndim(a)) + tuple(_shape(a))
    shape_b = (1,) * (ndim - _ndim(b)) + tuple(_shape(b))
    # element (i, j) of each axis pair is a[i] * b[j]: interleave the axes, then join
    product = ops.multiply(ops.reshape(a, [d for s in shape_a for d in (s, 1)]),
                           ops.reshape(b, [d for s in shape_b for d in (1, s)]))
    return ops.reshape(product, [p * q for p, q in zip(shape_a, shape_b)])


def _no_axes(name, axes, axis):
    if axes is not None or axis is not None:
        raise NotImplementedError(at_user_line(
            f"jitflow.numpy.{name}: axes= and axis= are not supported; move the axes "
            f"first (jitflow.numpy.moveaxis)"))


def _vector_shape(name, x, least=1):
    if _ndim(x) < least:
        raise ValueError(at_user_line(f"{name}: Input operand does not have enough "
                                      f"dimensions (shape {_shape(x)})"))


def vecdot(x1, x2, /, *, out=None, axes=None, axis=None, dtype=None):
    """The dot product of the last axes, batched: sum(x1 * x2, axis=-1) for reals."""
    _no_out("vecdot", out)
    _no_axes("vecdot", axes, axis)
    x1, x2 = asarray(x1), asarray(x2)
    _vector_shape("vecdot", x1), _vector_shape("vecdot", x2)
    result = matmul(ops.reshape(x1, _shape(x1)[:-1] + (1, _shape(x1)[-1])),
                    ops.reshape(x2, _shape(x2) + (1,)))
    result = ops.reshape(result, _shape(result)[:-2])
    return result if dtype is None else ops.cast(result, dtype)


def matvec(x1, x2, /, *, out=None, axes=None, axis=None, dtype=None):
    """The product of matrices and vectors, batched."""
    _no_out("matvec", out)
    _no_axes("matvec", axes, axis)
    x1, x2 = asarray(x1), asarray(x2)
    _vector_shape("matvec", x1, 2), _vector_shape("matvec", x2)
    result = matmul(x1, ops.reshape(x2, _shape(x2) + (1,)))
    result = ops.reshape(result, _shape(result)[:-1])
    return result if dtype is None else ops.cast(result, dtype)


def vecmat(x1, x2, /, *, out=None, axes=None, axis=None, dtype=None):
    """The product of vectors and matrices, batched."""
    _no_out("vecmat", out)
    _no_axes("vecmat", axes, axis)
    x1, x2 = asarray(x1), asarray(x2)
    _vector_shape("vecmat", x1), _vector_shape("vecmat", x2, 2)
    result = matmul(ops.reshape(x1, _shape(x1)[:-1] + (1, _shape(x1)[-1])), x2)
    result = ops.reshape(result, _shape(result)[:-2] + _shape(result)[-1:])
    return result if dtype is None else ops.cast(result, dtype)


__all__ = ["diag", "diagonal", "eye", "identity", "kron", "matrix_transpose", "matvec", "trace", "tri", "tril", "triu", "vecdot", "vecmat"]
