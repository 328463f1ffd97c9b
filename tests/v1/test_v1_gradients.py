"""gradients() against central finite differences of the same graph, to second order;
stop_gradient; the optimizers' updates against the same formulas written in NumPy; and
the graph API's training examples."""
import os
import sys

import numpy as np
import pytest
from hypothesis import given

import jitflow
import jitflow.v1 as tf
from fidelity import assert_same
from jitflow.testing.strategies import arrays

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))


@pytest.fixture(autouse=True)
def fresh_graph(backend):
    tf.reset_default_graph()


def central_difference(sess, y, x, value, eps=1e-6):
    """d(sum y)/dx at x = value, by central differences of runs of the graph."""
    derivative = np.zeros_like(value)
    for index in np.ndindex(value.shape):
        step = np.zeros_like(value)
        step[index] = eps
        up = np.sum(sess.run(y, {x: value + step}))
        down = np.sum(sess.run(y, {x: value - step}))
        derivative[index] = (up - down) / (2 * eps)
    return derivative


def model(x, w):
    hidden = tf.tanh(tf.matmul(x, w))
    return tf.reduce_sum(tf.nn.softmax(hidden) * tf.exp(-tf.square(hidden)), axis=1)


@given(arrays(shape=(3, 2), min_value=-2, max_value=2),
       arrays(shape=(2, 4), min_value=-2, max_value=2))
def test_gradients_agree_with_finite_differences(x_value, w_value):
    x = tf.placeholder(tf.float64, (None, 2), name="x")
    w = tf.placeholder(tf.float64, (2, 4), name="w")
    y = model(x, w)
    dx, dw = tf.gradients(y, [x, w])
    with tf.Session() as sess:
        got_dx, got_dw = sess.run([dx, dw], {x: x_value, w: w_value})
        assert_same(got_dx, _fd(sess, y, x, x_value, w, w_value), rtol=1e-6, atol=1e-7)
        assert_same(got_dw, _fd(sess, y, w, w_value, x, x_value), rtol=1e-6, atol=1e-7)


def _fd(sess, y, x, x_value, other, other_value, eps=1e-6):
    derivative = np.zeros_like(x_value)
    for index in np.ndindex(x_value.shape):
        step = np.zeros_like(x_value)
        step[index] = eps
        up = np.sum(sess.run(y, {x: x_value + step, other: other_value}))
        down = np.sum(sess.run(y, {x: x_value - step, other: other_value}))
        derivative[index] = (up - down) / (2 * eps)
    return derivative


def test_second_order_gradients_agree_with_finite_differences_of_the_first():
    x = tf.placeholder(tf.float64, (4,), name="x")
    y = tf.reduce_sum(tf.sin(x) * tf.exp(x / 3))
    (dx,) = tf.gradients(y, x)
    (ddx,) = tf.gradients(dx, x)
    value = np.linspace(-1, 1, 4)
    with tf.Session() as sess:
        assert_same(sess.run(ddx, {x: value}), central_difference(sess, dx, x, value),
                    rtol=1e-6, atol=1e-7)


def test_gradients_match_jitflow_grad_and_the_formula():
    x = tf.placeholder(tf.float64, (None, 3), name="x")
    w = tf.Variable(np.linspace(-1, 1, 6).reshape(3, 2), name="w")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
    (dw,) = tf.gradients(loss, [w])
    value = np.arange(12.0).reshape(4, 3) / 10
    weights = np.linspace(-1, 1, 6).reshape(3, 2)
    expected = jitflow.function(jitflow.grad(
        lambda w, x: jitflow.numpy.mean(jitflow.numpy.square(x @ w))))(weights, value)
    with tf.Session() as sess:
        sess.run(w.initializer)
        got = sess.run(dw, {x: value})
    assert_same(got, expected, rtol=1e-14)
    assert_same(got, value.T @ (value @ weights) * 2 / 8, rtol=1e-14)


def test_grad_ys_weigh_the_outputs_and_unconnected_inputs_give_none():
    x = tf.placeholder(tf.float64, (2,), name="x")
    unused = tf.placeholder(tf.float64, (2,), name="unused")
    y = x * x
    dx, nothing = tf.gradients(y, [x, unused], grad_ys=np.array([1.0, 10.0]))
    assert nothing is None
    with tf.Session() as sess:
        assert_same(sess.run(dx, {x: np.array([1.0, 2.0])}), np.array([2.0, 40.0]))


def test_stop_gradient_blocks_the_derivative():
    x = tf.placeholder(tf.float64, (), name="x")
    y = x * tf.stop_gradient(x * x)
    (dx,) = tf.gradients(y, x)
    inner = x * x
    (dx_through,) = tf.gradients(x * inner, x)
    (dx_blocked,) = tf.gradients(x * inner, x, stop_gradients=[inner])
    with tf.Session() as sess:
        assert sess.run(dx, {x: 3.0}) == 9.0
        assert sess.run(dx_through, {x: 3.0}) == 27.0
        assert sess.run(dx_blocked, {x: 3.0}) == 9.0


def numpy_steps(optimizer, w, gradient_of, steps):
    """The optimizers' updates as TensorFlow documents them, in NumPy."""
    m, v, accumulation = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for t in range(1, steps + 1):
        g = gradient_of(w)
        if optimizer == "sgd":
            w = w - 0.1 * g
        elif optimizer == "momentum":
            accumulation = 0.9 * accumulation + g
            w = w - 0.1 * accumulation
        else:
            m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
            rate = 0.1 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
            w = w - rate * m / (np.sqrt(v) + 1e-8)
    return w


@pytest.mark.parametrize("optimizer", ["sgd", "momentum", "adam"])
def test_optimizers_update_as_their_formulas_say(optimizer):
    target = np.array([1.0, -2.0, 3.0])
    w = tf.Variable(np.zeros(3), name="w")
    loss = tf.reduce_sum(tf.square(w - target) * np.array([1.0, 2.0, 3.0]))
    make = {"sgd": lambda: tf.train.GradientDescentOptimizer(0.1),
            "momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
            "adam": lambda: tf.train.AdamOptimizer(0.1)}[optimizer]
    step = make().minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(5):
            sess.run(step)
        got = sess.run(w)
    expected = numpy_steps(optimizer, np.zeros(3),
                           lambda w: 2 * (w - target) * np.array([1.0, 2.0, 3.0]), 5)
    assert_same(got, expected, rtol=1e-12)


def test_compute_and_apply_gradients_and_the_global_step():
    w = tf.Variable(np.array([2.0]), name="w")
    step = tf.Variable(0, trainable=False, name="global_step")
    optimizer = tf.train.GradientDescentOptimizer(0.5)
    pairs = optimizer.compute_gradients(tf.reduce_sum(w * w))
    assert [v for _, v in pairs] == [w]
    train = optimizer.apply_gradients(pairs, global_step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        assert_same(sess.run(w), np.array([0.0]))
        assert sess.run(step) == 1


def test_the_perceptron_separates_red_from_blue():
    import v1_perceptron
    losses, accuracy = v1_perceptron.train(steps=60, report=lambda *a: None)
    assert losses[-1] < 0.2 * losses[0] and accuracy == 1.0


def test_the_multilayer_perceptron_separates_the_rings():
    import v1_multilayer
    losses, accuracy = v1_multilayer.train(steps=400, report=lambda *a: None)
    assert losses[-1] < 0.1 * losses[0] and accuracy >= 0.95
