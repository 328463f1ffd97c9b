"""The op functions of jitflow.v1's table: a graph run in a Session gives what the same
computation gives under @jitflow.function and what NumPy gives, on values hypothesis
draws (NaN, infinities and signed zeros included where the op is exact)."""
import numpy as np
import pytest
from hypothesis import given, settings

import jitflow
import jitflow.numpy as jnp
import jitflow.v1 as tf
from fidelity import NATIVE_ULPS, assert_same
from strategies import arrays

SHAPE = (3, 4)
TRANSCENDENTAL = {"exp", "log", "tanh", "sigmoid", "sin", "cos", "log1p", "expm1", "pow",
                  "softmax", "log_softmax", "softplus"}


def sigmoid(x):
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


UNARY = {
    "exp": (tf.exp, np.exp), "log": (tf.log, np.log), "sqrt": (tf.sqrt, np.sqrt),
    "square": (tf.square, np.square), "negative": (tf.negative, np.negative),
    "abs": (tf.abs, np.abs), "tanh": (tf.tanh, np.tanh), "sigmoid": (tf.sigmoid, sigmoid),
    "sin": (tf.sin, np.sin), "cos": (tf.cos, np.cos), "log1p": (tf.log1p, np.log1p),
    "expm1": (tf.expm1, np.expm1), "floor": (tf.floor, np.floor),
    "ceil": (tf.ceil, np.ceil), "sign": (tf.sign, np.sign),
    "reciprocal": (tf.reciprocal, lambda x: 1 / x),
    "relu": (tf.nn.relu, lambda x: np.maximum(x, 0)),
    "identity": (tf.identity, lambda x: x),
}
BINARY = {
    "add": (tf.add, np.add), "subtract": (tf.subtract, np.subtract),
    "multiply": (tf.multiply, np.multiply), "divide": (tf.divide, np.divide),
    "maximum": (tf.maximum, np.maximum), "minimum": (tf.minimum, np.minimum),
    "pow": (tf.pow, np.power), "equal": (tf.equal, np.equal),
    "not_equal": (tf.not_equal, np.not_equal), "less": (tf.less, np.less),
    "greater_equal": (tf.greater_equal, np.greater_equal),
    "squared_difference": (tf.squared_difference, lambda x, y: np.square(x - y)),
}


def run_graph(build, *values):
    """build(*placeholders) run in a Session, fed `values`; the placeholders leave the
    first dimension open, and each result's static shape must fit the value it has."""
    tf.reset_default_graph()
    holders = [tf.placeholder(v.dtype, (None,) + v.shape[1:]) for v in values]
    result = build(*holders)
    with tf.Session() as sess:
        got = sess.run(result, dict(zip(holders, values)))
    for tensor, value in zip(result if isinstance(result, list) else [result],
                             got if isinstance(result, list) else [got]):
        assert tensor.shape.is_compatible_with(np.shape(value)), (tensor, np.shape(value))
        assert tensor.dtype == np.asarray(value).dtype, (tensor, np.asarray(value).dtype)
    return got


def check(name, got, expected, exact=True):
    tolerance = {} if exact else {"rtol": 1e-12}
    if name in TRANSCENDENTAL and jitflow.config.backend == "native" or name == "sigmoid":
        # jitflow's logistic is not 1 / (1 + exp(-x)) rounded step by step
        tolerance["ulps"] = NATIVE_ULPS
    with np.errstate(all="ignore"):
        assert_same(got, expected, **tolerance, what=name)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops(name, backend):
    op, reference = UNARY[name]

    @settings(max_examples=10)
    @given(arrays(np.float64, SHAPE))
    def compare(x):
        with np.errstate(all="ignore"):
            expected = reference(x)
        check(name, run_graph(op, x), expected)
        check(name, jitflow.function(lambda x: op_as_numpy(name, x))(x), expected)
    compare()


def op_as_numpy(name, x):
    """The same computation written with jitflow.numpy, for @jitflow.function."""
    functions = {"negative": jnp.negative, "reciprocal": lambda x: 1 / x,
                 "relu": lambda x: jnp.maximum(x, 0), "identity": lambda x: x,
                 "sigmoid": jnp.sigmoid}
    return functions.get(name, getattr(jnp, name, None))(x)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_ops(name, backend):
    op, reference = BINARY[name]

    @settings(max_examples=10)
    @given(arrays(np.float64, SHAPE), arrays(np.float64, (4,)))
    def compare(x, y):
        with np.errstate(all="ignore"):
            expected = reference(x, y)
        check(name, run_graph(op, x, y), expected)
    compare()


@pytest.mark.parametrize("name, op, reference", [
    ("reduce_sum", lambda x: tf.reduce_sum(x, axis=1), lambda x: x.sum(axis=1)),
    ("reduce_mean", lambda x: tf.reduce_mean(x, 0, keepdims=True),
     lambda x: x.mean(0, keepdims=True)),
    ("reduce_max", lambda x: tf.reduce_max(x), lambda x: x.max()),
    ("reduce_min", lambda x: tf.reduce_min(x, reduction_indices=[0, 1]), np.min),
    ("reduce_prod", lambda x: tf.reduce_prod(x, axis=-1), lambda x: x.prod(-1)),
    ("argmax", lambda x: tf.argmax(x, axis=1), lambda x: x.argmax(1)),
    ("argmin", lambda x: tf.argmin(x), lambda x: x.argmin(0)),
    ("reshape", lambda x: tf.reshape(x, [2, -1]), lambda x: x.reshape(2, -1)),
    ("transpose", tf.transpose, np.transpose),
    ("concat", lambda x: tf.concat([x, x * 2], axis=0),
     lambda x: np.concatenate([x, x * 2])),
    ("stack", lambda x: tf.stack([x, -x], axis=1), lambda x: np.stack([x, -x], axis=1)),
    ("gather", lambda x: tf.gather(x, [2, 0, 2]), lambda x: x[[2, 0, 2]]),
    ("gather_axis", lambda x: tf.gather(x, np.array([3, 1]), axis=1),
     lambda x: x[:, [3, 1]]),
    ("cast", lambda x: tf.cast(x * 100, tf.int32), lambda x: (x * 100).astype(np.int32)),
    ("where", lambda x: tf.where(x > 0, x, -x), lambda x: np.where(x > 0, x, -x)),
    ("split", lambda x: tf.split(x, [1, 3], axis=1), lambda x: np.split(x, [1], axis=1)),
    ("unstack", lambda x: tf.unstack(x, axis=1), lambda x: list(x.T)),
    ("slice", lambda x: x[1:, ::2], lambda x: x[1:, ::2]),
    ("expand_dims", lambda x: tf.expand_dims(x, 1), lambda x: x[:, None]),
    ("softmax", tf.nn.softmax, lambda x: np.exp(x - x.max(-1, keepdims=True)) / np.exp(
        x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)),
    ("numpy_on_tensors", lambda x: np.exp(x) @ np.ones((4, 2)) + np.sum(x),
     lambda x: np.exp(x) @ np.ones((4, 2)) + np.sum(x)),
])
def test_structural_ops(name, op, reference, backend):
    @settings(max_examples=10)
    @given(arrays(np.float64, SHAPE, min_value=-50, max_value=50))
    def compare(x):
        got, expected = run_graph(op, x), reference(x)
        if isinstance(expected, list):
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                check(name, g, e)
        else:
            exact = name not in ("reduce_mean", "reduce_sum", "reduce_prod", "softmax",
                                 "numpy_on_tensors")
            check(name, got, expected, exact)
    compare()


def test_softmax_cross_entropy_with_logits():
    logits = np.array([[2.0, -1.0, 0.5], [1000.0, 0.0, -1000.0]])
    labels = np.array([[0.2, 0.3, 0.5], [0.0, 1.0, 0.0]])
    log_p = logits - logits.max(1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(1, keepdims=True))
    got = run_graph(lambda l, z: tf.nn.softmax_cross_entropy_with_logits(labels=l, logits=z),
                    labels, logits)
    assert_same(got, -(labels * log_p).sum(1), rtol=1e-12)
    sparse = run_graph(lambda z: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=np.array([2, 1]), logits=z), logits)
    assert_same(sparse, -log_p[[0, 1], [2, 1]], rtol=1e-12)


def test_every_op_function_takes_a_name():
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, (2, 2))
    assert tf.exp(x, name="e").name == "e:0"
    assert tf.nn.relu(x, name="r").op.name == "r"
    assert [t.name for t in tf.split(x, 2, name="halves")] == ["halves:0", "halves:1"]
