"""ONNX's elementwise operators, activations, reductions and matrix products, written
with jitflow.numpy. ONNX computes in its operands' one dtype (int32 / int32 stays
int32), where NumPy may widen: results are cast back to the ONNX dtype."""
import functools

import numpy as np

from .. import numpy as jnp
from ..nn._erf import erf
from .dtypes import jitflow_dtype


def unary(fn):
    return lambda node, x: fn(x)


def binary(fn):
    return lambda node, x, y: fn(x, y)


def variadic(fn):
    return lambda node, *xs: functools.reduce(fn, xs)


def same_dtype(fn):
    """fn's result in the first operand's dtype (NumPy widens int32 sums, powers of
    float32 by float64 exponents, ...; ONNX does not)."""
    def rule(node, x, *rest):
        return jnp.astype(fn(node, x, *rest), x.dtype, copy=False)
    return rule


def divide(node, x, y):
    """Integers: the quotient truncated toward zero, as ONNX's Div (NumPy floors)."""
    if x.dtype.kind == "f":
        return jnp.divide(x, y)
    floored = jnp.floor_divide(x, y)
    inexact = jnp.not_equal(jnp.remainder(x, y), 0)
    return jnp.where(inexact & ((x < 0) != (y < 0)), floored + 1, floored)


def mod(node, x, y):
    """fmod=1: C's fmod (the dividend's sign); for floats |x| mod |y| (exact), signed
    as x (a zero result is +0.0)."""
    if not node.attr("fmod", 0):
        return jnp.remainder(x, y)
    if x.dtype.kind != "f":
        return jnp.fmod(x, y)
    magnitude = jnp.remainder(jnp.abs(x), jnp.abs(y))
    return jnp.where(x < 0, -magnitude, magnitude)


def mean(node, *xs):
    return functools.reduce(jnp.add, xs) / len(xs)


def is_inf(node, x):
    """Infinities, of both signs unless detect_negative or detect_positive is 0."""
    found = jnp.isinf(x)
    if not node.attr("detect_negative", 1):
        found = found & (x > 0)
    if not node.attr("detect_positive", 1):
        found = found & (x < 0)
    return found


def cast(node, x):
    return jnp.astype(x, jitflow_dtype(node.attr("to"), node.where()))


def cast_like(node, x, like):
    return jnp.astype(x, like.dtype)


def clip(node, x, low=None, high=None):
    if node.opset < 11:
        low, high = node.attr("min"), node.attr("max")
    if low is not None:
        x = jnp.maximum(x, jnp.astype(low, x.dtype))
    if high is not None:
        x = jnp.minimum(x, jnp.astype(high, x.dtype))
    return x


def leaky_relu(node, x):
    return jnp.where(x >= 0, x, x * np.asarray(node.attr("alpha", 0.01), x.dtype))


def elu(node, x):
    alpha = np.asarray(node.attr("alpha", 1.0), x.dtype)
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.minimum(x, 0)))


def selu(node, x):
    alpha = np.asarray(node.attr("alpha", 1.67326319217681884765625), x.dtype)
    gamma = np.asarray(node.attr("gamma", 1.05070102214813232421875), x.dtype)
    return gamma * jnp.where(x > 0, x, alpha * jnp.expm1(jnp.minimum(x, 0)))


def softplus(node, x):
    return jnp.logaddexp(x, np.zeros((), x.dtype))


def hard_sigmoid(node, x):
    alpha = np.asarray(node.attr("alpha", 0.2), x.dtype)
    beta = np.asarray(node.attr("beta", 0.5), x.dtype)
    return jnp.clip(alpha * x + beta, 0, 1)


def gelu(node, x):
    half = np.asarray(0.5, x.dtype)
    if node.attr("approximate", "none") == "tanh":
        inner = np.asarray(np.sqrt(2 / np.pi), x.dtype) * \
            (x + np.asarray(0.044715, x.dtype) * x * x * x)
        return half * x * (1 + jnp.tanh(inner))
    return half * x * (1 + erf(x / np.asarray(np.sqrt(2), x.dtype)))


def prelu(node, x, slope):
    return jnp.where(x < 0, x * slope, x)


def thresholded_relu(node, x):
    return jnp.where(x > np.asarray(node.attr("alpha", 1.0), x.dtype), x, np.zeros((), x.dtype))


def hard_swish(node, x):
    return x * jnp.clip(x / np.asarray(6, x.dtype) + np.asarray(0.5, x.dtype), 0, 1)


def mish(node, x):
    return x * jnp.tanh(softplus(node, x))


def einsum(node, *xs):
    return jnp.einsum(node.attr("equation"), *xs)


# --- reductions ----------------------------------------------------------------------------

def reduction(fn, axes_input_since=18, empty=None):
    """A reduction over `axes` (an input from the given opset, an attribute before);
    no axes: all of them, or none with noop_with_empty_axes. `empty(dtype)` is the
    result over no elements where NumPy has none (the maximum of nothing: -inf)."""
    def rule(node, x, axes=None):
        axes = node.static_ints(axes, "axes") if axes is not None and \
            node.opset >= axes_input_since else node.attr("axes")
        if not axes:
            if node.attr("noop_with_empty_axes", 0):
                return x
            axes = range(x.ndim)
        axes = tuple(sorted(a % x.ndim for a in axes)) if x.ndim else ()
        keepdims = bool(node.attr("keepdims", 1))
        if empty is not None and any(x.shape[a] == 0 for a in axes):
            shape = [1 if a in axes else n for a, n in enumerate(x.shape)
                     if keepdims or a not in axes]
            return np.full(shape, empty(x.dtype), x.dtype)
        return jnp.astype(fn(x, axes, keepdims), x.dtype, copy=False)
    return rule


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else (False if dtype.kind == "b" else
                                             np.iinfo(dtype).min)


def _highest(dtype):
    return np.inf if dtype.kind == "f" else (True if dtype.kind == "b" else
                                            np.iinfo(dtype).max)


REDUCTIONS = {
    "ReduceSum": reduction(lambda x, a, k: jnp.sum(x, axis=a, keepdims=k), 13),
    "ReduceMean": reduction(lambda x, a, k: jnp.mean(x, axis=a, keepdims=k)),
    "ReduceMax": reduction(lambda x, a, k: jnp.max(x, axis=a, keepdims=k), empty=_lowest),
    "ReduceMin": reduction(lambda x, a, k: jnp.min(x, axis=a, keepdims=k), empty=_highest),
    "ReduceProd": reduction(lambda x, a, k: jnp.prod(x, axis=a, keepdims=k)),
    "ReduceLogSumExp": reduction(lambda x, a, k: jnp.logsumexp(x, axis=a, keepdims=k),
                                 empty=_lowest),
    "ReduceSumSquare": reduction(lambda x, a, k: jnp.sum(x * x, axis=a, keepdims=k)),
    "ReduceL1": reduction(lambda x, a, k: jnp.sum(jnp.abs(x), axis=a, keepdims=k)),
    "ReduceL2": reduction(lambda x, a, k: jnp.sqrt(jnp.sum(x * x, axis=a, keepdims=k))),
}


def arg_reduction(fn):
    """ArgMax/ArgMin; select_last_index takes the last of equal extrema (found first
    in the array reversed along the axis)."""
    def rule(node, x):
        axis, keepdims = node.attr("axis", 0) % max(x.ndim, 1), bool(node.attr("keepdims", 1))
        if node.attr("select_last_index", 0):
            last = x.shape[axis] - 1
            return last - fn(jnp.flip(x, axis=axis), axis=axis, keepdims=keepdims)
        return fn(x, axis=axis, keepdims=keepdims)
    return rule


def cumsum(node, x, axis):
    axis = int(node.static(axis, "axis"))
    if node.attr("reverse", 0):
        x = jnp.flip(x, axis=axis)
    total = jnp.astype(jnp.cumsum(x, axis=axis), x.dtype, copy=False)
    if node.attr("exclusive", 0):
        total = total - x
    return jnp.flip(total, axis=axis) if node.attr("reverse", 0) else total


# --- products ------------------------------------------------------------------------------

def gemm(node, a, b, c=None):
    """alpha * A' B' + beta * C, A' and B' transposed when transA, transB say."""
    a = jnp.transpose(a) if node.attr("transA", 0) else a
    b = jnp.transpose(b) if node.attr("transB", 0) else b
    product = jnp.matmul(a, b)
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    if alpha != 1.0:
        product = product * np.asarray(alpha, product.dtype)
    if c is not None:
        product = product + (c if beta == 1.0 else c * np.asarray(beta, c.dtype))
    return product


MATH_OPS = {
    "Abs": unary(jnp.abs), "Neg": unary(jnp.negative), "Exp": unary(jnp.exp),
    "Log": unary(jnp.log), "Sqrt": unary(jnp.sqrt), "Sin": unary(jnp.sin),
    "Cos": unary(jnp.cos), "Tan": unary(jnp.tan), "Tanh": unary(jnp.tanh),
    "Sinh": unary(jnp.sinh), "Cosh": unary(jnp.cosh), "Asinh": unary(jnp.arcsinh),
    "Acosh": unary(jnp.arccosh), "Atanh": unary(jnp.arctanh), "Atan": unary(jnp.arctan),
    "Asin": unary(jnp.arcsin), "Acos": unary(jnp.arccos),
    "Sigmoid": unary(jnp.logistic), "Floor": unary(jnp.floor), "Ceil": unary(jnp.ceil),
    "Round": unary(jnp.rint), "Sign": unary(jnp.sign),
    "Reciprocal": same_dtype(unary(jnp.reciprocal)), "Erf": unary(erf),
    "Relu": unary(lambda x: jnp.maximum(x, np.zeros((), x.dtype))),
    "LeakyRelu": leaky_relu, "Elu": elu, "Selu": selu, "Softplus": softplus,
    "HardSigmoid": hard_sigmoid, "Gelu": gelu, "Clip": clip, "PRelu": prelu,
    "ThresholdedRelu": thresholded_relu, "HardSwish": hard_swish, "Mish": mish,
    "Softsign": unary(lambda x: x / (1 + jnp.abs(x))), "Einsum": einsum,
    "Not": unary(jnp.logical_not), "IsNaN": unary(jnp.isnan),
    "IsInf": is_inf,
    "BitwiseNot": unary(jnp.invert),
    "Add": binary(jnp.add), "Sub": binary(jnp.subtract), "Mul": binary(jnp.multiply),
    "Div": divide, "Pow": same_dtype(binary(jnp.power)), "Mod": mod,
    "Max": variadic(jnp.maximum), "Min": variadic(jnp.minimum), "Sum": variadic(jnp.add),
    "Mean": mean, "Equal": binary(jnp.equal), "Less": binary(jnp.less),
    "LessOrEqual": binary(jnp.less_equal), "Greater": binary(jnp.greater),
    "GreaterOrEqual": binary(jnp.greater_equal), "And": binary(jnp.logical_and),
    "Or": binary(jnp.logical_or), "Xor": binary(jnp.logical_xor),
    "BitwiseAnd": binary(jnp.bitwise_and), "BitwiseOr": binary(jnp.bitwise_or),
    "BitwiseXor": binary(jnp.bitwise_xor),
    "Where": lambda node, c, x, y: jnp.where(c, x, y),
    "Cast": cast, "CastLike": cast_like, "Identity": unary(lambda x: x),
    **REDUCTIONS,
    "ArgMax": arg_reduction(jnp.argmax), "ArgMin": arg_reduction(jnp.argmin),
    "CumSum": cumsum, "MatMul": binary(jnp.matmul), "Gemm": gemm,
}
