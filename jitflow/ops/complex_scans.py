"""complex_cumprod: the running product of complex values given as their real and
imaginary parts, multiplied in order along the axis as NumPy's cumprod multiplies,
each product (ar br - ai bi) + (ar bi + ai br) i.

It is holomorphic: d out[j] = x[j] d out[j-1] + dx[j] out[j-1]. Its reverse rule is
the transpose of that map on the parts, which on complex cotangents c is the adjoint:
dx[i] = conj(out[i-1]) r[i] with r[i] = c[i] + conj(x[i+1]) r[i+1], a scan from the
other end. Neither divides by x, so both are right where x holds zeros.
"""
import numpy as np

from ..ir.primitive import Primitive, register
from ..trace import bind, constant_type
from .elementwise import add, multiply, negative, subtract
from .reductions import _cumsum_type, _reverse, _shifted


def _type(real, imag, *, axis):
    if real.shape != imag.shape or real.dtype != imag.dtype or real.dtype.kind != "f":
        raise TypeError(f"complex_cumprod: the parts must be float arrays of one shape and "
                        f"dtype, got {real.dtype}{list(real.shape)} and "
                        f"{imag.dtype}{list(imag.shape)}")
    out = _cumsum_type(real, axis=axis)
    return out, out


def _impl(real, imag, *, axis):
    z = np.empty(real.shape, np.result_type(real, np.complex64))
    z.real, z.imag = real, imag
    product = np.cumprod(z, axis=axis)
    return product.real.astype(real.dtype), product.imag.astype(real.dtype)


def _times(a, b):
    """The complex product of a and b, each (real part, imaginary part)."""
    (ar, ai), (br, bi) = a, b
    return subtract(multiply(ar, br), multiply(ai, bi)), add(multiply(ar, bi), multiply(ai, br))


def _conjugate(a):
    return a[0], negative(a[1])


def _shifted_parts(a, shift, axis, fill):
    return _shifted(a[0], shift, axis, fill), _shifted(a[1], shift, axis, 0)


def _linear_scan(h, d, axis):
    """s[t] = h[t] + d[t] s[t-1] along axis (s[-1] = 0), complex, in log2(n) doubling
    steps (as ops/reductions.py's real one)."""
    n, shift = constant_type(h[0]).shape[axis], 1
    while shift < n:
        carried = _times(d, _shifted_parts(h, shift, axis, 0))
        h = add(h[0], carried[0]), add(h[1], carried[1])
        d = _times(d, _shifted_parts(d, shift, axis, 0))
        shift *= 2
    return h


def _parts_or_zeros(parts, like):
    zero = constant_type(like).dtype.type(0)
    return tuple(multiply(like, zero) if p is None else p for p in parts)


def _jvp(tangents, real, imag, *, axis, out):
    dx = _parts_or_zeros(tangents, real)
    before = _shifted_parts(out, 1, axis, 1)  # the product of the elements before each
    return list(_linear_scan(_times(dx, before), (real, imag), axis))


def _vjp(cts, real, imag, *, axis, out):
    if cts[0] is None and cts[1] is None:
        return [None, None]
    c = _parts_or_zeros(cts, real)
    following = _conjugate(_shifted_parts((real, imag), -1, axis, 0))
    backwards = [_reverse(p, axis) for p in c], [_reverse(p, axis) for p in following]
    r = [_reverse(p, axis) for p in _linear_scan(*backwards, axis)]
    return list(_times(r, _conjugate(_shifted_parts(out, 1, axis, 1))))


complex_cumprod_p = register(Primitive("complex_cumprod", _type, _impl,
                                       multiple_results=True, vjp=_vjp, jvp=_jvp))


def complex_cumprod(real, imag, *, axis):
    """(real part, imaginary part) of the running product of real + imag i along axis."""
    return bind(complex_cumprod_p, real, imag, axis=axis)


__all__ = ["complex_cumprod"]
