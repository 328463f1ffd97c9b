"""dft: the discrete Fourier transform of complex rows held as two real arrays,
X_k = sum_j x_j e^(sign 2 pi i j k / n), unnormalized, along the last axis of (rows, n)
parts, for lengths whose prime factors are small (codegen/loops/fourier.py). numpy.fft's
transforms are built on it (complex_values/transforms.py).

It is linear in its operands, and its adjoint for the real inner product of the parts is
the transform of the opposite sign (the conjugate transpose of a symmetric matrix of
roots of unity), which gives both derivative rules.
"""
import numpy as np

from ..codegen.loops.fourier import LARGEST_RADIX, supported
from ..ir.types import TensorType
from ..ir.primitive import Primitive, register
from ..trace import bind, constant_type
from .slicing import zeros

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _dft_type(real, imag, *, sign):
    if real.dtype not in FLOATS or imag.dtype != real.dtype:
        raise TypeError(f"dft: the parts must be float32 or float64 arrays of one dtype, "
                        f"got {real.dtype} and {imag.dtype}")
    if len(real.shape) != 2 or real.shape != imag.shape:
        raise ValueError(f"dft: the parts must be (rows, n) arrays of one shape, got "
                         f"{real.shape} and {imag.shape}")
    if not supported(real.shape[1]):
        raise ValueError(f"dft: the length {real.shape[1]} has a prime factor above "
                         f"{LARGEST_RADIX}; split it first")
    if sign not in (-1, 1):
        raise ValueError(f"dft: sign must be -1 or 1, got {sign!r}")
    part = TensorType(real.shape, real.dtype)
    return part, part


def _dft_impl(real, imag, *, sign):
    _dft_type(real, imag, sign=sign)  # eagerly too: the same refusals as when traced
    x = real + 1j * imag.astype(np.float64 if real.dtype == np.float64 else np.float32)
    if sign < 0:
        y = np.fft.fft(x, axis=-1)
    else:
        y = np.fft.ifft(x, axis=-1, norm="forward")  # unscaled
    return y.real.astype(real.dtype), y.imag.astype(real.dtype)


def _parts(pair, like):
    """Both parts, a zero one standing for a part with no cotangent or tangent."""
    shape, dtype = constant_type(like).shape, constant_type(like).dtype
    return [zeros(shape, dtype) if part is None else part for part in pair]


def _dft_vjp(cts, real, imag, *, sign, out):
    if cts[0] is None and cts[1] is None:
        return [None, None]
    return list(dft(*_parts(cts, real), sign=-sign))


def _dft_jvp(tangents, real, imag, *, sign, out):
    if tangents[0] is None and tangents[1] is None:
        return [None, None]
    return list(dft(*_parts(tangents, real), sign=sign))


dft_p = register(Primitive("dft", _dft_type, _dft_impl, multiple_results=True,
                           vjp=_dft_vjp, jvp=_dft_jvp))


def dft(real, imag, *, sign): return bind(dft_p, real, imag, sign=int(sign))


__all__ = ["dft"]
