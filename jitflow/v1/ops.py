"""The op functions of jitflow.v1, made from one table.

Each row names a TensorFlow op function, its operation type and the jitflow function it
applies to the values of its inputs when the graph runs (jitflow.numpy's, with
TensorFlow's argument names where they differ). Every function made from the table takes
`name=` and returns the new operation's output Tensor (a list for several outputs).
"""
import numpy as np

from .. import numpy as jnp
from .. import ops as _primitives
from ..ir.types import as_dtype
from .numpy_calls import operation


def _axes(axis=None, reduction_indices=None):
    axis = reduction_indices if axis is None else axis
    return tuple(axis) if isinstance(axis, list) else axis


def _reduction(function):
    def reduce(input_tensor, axis=None, keepdims=None, reduction_indices=None,
               keep_dims=None):
        keep = bool(keepdims if keepdims is not None else keep_dims)
        return function(input_tensor, axis=_axes(axis, reduction_indices), keepdims=keep)
    return reduce


def _matmul(a, b, transpose_a=False, transpose_b=False):
    a = jnp.swapaxes(a, -1, -2) if transpose_a else a
    b = jnp.swapaxes(b, -1, -2) if transpose_b else b
    return jnp.matmul(a, b)


def _split(value, num_or_size_splits, axis=0, num=None):
    size = value.shape[axis]
    if isinstance(num_or_size_splits, (int, np.integer)):
        if size % num_or_size_splits:
            raise ValueError(f"split: dimension {axis} of size {size} does not split "
                             f"evenly into {num_or_size_splits}")
        sizes = [size // num_or_size_splits] * num_or_size_splits
    else:
        sizes = [int(s) for s in num_or_size_splits]
        if -1 in sizes:
            sizes[sizes.index(-1)] = size - (sum(sizes) + 1)
        if sum(sizes) != size or min(sizes) < 0:
            raise ValueError(f"split: sizes {list(num_or_size_splits)} do not add up to "
                             f"dimension {axis} of size {size}")
    starts = np.cumsum([0] + sizes).tolist()
    before = (slice(None),) * (axis % value.ndim)
    return [value[before + (slice(a, b),)] for a, b in zip(starts, starts[1:])]


def _unstack(value, num=None, axis=0):
    count = value.shape[axis]
    if num is not None and num != count:
        raise ValueError(f"unstack: num={num} but dimension {axis} has size {count}")
    return [jnp.take(value, i, axis=axis) for i in range(count)]


def _softmax_cross_entropy(labels=None, logits=None, axis=-1, dim=None):
    axis = dim if dim is not None else axis
    return -jnp.sum(labels * jnp.log_softmax(logits, axis=axis), axis=axis)


def _sparse_softmax_cross_entropy(labels=None, logits=None):
    classes = jnp.arange(logits.shape[-1])
    chosen = jnp.expand_dims(labels, -1) == classes
    return -jnp.sum(jnp.where(chosen, jnp.log_softmax(logits, axis=-1), 0), axis=-1)


def _sigmoid_cross_entropy(labels=None, logits=None):
    # max(x, 0) - x z + log(1 + exp(-|x|)): finite for every logit
    return jnp.maximum(logits, 0) - logits * labels + jnp.log1p(jnp.exp(-jnp.abs(logits)))


def _arg(function):
    def arg(input, axis=None, output_type=np.int64, dimension=None):
        axis = dimension if axis is None else axis
        return function(input, axis=0 if axis is None else axis).astype(
            as_dtype(output_type, what="output_type"))
    return arg


def _cast(x, dtype):
    return jnp.astype(x, as_dtype(dtype, what="cast: dtype"))


def _where(condition, x=None, y=None):
    if x is None or y is None:
        raise ValueError("where: jitflow.v1 takes where(condition, x, y), both x and y "
                         "given (the positions of True have no static shape)")
    return jnp.where(condition, x, y)


def _reshape(tensor, shape):
    return jnp.reshape(tensor, tuple(shape))


def _gather(params, indices, axis=None):
    return jnp.take(params, indices, axis=0 if axis is None else axis)


def python_default(value):
    """TensorFlow's dtype for a value without one: Python floats are float32 and
    Python ints int32; NumPy values keep theirs."""
    array = np.asarray(value)
    if isinstance(value, (np.ndarray, np.generic)):
        return as_dtype(array.dtype, what="constant")
    if array.dtype == np.float64:
        return np.dtype(np.float32)
    if array.dtype == np.int64 and np.all(np.abs(array) < 2**31):
        return np.dtype(np.int32)
    return as_dtype(array.dtype, what="constant")


def _value_dtype(value):
    """A Python number's dtype as TensorFlow gives it (float32, int32); None keeps an
    array's own."""
    return python_default(value) if isinstance(value, (bool, int, float)) else None


def _fill_like(fill):
    def like(tensor, dtype=None):
        return fill(tensor, dtype=None if dtype is None else as_dtype(dtype))
    return like


# name, TensorFlow's operation type, what it computes on the values of its inputs
TABLE = [
    ("add", "AddV2", jnp.add),
    ("subtract", "Sub", jnp.subtract),
    ("multiply", "Mul", jnp.multiply),
    ("divide", "RealDiv", jnp.divide),
    ("truediv", "RealDiv", jnp.divide),
    ("floordiv", "FloorDiv", jnp.floor_divide),
    ("mod", "FloorMod", jnp.remainder),
    ("pow", "Pow", jnp.power),
    ("maximum", "Maximum", jnp.maximum),
    ("minimum", "Minimum", jnp.minimum),
    ("squared_difference", "SquaredDifference", lambda x, y: jnp.square(x - y)),
    ("negative", "Neg", jnp.negative),
    ("abs", "Abs", jnp.abs),
    ("sign", "Sign", jnp.sign),
    ("square", "Square", jnp.square),
    ("sqrt", "Sqrt", jnp.sqrt),
    ("rsqrt", "Rsqrt", lambda x: 1 / jnp.sqrt(x)),
    ("reciprocal", "Reciprocal", lambda x: 1 / x),
    ("exp", "Exp", jnp.exp),
    ("expm1", "Expm1", jnp.expm1),
    ("log", "Log", jnp.log),
    ("log1p", "Log1p", jnp.log1p),
    ("sin", "Sin", jnp.sin),
    ("cos", "Cos", jnp.cos),
    ("tan", "Tan", jnp.tan),
    ("floor", "Floor", jnp.floor),
    ("ceil", "Ceil", jnp.ceil),
    ("sigmoid", "Sigmoid", jnp.sigmoid),
    ("tanh", "Tanh", jnp.tanh),
    ("matmul", "MatMul", _matmul),
    ("tensordot", "Tensordot", jnp.tensordot),
    ("einsum", "Einsum", jnp.einsum),
    ("reduce_sum", "Sum", _reduction(jnp.sum)),
    ("reduce_mean", "Mean", _reduction(jnp.mean)),
    ("reduce_max", "Max", _reduction(jnp.max)),
    ("reduce_min", "Min", _reduction(jnp.min)),
    ("reduce_prod", "Prod", _reduction(jnp.prod)),
    ("reduce_any", "Any", _reduction(jnp.any)),
    ("reduce_all", "All", _reduction(jnp.all)),
    ("reduce_logsumexp", "ReduceLogSumExp", _reduction(jnp.logsumexp)),
    ("argmax", "ArgMax", _arg(jnp.argmax)),
    ("argmin", "ArgMin", _arg(jnp.argmin)),
    ("equal", "Equal", jnp.equal),
    ("not_equal", "NotEqual", jnp.not_equal),
    ("less", "Less", jnp.less),
    ("less_equal", "LessEqual", jnp.less_equal),
    ("greater", "Greater", jnp.greater),
    ("greater_equal", "GreaterEqual", jnp.greater_equal),
    ("logical_and", "LogicalAnd", jnp.logical_and),
    ("logical_or", "LogicalOr", jnp.logical_or),
    ("logical_xor", "LogicalXor", jnp.logical_xor),
    ("logical_not", "LogicalNot", jnp.logical_not),
    ("where", "SelectV2", _where),
    ("clip_by_value", "ClipByValue", jnp.clip),
    ("cast", "Cast", _cast),
    ("identity", "Identity", lambda input: jnp.asarray(input)),
    ("stop_gradient", "StopGradient", _primitives.stop_gradient),
    ("reshape", "Reshape", _reshape),
    ("transpose", "Transpose", lambda a, perm=None: jnp.transpose(a, perm)),
    ("squeeze", "Squeeze", lambda input, axis=None: jnp.squeeze(
        input, tuple(axis) if isinstance(axis, list) else axis)),
    ("expand_dims", "ExpandDims", lambda input, axis: jnp.expand_dims(input, axis)),
    ("concat", "ConcatV2", lambda values, axis: jnp.concatenate(list(values), axis=axis)),
    ("stack", "Pack", lambda values, axis=0: jnp.stack(list(values), axis=axis)),
    ("unstack", "Unpack", _unstack),
    ("split", "Split", _split),
    ("gather", "GatherV2", _gather),
    ("add_n", "AddN", lambda inputs: sum(inputs[1:], inputs[0])),
    ("zeros", "Zeros", lambda shape, dtype=np.float32: jnp.zeros(
        tuple(shape), as_dtype(dtype))),
    ("ones", "Ones", lambda shape, dtype=np.float32: jnp.ones(tuple(shape), as_dtype(dtype))),
    ("fill", "Fill", lambda dims, value: jnp.full(tuple(dims), value, _value_dtype(value))),
    ("zeros_like", "ZerosLike", _fill_like(jnp.zeros_like)),
    ("ones_like", "OnesLike", _fill_like(jnp.ones_like)),
    ("shape", "Shape", lambda input, out_type=np.int32: jnp.asarray(
        np.array(input.shape, as_dtype(out_type)))),
    ("size", "Size", lambda input, out_type=np.int32: jnp.asarray(
        np.array(input.size, as_dtype(out_type)))),
    ("rank", "Rank", lambda input: jnp.asarray(np.array(input.ndim, np.int32))),
]

# tf.nn's, made the same way
NN_TABLE = [
    ("relu", "Relu", lambda features: jnp.maximum(features, 0)),
    ("relu6", "Relu6", lambda features: jnp.clip(features, 0, 6)),
    ("elu", "Elu", lambda features: jnp.where(features > 0, features,
                                              jnp.expm1(jnp.minimum(features, 0)))),
    ("softplus", "Softplus", lambda features: jnp.maximum(features, 0)
     + jnp.log1p(jnp.exp(-jnp.abs(features)))),
    ("sigmoid", "Sigmoid", jnp.sigmoid),
    ("tanh", "Tanh", jnp.tanh),
    ("softmax", "Softmax", lambda logits, axis=-1: jnp.softmax(logits, axis=axis)),
    ("log_softmax", "LogSoftmax", lambda logits, axis=-1: jnp.log_softmax(logits, axis)),
    ("bias_add", "BiasAdd", lambda value, bias: value + bias),
    ("l2_loss", "L2Loss", lambda t: jnp.sum(jnp.square(t)) / 2),
    ("softmax_cross_entropy_with_logits", "SoftmaxCrossEntropyWithLogits",
     _softmax_cross_entropy),
    ("softmax_cross_entropy_with_logits_v2", "SoftmaxCrossEntropyWithLogits",
     _softmax_cross_entropy),
    ("sparse_softmax_cross_entropy_with_logits", "SparseSoftmaxCrossEntropyWithLogits",
     _sparse_softmax_cross_entropy),
    ("sigmoid_cross_entropy_with_logits", "SigmoidCrossEntropyWithLogits",
     _sigmoid_cross_entropy),
]


def op_function(tf_name, op_type, compute):
    """The op function `tf_name`: compute(*args, **kwargs) added to the graph."""
    def op(*args, name=None, **kwargs):
        return operation(op_type, compute, args, kwargs, name)
    op.__name__ = op.__qualname__ = tf_name
    op.__doc__ = (f"{tf_name}(..., name=None): adds a '{op_type}' operation computing "
                  f"{getattr(compute, '__name__', 'it')} on its inputs' values.")
    return op


def generate(table, namespace):
    for tf_name, op_type, compute in table:
        namespace[tf_name] = op_function(tf_name, op_type, compute)
    return [row[0] for row in table]


__all__ = generate(TABLE, globals())
