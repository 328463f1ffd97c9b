"""sort and argsort along one axis, in NumPy's order: NaN after every number, -0.0 equal
to 0.0, and ties kept in the order they come in (NumPy's kind="stable").

sort's derivative moves each cotangent back to where its element came from: the
permutation is argsort's, and the transpose of taking x at it is scattering there.
"""
import numpy as np

from ..ir.primitive import Primitive, register
from ..ir.types import TensorType, float32, int64, is_bfloat16
from ..trace import bind, constant_type
from .creation import iota
from .elementwise import INTEGER_RESULT
from .reductions import check_axes
from .select import cast
from .slicing import gather, scatter, zeros


def _along_axis(indices, axis):
    """Index arrays that take x[..., indices[..., i, ...], ...] along `axis` and every
    element where it is along the others (NumPy's take_along_axis), for gather."""
    shape = constant_type(indices).shape
    return [indices if a == axis else iota(shape, int64, axis=a) for a in range(len(shape))]


def _sort_type(x, *, axis):
    check_axes(x, (axis,))
    return TensorType(x.shape, x.dtype)


def _sort_vjp(ct, x, *, axis, out):
    order = _along_axis(argsort(x, axis=axis), axis)
    shape = constant_type(x).shape
    return [scatter(zeros(shape, constant_type(ct).dtype), ct, *order, axis=0, unique=True)]


def _sort_jvp(tangents, x, *, axis, out):
    return gather(tangents[0], *_along_axis(argsort(x, axis=axis), axis), axis=0)


sort_p = register(Primitive(
    "sort", _sort_type, lambda x, *, axis: np.sort(x, axis=axis, kind="stable"),
    vjp=_sort_vjp, jvp=_sort_jvp))


def sort(x, *, axis):
    if is_bfloat16(constant_type(x).dtype):  # sorted as float32 values, each exact there
        return cast(bind(sort_p, cast(x, float32), axis=axis), constant_type(x).dtype)
    return bind(sort_p, x, axis=axis)


def _argsort_type(x, *, axis):
    check_axes(x, (axis,))
    return TensorType(x.shape, int64)


# The positions that sort x along axis; native code shares sort's loop.
argsort_p = register(Primitive(
    "argsort", _argsort_type,
    lambda x, *, axis: np.argsort(x, axis=axis, kind="stable").astype(np.int64),
    no_gradient=INTEGER_RESULT))


def argsort(x, *, axis):
    if is_bfloat16(constant_type(x).dtype):
        x = cast(x, float32)
    return bind(argsort_p, x, axis=axis)


__all__ = ["argsort", "argsort_p", "sort", "sort_p"]
