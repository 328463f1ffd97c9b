"""The factorizations of numpy.linalg, one primitive each, batched over leading axes:
solve, slogdet, cholesky, eigh, eig, svd and qr. Native code calls LAPACK for them; eagerly
they are numpy.linalg's own functions. Operands are float32 or float64 matrices of one
dtype (jitflow.numpy.linalg converts the others, as NumPy does).

Derivatives follow the standard formulas (and JAX's conventions):
- cholesky and eigh read one triangle of their operand; their derivatives treat it as
  symmetric, the perturbation symmetrized, so the cotangent they give is symmetric;
- eigh and svd need distinct eigenvalues (singular values) for the derivatives of their
  vectors: where two coincide, the vectors are not unique. As JAX, the formulas then
  leave out the terms that divide by their difference, which is right for functions
  that do not depend on the basis chosen (pinv, norms, the values themselves);
- svd's derivative takes full_matrices=False (or a square matrix), and qr's mode
  'reduced' with at least as many rows as columns, where the factors are unique.
"""
import numpy as np

from ..ir.primitive import Primitive, register
from ..ir.types import TensorType, broadcast_shapes
from ..trace import bind, constant_type
from .contraction import matmul, matrix_transpose
from .elementwise import add, add_tangents, divide, equal, multiply, subtract
from .select import cast
from .reductions import reduce_sum
from .shapes import reshape

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _checked_matrix(name, a, square=True):
    if a.dtype not in FLOATS:
        raise TypeError(f"{name}: the {name} primitive takes float32 or float64 "
                        f"matrices, got {a.dtype}")
    if a.ndim < 2:
        raise ValueError(f"{a.ndim}-dimensional array given. Array must be at least "
                         f"two-dimensional")
    if square and a.shape[-1] != a.shape[-2]:
        raise ValueError("Last 2 dimensions of the array must be square")
    return a


# --- helpers of the derivative rules ------------------------------------------------------

def _mT(x):
    return matrix_transpose(x)


def _size(x, axis):
    return constant_type(x).shape[axis]


def _eye(n, dtype):
    return np.eye(n, dtype=dtype)


def _dtype(x):
    return constant_type(x).dtype


def _diag_embed(v):
    """(..., n) -> (..., n, n) with v on the diagonal."""
    return multiply(_column(v, -2), _eye(_size(v, -1), _dtype(v)))


def _diag_part(x):
    """(..., n, n) -> (..., n): the diagonal."""
    return reduce_sum(multiply(x, _eye(_size(x, -1), _dtype(x))), axes=(-1 + len(
        constant_type(x).shape),))


def _column(v, axis):
    """v (..., n) with a new axis of size 1 at `axis` (-2: a row, -1: a column)."""
    shape = constant_type(v).shape
    return reshape(v, shape + (1,) if axis == -1 else shape[:-1] + (1, shape[-1]))


def _masked(x, mask):
    return multiply(x, mask.astype(_dtype(x)))


def _symmetrized(x):
    return multiply(add(x, _mT(x)), 0.5)


def _inverse_gaps(values):
    """F[..., i, j] = 1 / (values[j] - values[i]), and 0 where the two are equal (on the
    diagonal, and at a repeated value: JAX's convention, right for the functions that
    do not depend on the basis chosen inside the repeated value's space, such as pinv
    or a norm)."""
    gaps = subtract(_column(values, -2), _column(values, -1))
    tied = cast(equal(gaps, 0), _dtype(values))
    return subtract(divide(1, add(gaps, tied)), tied)


# --- solve --------------------------------------------------------------------------------

def _solve_type(a, b):
    _checked_matrix("solve", a)
    _checked_matrix("solve", b, square=False)
    if a.dtype != b.dtype:
        raise TypeError(f"solve: operands of one dtype expected, got {a.dtype} and {b.dtype}")
    if b.shape[-2] != a.shape[-1]:
        raise ValueError(f"solve: a of shape {a.shape} does not match b of shape {b.shape}")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return TensorType(batch + b.shape[-2:], a.dtype)


def _solve_vjp(ct, a, b, *, out):
    ct_b = solve(_mT(a), ct)  # x = a^-1 b: b's cotangent a^-T ct, a's -b_ct x^T
    return [negative_product(ct_b, _mT(out)), ct_b]


def negative_product(x, y):
    return multiply(matmul(x, y), -1)


def _solve_jvp(tangents, a, b, *, out):
    ta, tb = tangents  # d(a^-1 b) = a^-1 (db - da x)
    rhs = add_tangents(tb, None if ta is None else negative_product(ta, out))
    return solve(a, rhs)


solve_p = register(Primitive("solve", _solve_type, np.linalg.solve, vjp=_solve_vjp,
                             jvp=_solve_jvp))


def solve(a, b): return bind(solve_p, a, b)


def inverse(a):
    n = constant_type(a).shape[-1]
    return solve(a, _eye(n, _dtype(a)))


# --- slogdet ------------------------------------------------------------------------------

def _slogdet_type(a):
    _checked_matrix("slogdet", a)
    scalar = TensorType(a.shape[:-2], a.dtype)
    return scalar, scalar


def _slogdet_impl(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return np.asarray(sign), np.asarray(logabsdet)


def _slogdet_vjp(cts, a, *, out):
    _, ct = cts  # d log|det a| = tr(a^-1 da): the cotangent ct a^-T
    if ct is None:
        return [None]
    return [multiply(_column(_column(ct, -1), -1), _mT(inverse(a)))]


def _slogdet_jvp(tangents, a, *, out):
    (ta,) = tangents
    return [None, _diag_part_sum(solve(a, ta))]


def _diag_part_sum(x):
    return reduce_sum(_diag_part(x), axes=(len(constant_type(x).shape) - 2,))


slogdet_p = register(Primitive("slogdet", _slogdet_type, _slogdet_impl,
                               multiple_results=True, vjp=_slogdet_vjp, jvp=_slogdet_jvp))


def slogdet(a): return bind(slogdet_p, a)


# --- cholesky -----------------------------------------------------------------------------

def _cholesky_type(a):
    return _checked_matrix("cholesky", a)


def _phi(x):
    """The lower triangle of x with its diagonal halved."""
    n = _size(x, -1)
    return _masked(x, np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n))


def _cholesky_vjp(ct, a, *, out):
    # S = L^-T phi(L^T ct) L^-1, symmetrized
    inner = _phi(matmul(_mT(out), ct))
    s = solve(_mT(out), _mT(solve(_mT(out), _mT(inner))))
    return [_symmetrized(s)]


def _cholesky_jvp(tangents, a, *, out):
    (ta,) = tangents  # dL = L phi(L^-1 sym(da) L^-T)
    inner = solve(out, _mT(solve(out, _symmetrized(ta))))
    return matmul(out, _phi(inner))


cholesky_p = register(Primitive("cholesky", _cholesky_type, np.linalg.cholesky,
                                vjp=_cholesky_vjp, jvp=_cholesky_jvp))


def cholesky(a): return bind(cholesky_p, a)


# --- eigh ---------------------------------------------------------------------------------

def _eigh_type(a, *, vectors=True):
    _checked_matrix("eigh", a)
    values = TensorType(a.shape[:-1], a.dtype)
    return (values, a) if vectors else (values,)


def _eigh_impl(a, *, vectors=True):
    """vectors=False: the eigenvalues alone, as NumPy's eigvalsh computes them (LAPACK
    without eigenvectors: faster, and its values may differ from eigh's in the last
    bits)."""
    if not vectors:
        return (np.linalg.eigvalsh(a),)
    w, v = np.linalg.eigh(a)
    return w, v


def _eigh_vjp(cts, a, *, out, vectors=True):
    if not vectors:  # the eigenvectors the derivative needs, computed for it
        out, cts = eigh(a), (cts[0], None)
    ct_w, ct_v = cts
    w, v = out
    inner = _diag_embed(ct_w) if ct_w is not None else None
    if ct_v is not None:
        inner = add_tangents(inner, multiply(_inverse_gaps(w), matmul(_mT(v), ct_v)))
    return [_symmetrized(matmul(matmul(v, inner), _mT(v)))]


def _eigh_jvp(tangents, a, *, out, vectors=True):
    (ta,) = tangents  # with vdv = V^T sym(da) V: dw = diag(vdv), dV = V (F o vdv)
    w, v = out if vectors else eigh(a)
    rotated = matmul(matmul(_mT(v), _symmetrized(ta)), v)
    if not vectors:
        return [_diag_part(rotated)]
    return [_diag_part(rotated), matmul(v, multiply(_inverse_gaps(w), rotated))]


eigh_p = register(Primitive("eigh", _eigh_type, _eigh_impl, multiple_results=True,
                            vjp=_eigh_vjp, jvp=_eigh_jvp))


def eigh(a, *, vectors=True):
    """(eigenvalues, eigenvectors), or (eigenvalues,) without vectors."""
    return bind(eigh_p, a, vectors=bool(vectors))


# --- eig: LAPACK's geev, its complex answers as real parts ---------------------------------

def _eig_type(a, *, vectors):
    _checked_matrix("eig", a)
    values = TensorType(a.shape[:-1], a.dtype)
    return (values, values, a) if vectors else (values, values)


def _eig_impl(a, *, vectors):
    """(real parts, imaginary parts[, vectors]) as geev gives them: a conjugate pair's
    vectors v +- iu in two columns, v then u."""
    if not vectors:
        w = np.linalg.eigvals(a).astype(np.result_type(a, np.complex64))
        return w.real.astype(a.dtype), w.imag.astype(a.dtype)
    w, v = np.linalg.eig(a)
    w = w.astype(np.result_type(a, np.complex64))
    # (geev puts a pair's value with the positive imaginary part first)
    shifted = np.roll(np.imag(v), 1, axis=-1)
    packed = np.where(np.expand_dims(w.imag < 0, -2), shifted, np.real(v))
    return w.real.astype(a.dtype), w.imag.astype(a.dtype), packed.astype(a.dtype)


# Its derivative rules (the eigenvalues', first order) are installed by
# ops/complex_spectra.py, from the complex matrix's.
eig_p = register(Primitive("eig", _eig_type, _eig_impl, multiple_results=True))


def eig(a, *, vectors=True): return bind(eig_p, a, vectors=bool(vectors))


# --- svd ----------------------------------------------------------------------------------

def _svd_type(a, *, full_matrices, compute_uv):
    _checked_matrix("svd", a, square=False)
    *batch, m, n = a.shape
    k = min(m, n)
    u_cols, vt_rows = (m, n) if full_matrices else (k, k)
    batch = tuple(batch)
    values = TensorType(batch + (k,), a.dtype)
    if not compute_uv:
        return (values,)
    return (TensorType(batch + (m, u_cols), a.dtype), values,
            TensorType(batch + (vt_rows, n), a.dtype))


def _svd_impl(a, *, full_matrices, compute_uv):
    if not compute_uv:
        return (np.linalg.svd(a, compute_uv=False),)
    u, s, vt = np.linalg.svd(a, full_matrices=full_matrices)
    return u, s, vt


def _reduced_factors(a, out, full_matrices, rule):
    m, n = constant_type(a).shape[-2:]
    if full_matrices and m != n:
        raise NotImplementedError(
            f"svd: the {rule} of full_matrices=True is not unique for a non-square "
            f"matrix ({m}x{n}); use full_matrices=False")
    return out


def _with_vectors(a, out, cts, compute_uv):
    """The factors and cotangents of the whole SVD: without compute_uv, the vectors
    the derivative needs are computed here (the values alone take less work)."""
    if compute_uv:
        return out, cts
    return svd(a), (None, cts[0], None)


def _svd_vjp(cts, a, *, out, full_matrices, compute_uv):
    out, (ct_u, ct_s, ct_vt) = _with_vectors(a, out, cts, compute_uv)
    u, s, vt = _reduced_factors(a, out, full_matrices, "derivative")
    v = _mT(vt)
    m, n = constant_type(a).shape[-2:]
    gaps = _inverse_gaps(multiply(s, s))  # F[i, j] = 1 / (s_j^2 - s_i^2)
    s_row = _column(s, -2)
    inner = _diag_embed(ct_s) if ct_s is not None else None
    if ct_u is not None:
        g = multiply(gaps, matmul(_mT(u), ct_u))
        inner = add_tangents(inner, multiply(add(g, _mT(g)), s_row))
    if ct_vt is not None:
        h = multiply(gaps, matmul(vt, _mT(ct_vt)))
        inner = add_tangents(inner, multiply(_column(s, -1), add(h, _mT(h))))
    grad = matmul(matmul(u, inner), vt) if inner is not None else None
    if ct_u is not None and m > n:  # (I - U U^T) ct_u S^-1 V^T
        outside = subtract(ct_u, matmul(u, matmul(_mT(u), ct_u)))
        grad = add_tangents(grad, matmul(divide(outside, s_row), vt))
    if ct_vt is not None and n > m:  # U S^-1 ct_v^T (I - V V^T)
        outside = subtract(ct_vt, matmul(matmul(ct_vt, v), vt))
        grad = add_tangents(grad, matmul(u, divide(outside, _column(s, -1))))
    return [grad]


def _svd_jvp(tangents, a, *, out, full_matrices, compute_uv):
    (ta,) = tangents
    out, _ = _with_vectors(a, out, (None,), compute_uv)
    u, s, vt = _reduced_factors(a, out, full_matrices, "derivative")
    v = _mT(vt)
    m, n = constant_type(a).shape[-2:]
    rotated = matmul(matmul(_mT(u), ta), v)  # dS = U^T da V
    if not compute_uv:
        return [_diag_part(rotated)]
    gaps = _inverse_gaps(multiply(s, s))
    s_row, s_col = _column(s, -2), _column(s, -1)
    d_u = matmul(u, multiply(gaps, add(multiply(rotated, s_row),
                                       multiply(s_col, _mT(rotated)))))
    d_v = matmul(v, multiply(gaps, add(multiply(s_col, rotated),
                                       multiply(_mT(rotated), s_row))))
    if m > n:
        moved = matmul(ta, v)
        d_u = add(d_u, divide(subtract(moved, matmul(u, matmul(_mT(u), moved))), s_row))
    if n > m:
        moved = matmul(_mT(ta), u)
        d_v = add(d_v, divide(subtract(moved, matmul(v, matmul(vt, moved))), s_row))
    return [d_u, _diag_part(rotated), _mT(d_v)]


svd_p = register(Primitive("svd", _svd_type, _svd_impl, multiple_results=True,
                           vjp=_svd_vjp, jvp=_svd_jvp))


def svd(a, *, full_matrices=False, compute_uv=True):
    return bind(svd_p, a, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))


# --- qr -----------------------------------------------------------------------------------

def _qr_type(a, *, complete):
    _checked_matrix("qr", a, square=False)
    *batch, m, n = a.shape
    k = m if complete else min(m, n)
    return TensorType(tuple(batch) + (m, k), a.dtype), TensorType(tuple(batch) + (k, n), a.dtype)


def _qr_impl(a, *, complete):
    q, r = np.linalg.qr(a, mode="complete" if complete else "reduced")
    return q, r


def _qr_unique(a, complete):
    m, n = constant_type(a).shape[-2:]
    if m < n or (complete and m != n):
        raise NotImplementedError(
            f"qr: the derivative needs mode='reduced' and at least as many rows as "
            f"columns (the factors are unique only then); got a {m}x{n} matrix"
            + (" with mode='complete'" if complete else ""))


def _right_solve_transposed(r, x):
    """x R^-1 ... as (R^-T x^T)^T: x R^-1 = solve(R^T, x^T)^T."""
    return _mT(solve(_mT(r), _mT(x)))


def _qr_jvp(tangents, a, *, out, complete):
    (ta,) = tangents
    _qr_unique(a, complete)
    q, r = out
    x = _right_solve_transposed(r, ta)  # da R^-1
    c = matmul(_mT(q), x)
    n = _size(c, -1)
    lower = _masked(c, np.tril(np.ones((n, n), dtype=bool), -1))
    omega = subtract(lower, _mT(lower))
    return [add(matmul(q, subtract(omega, c)), x), matmul(subtract(c, omega), r)]


def _qr_vjp(cts, a, *, out, complete):
    _qr_unique(a, complete)
    ct_q, ct_r = cts
    q, r = out
    m_terms = []
    if ct_q is not None:
        m_terms.append(matmul(_mT(q), ct_q))
    if ct_r is not None:
        m_terms.append(multiply(matmul(ct_r, _mT(r)), -1))
    big_m = add_tangents(*m_terms)
    n = _size(r, -1)
    strict = np.tril(np.ones((n, n), dtype=bool), -1)
    ct_c = subtract(_masked(subtract(big_m, _mT(big_m)), strict), big_m)
    ct_x = matmul(q, ct_c) if ct_q is None else add(ct_q, matmul(q, ct_c))
    # x = da R^-1: da's cotangent is ct_x R^-T = solve(R, ct_x^T)^T
    return [_mT(solve(r, _mT(ct_x)))]


qr_p = register(Primitive("qr", _qr_type, _qr_impl, multiple_results=True, vjp=_qr_vjp,
                          jvp=_qr_jvp))


def qr(a, *, complete=False): return bind(qr_p, a, complete=bool(complete))


__all__ = ["cholesky", "eig", "eigh", "inverse", "qr", "slogdet", "solve", "svd"]
