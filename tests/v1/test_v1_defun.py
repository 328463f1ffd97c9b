"""Defun: a Python function defined as a subgraph, called as one operation: values as the
same computation written inline, derivatives against finite differences, one body shared
by the calls, and its errors."""
import numpy as np
import pytest

import jitflow.v1 as tf
from fidelity import assert_same


@pytest.fixture(autouse=True)
def fresh_graph(backend):
    tf.reset_default_graph()


@tf.Defun(tf.float64, tf.float64)
def Blend(x, w):
    return tf.tanh(x * w), x + tf.exp(w)


def test_each_call_is_one_operation_and_computes_the_body():
    x = tf.placeholder(tf.float64, (None, 3), name="x")
    w = tf.Variable(np.array([0.5, -1.0, 2.0]), name="w")
    a, b = Blend(x, w)
    c, _ = Blend(b, w, name="second")
    assert a.op is b.op and a.op.type == "Blend" and c.op.name == "second"
    assert a.shape.as_list() == [None, 3]
    values = np.arange(6.0).reshape(2, 3) / 4
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([a, b, c], {x: values})
    weights = np.array([0.5, -1.0, 2.0])
    inner = values + np.exp(weights)
    assert_same(got[0], np.tanh(values * weights), ulps=4)
    assert_same(got[1], inner, ulps=4)
    assert_same(got[2], np.tanh(inner * weights), ulps=4)


def test_calls_with_the_same_shapes_share_one_body():
    x = tf.placeholder(tf.float64, (2,), name="x")
    first, second = Blend(x, x), Blend(x * 2.0, x)
    assert first[0].op.bodies[0] is second[0].op.bodies[0]


def test_derivatives_go_through_the_calls():
    x = tf.placeholder(tf.float64, (3,), name="x")
    w = tf.placeholder(tf.float64, (3,), name="w")
    a, b = Blend(x, w)
    loss = tf.reduce_sum(a * b)
    grads = tf.gradients(loss, [x, w])
    point = {x: np.array([0.3, -0.2, 1.1]), w: np.array([0.7, 0.4, -0.5])}

    def value(xv, wv):
        t = np.tanh(xv * wv)
        return np.sum(t * (xv + np.exp(wv)))
    with tf.Session() as sess:
        dx, dw = sess.run(grads, point)
    step, xv, wv = 1e-6, point[x], point[w]
    for got, which in ((dx, 0), (dw, 1)):
        expected = np.zeros(3)
        for i in range(3):
            shift = np.zeros(3)
            shift[i] = step
            args_up = [xv + shift, wv] if which == 0 else [xv, wv + shift]
            args_down = [xv - shift, wv] if which == 0 else [xv, wv - shift]
            expected[i] = (value(*args_up) - value(*args_down)) / (2 * step)
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_a_call_with_other_dtypes_or_count_is_refused():
    x = tf.placeholder(tf.float32, (2,), name="x")
    with pytest.raises(TypeError, match="argument 0 .* is float32, the function is "
                                        "defined for float64"):
        Blend(x, x)
    with pytest.raises(TypeError, match="defined for 2 arguments, called with 1"):
        Blend(tf.constant(1.0))


def test_a_graph_def_holds_the_calls_and_imports_them(tmp_path):
    x = tf.placeholder(tf.float64, (2,), name="x")
    a, b = Blend(x, x * 3.0)
    total = tf.reduce_sum(a + b, name="total")
    (grad,) = tf.gradients(total, x)
    path = tf.io.write_graph(tf.get_default_graph().as_graph_def(), str(tmp_path), "g")
    values = {x: np.array([0.25, -0.5])}
    with tf.Session() as sess:
        expected = sess.run([total, grad], values)
    tf.reset_default_graph()
    total_again, grad_again = tf.import_graph_def(
        tf.io.read_graph_def(path), return_elements=["total:0", grad.name])
    graph = total_again.op.graph
    assert [op.type for op in graph.get_operations()].count("Blend") == 1
    feed = {next(op for op in graph.get_operations() if op.type == "Placeholder")
            .outputs[0]: values[x]}
    with tf.Session() as sess:
        got = sess.run([total_again, grad_again], feed)
    for g, e in zip(got, expected):
        assert_same(g, e)
