"""numpy.linalg's solvers and factorizations: solve, inv, det, slogdet, cholesky, qr,
eigh, eigvalsh, svd, svdvals, lstsq, pinv, matrix_rank, matrix_power, cond, multi_dot,
tensorsolve and tensorinv, batched over leading axes as NumPy batches them.

Six primitives do the work (jitflow.ops.linalg: solve, slogdet, cholesky, eigh, svd,
qr, each a LAPACK call in native code); the rest are NumPy's own recipes over them:
inv solves against the identity, det is sign * exp(log|det|) as in NumPy, lstsq, pinv
and matrix_rank read the singular values with NumPy's cutoffs.

Operands are converted as NumPy converts them: float32 stays float32, every other
dtype (bool, integers) is computed in float64. Traced, lstsq cannot know the rank
when it traces; it then gives the residuals whenever there are more rows than columns
(as JAX does), where NumPy gives an empty array for a rank-deficient matrix.
"""
import builtins
import collections
import operator

import numpy as _np

from .. import ops
from ..contract import matmul
from ..errors import at_user_line
from ..trace import Tracer
from ._common import _dtype_of, _ndim, _shape
from .creation import asarray
from .elementwise import (astype, divide, exp, greater, isfinite, isinf, isnan, logical_and,
                          logical_not, multiply, subtract, where)
from .matrices import eye, matrix_transpose
from .reductions import all as _all
from .reductions import any as _any
from .reductions import max, sum
from .shapes import broadcast_to, expand_dims, ravel, reshape, squeeze, transpose

SlogdetResult = collections.namedtuple("SlogdetResult", "sign logabsdet")
EighResult = collections.namedtuple("EighResult", "eigenvalues eigenvectors")
SVDResult = collections.namedtuple("SVDResult", "U S Vh")
QRResult = collections.namedtuple("QRResult", "Q R")


def _common_float(*arrays):
    """The arrays in the dtype numpy.linalg computes them in."""
    arrays = [asarray(a) for a in arrays]
    dtype = _np.result_type(*(_dtype_of(a) for a in arrays))
    dtype = dtype if dtype in (_np.float32, _np.float64) else _np.dtype(_np.float64)
    return [a if _dtype_of(a) == dtype else astype(a, dtype) for a in arrays]


def _stacked_matrices(name, a, square=True):
    if _ndim(a) < 2:
        raise _np.linalg.LinAlgError(at_user_line(
            f"{_ndim(a)}-dimensional array given. Array must be at least two-dimensional"))
    if square and _shape(a)[-1] != _shape(a)[-2]:
        raise _np.linalg.LinAlgError(at_user_line(
            "Last 2 dimensions of the array must be square"))
    return a


def solve(a, b):
    a, b = _common_float(a, b)
    _stacked_matrices("solve", a)
    if _ndim(b) == 1:  # a vector: NumPy 2 reads b as one only when it is 1-d
        return squeeze(ops.solve(a, expand_dims(b, -1)), -1)
    return ops.solve(a, b)


def inv(a):
    (a,) = _common_float(a)
    _stacked_matrices("inv", a)
    return ops.inverse(a)


def slogdet(a):
    (a,) = _common_float(a)
    _stacked_matrices("slogdet", a)
    return SlogdetResult(*ops.slogdet(a))


def det(a):
    sign, logdet = slogdet(a)
    return multiply(sign, exp(logdet))  # NumPy's det is computed this way too


def cholesky(a, /, *, upper=False):
    (a,) = _common_float(a)
    _stacked_matrices("cholesky", a)
    factor = ops.cholesky(a)
    return matrix_transpose(factor) if upper else factor


def check_qr_mode(mode):
    """NumPy's modes of qr, but 'raw' (LAPACK's Householder reflectors)."""
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(at_user_line(f"Unrecognized mode '{mode}'"))
    if mode == "raw":
        raise NotImplementedError(at_user_line(
            "jitflow.numpy.linalg.qr: mode='raw' (LAPACK's Householder reflectors) is "
            "not supported; use 'reduced', 'complete' or 'r'"))


def qr(a, mode="reduced"):
    (a,) = _common_float(a)
    _stacked_matrices("qr", a, square=False)
    check_qr_mode(mode)
    q, r = ops.qr(a, complete=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def eigh(a, UPLO="L"):
    (a,) = _common_float(a)
    _stacked_matrices("eigh", a)
    return EighResult(*ops.eigh(_lower_triangle_of(a, UPLO)))


def eigvalsh(a, UPLO="L"):
    """The eigenvalues alone, by LAPACK's syevd without eigenvectors, as NumPy's."""
    (a,) = _common_float(a)
    _stacked_matrices("eigvalsh", a)
    (values,) = ops.eigh(_lower_triangle_of(a, UPLO), vectors=False)
    return values


def _lower_triangle_of(a, uplo):
    """The matrix whose lower triangle holds the triangle UPLO names."""
    if uplo not in ("L", "U"):
        raise ValueError(at_user_line("UPLO argument must be 'L' or 'U'"))
    return a if uplo == "L" else matrix_transpose(a)


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """hermitian is a hint NumPy uses to call eigh: the same singular values; U and Vh
    may then differ from NumPy's in the signs of their columns (rows), as singular
    vectors may."""
    (a,) = _common_float(a)
    _stacked_matrices("svd", a, square=hermitian)
    if not compute_uv:
        return ops.svd(a, compute_uv=False)[0]
    return SVDResult(*ops.svd(a, full_matrices=full_matrices))


def svdvals(x, /):
    return svd(x, compute_uv=False)


def _strongest(s):
    """The largest singular value of each matrix, kept as an axis (0 for none)."""
    if _shape(s)[-1] == 0:
        return ops.broadcast_to(_dtype_of(s).type(0), _shape(s)[:-1] + (1,))
    return max(s, axis=-1, keepdims=True)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    A = asarray(A)
    if _ndim(A) < 2:
        return astype(_any(ops.not_equal(A, 0)), _np.int64)
    return rank_above_cutoff(svd(A, compute_uv=False, hermitian=hermitian), _shape(A),
                             tol, rtol)


def rank_above_cutoff(s, shape, tol=None, rtol=None):
    """How many of the singular values s of matrices of `shape` lie above matrix_rank's
    cutoff (tol, or rtol times the largest; by default NumPy's)."""
    if tol is None:
        if rtol is None:
            rtol = builtins.max(shape[-2:]) * _np.finfo(_dtype_of(s)).eps
        else:
            rtol = expand_dims(asarray(rtol), -1)
        tol = multiply(_strongest(s), rtol)
    else:
        tol = expand_dims(asarray(tol), -1)
    return sum(astype(greater(s, tol), _np.int64), axis=-1)


def max_side(a):
    return builtins.max(_shape(a)[-2:])


def pinv(a, rcond=None, hermitian=False, *, rtol=_np._NoValue):
    (a,) = _common_float(a)
    _stacked_matrices("pinv", a, square=False)
    if rcond is None:
        rcond = 1e-15 if rtol is _np._NoValue else (
            max_side(a) * _np.finfo(_dtype_of(a)).eps if rtol is None else rtol)
    elif rtol is not _np._NoValue:
        raise ValueError(at_user_line("`rtol` and `rcond` can't be both set."))
    m, n = _shape(a)[-2:]
    if m == 0 or n == 0:
        return ops.broadcast_to(_dtype_of(a).type(0), _shape(a)[:-2] + (n, m))
    u, s, vt = ops.svd(a, full_matrices=False)
    cutoff = multiply(expand_dims(asarray(rcond), -1), _strongest(s))
    inverted = _inverted_above(s, cutoff)
    return matmul(matrix_transpose(vt), multiply(expand_dims(inverted, -1),
                                                 matrix_transpose(u)))


def _inverted_above(s, cutoff):
    """1 / s where s > cutoff, else 0 (the division kept away from the zeros)."""
    large = greater(s, cutoff)
    return where(large, divide(1, where(large, s, 1)), 0)


def lstsq(a, b, rcond=None):
    a, b = _common_float(a, b)
    vector = _ndim(b) == 1
    if vector:
        b = expand_dims(b, -1)
    if _ndim(a) != 2 or _ndim(b) != 2:
        raise _np.linalg.LinAlgError(at_user_line(
            f"{builtins.max(_ndim(a), _ndim(b))}-dimensional array given. Array must be "
            f"two-dimensional"))
    (m, n), (m2, _) = _shape(a), _shape(b)
    if m != m2:
        raise _np.linalg.LinAlgError(at_user_line("Incompatible dimensions"))
    if rcond is None:
        rcond = _np.finfo(_dtype_of(a)).eps * builtins.max(m, n)
    x, s, rank = _least_squares(a, b, rcond)
    residuals = _residuals(a, b, x, rank)
    return (squeeze(x, -1) if vector else x), residuals, rank, s


def _least_squares(a, b, rcond):
    """The minimum-norm solution through the SVD, the singular values below
    rcond * the largest taken as zero; (x, s, rank)."""
    m, n = _shape(a)
    if m == 0 or n == 0:
        x = ops.broadcast_to(_dtype_of(a).type(0), (n, _shape(b)[-1]))
        return x, ops.broadcast_to(_dtype_of(a).type(0), (0,)), astype(asarray(0), _np.int32)
    u, s, vt = ops.svd(nan_unless_finite(a), full_matrices=False)
    inverted = _inverted_above(s, multiply(rcond, _strongest(s)))
    x = matmul(matrix_transpose(vt), multiply(expand_dims(inverted, -1),
                                              matmul(matrix_transpose(u), b)))
    rank = astype(sum(greater(inverted, 0)), _np.int32)
    return where(solvable_columns(b), x, _np.nan), s, rank


def nan_unless_finite(a):
    """a, or all NaN where a holds inf or NaN: then the SVD fails ("SVD did not
    converge") as NumPy's lstsq does. (Of inf alone LAPACK's SVD returns NaN.)"""
    return where(_all(isfinite(a)), a, _np.nan)


def solvable_columns(b):
    """The columns of b whose least-squares solution NumPy computes: those without NaN,
    and none where b holds an infinity (gelsd scales all of b by its largest magnitude,
    inf, which makes every solution NaN)."""
    return logical_and(logical_not(_any(isnan(b), axis=-2, keepdims=True)),
                       logical_not(_any(isinf(b))))


def _residuals(a, b, x, rank):
    m, n = _shape(a)
    empty = ops.broadcast_to(_dtype_of(x).type(0), (0,))
    if m <= n:
        return empty
    if not isinstance(rank, Tracer) and int(rank) != n:
        return empty
    error = subtract(b, matmul(a, x))
    return sum(multiply(error, error), axis=0)


def matrix_power(a, n):
    a = asarray(a)
    _stacked_matrices("matrix_power", a)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(at_user_line("exponent must be an integer")) from None
    if n == 0:
        return broadcast_to(eye(_shape(a)[-1], dtype=_dtype_of(a)), _shape(a))
    if n < 0:
        a, n = inv(a), -n
    return power_by_squaring(a, n)


def power_by_squaring(a, n, product=matmul):
    """NumPy's order of products: a few by hand, then the binary decomposition."""
    if n <= 3:
        result = a
        for _ in range(n - 1):
            result = product(result, a)
        return result
    square = result = None
    while n > 0:
        square = a if square is None else product(square, square)
        n, bit = divmod(n, 2)
        if bit:
            result = square if result is None else product(result, square)
    return result


def multi_dot(arrays, *, out=None):
    if out is not None:
        raise TypeError(at_user_line("jitflow.numpy.linalg.multi_dot: out= is not supported"))
    return chained_product([asarray(a) for a in arrays], matmul, reshape, ravel)


def chained_product(arrays, product, reshape, ravel):
    """multi_dot of `arrays` with these functions (those of complex values for them)."""
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError(at_user_line("Expecting at least two arrays."))
    first_vector, last_vector = _ndim(arrays[0]) == 1, _ndim(arrays[-1]) == 1
    if first_vector:
        arrays[0] = reshape(arrays[0], (1, -1))
    if last_vector:
        arrays[-1] = reshape(arrays[-1], (-1, 1))
    if any(_ndim(a) != 2 for a in arrays):
        raise _np.linalg.LinAlgError(at_user_line(
            "multi_dot: every array but the first and the last must be two-dimensional"))
    result = chain(arrays, chain_order([_shape(a)[0] for a in arrays] +
                                       [_shape(arrays[-1])[1]]), 0, len(arrays) - 1,
                   product)
    if first_vector and last_vector:
        return reshape(result, ())
    if first_vector or last_vector:
        return ravel(result)
    return result


def chain_order(sizes):
    """split[i][j]: where the cheapest product of matrices i..j splits (the classic
    dynamic programme over chain lengths; the first cheapest split wins, as in NumPy)."""
    count = len(sizes) - 1
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = _np.inf
            for k in range(i, j):
                total = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if total < cost[i][j]:
                    cost[i][j], split[i][j] = total, k
    return split


def chain(arrays, split, i, j, product=matmul):
    """The product of arrays i..j in the order `split` (chain_order's) gives."""
    if i == j:
        return arrays[i]
    k = split[i][j]
    return product(chain(arrays, split, i, k, product), chain(arrays, split, k + 1, j, product))


def tensorsolve(a, b, axes=None):
    return solved_tensor(asarray(a), asarray(b), axes, solve, transpose, reshape, ravel)


def solved_tensor(a, b, axes, solve, transpose, reshape, ravel):
    """tensorsolve with these functions (those of complex values for them)."""
    rank = _ndim(a)
    if axes is not None:
        order = [k for k in range(rank) if k not in [x % rank for x in axes]] + \
            [x % rank for x in axes]
        a = transpose(a, order)
    kept = _shape(a)[-(rank - _ndim(b)):] if rank != _ndim(b) else ()
    size = int(_np.prod(kept, dtype=_np.int64))
    if int(_np.prod(_shape(a), dtype=_np.int64)) != size ** 2:
        raise _np.linalg.LinAlgError(at_user_line(
            "Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == "
            "prod(a.shape[:b.ndim])"))
    return reshape(solve(reshape(a, (size, size)), ravel(b)), kept)


def tensorinv(a, ind=2):
    return inverted_tensor(asarray(a), ind, inv, reshape)


def inverted_tensor(a, ind, inv, reshape):
    """tensorinv with these functions (those of complex values for them)."""
    if ind <= 0:
        raise ValueError(at_user_line("Invalid ind argument."))
    shape = _shape(a)
    size = int(_np.prod(shape[ind:], dtype=_np.int64))
    inverse = inv(reshape(a, (size, -1)))
    return reshape(inverse, shape[ind:] + shape[:ind])


__all__ = ["EighResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky",
           "det", "eigh", "eigvalsh", "inv", "lstsq", "matrix_power", "matrix_rank",
           "multi_dot", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensorinv",
           "tensorsolve"]
