"""numpy.linalg's factorizations of complex matrices, one primitive each, batched over
leading axes: complex_slogdet and complex_eigh. A complex matrix is given as its real
and imaginary parts (two real arrays of one shape and float dtype), and complex results
come back as parts, so the graph holds real arrays only. Native code calls LAPACK's
complex routines (getrf, heevd) on the parts interleaved; eagerly they are
numpy.linalg's own functions.

Derivatives are those of the parts, real-linear maps; in complex form:
- slogdet: d log det a = tr(a^-1 da), its real part log|det a|'s, its imaginary part
  the angle of the sign's;
- eigh reads the lower triangle of a Hermitian matrix and is differentiated as a
  Hermitian function of it (the perturbation made Hermitian, so its cotangent is
  Hermitian); with C = V^H da V, dw = diag(C) and dV = V (F o C), F[i, j] =
  1 / (w[j] - w[i]). Eigenvectors are unique up to a phase each: the formula takes the
  change of phase to be 0, as JAX's does, so only functions that do not depend on the
  phases (projections v v^H, |v|, the values) have the derivative of the function
  they compute; where two eigenvalues coincide, F leaves out their terms (as eigh's).
"""
import numpy as np

from ..ir.primitive import Primitive, register
from ..ir.types import TensorType, broadcast_shapes
from ..trace import bind, constant_type
from .contraction import matmul
from .elementwise import add, add_tangents, multiply, negative, subtract
from .linalg import (_checked_matrix, _column, _diag_embed, _diag_part, _inverse_gaps,
                     _mT, _symmetrized, inverse)
from .reductions import reduce_sum
from .shapes import broadcast_to
from .slicing import concatenate, slice_array


def _checked_parts(name, real, imag):
    """The type of the complex matrices: the parts' leading axes broadcast."""
    _checked_matrix(name, real)
    _checked_matrix(name, imag)
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


def _block(x, rows, columns):
    """x[..., rows, columns] for slices of the last two axes."""
    shape = constant_type(x).shape
    lead = len(shape) - 2
    return slice_array(x, starts=(0,) * lead + (rows.start, columns.start),
                       steps=(1,) * len(shape),
                       sizes=shape[:-2] + (rows.stop - rows.start,
                                           columns.stop - columns.start))


def complex_inverse(a):
    """a^-1 by the real matrix [[ar, -ai], [ai, ar]] of twice the size, whose inverse is
    [[xr, -xi], [xi, xr]] for x = a^-1."""
    shape = broadcast_shapes(constant_type(a[0]).shape, constant_type(a[1]).shape)
    ar, ai = (broadcast_to(part, shape) for part in a)
    rank, n = len(shape), shape[-1]
    embedded = concatenate([concatenate([ar, negative(ai)], axis=rank - 1),
                            concatenate([ai, ar], axis=rank - 1)], axis=rank - 2)
    full = inverse(embedded)
    return _block(full, slice(0, n), slice(0, n)), _block(full, slice(n, 2 * n), slice(0, n))


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
    ct_angle = add_tangents(None if ct_sign_r is None else multiply(ct_sign_r, negative(sign_i)),
                            None if ct_sign_i is None else multiply(ct_sign_i, sign_r))
    if ct_log is None and ct_angle is None:
        return [None, None]
    br, bi = (_mT(p) for p in complex_inverse((real, imag)))
    scale = lambda ct, x: None if ct is None else multiply(_column(_column(ct, -1), -1), x)  # noqa: E731
    return [add_tangents(scale(ct_log, br), scale(ct_angle, bi)),
            add_tangents(_negated(scale(ct_log, bi)), scale(ct_angle, br))]


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


__all__ = ["complex_eigh", "complex_slogdet"]
