"""ravel_multi_index and unravel_index: the flat positions in an array of a given shape
and the per-axis indices they stand for, in C or Fortran order.

Both are integer arithmetic traced into the graph (products with the strides; floor
divisions and remainders). An index out of range, which NumPy refuses with ValueError,
is checked where the values are: eagerly, NumPy's ValueError at once; traced, a check in
the graph (a Python callback given whether an index is out of range, and the first
one) raises NumPy's ValueError, with NumPy's message, when the function runs: never a
wrapped or clipped position in its place. ravel_multi_index's mode='wrap' and
mode='clip' bring indices into range as NumPy's do (no check then).
"""
import math

import numpy as _np

from .. import ops
from ..errors import ConcretizationError, at_user_line
from ..ops.host import ResultChecking, pure_callback
from ..trace import Tracer
from ._common import _dtype_of, _shape, _static_shape
from .creation import asarray
from .shapes import broadcast_to, ravel

_MODES = ("raise", "wrap", "clip")


def _strides(dims, order):
    """Each axis's stride, in elements, of an array of shape `dims` in `order`."""
    if order not in ("C", "F"):
        raise ValueError(at_user_line("only 'C' or 'F' order is permitted"))
    strides, stride = [0] * len(dims), 1
    for axis in (range(len(dims)) if order == "F" else reversed(range(len(dims)))):
        strides[axis], stride = stride, stride * dims[axis]
    return strides


def _integer_indices(indices):
    indices = asarray(indices)
    if _dtype_of(indices).kind not in "biu":
        raise TypeError(at_user_line("only int indices permitted"))
    return ops.cast(indices, _np.int64)  # NumPy's same-kind cast to intp


def _checked(result, bad, values, message):
    """`result`, once no element of `bad` is true; else ValueError(message(v)), v the
    first of `values` where `bad` is: at once when `bad` is known, else when the
    function runs."""
    if math.prod(_shape(bad)) == 0:
        return result
    bad, values = ravel(bad), ravel(values)
    if isinstance(bad, Tracer):
        try:  # known while tracing (constants; values under an eager derivative)
            known = _known(bad), _known(values)
        except ConcretizationError:
            return ops.add(result, _run_time_check(bad, values, message))
        bad, values = known
    bad = _np.asarray(bad)
    if bad.any():
        raise ValueError(at_user_line(message(_np.asarray(values)[bad.argmax()])))
    return result


def _known(x):
    return _np.asarray(x._value("an index checked") if isinstance(x, Tracer) else x)


def _run_time_check(bad, values, message):
    """A 0 of int64 that a callback gives when no element of `bad` is true (and raises
    ValueError(message(first bad value)) when one is): added to the result, it keeps
    the check in the graph."""
    first = ops.argmax(ops.cast(bad, _np.int8), axis=0)
    flags = (ops.gather(bad, ops.reshape(first, (1,)), axis=0),
             ops.gather(values, ops.reshape(first, (1,)), axis=0))

    def check(found, value):
        if _np.asarray(found).any():
            raise ValueError(message(int(_np.asarray(value)[0])))
        return _np.zeros((), _np.int64)
    callback = ResultChecking(check, (((), _np.dtype(_np.int64)),),
                              name="the check that indices are in range")
    return pure_callback(callback, *flags)[0]


def _modes(mode, count):
    modes = [mode] * count if isinstance(mode, str) else list(mode)
    if len(modes) != count:
        raise ValueError(at_user_line(f"list of clipmodes has wrong length ({len(modes)} "
                                      f"instead of {count})"))
    for each in modes:
        if each not in _MODES:
            raise ValueError(at_user_line(f"clipmode must be one of 'clip', 'raise', or "
                                          f"'wrap' (got {each!r})"))
    return modes


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """The flat positions, in an array of shape `dims`, of the per-axis indices in
    `multi_index` (broadcast together)."""
    dims = _static_shape(dims, "jitflow.numpy.ravel_multi_index: dims")
    modes = _modes(mode, len(dims))
    if math.prod(dims) > _np.iinfo(_np.intp).max:
        raise ValueError(at_user_line("invalid dims: array size defined by dims is larger "
                                      "than the maximum possible size."))
    if len(multi_index) != len(dims):
        raise ValueError(at_user_line(f"parameter multi_index must be a sequence of "
                                      f"length {len(dims)}"))
    indices = [_integer_indices(multi_index[axis]) for axis in range(len(dims))]
    shape = _np.broadcast_shapes(*map(_shape, indices))
    strides = _strides(dims, order)
    if math.prod(dims) == 0 and math.prod(shape) > 0:
        raise ValueError(at_user_line("cannot unravel if shape has zero entries (is "
                                      "empty)."))
    flat = broadcast_to(_np.int64(0), shape)
    bad = broadcast_to(_np.False_, shape)
    for index, dim, each, stride in zip(indices, dims, modes, strides):
        if each == "wrap":
            index = ops.remainder(index, _np.int64(dim))
        elif each == "clip":
            index = ops.minimum(ops.maximum(index, _np.int64(0)), _np.int64(dim - 1))
        else:
            bad = ops.logical_or(bad, ops.logical_or(ops.less(index, _np.int64(0)),
                                                     ops.greater_equal(index,
                                                                       _np.int64(dim))))
        flat = ops.add(flat, ops.multiply(index, _np.int64(stride)))
    return _checked(flat, bad, flat, lambda _: "invalid entry in coordinates array")


def unravel_index(indices, shape, order="C"):
    """The per-axis indices, in an array of `shape`, of the flat positions `indices`:
    a tuple of arrays of indices' shape."""
    dims = _static_shape(shape, "jitflow.numpy.unravel_index: shape")
    strides = _strides(dims, order)
    if math.prod(dims) > _np.iinfo(_np.intp).max:
        raise ValueError(at_user_line("dimensions are too large; arrays and shapes with a "
                                      "total size greater than 'intp' are not supported."))
    flat = _integer_indices(indices)
    size = math.prod(dims)
    if not dims and isinstance(flat, Tracer):
        try:
            flat = _known(flat)
        except ConcretizationError:
            raise NotImplementedError(at_user_line(
                "jitflow.numpy.unravel_index of a traced index into shape (): its result "
                "is an empty tuple, which cannot carry the check that the index is 0 "
                "(NumPy raises ValueError for any other)")) from None
    bad = ops.logical_or(ops.less(flat, _np.int64(0)),
                         ops.greater_equal(flat, _np.int64(size)))
    flat = _checked(flat, bad, flat, lambda value: f"index {value} is out of bounds for "
                                                   f"array with size {size}")
    if size <= 0:  # no index is in range: the check above raised unless there are none
        if math.prod(_shape(flat)):
            raise ValueError(at_user_line(f"jitflow.numpy.unravel_index: every index is "
                                          f"out of bounds for array with size {size}"))
        return tuple(broadcast_to(_np.int64(0), _shape(flat)) for _ in dims)
    return tuple(ops.remainder(ops.floor_divide(flat, _np.int64(stride)), _np.int64(dim))
                 for stride, dim in zip(strides, dims))


__all__ = ["ravel_multi_index", "unravel_index"]
