"""numpy.linalg's functions of complex matrices that read singular values: svd and
svdvals (ops.complex_svd, LAPACK's gesdd), the norms of orders 2, -2 and 'nuc', cond,
matrix_rank, pinv and lstsq (NumPy's recipes over the SVD, as jitflow's real ones);
matrix_power and multi_dot, as chains of complex products in NumPy's order; and
tensorinv and tensorsolve, NumPy's reshapes around inv and solve.

(The real matrix [[ar, -ai], [ai, ar]] has the same singular values, each twice: its
SVD's derivatives would divide by the difference of two values equal but for
rounding, so it is not used here.)
"""
import operator
from collections import namedtuple

import numpy as np

from .. import numpy as jnp
from .. import ops
from ..errors import at_user_line
from ..numpy.decompositions import _inverted_above as inverted_above
from ..numpy.decompositions import _strongest as strongest
from ..numpy.decompositions import solvable_columns
from ..numpy.decompositions import (chained_product, inverted_tensor, max_side,
                                    power_by_squaring, rank_above_cutoff, solved_tensor)
from ..trace import Tracer
from . import arrays
from .functions import _complex, _named, as_complex, call
from .linalg import _complex_matrices, inv
from .parts import is_complex, part_dtype, result_dtype

SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])


def _stacked(a, name):
    a = as_complex(a)
    if a.ndim < 2:
        raise np.linalg.LinAlgError(at_user_line(
            f"{a.ndim}-dimensional array given. Array must be at least two-dimensional"))
    return a


@_named("linalg.svd")
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """hermitian is a hint NumPy uses to call eigh: the same singular values; the
    singular vectors' phases are LAPACK's choice either way."""
    a = _complex_matrices(a, "svd") if hermitian else _stacked(a, "svd")
    if not compute_uv:
        return ops.complex_svd(a.real, a.imag, compute_uv=False)[0]
    ur, ui, s, vhr, vhi = ops.complex_svd(a.real, a.imag, full_matrices=full_matrices)
    return SVDResult(_complex(ur, ui, a.dtype), s, _complex(vhr, vhi, a.dtype))


@_named("linalg.svdvals")
def svdvals(x, /):
    return svd(x, compute_uv=False)


@_named("linalg.norm")
def norm(x, ord=None, axis=None, keepdims=False):
    """The spectral (2), smallest-singular-value (-2) and nuclear norms of complex
    matrices from their singular values; every other norm from the magnitudes."""
    z = as_complex(x)
    matrix = (axis is None and z.ndim == 2) or (isinstance(axis, tuple) and len(axis) == 2)
    if not matrix or ord not in (2, -2, "nuc"):
        return arrays.norm(z, ord, axis, keepdims)
    axes = (0, 1) if axis is None else tuple(a % z.ndim for a in axis)
    moved = call("moveaxis", z, axes, (-2, -1))
    reduce = {2: jnp.max, -2: jnp.min, "nuc": jnp.sum}[ord]
    result = reduce(svdvals(moved), axis=-1)
    if keepdims:
        shape = list(z.shape)
        shape[axes[0]] = shape[axes[1]] = 1
        result = jnp.reshape(result, shape)
    return result


@_named("linalg.matrix_norm")
def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return norm(x, ord, (-2, -1), keepdims)


@_named("linalg.vector_norm")
def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    z = as_complex(x)
    return jnp.linalg.vector_norm(jnp.hypot(z.real, z.imag), axis=axis, keepdims=keepdims,
                                  ord=ord)


@_named("linalg.cond")
def cond(x, p=None):
    """As NumPy's: the ratio of the extreme singular values (p None, 2, -2), else
    norm(x, p) * norm(inv(x), p); a NaN from a singular matrix is inf."""
    z = _stacked(x, "cond")
    if p is None or p == 2 or p == -2:
        s = svdvals(z)
        first, last = s[..., 0], s[..., -1]
        ratio = jnp.divide(last, first) if p == -2 else jnp.divide(first, last)
    else:
        z = _complex_matrices(z, "cond")
        ratio = jnp.multiply(norm(z, p, axis=(-2, -1)), norm(inv(z), p, axis=(-2, -1)))
    has_nan = jnp.any(jnp.logical_or(jnp.isnan(z.real), jnp.isnan(z.imag)), axis=(-2, -1))
    from_singular = jnp.logical_and(jnp.isnan(ratio), jnp.logical_not(has_nan))
    return jnp.where(from_singular, ratio.dtype.type(np.inf), ratio)


@_named("linalg.matrix_rank")
def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    z = as_complex(A)
    if z.ndim < 2:
        return jnp.astype(jnp.any(call("not_equal", z, 0)), np.int64)
    return rank_above_cutoff(svdvals(z), z.shape, tol, rtol)


@_named("linalg.pinv")
def pinv(a, rcond=None, hermitian=False, *, rtol=np._NoValue):
    """V diag(1/s) U^H, the singular values at most rcond times the largest left out,
    as NumPy's."""
    a = _stacked(a, "pinv")
    if rcond is None:
        eps = np.finfo(part_dtype(a.dtype)).eps
        rcond = 1e-15 if rtol is np._NoValue else (max_side(a) * eps if rtol is None else rtol)
    elif rtol is not np._NoValue:
        raise ValueError(at_user_line("`rtol` and `rcond` can't be both set."))
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        zeros = jnp.zeros(a.shape[:-2] + (n, m), part_dtype(a.dtype))
        return _complex(zeros, zeros, a.dtype)
    u, s, vh = svd(a, full_matrices=False)
    cutoff = jnp.multiply(jnp.expand_dims(jnp.asarray(rcond), -1), strongest(s))
    inverted = jnp.expand_dims(inverted_above(s, cutoff), -1)
    return _product(call("matrix_transpose", call("conjugate", vh)),
                    call("multiply", inverted, call("matrix_transpose", call("conjugate", u))))


@_named("linalg.lstsq")
def lstsq(a, b, rcond=None):
    """The minimum-norm least-squares solution through the SVD, as jitflow's real
    lstsq (and NumPy's rank and cutoff): residuals are the sums of |b - a x|^2."""
    dtype, _ = result_dtype(a, b)
    a, b = as_complex(a, dtype), as_complex(b, dtype)
    vector = b.ndim == 1
    if vector:
        b = call("expand_dims", b, -1)
    if a.ndim != 2 or b.ndim != 2:
        raise np.linalg.LinAlgError(at_user_line(
            f"{max(a.ndim, b.ndim)}-dimensional array given. Array must be two-dimensional"))
    (m, n), real = a.shape, part_dtype(dtype)
    if m != b.shape[0]:
        raise np.linalg.LinAlgError(at_user_line("Incompatible dimensions"))
    if rcond is None:
        rcond = np.finfo(real).eps * max(m, n)
    if m == 0 or n == 0:
        zeros = jnp.zeros((n, b.shape[1]), real)
        x, s, rank = _complex(zeros, zeros, dtype), jnp.zeros((0,), real), \
            jnp.astype(jnp.asarray(0), np.int32)
    else:
        # (NumPy's: the SVD fails on inf or NaN in a)
        u, s, vh = svd(call("where", jnp.all(jnp.isfinite(a)), a, np.nan),
                       full_matrices=False)
        inverted = inverted_above(s, jnp.multiply(rcond, strongest(s)))
        projected = call("multiply", jnp.expand_dims(inverted, -1),
                         _product(call("conjugate", u.T), b))
        solvable = jnp.logical_and(solvable_columns(b.real), solvable_columns(b.imag))
        x = call("where", solvable,
                 _product(call("conjugate", vh.T), projected), complex(np.nan, np.nan))
        rank = jnp.astype(jnp.sum(jnp.greater(inverted, 0)), np.int32)
    residuals = _residuals(a, b, x, rank)
    return (call("squeeze", x, -1) if vector else x), residuals, rank, s


def _residuals(a, b, x, rank):
    """sum |b - a x|^2 down each column where there are more rows than columns (and,
    when the rank is known, it is full), else an empty array."""
    m, n = a.shape
    if m <= n or (not isinstance(rank, Tracer) and int(rank) != n):
        return jnp.zeros((0,), part_dtype(a.dtype))
    error = call("subtract", b, _product(a, x))
    return jnp.sum(jnp.add(jnp.square(error.real), jnp.square(error.imag)), axis=0)


def _product(x, y):
    return call("matmul", x, y)


@_named("linalg.matrix_power")
def matrix_power(a, n):
    a = _complex_matrices(a, "matrix_power")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(at_user_line("exponent must be an integer")) from None
    if n == 0:
        identity = jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=part_dtype(a.dtype)), a.shape)
        return _complex(identity, jnp.zeros(a.shape, part_dtype(a.dtype)), a.dtype)
    if n < 0:
        a, n = inv(a), -n
    return power_by_squaring(a, n, _product)


@_named("linalg.multi_dot")
def multi_dot(arrays, *, out=None):
    if out is not None:
        raise TypeError(at_user_line("jitflow.numpy.linalg.multi_dot: out= is not supported"))
    arrays = [a if is_complex(a) else jnp.asarray(a) for a in arrays]
    return chained_product(arrays, _product, jnp.reshape, jnp.ravel)


@_named("linalg.tensorinv")
def tensorinv(a, ind=2):
    return inverted_tensor(as_complex(a), ind, jnp.linalg.inv, jnp.reshape)


@_named("linalg.tensorsolve")
def tensorsolve(a, b, axes=None):
    a, b = (x if is_complex(x) else jnp.asarray(x) for x in (a, b))
    return solved_tensor(a, b, axes, jnp.linalg.solve, jnp.transpose, jnp.reshape, jnp.ravel)
