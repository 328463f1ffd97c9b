"""matmul: batched matrix products with NumPy's broadcasting of the batch axes.

A float32 product traced while jitflow.config.matmul_precision is "bfloat16" carries
precision="bfloat16": its operands are rounded to bfloat16 (bfloat16_values) and
their products summed in float32, so that CPUs with bfloat16 matrix units (Intel's
AMX) run it at their speed; its cotangents and tangents are such products too.
"""
import numpy as np

from ..config import config
from ..ir.primitive import Primitive, register
from ..ir.types import (ShapeError, TensorType, broadcast_shapes, is_bfloat16,
                         resolve_ufunc_dtypes)
from ..trace import bind, constant_type
from .elementwise import add_tangents
from .select import cast
from .shapes import reshape, transpose


PRECISIONS = (None, "bfloat16")


def _matmul_type(x, y, precision=None):
    if precision not in PRECISIONS:
        raise ValueError(f"matmul: precision must be one of {PRECISIONS}, not {precision!r}")
    if x.ndim < 2 or y.ndim < 2:
        raise ShapeError(f"matmul primitive needs operands of rank >= 2, got shapes "
                         f"{x.shape} and {y.shape}")
    if x.shape[-1] != y.shape[-2]:
        raise ShapeError(f"matmul: inner dimensions differ: shapes {x.shape} and "
                         f"{y.shape} ({x.shape[-1]} != {y.shape[-2]})")
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2])
    (dtype,), _ = resolve_ufunc_dtypes(np.matmul, (x.strong(), y.strong()))
    if precision is not None and not x.dtype == y.dtype == np.float32:
        raise TypeError(f"matmul: precision={precision!r} takes float32 operands, not "
                        f"{x.dtype} and {y.dtype}")
    return TensorType(batch + (x.shape[-2], y.shape[-1]), dtype)


def matrix_transpose(x):
    n = len(constant_type(x).shape)
    return transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def _matmul_vjp(ct, x, y, *, out, needs, precision=None):
    # A product's cotangent costs as much as the product: skip those not needed (the
    # constant weights of grad with respect to the data, say).
    product = _product(precision)
    return [product(ct, matrix_transpose(y)) if needs[0] else None,
            _weight_cotangent(ct, x, y, product) if needs[1] else None]


def _matmul_jvp(tangents, x, y, *, out, precision=None):
    product = _product(precision)
    return add_tangents(None if tangents[0] is None else product(tangents[0], y),
                        None if tangents[1] is None else product(x, tangents[1]))


def _product(precision):
    """The product derivatives of a product of `precision` take."""
    if precision is None:
        return lambda x, y: bind(matmul_p, x, y)
    return lambda x, y: bind(matmul_p, x, y, precision=precision)


def _weight_cotangent(ct, x, y, product):
    """x^T @ ct. For a matrix y applied to a stack of matrices x (a Dense layer on
    (batch, time, features)), the stack's rows are one long matrix: one product of
    (K, rows) by (rows, N), instead of a product per matrix of the stack summed after
    (which makes an intermediate as large as the stack times y)."""
    x_type = constant_type(x)
    if constant_type(y).ndim != 2 or x_type.ndim <= 2:
        return product(matrix_transpose(x), ct)
    rows = int(np.prod(x_type.shape[:-1]))
    flat_x = reshape(x, (rows, x_type.shape[-1]))
    flat_ct = reshape(ct, (rows, constant_type(ct).shape[-1]))
    return product(matrix_transpose(flat_x), flat_ct)


def bfloat16_values(x):
    """float32 `x` rounded to bfloat16, as float32: to nearest even; values below
    float32's normal range (which bfloat16 units read as zero) become zeros of their
    sign; NaN stays NaN. (In 32-bit words: a NaN's rounding may wrap; it is replaced.)"""
    x = np.asarray(x, np.float32)
    bits = x.view(np.uint32)
    rounded = (bits + ((bits >> 16) & 1) + 0x7FFF) & 0xFFFF0000
    rounded = np.where(bits & 0x7F800000, rounded, bits & 0x80000000)
    return np.where(np.isnan(x), np.float32(np.nan), rounded.view(np.float32))


def _matmul_impl(x, y, precision=None):
    """np.matmul, with a stack of matrices times one matrix (either way round) done as
    one product of two matrices: NumPy runs such products a matrix at a time, or
    without BLAS at all (a float32 (16, 64, 128) @ (128, 512) took 25 times as long
    as the same rows as one (1024, 128) matrix)."""
    if precision == "bfloat16":
        x, y = bfloat16_values(x), bfloat16_values(y)
    if y.ndim == 2 and x.ndim > 2:
        rows = x.reshape(int(np.prod(x.shape[:-1])), x.shape[-1])
        return np.matmul(rows, y).reshape(x.shape[:-1] + (y.shape[-1],))
    if x.ndim == 2 and y.ndim > 2:
        columns = np.moveaxis(y, -2, 0).reshape(
            y.shape[-2], int(np.prod(y.shape[:-2])) * y.shape[-1])
        product = np.matmul(x, columns).reshape((x.shape[0],) + y.shape[:-2] + y.shape[-1:])
        return np.ascontiguousarray(np.moveaxis(product, 0, -2))
    return np.matmul(x, y)


# The transform sums each cotangent over the batch axes its operand was broadcast along.
matmul_p = register(Primitive(
    "matmul", _matmul_type, _matmul_impl, vjp=_matmul_vjp, vjp_takes_needs=True,
    jvp=_matmul_jvp))


def matmul(x, y):
    """x @ y. A float16 product is NumPy's: each half widened to float32, the products
    summed there in k order, and the sum rounded to half once. A float32 product
    takes config.matmul_precision (the module's docstring)."""
    try:
        half = _matmul_type(constant_type(x).strong(),
                            constant_type(y).strong()).dtype == np.float16
    except (ShapeError, TypeError):
        half = False  # bind raises it, naming the user's line
    if half:
        wide = np.dtype(np.float32)
        return cast(bind(matmul_p, cast(x, wide), cast(y, wide)), np.dtype(np.float16))
    if is_bfloat16(constant_type(x).dtype) or is_bfloat16(constant_type(y).dtype):
        return _in_loop_dtype(x, y)
    if config.matmul_precision == "bfloat16" and \
            constant_type(x).dtype == constant_type(y).dtype == np.float32:
        return bind(matmul_p, x, y, precision="bfloat16")
    return bind(matmul_p, x, y)


def _in_loop_dtype(x, y):
    """NumPy's matmul of bfloat16: it has no bfloat16 loop, so both operands are cast to
    the float loop NumPy picks (float32, float64 beside a float64) and the product is
    in that dtype."""
    resolved = np.matmul.resolve_dtypes((constant_type(x).dtype, constant_type(y).dtype, None))
    return bind(matmul_p, cast(x, resolved[0]), cast(y, resolved[1]))
