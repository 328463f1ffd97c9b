"""Helpers the jitflow.numpy modules share: strong typing of results, refusing out=,
and the shape and dtype of arrays and traced values alike."""
import numpy as _np

from .. import ops
from ..errors import at_user_line
from ..ir.types import type_of_value
from ..trace import Tracer


def _strong(x):
    """NumPy functions give strongly typed results even from Python scalars."""
    if isinstance(x, Tracer) and x.type.weak:
        return ops.cast(x, x.dtype)
    return x


def _no_out(name, out, where=True):
    if out is not None:
        raise TypeError(at_user_line(f"jitflow.numpy.{name}: out= is not supported; "
                                     f"write the result instead (out[...] = "
                                     f"jitflow.numpy.{name}(...))"))
    if where is not True:
        raise TypeError(at_user_line(f"jitflow.numpy.{name}: where= is not supported"))


def _ndim(x):
    return x.ndim if isinstance(x, Tracer) else _np.ndim(x)


def _shape(x):
    return x.shape if isinstance(x, Tracer) else _np.shape(x)


def _dtype_of(x):
    return x.dtype if isinstance(x, Tracer) else type_of_value(x).dtype


def _python_scalar(value, what):
    if isinstance(value, Tracer) or _np.ndim(value) != 0:
        raise TypeError(at_user_line(f"{what} must be a constant scalar"))
    return _np.asarray(value).item()
