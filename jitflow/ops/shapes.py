"""Shape primitives: reshape, broadcast_to and transpose (views in compiled code)."""
import numpy as np

from ..ir.primitive import Primitive, register
from ..ir.types import ShapeError
from ..trace import bind, constant_type


def _reshape_type(x, *, shape):
    if int(np.prod(shape, dtype=np.int64)) != x.size:
        raise ShapeError(f"cannot reshape array of size {x.size} (shape {x.shape}) into "
                         f"shape {shape}")
    return x.with_shape(shape)


reshape_p = register(Primitive(
    "reshape", _reshape_type, lambda x, *, shape: np.reshape(x, shape),
    vjp=lambda ct, x, *, shape, out: [reshape(ct, constant_type(x).shape)],
    jvp=lambda tangents, x, *, shape, out: reshape(tangents[0], shape)))


def reshape(x, shape): return bind(reshape_p, x, shape=tuple(shape))


def _broadcast_type(x, *, shape):
    if len(shape) < x.ndim or any(d not in (1, s) for d, s in
                                  zip(x.shape[::-1], shape[::-1])):
        raise ShapeError(f"cannot broadcast shape {x.shape} to shape {shape}")
    return x.with_shape(shape)


def _broadcast_impl(x, *, shape):
    return np.broadcast_to(x, shape)


# The autodiff transform sums a cotangent over the axes its value was broadcast along.
broadcast_to_p = register(Primitive(
    "broadcast_to", _broadcast_type, _broadcast_impl,
    vjp=lambda ct, x, *, shape, out: [ct],
    jvp=lambda tangents, x, *, shape, out: broadcast_to(tangents[0], shape)))


def broadcast_to(x, shape): return bind(broadcast_to_p, x, shape=tuple(shape))


def _transpose_type(x, *, perm):
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"axes {perm} are not a permutation of the {x.ndim} axes of "
                         f"shape {x.shape}")
    return x.with_shape(tuple(x.shape[p] for p in perm))


transpose_p = register(Primitive(
    "transpose", _transpose_type, lambda x, *, perm: np.transpose(x, perm),
    vjp=lambda ct, x, *, perm, out: [transpose(ct, np.argsort(perm))],
    jvp=lambda tangents, x, *, perm, out: transpose(tangents[0], perm)))


def transpose(x, perm): return bind(transpose_p, x, perm=tuple(int(p) for p in perm))
