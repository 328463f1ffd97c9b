"""jitflow.numpy.fft: fftshift and ifftshift (rolls by half of each axis), fftfreq and
rfftfreq (the sample frequencies).

The transforms themselves (fft, ifft, rfft, irfft, hfft, ihfft and their 2-D and n-D
forms) take or give complex arrays: jitflow/complex_values/fft.py defines them and
installs them here.
"""
import numpy as _np

from ..errors import at_user_line
from ._common import _ndim, _shape
from .creation import arange, asarray
from .elementwise import astype, multiply
from .rearranging import roll


def _axes(x, axes):
    if axes is None:
        return tuple(range(_ndim(x)))
    return (axes,) if isinstance(axes, int) else tuple(axes)


def fftshift(x, axes=None):
    x = asarray(x)
    axes = _shifted_axes(x, axes, "fftshift")
    return roll(x, [_shape(x)[a] // 2 for a in axes], axes)


def ifftshift(x, axes=None):
    x = asarray(x)
    axes = _shifted_axes(x, axes, "ifftshift")
    return roll(x, [-(_shape(x)[a] // 2) for a in axes], axes)


def _shifted_axes(x, axes, what):
    axes = _axes(x, axes)
    if not len(axes):  # (a 0-d array's, or axes=()): NumPy's roll of no axes raises
        raise ValueError(at_user_line(f"{what}: no axes to shift (shape {_shape(x)})"))
    return axes


def fftfreq(n, d=1.0, device=None):
    """[0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d n), as NumPy computes it: the
    integers times 1 / (n d)."""
    n = _size(n, "fftfreq")
    integers = _np.concatenate([_np.arange(0, (n - 1) // 2 + 1), _np.arange(-(n // 2), 0)])
    return multiply(astype(asarray(integers), _np.float64), _inverse(n, d))


def rfftfreq(n, d=1.0, device=None):
    n = _size(n, "rfftfreq")
    return multiply(astype(arange(0, n // 2 + 1), _np.float64), _inverse(n, d))


def _inverse(n, d):
    """1 / (n d): a Python number for a static d, traced otherwise (NumPy's val)."""
    if isinstance(d, (int, float)):
        return 1.0 / (n * d)
    return _np.float64(1.0) / multiply(asarray(d), float(n))


def _size(n, name):
    if not isinstance(n, (int, _np.integer)):
        raise ValueError(at_user_line(f"{name}: n should be an integer"))
    return int(n)


__all__ = ["fftfreq", "fftshift", "ifftshift", "rfftfreq"]
