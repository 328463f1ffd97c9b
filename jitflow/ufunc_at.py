"""np.add.at(x, index, values) on traced values: unbuffered accumulation into x.

Unlike `x[index] += values`, where a position named twice gets one of the values, `at`
adds every value named for a position. Any index NumPy takes (integers, slices, integer
arrays, traced or not, negative ones, several axes) is turned into the flat positions of
the elements it names, by indexing an array of positions with it; the values are summed
per position there (scatter_add, as gather's derivative does) and added to x at once,
then written into x, cast back as NumPy's `at` casts (unchecked).

The sum per position comes first and x's element is added last, where NumPy adds them
into x one by one: floats agree to rounding, integers exactly. Only add and subtract
accumulate so; other ufuncs' `at` raise.
"""
import numpy as np

from . import ops
from .errors import at_user_line
from .indexing import getitem
from .trace import Tracer, constant_type
from .writes import assign

_COMBINE = {"add": ops.add, "subtract": ops.subtract}


def ufunc_at(ufunc, target, index, values=None):
    name = ufunc.__name__
    if name not in _COMBINE or values is None:
        raise TypeError(at_user_line(
            f"numpy.{name}.at is not supported by jitflow on traced values (add.at and "
            f"subtract.at are)"))
    if not isinstance(target, Tracer):
        raise TypeError(at_user_line(
            f"numpy.{name}.at into a NumPy array with traced values: NumPy's own reads of "
            f"that array later in the function would not see the write; make it a traced "
            f"value first (x = jitflow.numpy.asarray(array)) and return it"))
    positions = getitem(np.arange(target.size).reshape(target.shape), index)
    region = constant_type(positions).shape
    flat = ops.reshape(ops.broadcast_to(values, region),
                       (int(np.prod(region, dtype=np.int64)),))
    summed = ops.scatter_add(flat, ops.reshape(positions, flat.shape), axis=0,
                             shape=(target.size,))
    result = _COMBINE[name](target, ops.reshape(summed, target.shape))
    if target.dtype.kind != "f" and result.dtype.kind == "f":
        # NumPy truncates into the integer array after each value: 0 + 0.5 + 0.5 is 0
        raise TypeError(at_user_line(
            f"numpy.{name}.at of {result.dtype} values into a {target.dtype} array: NumPy "
            f"truncates after each value, which a sum per position does not follow; cast "
            f"the values to {target.dtype} first"))
    assign(target, result if result.dtype == target.dtype else
           ops.cast(result, target.dtype))  # NumPy's at casts back unchecked
