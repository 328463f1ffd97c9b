"""numpy.linalg's systems and factorizations of complex matrices, one primitive each,
batched over leading axes: complex_solve, complex_slogdet, complex_cholesky and
complex_qr (their spectra, eigh, svd and eig, are in complex_spectra.py), and the
helpers both use for complex matrices held as parts. A complex matrix is given as its
real and imaginary parts (two real arrays of one shape and float dtype), and complex
results come back as parts, so the graph holds real arrays only. Native code calls
LAPACK's complex routines (gesv, getrf, potrf, geqrf and ungqr) on the parts
interleaved; eagerly they are numpy.linalg's own functions.

Derivatives are those of the parts, real-linear maps; in complex form:
- solve: dx = a^-1 (db - da x), so b's cotangent is a^-H ct and a's -a^-H ct x^H;
- slogdet: d log det a = tr(a^-1 da), its real part log|det a|'s, its imaginary part
  the angle of the sign's;
- cholesky, as a Hermitian function of its operand's lower triangle: dL = L phi(L^-1 H
  L^-H), phi the lower triangle with its diagonal halved, H da's Hermitian part;
- qr (reduced, at least as many rows as columns), R's diagonal kept real as LAPACK
  keeps it, so that the factors are unique: X = da R^-1, C = Q^H X, W = tril(C, -1) -
  tril(C, -1)^H + i Im diag(C), dQ = Q (W - C) + X, dR = (C - W) R;
"""
import numpy as np

from ..ir.primitive import Primitive, register
from ..ir.types import TensorType, broadcast_shapes
from ..trace import bind, constant_type
from .contraction import matmul
from .elementwise import add, add_tangents, multiply, negative, subtract
from .linalg import _checked_matrix, _column, _diag_embed, _diag_part, _mT, _symmetrized
from .reductions import reduce_sum


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


def _or_zeros(tangent, like, dtype):
    return multiply(like, dtype.type(0)) if tangent is None else tangent


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


def _parts(cts, like):
    """A complex cotangent from its parts' (None: zero); None when both are None."""
    if cts[0] is None and cts[1] is None:
        return None
    dtype = constant_type(like).dtype
    return tuple(_or_zeros(ct, like, dtype) for ct in cts)



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


__all__ = ["complex_cholesky", "complex_inverse", "complex_qr", "complex_slogdet",
           "complex_solve"]
