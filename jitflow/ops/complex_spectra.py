"""numpy.linalg's spectra of complex matrices, one primitive each, batched over leading
axes: complex_eigh, complex_svd and complex_eig (LAPACK's heevd, gesdd and geev on the
parts interleaved, in native code); and the derivative rules of eig of real matrices,
which are those of the complex matrix a + 0i.

Derivatives are those of the parts, real-linear maps; in complex form:
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
- eig of a general matrix: dw_i = (V^-1 da V)_ii, and the eigenvectors as geev
  normalizes them (unit norm, the largest component real): dV = V (F o C) with
  C = V^-1 da V, F[i, j] = 1 / (w[j] - w[i]), then the changes of each vector's norm
  and of its largest component's phase taken out (_eig_tangents), so the derivative is
  that of the vectors NumPy returns, phases included; the rules are differentiable
  again. The eigenvalues must be distinct, as for any derivative of them.
"""
import numpy as np

from ..ir.primitive import Primitive, register
from ..ir.types import TensorType
from ..trace import bind, constant_type
from .complex_linalg import (_adjoint, _checked_parts, _difference, _hermitian, _or_zeros,
                             _parts, _product, _scaled, _skew, _sum, complex_inverse,
                             joined)
from .contraction import matmul
from .creation import iota
from .elementwise import (add, add_tangents, divide, equal, less, logical_and, logical_or,
                          multiply, negative, subtract)
from .linalg import _column, _diag_embed, _diag_part, _inverse_gaps, _mT, eig_p
from .reductions import argmax, argmin, reduce_sum
from .select import cast, where


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


def _imaginary_diagonal(x, s):
    """i Im(diag x) / s as a diagonal matrix: the change of phase the formulas give
    to u (that of v being 0)."""
    diagonal = _diag_embed(divide(_diag_part(x[1]), s))
    return multiply(diagonal, 0), diagonal


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


def _eigenvectors_of(real, imag, values):
    """The right eigenvectors (parts) of a, column i that of the eigenvalue `values[i]`:
    geev's vectors from a call of its own (which may order and round its eigenvalues
    otherwise), matched one to one (_matched)."""
    found_r, found_i, vectors_r, vectors_i = complex_eig(real, imag)
    chosen = _matched(values, (found_r, found_i))
    return matmul(vectors_r, _mT(chosen)), matmul(vectors_i, _mT(chosen))


def _matched(values, found):
    """chosen[..., i, j] = 1 where eigenvalue i is found eigenvalue j, one to one: each
    takes the nearest where no two take the same (a conjugate pair, whose real parts two
    calls may round apart, keeps each its own); where some do (a repeated eigenvalue),
    the two lists are matched by their order along re + c im (c irrational), in which a
    repeated eigenvalue's copies sit together and get as many vectors as it repeats."""
    n, dtype = constant_type(values[0]).shape[-1], constant_type(values[0]).dtype
    distance = add(_squared(subtract(_column(values[0], -1), _column(found[0], -2))),
                   _squared(subtract(_column(values[1], -1), _column(found[1], -2))))
    rank = len(constant_type(distance).shape)
    nearest = cast(equal(argmin(distance, axis=rank - 1, keepdims=True),
                         iota((1, n), np.int64, axis=1)), dtype)
    takers = reduce_sum(nearest, axes=(rank - 2,))  # [..., j]: how many took found j
    one_to_one = equal(reduce_sum(cast(equal(takers, 1), dtype), axes=(rank - 2,)), n)
    by_order = cast(equal(_column(_places(*values), -1), _column(_places(*found), -2)), dtype)
    return where(_column(_column(one_to_one, -1), -1), nearest, by_order)


_SLANT = 0.6180339887498949  # (sqrt(5) - 1) / 2


def _places(real, imag):
    """Each eigenvalue's place among its matrix's in the order of re + c im, equal keys
    in the order they come: a permutation of 0 .. n - 1."""
    n = constant_type(real).shape[-1]
    key = add(real, multiply(imag, constant_type(real).dtype.type(_SLANT)))
    mine, other = _column(key, -1), _column(key, -2)  # [i, 1], [1, j]
    earlier = less(iota((1, n), np.int64, axis=1), iota((n, 1), np.int64, axis=0))
    before = logical_or(less(other, mine), logical_and(equal(other, mine), earlier))
    return reduce_sum(cast(before, np.int64), axes=(len(constant_type(real).shape),))


def _squared(x):
    return multiply(x, x)


def _eig_vjp(cts, real, imag, *, out, vectors):
    ct_w = _parts(cts[:2], out[0])
    ct_v = _parts(cts[2:], out[2]) if vectors else None
    if ct_w is None and ct_v is None:
        return [None, None]
    v = (out[2], out[3]) if vectors else _eigenvectors_of(real, imag, out[:2])
    return list(_eig_cotangent((out[0], out[1]), v, ct_w, ct_v))


def _eig_jvp(tangents, real, imag, *, out, vectors):
    dtype = constant_type(real).dtype
    da = tuple(_or_zeros(t, real, dtype) for t in tangents)
    if vectors:
        d_w, d_v = _eig_tangents((out[0], out[1]), (out[2], out[3]), da)
        return [*d_w, *d_v]
    v = _eigenvectors_of(real, imag, out)
    rotated = _product(_product(complex_inverse(v), da), v)
    return [_diag_part(rotated[0]), _diag_part(rotated[1])]


# The eigenvectors' derivative. With C = V^-1 da V and F[i, j] = 1 / (w[j] - w[i]),
# dV = V (F o C) is the change of the eigenvectors whose components along their own
# directions do not change; geev then scales each vector to unit norm and turns it so
# that its largest component is real, which adds V diag(i theta - n): n the change of
# the norm, theta the turn that keeps that component real.

def _eig_tangents(w, v, da):
    rotated = _product(_product(complex_inverse(v), da), v)
    d_w = (_diag_part(rotated[0]), _diag_part(rotated[1]))
    d_v = _product(v, _hadamard(_complex_gaps(w), rotated))
    d_v = _difference(d_v, _column_scaled(v, _column_dot(v, d_v)))
    largest, at_largest = _largest_components(v)
    theta = divide(negative(_column_sum(multiply(largest, d_v[1]))), at_largest)
    return d_w, _sum(d_v, _column_scaled((negative(v[1]), v[0]), theta))


def _eig_cotangent(w, v, ct_w, ct_v):
    """da's cotangent V^-H (diag(ct_w) + the eigenvectors' part) V^H: the transpose of
    _eig_tangents (for the real inner product Re tr(x^H y) of the parts)."""
    inner = None if ct_w is None else (_diag_embed(ct_w[0]), _diag_embed(ct_w[1]))
    if ct_v is not None:
        largest, at_largest = _largest_components(v)
        turn = divide(_column_dot((negative(v[1]), v[0]), ct_v), at_largest)
        ct_v = (ct_v[0], subtract(ct_v[1], multiply(largest, _column(turn, -2))))
        ct_v = _difference(ct_v, _column_scaled(v, _column_dot(v, ct_v)))
        gaps = _complex_gaps(w)
        inner = _sum(inner, _hadamard((gaps[0], negative(gaps[1])),
                                      _product(_adjoint(v), ct_v)))
    return _product(_product(_adjoint(complex_inverse(v)), inner), _adjoint(v))


def _complex_gaps(w):
    """F[..., i, j] = 1 / (w[j] - w[i]) of complex w, 0 where the two coincide."""
    gap_r = subtract(_column(w[0], -2), _column(w[0], -1))
    gap_i = subtract(_column(w[1], -2), _column(w[1], -1))
    dtype = constant_type(w[0]).dtype
    tied = cast(logical_and(equal(gap_r, 0), equal(gap_i, 0)), dtype)
    gap_r = add(gap_r, tied)
    size = add(multiply(gap_r, gap_r), multiply(gap_i, gap_i))
    apart = subtract(dtype.type(1), tied)
    return (multiply(divide(gap_r, size), apart), multiply(divide(negative(gap_i), size), apart))


def _hadamard(x, y):
    return (subtract(multiply(x[0], y[0]), multiply(x[1], y[1])),
            add(multiply(x[0], y[1]), multiply(x[1], y[0])))


def _column_sum(x):
    return reduce_sum(x, axes=(len(constant_type(x).shape) - 2,))


def _column_dot(x, y):
    """Re sum_i conj(x[i, k]) y[i, k], per column k."""
    return _column_sum(add(multiply(x[0], y[0]), multiply(x[1], y[1])))


def _column_scaled(x, factor):
    """x[i, k] * factor[k] (factor real)."""
    return _scaled(x, _column(factor, -2))


def _largest_components(v):
    """(one-hot [i, k]: i is the largest |v[i, k]| of column k, its real part)."""
    magnitude = add(multiply(v[0], v[0]), multiply(v[1], v[1]))
    rank = len(constant_type(magnitude).shape)
    top = argmax(magnitude, axis=rank - 2, keepdims=True)
    n = constant_type(magnitude).shape[-1]
    rows = iota((n, 1), constant_type(top).dtype)
    largest = cast(equal(top, rows), constant_type(magnitude).dtype)
    return largest, _column_sum(multiply(largest, v[0]))


complex_eig_p = register(Primitive("complex_eig", _eig_type, _eig_impl,
                                   multiple_results=True, vjp=_eig_vjp, jvp=_eig_jvp))


def complex_eig(real, imag, *, vectors=True):
    """(eigenvalues' parts[, right eigenvectors' parts]) of general complex matrices,
    as LAPACK's geev gives them (each vector of unit norm, its largest part real)."""
    return bind(complex_eig_p, real, imag, vectors=bool(vectors))


# --- eig of real matrices ------------------------------------------------------------------
# A real matrix's eigenvalues and eigenvectors are those of the complex matrix a + 0i,
# so the complex rules give their derivatives: a real input's cotangent is the real
# part's. geev packs a conjugate pair's vectors v +- iu into two real columns, v then u:
# column k is Re V[:, k], or -Im V[:, k] where w[k]'s imaginary part is negative.

def _real_eig_vjp(cts, a, *, out, vectors):
    dtype = constant_type(a).dtype
    ct_w = _parts(cts[:2], out[0])
    ct_v = None
    if vectors and cts[2] is not None:
        second = _second_of_pair(out[1])
        ct_v = (where(second, dtype.type(0), cts[2]), where(second, negative(cts[2]),
                                                            dtype.type(0)))
    if ct_w is None and ct_v is None:
        return [None]
    zeros = _or_zeros(None, a, dtype)
    v = _unpacked(out[2], out[1]) if vectors else _eigenvectors_of(a, zeros, out[:2])
    return [_eig_cotangent((out[0], out[1]), v, ct_w, ct_v)[0]]


def _real_eig_jvp(tangents, a, *, out, vectors):
    dtype = constant_type(a).dtype
    zeros = _or_zeros(None, a, dtype)
    da = _or_zeros(tangents[0], a, dtype)
    if not vectors:
        return _eig_jvp([da, zeros], a, zeros, out=out, vectors=False)
    d_w, d_v = _eig_tangents((out[0], out[1]), _unpacked(out[2], out[1]), (da, zeros))
    return [*d_w, where(_second_of_pair(out[1]), negative(d_v[1]), d_v[0])]


def _second_of_pair(imag):
    """[..., 1, k]: w[k] is the second of a conjugate pair (its imaginary part < 0)."""
    return _column(less(imag, 0), -2)


def _unpacked(packed, imag):
    """The complex eigenvectors (parts) from geev's real columns."""
    n, dtype = constant_type(packed).shape[-1], constant_type(packed).dtype
    before = matmul(packed, np.eye(n, k=1, dtype=dtype))  # [:, k]: packed[:, k - 1]
    after = matmul(packed, np.eye(n, k=-1, dtype=dtype))  # [:, k]: packed[:, k + 1]
    second, first = _second_of_pair(imag), _column(less(negative(imag), 0), -2)
    real = where(second, before, packed)
    return real, where(second, negative(packed), where(first, after, dtype.type(0)))


# installed from here: ops/linalg.py, where eig_p lives, sits below this module
eig_p.vjp, eig_p.jvp = _real_eig_vjp, _real_eig_jvp


__all__ = ["complex_eig", "complex_eigh", "complex_svd"]
