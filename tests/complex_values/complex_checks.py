"""Comparing complex results with NumPy's, part by part, and complex gradients with
central differences."""
import numpy as np

import jitflow

from fidelity import assert_same


def assert_complex_same(actual, expected, *, scale=None, eps=0, zero_sign=True, what=""):
    """Same dtype and shape; each part NumPy's, exactly (eps=0) or within
    eps * scale (the magnitude the part was computed from, elementwise) where NumPy's
    part is finite. Non-finite parts must match exactly; zeros' signs too, unless
    zero_sign is False."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype}, NumPy gives " \
                                           f"{expected.dtype}"
    if expected.dtype.kind != "c":
        tolerance = {} if not eps else {"atol": _bound(expected, scale, eps)}
        assert_same(actual, expected, what=what, zero_sign=zero_sign, **tolerance)
        return
    for part in ("real", "imag"):
        got, wanted = getattr(actual, part), getattr(expected, part)
        tolerance = {} if not eps else {"atol": _bound(wanted, scale, eps)}
        assert_same(got, wanted, what=f"{what} ({part} part)", zero_sign=zero_sign,
                    **tolerance)


def _bound(expected, scale, eps):
    scale = np.abs(expected) if scale is None else scale
    with np.errstate(all="ignore"):
        bound = eps * np.nan_to_num(np.broadcast_to(scale, np.shape(expected)), posinf=0)
    return np.where(np.isfinite(bound), bound, 0) + np.finfo(np.float64).tiny


def central_differences(loss, z, x, h=1e-6):
    """dL/dx - i dL/dy, one part of one element at a time."""
    gradient = np.zeros_like(z)
    for i in range(z.size):
        for part, unit in ((1, 1.0), (-1j, 1j)):
            step = np.zeros_like(z)
            step[i] = h * unit
            gradient[i] += part * (loss(z + step, x) - loss(z - step, x)) / (2 * h)
    return gradient


def assert_gradient_matches_central_differences(loss, a, compiled):
    """jitflow.grad of a real loss of the complex array a (eager, or compiled), against
    central differences in each part of each element."""
    gradient = jitflow.grad(loss)
    if compiled:
        gradient = jitflow.function(gradient)
    expected = central_differences(lambda z, _: loss(z.reshape(a.shape)), a.ravel(),
                                   None).reshape(a.shape)
    np.testing.assert_allclose(gradient(a), expected, rtol=1e-6, atol=1e-6)
