"""Discrete Fourier transforms of traced values along their last axis.

A length whose prime factors are all small (up to codegen/loops/fourier.py's
LARGEST_RADIX) is one ops.dft, native code's mixed-radix FFT. Any other length is
split as Cooley and Tukey split it, n = n1 n2 with n2 that smooth part: n2 transforms
of length n1, a multiplication by the twiddle factors, n1 transforms of length n2. What
remains of a large prime factor is one product with the matrix of roots of unity (two
real products for a real input, four for a complex one) up to PRIME_DENSE_LIMIT, or, a
longer prime length, a circular convolution of a power-of-two length (Bluestein), whose
transforms are ops.dft again. Every constant (roots of unity, twiddles, the chirp) is
computed in float64 from exact integer phases and rounded once to the part dtype.
Everything is ops.dft and real products, reshapes and multiplications, so transforms
fuse, compile and differentiate as any real code does.
"""
import numpy as np

from .. import numpy as jnp
from .. import ops
from ..codegen.loops.fourier import LARGEST_RADIX, supported

DENSE_LIMIT = 64  # lengths up to this (and primes up to PRIME_DENSE_LIMIT) are one product
PRIME_DENSE_LIMIT = 256


def _roots(phases, n, sign, dtype):
    """(cos, sin) of sign * 2 pi phases / n, phases exact integers reduced mod n."""
    angle = sign * 2 * np.pi * (np.asarray(phases, np.int64) % n) / n
    return np.cos(angle).astype(dtype), np.sin(angle).astype(dtype)


def dft_last(real, imag, sign):
    """The DFT along the last axis, sum_j x_j e^(sign 2 pi i j k / n), of parts (imag
    None: a real input). Returns (real, imag)."""
    n = real.shape[-1]
    dtype = real.dtype
    if n == 1:
        return real, imag if imag is not None else jnp.zeros_like(real)
    if supported(n):
        return _native(real, imag, sign)
    smooth = _smooth_part(n)
    if smooth > 1:
        return _split(real, imag, sign, n // smooth, smooth, dtype)
    if n <= DENSE_LIMIT or (_smallest_factor(n) == n and n <= PRIME_DENSE_LIMIT):
        return _dense(real, imag, sign, dtype)
    factor = _balanced_factor(n)
    if factor == 1:
        return _bluestein(real, imag, sign, dtype)
    return _split(real, imag, sign, factor, n // factor, dtype)


def real_dft(real, sign):
    """The first n // 2 + 1 terms of the DFT of real rows (the rest are their
    conjugates). An even length is one complex transform of half the length, of the
    even-indexed samples as real parts and the odd-indexed as imaginary parts, whose
    halves are then told apart by the symmetry of a real signal's spectrum."""
    n = real.shape[-1]
    if n % 2:
        fr, fi = dft_last(real, None, sign)
        return fr[..., :n // 2 + 1], fi[..., :n // 2 + 1]
    pairs = jnp.reshape(real, real.shape[:-1] + (n // 2, 2))
    zr, zi = dft_last(pairs[..., 0], pairs[..., 1], sign)
    # Z at k and at h - k (indices mod h), for k = 0..h: one array read both ways
    kr, ki = (jnp.concatenate([z, z[..., :1]], axis=-1) for z in (zr, zi))
    mr, mi = kr[..., ::-1], ki[..., ::-1]
    even_r, even_i = _halved(jnp.add(kr, mr)), _halved(jnp.subtract(ki, mi))
    odd_r, odd_i = _halved(jnp.add(ki, mi)), _halved(jnp.subtract(mr, kr))
    cos, sin = _roots(np.arange(n // 2 + 1), n, sign, real.dtype)
    return (jnp.add(even_r, jnp.subtract(jnp.multiply(odd_r, cos), jnp.multiply(odd_i, sin))),
            jnp.add(even_i, jnp.add(jnp.multiply(odd_i, cos), jnp.multiply(odd_r, sin))))


def hermitian_inverse(real, imag, n):
    """The real signal of length n whose unnormalized inverse DFT has the first
    n // 2 + 1 terms (real, imag), the others their conjugates. An even length is one
    complex inverse transform of half the length, whose real and imaginary parts are
    the signal's even- and odd-indexed samples."""
    half = n // 2 + 1
    mirrored = slice(n - half, 0, -1)  # the term at k >= half is conj(X[n - k])
    if n % 2:
        full_r = jnp.concatenate([real, real[..., mirrored]], axis=-1)
        full_i = jnp.concatenate([imag, jnp.negative(imag[..., mirrored])], axis=-1)
        return dft_last(full_r, full_i, 1)[0]
    h = n // 2
    head_r, head_i = real[..., :h], imag[..., :h]  # X_k, k < h
    tail_r, tail_i = real[..., :0:-1], imag[..., :0:-1]  # X_(h-k) = conj(X_(k+h))
    even_r, even_i = jnp.add(head_r, tail_r), jnp.subtract(head_i, tail_i)
    diff_r, diff_i = jnp.subtract(head_r, tail_r), jnp.add(head_i, tail_i)
    cos, sin = _roots(np.arange(h), n, 1, real.dtype)
    odd_r = jnp.subtract(jnp.multiply(diff_r, cos), jnp.multiply(diff_i, sin))
    odd_i = jnp.add(jnp.multiply(diff_r, sin), jnp.multiply(diff_i, cos))
    zr, zi = dft_last(jnp.subtract(even_r, odd_i), jnp.add(even_i, odd_r), 1)
    return jnp.reshape(jnp.stack([zr, zi], axis=-1), zr.shape[:-1] + (n,))


def _halved(x):
    return jnp.multiply(x, np.asarray(0.5, x.dtype))


def _native(real, imag, sign):
    """ops.dft on the rows of (..., n) parts."""
    shape = real.shape
    rows = (int(np.prod(shape[:-1], dtype=np.int64)), shape[-1])
    if imag is None:
        imag = jnp.zeros_like(real)
    result = ops.dft(jnp.reshape(real, rows), jnp.reshape(imag, rows), sign=sign)
    return tuple(jnp.reshape(part, shape) for part in result)


def _smooth_part(n):
    """The largest divisor of n whose prime factors ops.dft takes."""
    part = 1
    for factor in range(2, LARGEST_RADIX + 1):
        while n % factor == 0:
            part *= factor
            n //= factor
    return part


def _dense(real, imag, sign, dtype):
    n = real.shape[-1]
    index = np.arange(n)
    cos, sin = _roots(np.outer(index, index), n, sign, dtype)
    if imag is None:
        return jnp.matmul(real, cos), jnp.matmul(real, sin)
    return (jnp.subtract(jnp.matmul(real, cos), jnp.matmul(imag, sin)),
            jnp.add(jnp.matmul(real, sin), jnp.matmul(imag, cos)))


def _split(real, imag, sign, n1, n2, dtype):
    """Cooley-Tukey: j = n2 j1 + j2, k = k1 + n1 k2."""
    n = n1 * n2
    lead = real.shape[:-1]

    def by_j2_j1(part):  # [.., j1, j2] -> [.., j2, j1]
        return None if part is None else jnp.swapaxes(jnp.reshape(part, lead + (n1, n2)), -1, -2)
    real, imag = dft_last(by_j2_j1(real), by_j2_j1(imag), sign)  # [.., j2, k1]
    cos, sin = _roots(np.outer(np.arange(n2), np.arange(n1)), n, sign, dtype)
    real, imag = (jnp.subtract(jnp.multiply(real, cos), jnp.multiply(imag, sin)),
                  jnp.add(jnp.multiply(real, sin), jnp.multiply(imag, cos)))
    real, imag = dft_last(jnp.swapaxes(real, -1, -2), jnp.swapaxes(imag, -1, -2), sign)
    # [.., k1, k2] -> k = k1 + n1 k2: [.., k2, k1] flattened
    return (jnp.reshape(jnp.swapaxes(real, -1, -2), lead + (n,)),
            jnp.reshape(jnp.swapaxes(imag, -1, -2), lead + (n,)))


def _bluestein(real, imag, sign, dtype):
    """A prime length n as a circular convolution of length m >= 2n - 1, a power of two:
    X_k = w_k sum_j (x_j w_j) conj(w)_(k-j), with w_j = e^(sign pi i j^2 / n)."""
    n = real.shape[-1]
    m = 1 << (2 * n - 2).bit_length()
    squares = np.arange(n, dtype=np.int64) ** 2 % (2 * n)
    chirp_cos, chirp_sin = _roots(squares, 2 * n, sign, np.float64)
    cos, sin = chirp_cos.astype(dtype), chirp_sin.astype(dtype)
    if imag is None:
        ar, ai = jnp.multiply(real, cos), jnp.multiply(real, sin)
    else:
        ar = jnp.subtract(jnp.multiply(real, cos), jnp.multiply(imag, sin))
        ai = jnp.add(jnp.multiply(real, sin), jnp.multiply(imag, cos))
    pad = [(0, 0)] * (real.ndim - 1) + [(0, m - n)]
    ar, ai = jnp.pad(ar, pad), jnp.pad(ai, pad)
    kernel = np.zeros(m, np.complex128)  # conj(w) at 0..n-1 and at m-n+1..m-1
    kernel[:n] = chirp_cos - 1j * chirp_sin
    kernel[m - n + 1:] = kernel[1:n][::-1]
    spectrum = np.fft.fft(kernel) / m  # (the inverse transform's 1/m, folded in)
    fr, fi = dft_last(ar, ai, -1)
    kr, ki = spectrum.real.astype(dtype), spectrum.imag.astype(dtype)
    pr = jnp.subtract(jnp.multiply(fr, kr), jnp.multiply(fi, ki))
    pi = jnp.add(jnp.multiply(fr, ki), jnp.multiply(fi, kr))
    cr, ci = dft_last(pr, pi, 1)
    cr, ci = cr[..., :n], ci[..., :n]
    return (jnp.subtract(jnp.multiply(cr, cos), jnp.multiply(ci, sin)),
            jnp.add(jnp.multiply(cr, sin), jnp.multiply(ci, cos)))


def _smallest_factor(n):
    factor = 2
    while factor * factor <= n:
        if n % factor == 0:
            return factor
        factor += 1
    return n


def _balanced_factor(n):
    """The largest divisor of n not above sqrt(n) (1 for a prime)."""
    best, factor = 1, 2
    while factor * factor <= n:
        if n % factor == 0:
            best = factor
        factor += 1
    return best
