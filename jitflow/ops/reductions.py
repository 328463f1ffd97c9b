"""Reductions over static axes, arg reductions and cumulative sums, with derivatives."""
import numpy as np

from ..ir.primitive import Primitive, register
from ..ir.types import TensorType, bfloat16, float32, int64, is_bfloat16, uint64
from ..trace import bind, constant_type
from .elementwise import (INTEGER_RESULT, add, divide, equal, isnan, logical_and,
                          logical_or, multiply)
from .select import cast, where
from .shapes import broadcast_to, reshape


def reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def check_axes(x, axes):
    if any(not 0 <= a < x.ndim for a in axes) or list(axes) != sorted(set(axes)):
        raise ValueError(f"axes {axes} are not sorted, distinct axes of a {x.ndim}-d array")


def reduction(name, impl, accumulate_like=None, **rules):
    """Register a reduction over static `axes`; dtypes follow `accumulate_like` (NumPy's
    sum and prod widen bool and narrower ints to int64, narrower uints to uint64) or stay
    the input's."""
    def type_rule(x, *, axes, keepdims):
        check_axes(x, axes)
        if accumulate_like is None and any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"zero-size array to reduction operation {name} which has "
                             f"no identity (shape {x.shape}, axes {axes})")
        dtype = accumulate_like(x.dtype) if accumulate_like else x.dtype
        return TensorType(reduced_shape(x.shape, axes, keepdims), dtype)

    def run(x, *, axes, keepdims):
        return impl(x, axis=axes, keepdims=keepdims)
    return register(Primitive(name, type_rule, run, **rules))


def _widened(dtype):
    return {"b": int64, "i": int64, "u": uint64}.get(dtype.kind, dtype)


def spread(value, x, axes, keepdims):
    """A reduction's result (or its cotangent) broadcast back over the reduced axes."""
    shape = constant_type(x).shape
    return broadcast_to(reshape(value, reduced_shape(shape, axes, True)), shape)


def _sum_vjp(ct, x, *, axes, keepdims, out):
    return [spread(ct, x, axes, keepdims)]


def _sum_jvp(tangents, x, *, axes, keepdims, out):
    return reduce_sum(tangents[0], axes=axes, keepdims=keepdims)


def _prod_partials(x, axes):
    """d prod(x) / d x_i = the product of the other elements, computed without dividing
    by zero: with no zero it is prod / x_i; with one zero, only that element's partial is
    nonzero (the product of the rest); with two or more, all are zero."""
    is_zero = equal(x, 0)
    nonzero_product = spread(reduce_prod(where(is_zero, 1, x), axes=axes, keepdims=True),
                             x, axes, True)
    zeros = spread(reduce_sum(is_zero, axes=axes, keepdims=True), x, axes, True)
    lone_zero = logical_and(equal(zeros, 1), is_zero)
    return where(equal(zeros, 0), divide(nonzero_product, where(is_zero, 1, x)),
                 where(lone_zero, nonzero_product, 0))


def _prod_vjp(ct, x, *, axes, keepdims, out):
    return [multiply(spread(ct, x, axes, keepdims), _prod_partials(x, axes))]


def _prod_jvp(tangents, x, *, axes, keepdims, out):
    return reduce_sum(multiply(tangents[0], _prod_partials(x, axes)), axes=axes,
                      keepdims=keepdims)


def _extremum_weights(x, out, axes, keepdims):
    """Where x reaches its max (or min), as weights that share the derivative equally
    between ties. A NaN result came from the NaNs: they share it."""
    chosen = spread(out, x, axes, keepdims)
    hit = logical_or(equal(x, chosen), logical_and(isnan(x), isnan(chosen)))
    weight = cast(hit, constant_type(out).dtype)
    return divide(weight, reduce_sum(weight, axes=axes, keepdims=True))


def _extremum_vjp(ct, x, *, axes, keepdims, out):
    return [multiply(spread(ct, x, axes, keepdims), _extremum_weights(x, out, axes,
                                                                      keepdims))]


def _extremum_jvp(tangents, x, *, axes, keepdims, out):
    weights = _extremum_weights(x, out, axes, keepdims)
    return reduce_sum(multiply(tangents[0], weights), axes=axes, keepdims=keepdims)


reduce_sum_p = reduction("reduce_sum", np.sum, accumulate_like=_widened,
                         vjp=_sum_vjp, jvp=_sum_jvp)
reduce_prod_p = reduction("reduce_prod", np.prod, accumulate_like=_widened,
                          vjp=_prod_vjp, jvp=_prod_jvp)
reduce_max_p = reduction("reduce_max", np.max, vjp=_extremum_vjp, jvp=_extremum_jvp)
reduce_min_p = reduction("reduce_min", np.min, vjp=_extremum_vjp, jvp=_extremum_jvp)


def reduce_sum(x, *, axes, keepdims=False):
    """The sum over `axes`; of float16, NumPy's: added in float32, rounded to half once."""
    if _is_bfloat16(x):
        # NumPy's total starts from 0.0, so a sum is never -0.0 (where the running
        # sum, starting from the first element, is -0.0 for [-0.0])
        zero = np.zeros((), bfloat16)
        return add(_running_total(cumsum, x, axes, keepdims, empty=0), zero)
    if constant_type(x).dtype == np.float16:
        wide = bind(reduce_sum_p, cast(x, np.dtype(np.float32)), axes=axes, keepdims=keepdims)
        return cast(wide, np.dtype(np.float16))
    return bind(reduce_sum_p, x, axes=axes, keepdims=keepdims)


def reduce_prod(x, *, axes, keepdims=False):
    if _is_bfloat16(x):
        return _running_total(cumprod, x, axes, keepdims, empty=1)
    return bind(reduce_prod_p, x, axes=axes, keepdims=keepdims)


def reduce_max(x, *, axes, keepdims=False):
    return _extremum(reduce_max_p, x, axes, keepdims)


def reduce_min(x, *, axes, keepdims=False):
    return _extremum(reduce_min_p, x, axes, keepdims)


def _extremum(prim, x, axes, keepdims):
    """max or min; of bfloat16, that of its float32 values (each exact there), which
    is one of them."""
    if _is_bfloat16(x):
        return cast(bind(prim, cast(x, float32), axes=axes, keepdims=keepdims), bfloat16)
    return bind(prim, x, axes=axes, keepdims=keepdims)


def _is_bfloat16(x):
    return is_bfloat16(constant_type(x).dtype)


def _running_total(scan, x, axes, keepdims, empty):
    """NumPy's sum (prod) of bfloat16: its loop adds each element to a bfloat16 total in
    turn, rounding every step (1000 ones sum to 256), so here the last element of a
    running sum over the reduced axes flattened in C order, NumPy's order for an array
    in C order."""
    from .shapes import transpose
    from .slicing import slice_array  # slicing's rules use reductions: import late
    shape = constant_type(x).shape
    kept = [a for a in range(len(shape)) if a not in axes]
    kept_shape = [shape[a] for a in kept]
    count = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    result_shape = reduced_shape(shape, axes, keepdims)
    if count == 0:
        return broadcast_to(cast(np.float32(empty), bfloat16), result_shape)
    lines = reshape(transpose(x, tuple(kept) + tuple(axes)), kept_shape + [count])
    totals = scan(lines, axis=len(kept))
    last = slice_array(totals, starts=[0] * len(kept) + [count - 1],
                       steps=[1] * (len(kept) + 1), sizes=kept_shape + [1])
    return reshape(last, result_shape)


def arg_reduction(name, impl):
    """argmax/argmin along one axis (or the flattened array when axis is None)."""
    def type_rule(x, *, axis, keepdims):
        axes = tuple(range(x.ndim)) if axis is None else (axis,)
        check_axes(x, axes)
        if any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"attempt to get {name} of an empty sequence (shape {x.shape})")
        return TensorType(reduced_shape(x.shape, axes, keepdims), int64)

    def run(x, *, axis, keepdims):
        return impl(x, axis=axis, keepdims=keepdims)
    return register(Primitive(name, type_rule, run, no_gradient=INTEGER_RESULT))


argmax_p = arg_reduction("argmax", np.argmax)
argmin_p = arg_reduction("argmin", np.argmin)


def argmax(x, *, axis, keepdims=False):
    return bind(argmax_p, _float32_if_bfloat16(x), axis=axis, keepdims=keepdims)


def argmin(x, *, axis, keepdims=False):
    return bind(argmin_p, _float32_if_bfloat16(x), axis=axis, keepdims=keepdims)


def _float32_if_bfloat16(x):
    """bfloat16 values compared as their float32 values, which hold each exactly."""
    return cast(x, float32) if _is_bfloat16(x) else x


def _cumsum_type(x, *, axis):
    check_axes(x, (axis,))
    return TensorType(x.shape, _widened(x.dtype))


def _reverse(x, axis):
    from .slicing import slice_array  # slicing's rules use reductions: import late
    shape = constant_type(x).shape
    n = len(shape)
    return slice_array(x, starts=[shape[a] - 1 if a == axis else 0 for a in range(n)],
                       steps=[-1 if a == axis else 1 for a in range(n)], sizes=shape)


# The cotangent of a running sum is the running sum of the cotangent from the other end.
cumsum_p = register(Primitive(
    "cumsum", _cumsum_type, lambda x, *, axis: np.cumsum(x, axis=axis),
    vjp=lambda ct, x, *, axis, out: [_reverse(cumsum(_reverse(ct, axis), axis=axis), axis)],
    jvp=lambda tangents, x, *, axis, out: cumsum(tangents[0], axis=axis)))


def cumsum(x, *, axis): return bind(cumsum_p, x, axis=axis)


def _shifted(x, shift, axis, fill):
    """x moved `shift` places along axis (forward when positive), `fill` coming in."""
    from .slicing import pad, slice_array
    shape = constant_type(x).shape
    n, kept = len(shape), max(0, shape[axis] - abs(shift))
    head = slice_array(x, starts=[shape[axis] - kept if shift < 0 and a == axis else 0
                                  for a in range(n)],
                       steps=[1] * n, sizes=[kept if a == axis else shape[a] for a in range(n)])
    filled = shape[axis] - kept
    widths = [((filled, 0) if shift > 0 else (0, filled)) if a == axis else (0, 0)
              for a in range(n)]
    return pad(head, widths=widths, value=fill)


def _linear_scan(h, d, axis):
    """s[t] = h[t] + d[t] s[t-1] along axis (s[-1] = 0), in log2(n) doubling steps:
    s[t] = b[t] + a[t] s[t-k] holds with k doubling, a and b combined pairwise."""
    n, shift = constant_type(h).shape[axis], 1
    while shift < n:
        h = add(h, multiply(d, _shifted(h, shift, axis, 0)))
        d = multiply(d, _shifted(d, shift, axis, 0))
        shift *= 2
    return h


def _cumprod_jvp(tangents, x, *, axis, out):
    # d out[j] = x[j] d out[j-1] + dx[j] (x[0] ... x[j-1])
    (tangent,) = tangents
    before = _shifted(out, 1, axis, 1)  # the products of the elements before each
    return _linear_scan(multiply(tangent, before), x, axis)


def _cumprod_vjp(ct, x, *, axis, out):
    # x[i]'s cotangent is (x[0] ... x[i-1]) r[i] with r[i] = ct[i] + x[i+1] r[i+1]: a
    # scan from the other end. No division by x: right where x holds zeros.
    following = _shifted(x, -1, axis, 0)
    r = _reverse(_linear_scan(_reverse(ct, axis), _reverse(following, axis), axis), axis)
    return [multiply(r, _shifted(out, 1, axis, 1))]


# A running product, multiplied in order along the axis as NumPy's loop multiplies.
cumprod_p = register(Primitive(
    "cumprod", _cumsum_type, lambda x, *, axis: np.cumprod(x, axis=axis),
    vjp=_cumprod_vjp, jvp=_cumprod_jvp))


def cumprod(x, *, axis): return bind(cumprod_p, x, axis=axis)
