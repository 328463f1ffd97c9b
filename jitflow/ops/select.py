"""Selection, conversion and identity: where, cast and stop_gradient."""
import numpy as np

from ..ir.primitive import Primitive, register
from ..ir.types import TensorType, bool_, broadcast_shapes, result_dtype
from ..trace import bind


def _where_type(cond, x, y):
    if cond.dtype != bool_:
        raise TypeError(f"the condition must be bool, got {cond.dtype}")
    dtype, weak = result_dtype(x, y)
    shape = broadcast_shapes(cond.shape, x.shape, y.shape)
    return TensorType(shape, dtype, weak and shape == ())  # an array condition: an array


def _where_vjp(ct, cond, x, y, *, out):
    # Selecting, not multiplying by a 0/1 mask: an inf or NaN cotangent stays in its branch.
    return [None, where(cond, ct, 0), where(cond, 0, ct)]


def _where_jvp(tangents, cond, x, y, *, out):
    _, tx, ty = tangents
    return where(cond, 0 if tx is None else tx, 0 if ty is None else ty)


where_p = register(Primitive("where", _where_type, np.where, elementwise=True,
                             vjp=_where_vjp, jvp=_where_jvp))


def where(cond, x, y): return bind(where_p, cond, x, y)


def _cast_type(x, *, dtype, weak=False):
    return TensorType(x.shape, dtype, weak)  # a weak result must be 0-d: TensorType checks


def _cast_impl(x, *, dtype, weak=False):
    return np.asarray(x).astype(dtype)


# Between float dtypes a cast is the identity on tangents and cotangents, which the
# autodiff transform casts to each value's own dtype; to or from integers it has none.
cast_p = register(Primitive("cast", _cast_type, _cast_impl, elementwise=True,
                            vjp=lambda ct, x, *, dtype, out, weak=False: [ct],
                            jvp=lambda tangents, x, *, dtype, out, weak=False: tangents[0]))


def cast(x, dtype, weak=False):
    """x as `dtype`; weak=True makes a 0-d result weakly typed, as a Python number is (a
    NumPy function that returns a Python float, traced). Only then is the parameter
    recorded, so that other casts print and compare as they always did."""
    if weak:
        return bind(cast_p, x, dtype=np.dtype(dtype), weak=True)
    return bind(cast_p, x, dtype=np.dtype(dtype))


def _identity_impl(x):
    return np.array(x, copy=True) if isinstance(x, np.ndarray) else x


# The identity for values, a constant for derivatives. The pass pipeline removes it once
# the graph is traced (differentiation happens while tracing).
stop_gradient_p = register(Primitive(
    "stop_gradient", lambda x: x, _identity_impl, elementwise=True,
    vjp=lambda ct, x, *, out: [None], jvp=lambda tangents, x, *, out: None))


def stop_gradient(x):
    """`x`, treated as a constant by grad, vjp, jvp and every other derivative."""
    return bind(stop_gradient_p, x)
