"""jitflow.numpy.linalg: the norms (norm, vector_norm, matrix_norm) and cond, the
functions of numpy.linalg that are products or diagonals (matmul, outer, vecdot, trace,
diagonal), and the solvers and factorizations (decompositions.py).

Norms follow numpy.linalg.norm's recipe for each order: integers are computed in
float64, the 2-norm is the square root of a sum of squares (NumPy does not scale
against overflow either); the orders 2, -2 and 'nuc' of a matrix take its singular
values.
"""
import numpy as _np

from .. import contract
from ..errors import at_user_line
from ..ir.types import normalize_axis
from ._common import _dtype_of, _ndim, _shape
from .. import ops
from .creation import asarray, zeros
from .decompositions import *  # noqa: F401,F403
from .decompositions import __all__ as _decompositions
from .decompositions import _common_float, _stacked_matrices, inv, svd
from .elementwise import (absolute, astype, divide, isnan, multiply, not_equal, power,
                          sqrt, where)
from .assorted import cross as _cross
from .matrices import diagonal as _diagonal
from .matrices import matrix_transpose as _matrix_transpose
from .matrices import trace as _trace
from .matrices import vecdot as _vecdot
from .reductions import any as _any
from .reductions import max, min, sum
from .shapes import moveaxis, ravel, reshape


def _as_float(x):
    x = asarray(x)
    return x if _dtype_of(x).kind == "f" else astype(x, _np.float64)


def norm(x, ord=None, axis=None, keepdims=False):
    x = _as_float(x)
    ndim = _ndim(x)
    if axis is None:
        if ord is None or (ord in ("f", "fro") and ndim == 2) or (ord == 2 and ndim == 1):
            flat = ravel(x)  # the 2-norm of all the elements, whatever the dimensions
            result = sqrt(sum(multiply(flat, flat)))
            return reshape(result, (1,) * ndim) if keepdims else result
        axis = tuple(range(ndim))
    axes = tuple(normalize_axis(a, ndim) for a in
                 (axis if isinstance(axis, tuple) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError(at_user_line(f"Duplicate axes given: {axis!r}"))
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError(at_user_line(f"Improper number of dimensions to norm (shape "
                                  f"{_shape(x)}, axis {axis!r})."))


def _vector_norm(x, ord, axis, keepdims):
    if isinstance(ord, str):
        raise ValueError(at_user_line(f"Invalid norm order '{ord}' for vectors"))
    if ord is None or ord == 2:
        return sqrt(sum(multiply(x, x), axis=axis, keepdims=keepdims))
    if ord == _np.inf:
        return _largest(absolute(x), axis, keepdims)
    if ord == -_np.inf:
        return min(absolute(x), axis=axis, keepdims=keepdims)
    if ord == 0:  # the count of nonzero elements, in x's dtype
        return sum(astype(not_equal(x, 0), _dtype_of(x)), axis=axis, keepdims=keepdims)
    if ord == 1:
        return sum(absolute(x), axis=axis, keepdims=keepdims)
    # NumPy raises |x| to ord, sums, and raises to 1 / ord rounded in the sum's dtype
    total = sum(power(absolute(x), ord), axis=axis, keepdims=keepdims)
    return power(total, _np.reciprocal(_np.asarray(ord, dtype=_dtype_of(total))))


def _largest(magnitudes, axis, keepdims):
    """The max of non-negative values along `axis`, 0 when there are none (NumPy's
    max with initial=0)."""
    if _shape(magnitudes)[axis] == 0:
        shape = list(_shape(magnitudes))
        if keepdims:
            shape[axis] = 1
        else:
            del shape[axis]
        return zeros(shape, _dtype_of(magnitudes))
    return max(magnitudes, axis=axis, keepdims=keepdims)


def _matrix_norm(x, ord, axes, keepdims):
    rows, columns = axes
    if ord in (2, -2, "nuc"):
        result = _singular_value_norm(x, axes, ord)
    elif ord in (None, "fro", "f"):
        result = sqrt(sum(multiply(x, x), axis=axes))
    elif ord in (1, -1, _np.inf, -_np.inf):
        # 1: the largest column sum (rows summed first); inf: the largest row sum
        summed, kept = (rows, columns) if ord in (1, -1) else (columns, rows)
        sums = sum(absolute(x), axis=summed)
        kept = kept - 1 if kept > summed else kept
        result = _largest(sums, kept, False) if ord in (1, _np.inf) else \
            min(sums, axis=kept)
    else:
        raise ValueError(at_user_line(f"Invalid norm order for matrices ({ord!r})."))
    if keepdims:
        shape = list(_shape(x))
        shape[rows] = shape[columns] = 1
        result = reshape(result, shape)
    return result


def _singular_value_norm(x, axes, ord):
    """The largest (2), smallest (-2) or sum ('nuc') of the singular values."""
    s = svd(moveaxis(x, axes, (-2, -1)), compute_uv=False)
    reduce = {2: max, -2: min, "nuc": sum}[ord]
    return reduce(s, axis=-1)


def cond(x, p=None):
    x = asarray(x)
    if p is None or p == 2 or p == -2:
        s = svd(x, compute_uv=False)
        first, last = s[..., 0], s[..., -1]
        ratio = divide(last, first) if p == -2 else divide(first, last)
    else:
        _stacked_matrices("cond", x)
        (x,) = _common_float(x)
        ratio = multiply(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))
    # As NumPy: a NaN from a singular matrix is inf, unless x itself holds a NaN
    from_singular = ops.logical_and(isnan(ratio), ops.logical_not(
        _any(isnan(x), axis=(-2, -1))))
    return where(from_singular, _dtype_of(ratio).type(_np.inf), ratio)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    x = _as_float(x)
    if axis is None:
        result = norm(ravel(x), ord=ord)
        return reshape(result, (1,) * _ndim(x)) if keepdims else result
    if isinstance(axis, tuple) and len(axis) != 1:
        raise NotImplementedError(at_user_line(
            "jitflow.numpy.linalg.vector_norm: over several axes at once is not "
            "supported; reshape them into one first"))
    return norm(x, ord=ord, axis=axis, keepdims=keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def trace(x, /, *, offset=0, dtype=None):
    return _trace(x, offset, -2, -1, dtype=dtype)


def diagonal(x, /, *, offset=0):
    return _diagonal(x, offset, -2, -1)


def outer(x1, x2, /):
    if _ndim(x1) != 1 or _ndim(x2) != 1:
        raise ValueError(at_user_line(f"Input arrays must be one-dimensional, got "
                                      f"shapes {_shape(x1)} and {_shape(x2)}"))
    return contract.outer(x1, x2)


def vecdot(x1, x2, /, *, axis=-1):
    if axis != -1:
        raise NotImplementedError(at_user_line(
            "jitflow.numpy.linalg.vecdot: only axis=-1 is supported"))
    return _vecdot(x1, x2)


def matmul(x1, x2, /):
    return contract.matmul(x1, x2)


def tensordot(x1, x2, /, *, axes=2):
    return contract.tensordot(x1, x2, axes)


def matrix_transpose(x, /):
    return _matrix_transpose(x)


def cross(x1, x2, /, *, axis=-1):
    if _shape(x1)[axis] != 3 or _shape(x2)[axis] != 3:
        raise ValueError(at_user_line(
            f"Both input arrays must be (arrays of) 3-dimensional vectors, but they are "
            f"{_shape(x1)[axis]} and {_shape(x2)[axis]} dimensional instead."))
    return _cross(x1, x2, axis=axis)


__all__ = ["cond", "cross", "diagonal", "matmul", "matrix_transpose", "tensordot", "matrix_norm", "norm", "outer", "trace", "vecdot",
           "vector_norm", *_decompositions]
