"""Arrays made from nothing but static parameters."""
import numpy as np

from ..ir.primitive import Primitive, register
from ..ir.types import SUPPORTED_DTYPES, TensorType, bool_
from ..trace import bind


def _iota_type(*, shape, dtype, axis):
    if dtype not in SUPPORTED_DTYPES or not 0 <= axis < len(shape):
        raise ValueError(f"iota needs a supported dtype and an axis of shape {shape}")
    if dtype == bool_ and shape[axis] > 2:  # as np.arange: bool cannot count past 1
        raise TypeError(f"iota of bool is only supported for at most 2 values along the "
                        f"axis, got shape {shape}, axis {axis}")
    return TensorType(shape, dtype)


def _iota_impl(*, shape, dtype, axis):
    counts = np.arange(shape[axis], dtype=dtype)
    counts = counts.reshape([-1 if i == axis else 1 for i in range(len(shape))])
    return np.broadcast_to(counts, shape).copy()


# 0, 1, 2, ... along `axis` of an array of `shape`.
iota_p = register(Primitive("iota", _iota_type, _iota_impl,
                            no_gradient="it has no array inputs"))


def iota(shape, dtype, axis=0):
    return bind(iota_p, shape=tuple(shape), dtype=np.dtype(dtype), axis=axis)
