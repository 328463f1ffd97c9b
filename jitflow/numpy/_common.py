"""Helpers the jitflow.numpy modules share: strong typing of results, refusing out=,
and the shape and dtype of arrays and traced values alike."""
import operator

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
    if isinstance(value, Tracer):
        raise TypeError(at_user_line(
            f"{what} must be a constant scalar, not a traced value {value.type}; pass a "
            f"Python number (an argument it comes from can be marked static: "
            f"jitflow.function(fn, static_argnames=...))"))
    if _np.ndim(value) != 0:
        raise TypeError(at_user_line(f"{what} must be a scalar, got an array of shape "
                                     f"{_np.shape(value)}"))
    return _np.asarray(value).item()


def _static_shape(shape, what):
    """`shape` (a size or a sequence of sizes) as a tuple of Python ints. Shapes are
    fixed when a function is traced: a size that is a traced value raises
    ConcretizationError (eagerly, under a derivative, its value is used)."""
    if isinstance(shape, (tuple, list)):
        sizes = shape
    else:
        sizes = [shape] if _ndim(shape) == 0 else list(shape)
    return tuple(operator.index(size._value(f"{what}: a size in the shape") if
                                isinstance(size, Tracer) else size) for size in sizes)
