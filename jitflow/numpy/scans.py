"""Running products and NaN-ignoring scans: cumprod (a primitive, multiplying in
NumPy's order; its derivative stays right where the input holds zeros), nancumsum,
nancumprod, and nanargmax, nanargmin.

nanargmax and nanargmin of a slice that is all NaN raise NumPy's ValueError: eagerly
at once, traced when the call finds one (a check of the slices' flags that calls back
into Python once per call, as jitflow.debug.callback does).
"""
import numpy as _np

from .. import ops
from ..errors import at_user_line
from ..ops.debug import raise_at_run_time
from ..ir.types import normalize_axis
from ..trace import Tracer
from ._common import _dtype_of, _ndim, _no_out
from .creation import asarray
from .elementwise import astype, isnan, where
from .reductions import all, argmax, argmin, cumsum
from .shapes import ravel


def cumprod(a, axis=None, dtype=None, out=None):
    _no_out("cumprod", out)
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    if dtype is not None:
        a = astype(a, dtype)
    return ops.cumprod(a, axis=normalize_axis(axis, _ndim(a)))


def _without_nan(a, value):
    a = asarray(a)
    return where(isnan(a), value, a) if _dtype_of(a).kind == "f" else a


def nancumsum(a, axis=None, dtype=None, out=None):
    return cumsum(_without_nan(a, 0), axis=axis, dtype=dtype, out=out)


def nancumprod(a, axis=None, dtype=None, out=None):
    return cumprod(_without_nan(a, 1), axis=axis, dtype=dtype, out=out)


def _nan_arg_extremum(name, arg_extremum, fill):
    def function(a, axis=None, out=None, *, keepdims=False):
        _no_out(name, out)
        a = asarray(a)
        if _dtype_of(a).kind != "f":
            return arg_extremum(a, axis=axis, keepdims=keepdims)
        missing = isnan(a)
        everywhere = all(missing, axis=axis, keepdims=keepdims)
        if isinstance(everywhere, Tracer):
            raise_at_run_time(_np.any, f"{_ALL_NAN} ({name})", f"{name}: no all-NaN slice",
                              everywhere)
        elif _np.any(everywhere):
            raise ValueError(at_user_line(_ALL_NAN))
        return arg_extremum(where(missing, fill, a), axis=axis, keepdims=keepdims)
    function.__name__ = function.__qualname__ = name
    return function


_ALL_NAN = "All-NaN slice encountered"


nanargmax = _nan_arg_extremum("nanargmax", argmax, -_np.inf)
nanargmin = _nan_arg_extremum("nanargmin", argmin, _np.inf)

__all__ = ["cumprod", "nanargmax", "nanargmin", "nancumprod", "nancumsum"]
