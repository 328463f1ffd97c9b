"""numpy.linalg's factorizations of complex matrices, one primitive each, batched over
leading axes: complex_solve, complex_slogdet, complex_eigh, complex_svd,
complex_cholesky, complex_qr and complex_eig. A complex matrix is given as its real
and imaginary parts (two real arrays of one shape and float dtype), and complex results
come back as parts, so the graph holds real arrays only. Native code calls LAPACK's
complex routines (gesv, getrf, heevd, gesdd, potrf, geqrf and ungqr, geev) on the
parts interleaved; eagerly they are numpy.linalg's own functions.

Derivatives are those of the parts, real-linear maps; in complex form:
- solve: dx = a^-1 (db - da x), so b's cotangent is a^-H ct and a's -a^-H ct x^H;
- slogdet: d log det a = tr(a^-1 da), its real part log|det a|'s, its imaginary part
  the angle of the sign's;
- eigh reads the lower triangle of a Hermitian matrix and is differentiated as a
  Hermitian function of it (the perturbation made Hermitian, so its cotangent is
  Hermitian); with C = V^H da V, dw = diag(C) and dV = V (F o C), F[i, j] =
  1 / (w[j] - w[i]). Eigenvectors are unique up to a phase each: the formula takes the
  change of phase to be 0, as JAX's does, so only functions that do not depend on the
  phases (projections v v^H, |v|, the values) have the derivative of the function
  they compute; where two eigenvalues coincide, F leaves out their terms (as eigh's);
- svd: with C = U^H da V, ds = Re diag(C), and JAX's formulas for the vectors (F[i, j]
  = 1 / (s_j^2 - s_i^2)): dU = U (F o (C S + S C^H) + i Im diag(C) / s), dV = V (F o
  (S C + C^H S)), plus the parts outside U's and V's spans for a non-square matrix. Each
  pair of singular vectors is unique up to a common phase: the formula puts the whole
  change of phase into U, so only functions that do not depend on the phases (the
  values, |U|, U S V^H, pinv, least squares) have the derivative of the function they
  compute; full_matrices=True is differentiated for square matrices only (the extra
  columns of a non-square one are not unique);
- cholesky, as a Hermitian function of its operand's lower triangle: dL = L phi(L^-1 H
  L^-H), phi the lower triangle with its diagonal halved, H da's Hermitian part;
- qr (reduced, at least as many rows as columns), R's diagonal kept real as LAPACK
  keeps it, so that the factors are unique: X = da R^-1, C = Q^H X, W = tril(C, -1) -
  tril(C, -1)^H + i Im diag(C), dQ = Q (W - C) + X, dR = (C - W) R;
- eig of a general matrix: the eigenvalues once, dw_i = (V^-1 da V)_ii, whatever the
  eigenvectors' scales (w's cotangent gives da's V^-H diag(ct_w) V^H); not the
  eigenvectors, nor a second derivative (their rules raise). The eigenvalues must be
  distinct, as for any derivative of them.
"""
import numpy as np

from ..ir.primitive import Primitive, register
from ..ir.types import TensorType, broadcast_shapes
from ..trace import bind, constant_type
from .contraction import matmul
from .elementwise import (add, add_tangents, divide, equal, multiply, negative,
                          subtract)
from .linalg import (_checked_matrix, _column, _diag_embed, _diag_part, _inverse_gaps,
                     _mT, _symmetrized, eig_p)
from .creation import iota
from .reductions import argmin, reduce_sum
from .select import cast


def _checked_parts(name, real, imag, square=True):
    """The type of the complex matrices: the parts' leading axes broadcast."""
    _checked_matrix(name, real, square)
    _checked_matrix(name, imag, square)
    if real.dtype != imag.dtype or real.shape[-2:] != imag.shape[-2:]:
        raise TypeError(f"{name}: the real and imaginary parts of complex matrices must "
                        f"share their matrices' shape and dtype, got "
                        f"{real.dtype}{list(real.shape)} and {imag.dtype}{list(imag.shape)}")
    batch = broadcast_shapes(real.shape[:-2], imag.shape[:-2])
    return TensorType(batch + real.shape[-2:], real.dtype)


def joined(real, imag):
    """The complex array of NumPy's with these parts (each part set as it is: no
    real + 1j * imag, whose inf * 0 would make NaNs)."""
    real, imag = np.broadcast_arrays(real, imag)
    z = np.empty(np.shape(real), np.result_type(real, np.complex64))
    z.real, z.imag = real, imag
    return z


# --- complex matrices as (real, imaginary) pairs, for the derivative rules ------------------

def _product(a, b):
    (ar, ai), (br, bi) = a, b
    return (subtract(matmul(ar, br), matmul(ai, bi)), add(matmul(ar, bi), matmul(ai, br)))


def _adjoint(a):
    return _mT(a[0]), negative(_mT(a[1]))


def complex_inverse(a):
    """a^-1, solved against the identity."""
    n, dtype = constant_type(a[0]).shape[-1], constant_type(a[0]).dtype
    return complex_solve(*a, np.eye(n, dtype=dtype), np.zeros((n, n), dtype))


def _hermitian(real, imag):
    """The parts of (x + x^H) / 2: the part of a perturbation a Hermitian function sees."""
    return _symmetrized(real), multiply(subtract(imag, _mT(imag)), 0.5)


def _trace_of_product(x, t):
    """tr(x t) for complex x and t (t's parts may be None: zero)."""
    (xr, xi), (tr, ti) = x, t
    total = lambda p, q: None if q is None else reduce_sum(  # noqa: E731
        multiply(p, _mT(q)), axes=(len(constant_type(p).shape) - 2,
                                   len(constant_type(p).shape) - 1))
    real = add_tangents(total(xr, tr), _negated(total(xi, ti)))
    imag = add_tangents(total(xr, ti), total(xi, tr))
    return real, imag


def _negated(x):
    return None if x is None else negative(x)


# --- complex_solve -------------------------------------------------------------------------

def _solve_type(a_real, a_imag, b_real, b_imag):
    a = _checked_parts("complex_solve", a_real, a_imag)
    b = _checked_parts("complex_solve", b_real, b_imag, square=False)
    if a.dtype != b.dtype:
        raise TypeError(f"complex_solve: operands of one dtype expected, got {a.dtype} and "
                        f"{b.dtype}")
    if b.shape[-2] != a.shape[-1]:
        raise ValueError(f"complex_solve: a of shape {a.shape} does not match b of shape "
                         f"{b.shape}")
    x = TensorType(broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], a.dtype)
    return x, x


def _solve_impl(a_real, a_imag, b_real, b_imag):
    x = np.linalg.solve(joined(a_real, a_imag), joined(b_real, b_imag))
    return np.asarray(x.real, a_real.dtype), np.asarray(x.imag, a_real.dtype)


def _solve_vjp(cts, a_real, a_imag, b_real, b_imag, *, out):
    # x = a^-1 b: b's cotangent a^-H ct, a's -(b's) x^H
    ct = _parts(cts, out[0])
    if ct is None:
        return [None] * 4
    ct_b = complex_solve(*_adjoint((a_real, a_imag)), *ct)
    ct_a = _scaled(_product(ct_b, _adjoint(out)), -1)
    return [*ct_a, *ct_b]


def _solve_jvp(tangents, a_real, a_imag, b_real, b_imag, *, out):
    # dx = a^-1 (db - da x)
    dtype = constant_type(a_real).dtype
    da = _parts(tangents[:2], a_real)
    db = _parts(tangents[2:], b_real)
    rhs = _sum(db, None if da is None else _scaled(_product(da, out), -1))
    return list(complex_solve(a_real, a_imag, *rhs)) if rhs is not None else \
        [multiply(out[0], dtype.type(0))] * 2


complex_solve_p = register(Primitive("complex_solve", _solve_type, _solve_impl,
                                     multiple_results=True, vjp=_solve_vjp, jvp=_solve_jvp))


def complex_solve(a_real, a_imag, b_real, b_imag):
    """The parts of x with a x = b, for stacks of complex matrices a and b."""
    return bind(complex_solve_p, a_real, a_imag, b_real, b_imag)


# --- complex_slogdet -----------------------------------------------------------------------

def _slogdet_type(real, imag):
    a = _checked_parts("complex_slogdet", real, imag)
    scalar = TensorType(a.shape[:-2], a.dtype)
    return scalar, scalar, scalar


def _slogdet_impl(real, imag):
    sign, logabsdet = np.linalg.slogdet(joined(real, imag))
    return (np.asarray(np.real(sign), real.dtype), np.asarray(np.imag(sign), real.dtype),
            np.asarray(logabsdet, real.dtype))


def _slogdet_vjp(cts, real, imag, *, out):
    # with b = a^-T: d log|det| = Re sum(b da), d angle = Im sum(b da)
    ct_sign_r, ct_sign_i, ct_log = cts
    sign_r, sign_i, _ = out
    ct_angle = add_tangents(_times(ct_sign_r, negative(sign_i)), _times(ct_sign_i, sign_r))
    if ct_log is None and ct_angle is None:
        return [None, None]
    br, bi = (_mT(p) for p in complex_inverse((real, imag)))
    ct_log, ct_angle = (None if ct is None else _column(_column(ct, -1), -1)
                        for ct in (ct_log, ct_angle))
    return [add_tangents(_times(ct_log, br), _times(ct_angle, bi)),
            add_tangents(_negated(_times(ct_log, bi)), _times(ct_angle, br))]


def _times(ct, x):
    return None if ct is None else multiply(ct, x)


def _slogdet_jvp(tangents, real, imag, *, out):
    sign_r, sign_i, _ = out
    d_log, d_angle = _trace_of_product(complex_inverse((real, imag)), tangents)
    return [multiply(negative(sign_i), d_angle), multiply(sign_r, d_angle), d_log]


complex_slogdet_p = register(Primitive("complex_slogdet", _slogdet_type, _slogdet_impl,
                                       multiple_results=True, vjp=_slogdet_vjp,
                                       jvp=_slogdet_jvp))


def complex_slogdet(real, imag):
    """(sign's real part, sign's imaginary part, log|det|) of complex matrices."""
    return bind(complex_slogdet_p, real, imag)


# --- complex_eigh --------------------------------------------------------------------------

def _eigh_type(real, imag):
    a = _checked_parts("complex_eigh", real, imag)
    return TensorType(a.shape[:-1], a.dtype), a, a


def _eigh_impl(real, imag):
    w, v = np.linalg.eigh(joined(real, imag))
    return (np.asarray(w, real.dtype), np.asarray(v.real, real.dtype),
            np.asarray(v.imag, real.dtype))


def _eigh_jvp(tangents, real, imag, *, out):
    w, vr, vi = out
    ta_r, ta_i = tangents
    dtype = constant_type(real).dtype
    perturbation = _hermitian(_or_zeros(ta_r, real, dtype), _or_zeros(ta_i, real, dtype))
    v = (vr, vi)
    rotated = _product(_product(_adjoint(v), perturbation), v)
    gaps = _inverse_gaps(w)
    d_v = _product(v, (multiply(gaps, rotated[0]), multiply(gaps, rotated[1])))
    return [_diag_part(rotated[0]), *d_v]


def _or_zeros(tangent, like, dtype):
    return multiply(like, dtype.type(0)) if tangent is None else tangent


def _eigh_vjp(cts, real, imag, *, out):
    ct_w, ct_vr, ct_vi = cts
    w, vr, vi = out
    v = (vr, vi)
    inner_r = None if ct_w is None else _diag_embed(ct_w)
    inner_i = None
    if ct_vr is not None or ct_vi is not None:
        dtype = constant_type(vr).dtype
        k = _product(_adjoint(v), (_or_zeros(ct_vr, vr, dtype), _or_zeros(ct_vi, vr, dtype)))
        gaps = _inverse_gaps(w)
        inner_r = add_tangents(inner_r, multiply(gaps, k[0]))
        inner_i = multiply(gaps, k[1])
    if inner_r is None:
        inner_r = multiply(vr, constant_type(vr).dtype.type(0))
    if inner_i is None:
        inner_i = multiply(vr, constant_type(vr).dtype.type(0))
    full = _product(_product(v, (inner_r, inner_i)), _adjoint(v))
    return list(_hermitian(*full))


complex_eigh_p = register(Primitive("complex_eigh", _eigh_type, _eigh_impl,
                                    multiple_results=True, vjp=_eigh_vjp, jvp=_eigh_jvp))


def complex_eigh(real, imag):
    """(eigenvalues ascending, eigenvectors' real parts, their imaginary parts) of the
    Hermitian matrices whose lower triangles are given."""
    return bind(complex_eigh_p, real, imag)


# --- complex_svd ---------------------------------------------------------------------------

def _svd_type(real, imag, *, full_matrices, compute_uv):
    a = _checked_parts("complex_svd", real, imag, square=False)
    *batch, m, n = a.shape
    k = min(m, n)
    batch = tuple(batch)
    values = TensorType(batch + (k,), a.dtype)
    if not compute_uv:
        return (values,)
    u_columns, vh_rows = (m, n) if full_matrices else (k, k)
    u, vh = TensorType(batch + (m, u_columns), a.dtype), TensorType(batch + (vh_rows, n), a.dtype)
    return u, u, values, vh, vh


def _svd_impl(real, imag, *, full_matrices, compute_uv):
    a = joined(real, imag)
    if not compute_uv:
        return (np.asarray(np.linalg.svd(a, compute_uv=False), real.dtype),)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return (np.asarray(u.real, real.dtype), np.asarray(u.imag, real.dtype),
            np.asarray(s, real.dtype), np.asarray(vh.real, real.dtype),
            np.asarray(vh.imag, real.dtype))


def _svd_factors(real, imag, out, full_matrices, compute_uv):
    """(u, s, vh) of the reduced SVD, u and vh as parts: what the derivatives read
    (computed here without compute_uv: the values alone took less work)."""
    m, n = constant_type(real).shape[-2:]
    if full_matrices and compute_uv and m != n:
        raise NotImplementedError(
            f"numpy.linalg.svd: the derivative of full_matrices=True is not unique for a "
            f"non-square complex matrix ({m}x{n}); use full_matrices=False")
    ur, ui, s, vhr, vhi = out if compute_uv else complex_svd(real, imag)
    return (ur, ui), s, (vhr, vhi)


def _scaled(x, factor):
    return tuple(multiply(p, factor) for p in x)


def _sum(*terms):
    """The sum of complex terms (pairs), those that are None left out."""
    present = [t for t in terms if t is not None]
    return None if not present else (add_tangents(*(t[0] for t in present)),
                                     add_tangents(*(t[1] for t in present)))


def _difference(x, y):
    return subtract(x[0], y[0]), subtract(x[1], y[1])


def _skew(x):
    """x - x^H."""
    return _difference(x, _adjoint(x))


def _imaginary_diagonal(x, s):
    """i Im(diag x) / s as a diagonal matrix: the change of phase the formulas give
    to u (that of v being 0)."""
    diagonal = _diag_embed(divide(_diag_part(x[1]), s))
    return multiply(diagonal, 0), diagonal


def _parts(cts, like):
    """A complex cotangent from its parts' (None: zero); None when both are None."""
    if cts[0] is None and cts[1] is None:
        return None
    dtype = constant_type(like).dtype
    return tuple(_or_zeros(ct, like, dtype) for ct in cts)


def _svd_vjp(cts, real, imag, *, out, full_matrices, compute_uv):
    # Y = diag(ct_s) + (F o skew(U^H ct_U)) S + S (F o skew(V^H ct_V)) + i Im diag(U^H ct_U) / s,
    # the cotangent U Y V^H, plus the parts outside the spans of U and V (m != n)
    if compute_uv:
        ct_ur, ct_ui, ct_s, ct_vhr, ct_vhi = cts
        ct_u, ct_vh = _parts((ct_ur, ct_ui), out[0]), _parts((ct_vhr, ct_vhi), out[3])
    else:
        (ct_s,), ct_u, ct_vh = cts, None, None
    if ct_s is None and ct_u is None and ct_vh is None:
        return [None, None]
    u, s, vh = _svd_factors(real, imag, out, full_matrices, compute_uv and
                            (ct_u is not None or ct_vh is not None))
    v = _adjoint(vh)
    m, n = constant_type(real).shape[-2:]
    gaps = _inverse_gaps(multiply(s, s))  # F[i, j] = 1 / (s_j^2 - s_i^2)
    s_row, s_col = _column(s, -2), _column(s, -1)
    inner = None if ct_s is None else (_diag_embed(ct_s), multiply(_diag_embed(ct_s), 0))
    if ct_u is not None:
        k_u = _product(_adjoint(u), ct_u)
        inner = _sum(inner, _scaled(_scaled(_skew(k_u), gaps), s_row),
                     _imaginary_diagonal(k_u, s))
    if ct_vh is not None:
        k_v = _product(_adjoint(v), _adjoint(ct_vh))
        inner = _sum(inner, _scaled(_scaled(_skew(k_v), gaps), s_col))
    grad = _product(_product(u, inner), vh)
    if ct_u is not None and m > n:  # (I - U U^H) ct_U S^-1 V^H
        outside = _difference(ct_u, _product(u, _product(_adjoint(u), ct_u)))
        grad = _sum(grad, _product(_scaled(outside, divide(1, s_row)), vh))
    if ct_vh is not None and n > m:  # U S^-1 ct_Vh (I - V V^H)
        outside = _difference(ct_vh, _product(_product(ct_vh, v), vh))
        grad = _sum(grad, _product(u, _scaled(outside, divide(1, s_col))))
    return list(grad)


def _svd_jvp(tangents, real, imag, *, out, full_matrices, compute_uv):
    u, s, vh = _svd_factors(real, imag, out, full_matrices, compute_uv)
    v = _adjoint(vh)
    m, n = constant_type(real).shape[-2:]
    dtype = constant_type(real).dtype
    da = tuple(_or_zeros(t, real, dtype) for t in tangents)
    rotated = _product(_product(_adjoint(u), da), v)  # C = U^H da V; ds = Re diag(C)
    if not compute_uv:
        return [_diag_part(rotated[0])]
    gaps = _inverse_gaps(multiply(s, s))
    s_row, s_col = _column(s, -2), _column(s, -1)
    c_s, s_c = _scaled(rotated, s_row), _scaled(rotated, s_col)
    d_u = _product(u, _sum(_scaled(_sum(c_s, _adjoint(c_s)), gaps),
                           _imaginary_diagonal(rotated, s)))
    d_v = _product(v, _scaled(_sum(s_c, _adjoint(s_c)), gaps))
    if m > n:  # + (I - U U^H) da V S^-1
        moved = _product(da, v)
        d_u = _sum(d_u, _scaled(_difference(moved, _product(u, _product(_adjoint(u), moved))),
                                divide(1, s_row)))
    if n > m:  # + (I - V V^H) da^H U S^-1
        moved = _product(_adjoint(da), u)
        d_v = _sum(d_v, _scaled(_difference(moved, _product(v, _product(vh, moved))),
                                divide(1, s_row)))
    d_vh = _adjoint(d_v)
    return [d_u[0], d_u[1], _diag_part(rotated[0]), d_vh[0], d_vh[1]]


complex_svd_p = register(Primitive("complex_svd", _svd_type, _svd_impl,
                                   multiple_results=True, vjp=_svd_vjp, jvp=_svd_jvp))


def complex_svd(real, imag, *, full_matrices=False, compute_uv=True):
    """(U's parts, singular values, Vh's parts), or (singular values,) without
    compute_uv, of complex matrices."""
    return bind(complex_svd_p, real, imag, full_matrices=bool(full_matrices),
                compute_uv=bool(compute_uv))


# --- complex_cholesky ----------------------------------------------------------------------

def _cholesky_type(real, imag):
    a = _checked_parts("complex_cholesky", real, imag)
    return a, a


def _cholesky_impl(real, imag):
    factor = np.linalg.cholesky(joined(real, imag))
    return np.asarray(factor.real, real.dtype), np.asarray(factor.imag, real.dtype)


def _phi(x):
    """The lower triangle of x with its diagonal halved (both parts)."""
    n = constant_type(x[0]).shape[-1]
    mask = np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n)
    return _scaled(x, mask.astype(constant_type(x[0]).dtype))


def _cholesky_jvp(tangents, real, imag, *, out):
    # dL = L phi(L^-1 H L^-H), H the Hermitian part of da
    dtype = constant_type(real).dtype
    perturbation = _hermitian(*(_or_zeros(t, real, dtype) for t in tangents))
    inverse_factor = complex_inverse(out)
    inner = _product(_product(inverse_factor, perturbation), _adjoint(inverse_factor))
    return list(_product(out, _phi(inner)))


def _cholesky_vjp(cts, real, imag, *, out):
    # the Hermitian part of L^-H phi(L^H ct) L^-1
    ct = _parts(cts, out[0])
    if ct is None:
        return [None, None]
    inverse_factor = complex_inverse(out)
    inner = _phi(_product(_adjoint(out), ct))
    return list(_hermitian(*_product(_product(_adjoint(inverse_factor), inner),
                                     inverse_factor)))


complex_cholesky_p = register(Primitive("complex_cholesky", _cholesky_type, _cholesky_impl,
                                        multiple_results=True, vjp=_cholesky_vjp,
                                        jvp=_cholesky_jvp))


def complex_cholesky(real, imag):
    """The parts of L, lower triangular with a positive diagonal, with L L^H the
    Hermitian matrices whose lower triangles are given."""
    return bind(complex_cholesky_p, real, imag)


# --- complex_qr ----------------------------------------------------------------------------

def _qr_type(real, imag, *, complete):
    a = _checked_parts("complex_qr", real, imag, square=False)
    *batch, m, n = a.shape
    k = m if complete else min(m, n)
    q, r = TensorType(tuple(batch) + (m, k), a.dtype), TensorType(tuple(batch) + (k, n), a.dtype)
    return q, q, r, r


def _qr_impl(real, imag, *, complete):
    q, r = np.linalg.qr(joined(real, imag), mode="complete" if complete else "reduced")
    return tuple(np.asarray(part, real.dtype) for part in (q.real, q.imag, r.real, r.imag))


def _qr_unique(real, complete):
    m, n = constant_type(real).shape[-2:]
    if m < n or (complete and m != n):
        raise NotImplementedError(
            f"qr of a complex matrix: the derivative needs mode='reduced' and at least as "
            f"many rows as columns (the factors are unique only then); got a {m}x{n} "
            f"matrix" + (" with mode='complete'" if complete else ""))


def _strictly_lower(x):
    n = constant_type(x[0]).shape[-1]
    return _scaled(x, np.tril(np.ones((n, n)), -1).astype(constant_type(x[0]).dtype))


def _imaginary_diagonal_of(x):
    """i Im(diag x), as a diagonal matrix."""
    diagonal = _diag_embed(_diag_part(x[1]))
    return multiply(diagonal, 0), diagonal


def _qr_jvp(tangents, real, imag, *, out, complete):
    # X = da R^-1, C = Q^H X, W = tril(C, -1) - tril(C, -1)^H + i Im diag(C) (so that
    # R's diagonal stays real, as LAPACK makes it): dQ = Q (W - C) + X, dR = (C - W) R
    _qr_unique(real, complete)
    q, r = (out[0], out[1]), (out[2], out[3])
    dtype = constant_type(real).dtype
    x = _product(tuple(_or_zeros(t, real, dtype) for t in tangents), complex_inverse(r))
    c = _product(_adjoint(q), x)
    lower = _strictly_lower(c)
    w = _sum(_difference(lower, _adjoint(lower)), _imaginary_diagonal_of(c))
    d_q = _sum(_product(q, _difference(w, c)), x)
    d_r = _product(_difference(c, w), r)
    return [*d_q, *d_r]


def _qr_vjp(cts, real, imag, *, out, complete):
    # with M = Q^H ct_Q - ct_R R^H: ct_C = tril(M - M^H, -1) + i Im diag(M) - M,
    # ct_X = ct_Q + Q ct_C, and da's cotangent ct_X R^-H
    _qr_unique(real, complete)
    q, r = (out[0], out[1]), (out[2], out[3])
    ct_q, ct_r = _parts(cts[:2], out[0]), _parts(cts[2:], out[2])
    if ct_q is None and ct_r is None:
        return [None, None]
    big_m = _sum(None if ct_q is None else _product(_adjoint(q), ct_q),
                 None if ct_r is None else _scaled(_product(ct_r, _adjoint(r)), -1))
    ct_c = _difference(_sum(_strictly_lower(_skew(big_m)), _imaginary_diagonal_of(big_m)),
                       big_m)
    ct_x = _sum(ct_q, _product(q, ct_c))
    return list(_product(ct_x, _adjoint(complex_inverse(r))))


complex_qr_p = register(Primitive("complex_qr", _qr_type, _qr_impl, multiple_results=True,
                                  vjp=_qr_vjp, jvp=_qr_jvp))


def complex_qr(real, imag, *, complete=False):
    """The parts of Q and R (R's diagonal real, as LAPACK's geqrf leaves it)."""
    return bind(complex_qr_p, real, imag, complete=bool(complete))


# --- complex_eig ---------------------------------------------------------------------------

def _eig_type(real, imag, *, vectors):
    a = _checked_parts("complex_eig", real, imag)
    values = TensorType(a.shape[:-1], a.dtype)
    return (values, values, a, a) if vectors else (values, values)


def _eig_impl(real, imag, *, vectors):
    a = joined(real, imag)
    if not vectors:
        w = np.linalg.eigvals(a)
        return np.asarray(w.real, real.dtype), np.asarray(w.imag, real.dtype)
    w, v = np.linalg.eig(a)
    return tuple(np.asarray(part, real.dtype) for part in (w.real, w.imag, v.real, v.imag))


def _no_vector_derivative(rule):
    raise NotImplementedError(
        f"numpy.linalg.eig: jitflow gives the {rule} of the "
        f"eigenvalues (once), not of the eigenvectors nor a second derivative; stop the "
        f"derivative with jitflow.stop_gradient, or give one with jitflow.custom_vjp")


def _eigenvectors_of(real, imag, values):
    """The right eigenvectors (parts) of a, column i that of the eigenvalue `values[i]`:
    geev's vectors, each taken for the eigenvalue of its call nearest values[i] (a
    call without vectors may order and round its eigenvalues otherwise)."""
    found_r, found_i, vectors_r, vectors_i = complex_eig(real, imag)
    (values_r, values_i), rank = values, len(constant_type(real).shape)
    distance = add(_square(subtract(_column(values_r, -1), _column(found_r, -2))),
                   _square(subtract(_column(values_i, -1), _column(found_i, -2))))
    nearest = argmin(distance, axis=rank - 1)
    n = constant_type(real).shape[-1]
    chosen = cast(equal(_column(nearest, -1), iota((n,), constant_type(nearest).dtype)),
                  constant_type(real).dtype)  # chosen[i, j]: eigenvalue i is found j
    return matmul(vectors_r, _mT(chosen)), matmul(vectors_i, _mT(chosen))


def _square(x):
    return multiply(x, x)


def _eig_vjp(cts, real, imag, *, out, vectors):
    # dw_i = (V^-1 da V)_ii: da's cotangent V^-H diag(ct_w) V^H
    if vectors and (cts[2] is not None or cts[3] is not None):
        _no_vector_derivative("derivative")
    ct_w = _parts(cts[:2], out[0])
    if ct_w is None:
        return [None, None]
    v = (out[2], out[3]) if vectors else _eigenvectors_of(real, imag, out[:2])
    scaled = (_diag_embed(ct_w[0]), _diag_embed(ct_w[1]))
    return list(_product(_product(_adjoint(complex_inverse(v)), scaled), _adjoint(v)))


def _eig_jvp(tangents, real, imag, *, out, vectors):
    if vectors:
        _no_vector_derivative("forward derivative")
    v = _eigenvectors_of(real, imag, out)
    dtype = constant_type(real).dtype
    da = tuple(_or_zeros(t, real, dtype) for t in tangents)
    rotated = _product(_product(complex_inverse(v), da), v)
    return [_diag_part(rotated[0]), _diag_part(rotated[1])]


complex_eig_p = register(Primitive("complex_eig", _eig_type, _eig_impl,
                                   multiple_results=True, vjp=_eig_vjp, jvp=_eig_jvp))


def complex_eig(real, imag, *, vectors=True):
    """(eigenvalues' parts[, right eigenvectors' parts]) of general complex matrices,
    as LAPACK's geev gives them (each vector of unit norm, its largest part real)."""
    return bind(complex_eig_p, real, imag, vectors=bool(vectors))


# --- eig of real matrices ------------------------------------------------------------------
# A real matrix's eigenvalues are those of the complex matrix a + 0i, so the complex
# rules give their derivatives: a real input's cotangent is the real part's.

def _real_eig_vjp(cts, a, *, out, vectors):
    if vectors and cts[2] is not None:
        _no_vector_derivative("derivative")
    dtype = constant_type(a).dtype
    return _eig_vjp(cts[:2], a, _or_zeros(None, a, dtype), out=out[:2], vectors=False)[:1]


def _real_eig_jvp(tangents, a, *, out, vectors):
    if vectors:
        _no_vector_derivative("forward derivative")
    dtype = constant_type(a).dtype
    zeros = _or_zeros(None, a, dtype)
    return _eig_jvp([_or_zeros(tangents[0], a, dtype), zeros], a, zeros, out=out,
                    vectors=False)


# installed from here: ops/linalg.py, where eig_p lives, sits below this module
eig_p.vjp, eig_p.jvp = _real_eig_vjp, _real_eig_jvp


__all__ = ["complex_cholesky", "complex_eig", "complex_eigh", "complex_inverse",
           "complex_qr", "complex_slogdet", "complex_solve", "complex_svd"]
