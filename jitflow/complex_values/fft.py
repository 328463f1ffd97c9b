"""numpy.fft's transforms on traced values (transforms.py computes them), with NumPy's
arguments: n / s (crop or zero-pad), axis / axes, norm ("backward", "ortho",
"forward"). On NumPy arrays outside a trace they are numpy.fft's own."""
import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from ..trace import Tracer, innermost_builder
from .functions import as_complex, _complex
from .parts import is_complex
from .transforms import dft_last, hermitian_inverse, real_dft

_NORMS = (None, "backward", "ortho", "forward")


def _eager(args):
    return innermost_builder() is None and not any(
        isinstance(a, Tracer) or getattr(a, "_complex_parts", None) is not None
        for a in args)


def _scale(norm, n, inverse, name, a=None):
    """The factor of a transform of length n, computed as NumPy computes it: in the
    real dtype of the input `a` with Python's 1.0 (float16 for a float16 input)."""
    if norm not in _NORMS:
        raise ValueError(at_user_line(f"jitflow.numpy.fft.{name}: invalid norm={norm!r}; "
                                      f"use 'backward', 'ortho' or 'forward'"))
    norm = norm or "backward"
    real = np.result_type(_dtype_of(a).type(0).real.dtype if a is not None else np.float64,
                          1.0)
    if norm == "ortho":
        return float(np.reciprocal(np.sqrt(n, dtype=real)))
    return float(np.reciprocal(n, dtype=real)) if (norm == "forward") != inverse else None


def _dtype_of(a):
    dtype = getattr(a, "dtype", None)
    return np.asarray(a).dtype if dtype is None else np.dtype(dtype)


def _length(n, default, name):
    n = default if n is None else n
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(at_user_line(f"jitflow.numpy.fft.{name}: invalid number of "
                                      f"data points ({n}) specified"))
    return int(n)


def _resized(part, n, axis):
    """`part` cropped or zero-padded to length n along its last axis."""
    length = part.shape[-1]
    if n <= length:
        return part[..., :n]
    return jnp.pad(part, [(0, 0)] * (part.ndim - 1) + [(0, n - length)])


def _along(parts, axis, transform):
    """`transform` of (real, imag) parts with `axis` moved last, and moved back."""
    moved = [None if p is None else jnp.moveaxis(p, axis, -1) for p in parts]
    return tuple(jnp.moveaxis(p, -1, axis) for p in transform(*moved))


def _scaled(parts, factor):
    return parts if factor is None else tuple(jnp.multiply(p, factor) for p in parts)


def _transform_dtype(a):
    """NumPy's transforms compute in complex64 for float16, float32 and complex64
    input, in complex128 for any other (bool and every integer too)."""
    dtype = _dtype_of(a)
    single = dtype in (np.float16, np.float32, np.complex64)
    return np.dtype(np.complex64 if single else np.complex128)


def _complex_input(a, name):
    dtype = _transform_dtype(a)
    z = as_complex(a, dtype)
    return z.real, z.imag, dtype


def _real_input(a, name):
    if is_complex(a):
        raise TypeError(at_user_line(f"jitflow.numpy.fft.{name} takes a real array, got "
                                     f"a complex one"))
    dtype = _transform_dtype(a)
    return jnp.astype(jnp.asarray(a), np.float32 if dtype == np.complex64 else np.float64), dtype


def _axis(a, axis, name):
    ndim = jnp.ndim(a)
    if ndim == 0 or not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(at_user_line(
            f"jitflow.numpy.fft.{name}: axis {axis} is out of bounds for an array of "
            f"dimension {ndim}"))
    return axis % ndim


def _c2c(a, n, axis, norm, inverse, name):
    real, imag, dtype = _complex_input(a, name)
    axis = _axis(real, axis, name)
    n = _length(n, real.shape[axis], name)

    def transform(r, i):
        return dft_last(_resized(r, n, -1), _resized(i, n, -1), 1 if inverse else -1)
    parts = _scaled(_along((real, imag), axis, transform), _scale(norm, n, inverse, name, a))
    return _complex(*parts, dtype)


def fft(a, n=None, axis=-1, norm=None, out=None):
    if _eager((a,)):
        return np.fft.fft(a, n, axis, norm, out)
    _no_out(out, "fft")
    return _c2c(a, n, axis, norm, False, "fft")


def ifft(a, n=None, axis=-1, norm=None, out=None):
    if _eager((a,)):
        return np.fft.ifft(a, n, axis, norm, out)
    _no_out(out, "ifft")
    return _c2c(a, n, axis, norm, True, "ifft")


def rfft(a, n=None, axis=-1, norm=None, out=None):
    if _eager((a,)):
        return np.fft.rfft(a, n, axis, norm, out)
    _no_out(out, "rfft")
    real, dtype = _real_input(a, "rfft")
    axis = _axis(real, axis, "rfft")
    n = _length(n, real.shape[axis], "rfft")

    def transform(r, i):
        return real_dft(_resized(r, n, -1), -1)
    parts = _scaled(_along((real, None), axis, transform), _scale(norm, n, False, "rfft", a))
    return _complex(*parts, dtype)


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """The real signal of length n (default 2 (m - 1)) whose rfft is `a`: the spectrum
    completed by Hermitian symmetry, the imaginary parts of its zero-frequency and (n
    even) Nyquist terms ignored, as NumPy's pocketfft ignores them."""
    if _eager((a,)):
        return np.fft.irfft(a, n, axis, norm, out)
    _no_out(out, "irfft")
    real, imag, dtype = _complex_input(a, "irfft")
    axis = _axis(real, axis, "irfft")
    n = _length(n, 2 * (real.shape[axis] - 1), "irfft")

    def transform(r, i):
        half = n // 2 + 1
        r, i = _resized(r, half, -1), _resized(i, half, -1)
        keep = np.ones(half, bool)
        keep[0] = False
        if n % 2 == 0:
            keep[-1] = False
        return (hermitian_inverse(r, jnp.where(keep, i, 0), n),)
    (result,) = _scaled(_along((real, imag), axis, transform), _scale(norm, n, True, "irfft", a))
    return jnp.astype(result, np.float16) if _is_half(a) else result


def _is_half(a):
    """NumPy's irfft (and hfft) of a real float16 array is float16, computed in float32."""
    return _dtype_of(a) == np.float16


def _no_out(out, name):
    if out is not None:
        raise TypeError(at_user_line(f"jitflow.numpy.fft.{name}: out= is not supported on "
                                     f"traced values; use the result"))


_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """The real spectrum of a Hermitian-symmetric signal given by its first half."""
    if _eager((a,)):
        return np.fft.hfft(a, n, axis, norm, out)
    _no_out(out, "hfft")
    if norm not in _NORMS:
        _scale(norm, 1, False, "hfft")
    conjugate = a if not is_complex(a) else as_complex(a).conj()  # (NumPy's conjugate)
    return irfft(conjugate, n, axis, _SWAPPED[norm])


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    if _eager((a,)):
        return np.fft.ihfft(a, n, axis, norm, out)
    _no_out(out, "ihfft")
    if norm not in _NORMS:
        _scale(norm, 1, False, "ihfft")
    return rfft(a, n, axis, _SWAPPED[norm]).conj()


# --- 2-D and n-D ---------------------------------------------------------------------------

def _shape_and_axes(a, s, axes, name):
    ndim = jnp.ndim(a)
    if axes is None:
        axes = tuple(range(ndim))[-len(s):] if s is not None else tuple(range(ndim))
    axes = tuple(axes)
    if s is None:
        # NumPy takes the shape at every axis first: an axis out of bounds is its
        # IndexError before any transform (found by the fuzzer: fft2 of a 1-d array
        # of length 0 said its length was wrong)
        for axis in axes:
            if not -ndim <= axis < ndim:
                raise IndexError(at_user_line(
                    f"jitflow.numpy.fft.{name}: index {axis} is out of bounds for axis 0 "
                    f"with size {ndim}"))
        s = [None] * len(axes)
    if len(s) != len(axes):
        raise ValueError(at_user_line(f"jitflow.numpy.fft.{name}: shape and axes have "
                                      f"different lengths"))
    return list(s), list(axes)


def _nd(one_d, name, real_last=False, inverse_real=False):
    eager = getattr(np.fft, name)

    def transform(a, s=None, axes=None, norm=None, out=None):
        if _eager((a,)):
            return eager(a, s, axes, norm, out)
        _no_out(out, name)
        s, axes = _shape_and_axes(a, s, axes, name)
        if not axes:  # (NumPy's fftn returns `a` as it is; rfftn and irfftn refuse)
            if real_last or inverse_real:
                raise IndexError(at_user_line(f"jitflow.numpy.fft.{name}: no axes to "
                                              f"transform"))
            return a
        if inverse_real:  # complex transforms first, the real one last
            for size, axis in zip(s[:-1], axes[:-1]):
                a = ifft(a, size, axis, norm)
            return irfft(a, s[-1], axes[-1], norm)
        if real_last:
            a = rfft(a, s[-1], axes[-1], norm)
            s, axes = s[:-1], axes[:-1]
        for size, axis in zip(reversed(s), reversed(axes)):
            a = one_d(a, size, axis, norm)
        return a
    transform.__name__ = transform.__qualname__ = name
    return transform


fftn = _nd(fft, "fftn")
ifftn = _nd(ifft, "ifftn")
rfftn = _nd(fft, "rfftn", real_last=True)
irfftn = _nd(ifft, "irfftn", inverse_real=True)


def _two_d(nd, name):
    eager = getattr(np.fft, name)

    def transform(a, s=None, axes=(-2, -1), norm=None, out=None):
        if _eager((a,)):
            return eager(a, s, axes, norm, out)
        return nd(a, s, axes, norm, out)
    transform.__name__ = transform.__qualname__ = name
    return transform


fft2, ifft2 = _two_d(fftn, "fft2"), _two_d(ifftn, "ifft2")
rfft2, irfft2 = _two_d(rfftn, "rfft2"), _two_d(irfftn, "irfft2")

TRANSFORMS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2",
              "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]
