"""Every primitive, one block each, followed by its wrapper.

Wrappers take arrays positionally and static parameters by keyword, and call bind(): they
run eagerly on NumPy values and record nodes on Tracers. These are the building blocks;
jitflow.numpy puts NumPy's names and signatures on top of them.
"""
import numpy as np

from .ir.primitive import Primitive, register
from .ir.types import (ShapeError, TensorType, bool_, broadcast_shapes, int64,
                       resolve_ufunc_dtypes, result_dtype, SUPPORTED_DTYPES)
from .trace import bind


# --- elementwise ---------------------------------------------------------------------

def ufunc_type_rule(ufunc):
    """NumPy's own dtype resolution for `ufunc`, with broadcasting of the shapes."""
    def type_rule(*types):
        shape = broadcast_shapes(*(t.shape for t in types))
        (dtype,), weak = resolve_ufunc_dtypes(ufunc, types)
        return TensorType(shape, dtype, weak and dtype.kind in "if")
    return type_rule


def elementwise(name, ufunc, impl=None, **rules):
    """Register an elementwise primitive whose types follow NumPy's `ufunc`."""
    return register(Primitive(name, ufunc_type_rule(ufunc), impl or ufunc,
                              elementwise=True, ufunc=ufunc, **rules))


neg_p = elementwise("neg", np.negative)
abs_p = elementwise("abs", np.absolute)
sign_p = elementwise("sign", np.sign)
exp_p = elementwise("exp", np.exp)
log_p = elementwise("log", np.log)
log1p_p = elementwise("log1p", np.log1p)
expm1_p = elementwise("expm1", np.expm1)
sqrt_p = elementwise("sqrt", np.sqrt)
sin_p = elementwise("sin", np.sin)
cos_p = elementwise("cos", np.cos)
tan_p = elementwise("tan", np.tan)
tanh_p = elementwise("tanh", np.tanh)
floor_p = elementwise("floor", np.floor)
ceil_p = elementwise("ceil", np.ceil)
isnan_p = elementwise("isnan", np.isnan)
isinf_p = elementwise("isinf", np.isinf)
logical_not_p = elementwise("logical_not", np.logical_not)
invert_p = elementwise("invert", np.invert)


def _logistic_impl(x):
    x = np.asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    e = np.exp(-np.abs(x))  # exp of a non-positive argument only: never overflows
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


# logistic(x) = 1 / (1 + exp(-x)); its dtypes are those of exp.
logistic_p = elementwise("logistic", np.exp, impl=_logistic_impl)

add_p = elementwise("add", np.add)
sub_p = elementwise("sub", np.subtract)
mul_p = elementwise("mul", np.multiply)
div_p = elementwise("div", np.true_divide)
floor_divide_p = elementwise("floor_divide", np.floor_divide)
mod_p = elementwise("mod", np.remainder)
pow_p = elementwise("pow", np.power)
max_p = elementwise("max", np.maximum)
min_p = elementwise("min", np.minimum)
eq_p = elementwise("eq", np.equal)
ne_p = elementwise("ne", np.not_equal)
lt_p = elementwise("lt", np.less)
le_p = elementwise("le", np.less_equal)
gt_p = elementwise("gt", np.greater)
ge_p = elementwise("ge", np.greater_equal)
logical_and_p = elementwise("logical_and", np.logical_and)
logical_or_p = elementwise("logical_or", np.logical_or)
logical_xor_p = elementwise("logical_xor", np.logical_xor)
bitwise_and_p = elementwise("bitwise_and", np.bitwise_and)
bitwise_or_p = elementwise("bitwise_or", np.bitwise_or)
bitwise_xor_p = elementwise("bitwise_xor", np.bitwise_xor)


def negative(x): return bind(neg_p, x)
def absolute(x): return bind(abs_p, x)
def sign(x): return bind(sign_p, x)
def exp(x): return bind(exp_p, x)
def log(x): return bind(log_p, x)
def log1p(x): return bind(log1p_p, x)
def expm1(x): return bind(expm1_p, x)
def sqrt(x): return bind(sqrt_p, x)
def sin(x): return bind(sin_p, x)
def cos(x): return bind(cos_p, x)
def tan(x): return bind(tan_p, x)
def tanh(x): return bind(tanh_p, x)
def floor(x): return bind(floor_p, x)
def ceil(x): return bind(ceil_p, x)
def isnan(x): return bind(isnan_p, x)
def isinf(x): return bind(isinf_p, x)
def logical_not(x): return bind(logical_not_p, x)
def invert(x): return bind(invert_p, x)
def logistic(x): return bind(logistic_p, x)
def add(x, y): return bind(add_p, x, y)
def subtract(x, y): return bind(sub_p, x, y)
def multiply(x, y): return bind(mul_p, x, y)
def divide(x, y): return bind(div_p, x, y)
def floor_divide(x, y): return bind(floor_divide_p, x, y)
def remainder(x, y): return bind(mod_p, x, y)
def power(x, y): return bind(pow_p, x, y)
def maximum(x, y): return bind(max_p, x, y)
def minimum(x, y): return bind(min_p, x, y)
def equal(x, y): return bind(eq_p, x, y)
def not_equal(x, y): return bind(ne_p, x, y)
def less(x, y): return bind(lt_p, x, y)
def less_equal(x, y): return bind(le_p, x, y)
def greater(x, y): return bind(gt_p, x, y)
def greater_equal(x, y): return bind(ge_p, x, y)
def logical_and(x, y): return bind(logical_and_p, x, y)
def logical_or(x, y): return bind(logical_or_p, x, y)
def logical_xor(x, y): return bind(logical_xor_p, x, y)
def bitwise_and(x, y): return bind(bitwise_and_p, x, y)
def bitwise_or(x, y): return bind(bitwise_or_p, x, y)
def bitwise_xor(x, y): return bind(bitwise_xor_p, x, y)


# --- select and cast -------------------------------------------------------------------

def _where_type(cond, x, y):
    if cond.dtype != bool_:
        raise TypeError(f"the condition must be bool, got {cond.dtype}")
    dtype, weak = result_dtype(x, y)
    shape = broadcast_shapes(cond.shape, x.shape, y.shape)
    return TensorType(shape, dtype, weak and shape == ())  # an array condition: an array


where_p = register(Primitive("where", _where_type, np.where, elementwise=True))


def where(cond, x, y): return bind(where_p, cond, x, y)


def _cast_type(x, *, dtype):
    return TensorType(x.shape, dtype)


def _cast_impl(x, *, dtype):
    return np.asarray(x).astype(dtype)


cast_p = register(Primitive("cast", _cast_type, _cast_impl, elementwise=True))


def cast(x, dtype): return bind(cast_p, x, dtype=np.dtype(dtype))


# --- reductions --------------------------------------------------------------------------

def _reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _check_axes(x, axes):
    if any(not 0 <= a < x.ndim for a in axes) or list(axes) != sorted(set(axes)):
        raise ValueError(f"axes {axes} are not sorted, distinct axes of a {x.ndim}-d array")


def reduction(name, impl, accumulate_like=None):
    """Register a reduction over static `axes`; dtypes follow `accumulate_like` (NumPy's
    sum and prod widen bool and int32 to int64) or stay the input's."""
    def type_rule(x, *, axes, keepdims):
        _check_axes(x, axes)
        if accumulate_like is None and any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"zero-size array to reduction operation {name} which has "
                             f"no identity (shape {x.shape}, axes {axes})")
        dtype = accumulate_like(x.dtype) if accumulate_like else x.dtype
        return TensorType(_reduced_shape(x.shape, axes, keepdims), dtype)

    def run(x, *, axes, keepdims):
        return impl(x, axis=axes, keepdims=keepdims)
    return register(Primitive(name, type_rule, run))


def _widened(dtype):
    return int64 if dtype.kind in "bi" else dtype


reduce_sum_p = reduction("reduce_sum", np.sum, accumulate_like=_widened)
reduce_prod_p = reduction("reduce_prod", np.prod, accumulate_like=_widened)
reduce_max_p = reduction("reduce_max", np.max)
reduce_min_p = reduction("reduce_min", np.min)


def reduce_sum(x, *, axes, keepdims=False): return bind(reduce_sum_p, x, axes=axes, keepdims=keepdims)
def reduce_prod(x, *, axes, keepdims=False): return bind(reduce_prod_p, x, axes=axes, keepdims=keepdims)
def reduce_max(x, *, axes, keepdims=False): return bind(reduce_max_p, x, axes=axes, keepdims=keepdims)
def reduce_min(x, *, axes, keepdims=False): return bind(reduce_min_p, x, axes=axes, keepdims=keepdims)


def arg_reduction(name, impl):
    """argmax/argmin along one axis (or the flattened array when axis is None)."""
    def type_rule(x, *, axis, keepdims):
        axes = tuple(range(x.ndim)) if axis is None else (axis,)
        _check_axes(x, axes)
        if any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"attempt to get {name} of an empty sequence (shape {x.shape})")
        return TensorType(_reduced_shape(x.shape, axes, keepdims), int64)

    def run(x, *, axis, keepdims):
        return impl(x, axis=axis, keepdims=keepdims)
    return register(Primitive(name, type_rule, run))


argmax_p = arg_reduction("argmax", np.argmax)
argmin_p = arg_reduction("argmin", np.argmin)


def argmax(x, *, axis, keepdims=False): return bind(argmax_p, x, axis=axis, keepdims=keepdims)
def argmin(x, *, axis, keepdims=False): return bind(argmin_p, x, axis=axis, keepdims=keepdims)


def _cumsum_type(x, *, axis):
    _check_axes(x, (axis,))
    return TensorType(x.shape, _widened(x.dtype))


cumsum_p = register(Primitive("cumsum", _cumsum_type,
                              lambda x, *, axis: np.cumsum(x, axis=axis)))


def cumsum(x, *, axis): return bind(cumsum_p, x, axis=axis)


# --- shapes ------------------------------------------------------------------------------

def _reshape_type(x, *, shape):
    if int(np.prod(shape, dtype=np.int64)) != x.size:
        raise ShapeError(f"cannot reshape array of size {x.size} (shape {x.shape}) into "
                         f"shape {shape}")
    return x.with_shape(shape)


reshape_p = register(Primitive("reshape", _reshape_type,
                               lambda x, *, shape: np.reshape(x, shape)))


def reshape(x, shape): return bind(reshape_p, x, shape=tuple(shape))


def _broadcast_type(x, *, shape):
    if len(shape) < x.ndim or any(d not in (1, s) for d, s in
                                  zip(x.shape[::-1], shape[::-1])):
        raise ShapeError(f"cannot broadcast shape {x.shape} to shape {shape}")
    return x.with_shape(shape)


def _broadcast_impl(x, *, shape):
    return np.broadcast_to(x, shape)


broadcast_to_p = register(Primitive("broadcast_to", _broadcast_type, _broadcast_impl))


def broadcast_to(x, shape): return bind(broadcast_to_p, x, shape=tuple(shape))


def _transpose_type(x, *, perm):
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"axes {perm} are not a permutation of the {x.ndim} axes of "
                         f"shape {x.shape}")
    return x.with_shape(tuple(x.shape[p] for p in perm))


transpose_p = register(Primitive("transpose", _transpose_type,
                                 lambda x, *, perm: np.transpose(x, perm)))


def transpose(x, perm): return bind(transpose_p, x, perm=tuple(perm))


def _slice_type(x, *, starts, steps, sizes):
    if not len(starts) == len(steps) == len(sizes) == x.ndim:
        raise ShapeError(f"slice of a {x.ndim}-d array needs {x.ndim} starts, steps, sizes")
    for dim, start, step, size in zip(x.shape, starts, steps, sizes):
        last = start + step * (size - 1)
        if step == 0 or size < 0 or (size and not (0 <= start < dim and 0 <= last < dim)):
            raise IndexError(f"slice start {start}, step {step}, size {size} is out of "
                             f"bounds for an axis of length {dim}")
    return x.with_shape(sizes)


def _slice_impl(x, *, starts, steps, sizes):
    index = []
    for start, step, size in zip(starts, steps, sizes):
        stop = start + step * size
        index.append(slice(start, None if stop < 0 else stop, step))
    return np.asarray(x)[tuple(index)]


# x[start : start + step*size : step] on every axis: all of basic slicing, normalized.
slice_p = register(Primitive("slice", _slice_type, _slice_impl))


def slice_array(x, *, starts, steps, sizes):
    return bind(slice_p, x, starts=tuple(starts), steps=tuple(steps), sizes=tuple(sizes))


def _gather_type(x, *indices, axis):
    if not indices or axis + len(indices) > x.ndim:
        raise IndexError(f"too many indices for array of shape {x.shape}")
    for index in indices:
        if index.dtype.kind != "i":
            raise IndexError(f"arrays used as indices must be of integer type, got "
                             f"{index.dtype}")
    batch = broadcast_shapes(*(i.shape for i in indices))
    shape = x.shape[:axis] + batch + x.shape[axis + len(indices):]
    return x.with_shape(shape)


def _gather_impl(x, *indices, axis):
    return np.asarray(x)[(slice(None),) * axis + tuple(indices)]


# x[:, ..., i, j, ...] with integer arrays i, j (broadcast together) on consecutive axes
# from `axis`. Indices out of bounds raise IndexError, as in NumPy.
gather_p = register(Primitive("gather", _gather_type, _gather_impl))


def gather(x, *indices, axis): return bind(gather_p, x, *indices, axis=axis)


def _concatenate_type(*xs, axis):
    first = xs[0]
    for x in xs:
        if x.ndim != first.ndim or x.ndim == 0:
            raise ShapeError("all the input arrays must have the same number (> 0) of "
                             f"dimensions, got shapes {[t.shape for t in xs]}")
        if any(a != b for i, (a, b) in enumerate(zip(x.shape, first.shape)) if i != axis):
            raise ShapeError(f"all the input array dimensions except for the "
                             f"concatenation axis {axis} must match exactly, got shapes "
                             f"{[t.shape for t in xs]}")
    dtype, _ = result_dtype(*(t.strong() for t in xs))
    size = sum(x.shape[axis] for x in xs)
    return TensorType(first.shape[:axis] + (size,) + first.shape[axis + 1:], dtype)


concatenate_p = register(Primitive(
    "concatenate", _concatenate_type, lambda *xs, axis: np.concatenate(xs, axis=axis)))


def concatenate(xs, *, axis): return bind(concatenate_p, *xs, axis=axis)


def _pad_type(x, *, widths, value):
    if len(widths) != x.ndim or any(lo < 0 or hi < 0 for lo, hi in widths):
        raise ShapeError(f"pad widths {widths} do not fit an array of shape {x.shape} "
                         f"(one non-negative (before, after) pair per axis)")
    return x.with_shape(tuple(d + lo + hi for d, (lo, hi) in zip(x.shape, widths)))


def _pad_impl(x, *, widths, value):
    if np.ndim(x) == 0:  # np.pad cannot read the empty widths of a 0-d array
        return np.array(x)
    return np.pad(x, widths, constant_values=value)


pad_p = register(Primitive("pad", _pad_type, _pad_impl))


def pad(x, *, widths, value=0):
    return bind(pad_p, x, widths=tuple(map(tuple, widths)), value=value)


# --- contraction ----------------------------------------------------------------------------

def _matmul_type(x, y):
    if x.ndim < 2 or y.ndim < 2:
        raise ShapeError(f"matmul primitive needs operands of rank >= 2, got shapes "
                         f"{x.shape} and {y.shape}")
    if x.shape[-1] != y.shape[-2]:
        raise ShapeError(f"matmul: inner dimensions differ: shapes {x.shape} and "
                         f"{y.shape} ({x.shape[-1]} != {y.shape[-2]})")
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2])
    (dtype,), _ = resolve_ufunc_dtypes(np.matmul, (x.strong(), y.strong()))
    return TensorType(batch + (x.shape[-2], y.shape[-1]), dtype)


matmul_p = register(Primitive("matmul", _matmul_type, np.matmul))


def matmul(x, y): return bind(matmul_p, x, y)


# --- creation ----------------------------------------------------------------------------------

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
iota_p = register(Primitive("iota", _iota_type, _iota_impl))


def iota(shape, dtype, axis=0):
    return bind(iota_p, shape=tuple(shape), dtype=np.dtype(dtype), axis=axis)
