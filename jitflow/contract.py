"""Contractions over the matmul primitive: NumPy's matmul, dot, inner, outer, tensordot
(einsum.py builds einsum on them).

Every contraction becomes transposes and reshapes around one batched matmul, so the
backend only needs to make matmul fast.
"""
import math

import numpy as np

from . import ops
from .errors import at_user_line
from .ir.types import bfloat16, is_bfloat16, normalize_axis
from .trace import Tracer


def _shape(x):
    return x.shape if isinstance(x, Tracer) else np.shape(x)


def as_array(x):
    """x as NumPy's dot, inner, outer and einsum see it: they make arrays of their
    operands first, so a Python scalar is int64 or float64 there, never weakly typed."""
    if isinstance(x, Tracer):
        return ops.cast(x, x.dtype) if x.type.weak else x
    return np.asarray(x)


def matmul(x1, x2, out=None):
    """NumPy's matmul: 1-D operands are promoted to matrices and the axis removed."""
    if out is not None:
        raise TypeError(at_user_line("jitflow.numpy.matmul: out= is not supported"))
    a, b = _shape(x1), _shape(x2)
    if not a or not b:
        raise ValueError(at_user_line(
            f"matmul: input operand {0 if not a else 1} does not have enough dimensions "
            f"(shapes {a} and {b})"))
    if len(a) == 1:
        x1 = ops.reshape(x1, (1,) + a)
    if len(b) == 1:
        x2 = ops.reshape(x2, b + (1,))
    result = ops.matmul(x1, x2)
    shape = _shape(result)
    if len(a) == 1 or len(b) == 1:
        drop = {len(shape) - 2} if len(a) == 1 else set()
        drop |= {len(shape) - 1} if len(b) == 1 else set()
        result = ops.reshape(result, [d for i, d in enumerate(shape) if i not in drop])
    return result


def dot(a, b, out=None):
    """NumPy's dot: scalars multiply; otherwise the last axis of a meets the second-to-last
    of b (the only axis of a 1-D b)."""
    a, b = as_array(a), as_array(b)
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        return ops.multiply(a, b)
    if len(sb) <= 2:
        return _rounded_like_dot(matmul(a, b, out), a, b)
    return tensordot(a, b, axes=([len(sa) - 1], [len(sb) - 2]))


def _rounded_like_dot(product, a, b):
    """NumPy's dot (and tensordot, inner, vdot) of bfloat16 operands sums the products in
    float32 and rounds the sum to bfloat16; matmul, which computes it here, keeps the
    float32 sum."""
    if bfloat16 is not None and is_bfloat16(np.result_type(_dtype(a), _dtype(b))):
        return ops.cast(product, bfloat16)
    return product


def _dtype(x):
    return x.dtype if isinstance(x, Tracer) else np.asarray(x).dtype


def inner(a, b):
    a, b = as_array(a), as_array(b)
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        return ops.multiply(a, b)
    return tensordot(a, b, axes=([len(sa) - 1], [len(sb) - 1]))


def outer(a, b, out=None):
    if out is not None:
        raise TypeError(at_user_line("jitflow.numpy.outer: out= is not supported"))
    a, b = as_array(a), as_array(b)
    a = ops.reshape(a, (math.prod(_shape(a)), 1))
    b = ops.reshape(b, (1, math.prod(_shape(b))))
    return ops.multiply(a, b)


def tensordot(a, b, axes=2):
    """Sum over the given axes of a and b: one transposed, reshaped matmul."""
    a, b = as_array(a), as_array(b)
    sa, sb = _shape(a), _shape(b)
    if isinstance(axes, int):
        axes_a, axes_b = list(range(len(sa) - axes, len(sa))), list(range(axes))
    else:
        axes_a, axes_b = ([ax] if isinstance(ax, int) else list(ax) for ax in axes)
    axes_a = [normalize_axis(ax, len(sa)) for ax in axes_a]
    axes_b = [normalize_axis(ax, len(sb)) for ax in axes_b]
    if len(set(axes_a)) != len(axes_a) or len(set(axes_b)) != len(axes_b):
        raise ValueError(at_user_line(f"tensordot: duplicate axes are not allowed "
                                      f"(axes {axes_a} and {axes_b})"))
    if len(axes_a) != len(axes_b) or any(sa[i] != sb[j] for i, j in zip(axes_a, axes_b)):
        raise ValueError(at_user_line(f"tensordot: shape-mismatch for sum: shapes {sa} "
                                      f"and {sb}, axes {axes_a} and {axes_b}"))
    free_a = [i for i in range(len(sa)) if i not in axes_a]
    free_b = [i for i in range(len(sb)) if i not in axes_b]
    k = math.prod(sa[i] for i in axes_a)
    lhs = ops.reshape(ops.transpose(a, free_a + axes_a),
                      (math.prod(sa[i] for i in free_a), k))
    rhs = ops.reshape(ops.transpose(b, axes_b + free_b),
                      (k, math.prod(sb[i] for i in free_b)))
    result = _rounded_like_dot(ops.matmul(lhs, rhs), a, b)
    return ops.reshape(result, [sa[i] for i in free_a] + [sb[i] for i in free_b])

