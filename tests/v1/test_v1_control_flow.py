"""cond and while_loop in graph mode: values as Python's if and while give them, their
derivatives against finite differences and the formulas, and their errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jitflow.v1 as tf
from fidelity import assert_same


@pytest.fixture(autouse=True)
def fresh_graph(backend):
    tf.reset_default_graph()


def test_cond_runs_one_branch_and_its_gradient_is_that_branchs():
    x = tf.placeholder(tf.float64, (), name="x")
    y = tf.cond(x > 1.0, lambda: tf.square(x), lambda: x * 10.0)
    (dy,) = tf.gradients(y, x)
    assert y.name == "cond/Merge:0" and y.op.type == "If"
    with tf.Session() as sess:
        assert sess.run([y, dy], {x: 3.0}) == [9.0, 6.0]
        assert sess.run([y, dy], {x: 0.5}) == [5.0, 10.0]


def test_cond_branches_reading_different_tensors_and_a_variable():
    a = tf.placeholder(tf.float64, (2,), name="a")
    b = tf.placeholder(tf.float64, (2,), name="b")
    w = tf.Variable(np.array([2.0, 3.0]), name="w")
    pick = tf.placeholder(tf.bool, (), name="pick")
    y = tf.cond(pick, lambda: tf.reduce_sum(a * w), lambda: tf.reduce_sum(tf.exp(b)))
    da, db, dw = tf.gradients(y, [a, b, w])
    values = {a: np.array([1.0, 2.0]), b: np.array([0.0, 1.0])}
    with tf.Session() as sess:
        sess.run(w.initializer)
        got = sess.run([y, da, db, dw], {**values, pick: True})
        assert got[0] == 8.0
        assert_same(got[1], np.array([2.0, 3.0]))
        assert_same(got[2], np.zeros(2))
        assert_same(got[3], np.array([1.0, 2.0]))
        got = sess.run([y, db], {**values, pick: False})
        assert_same(got[1], np.exp(np.array([0.0, 1.0])))


def test_nested_cond_and_several_outputs():
    x = tf.placeholder(tf.float64, (), name="x")

    def positive():
        return tf.cond(x > 10.0, lambda: [x, x * 2], lambda: [x * 3, x * 4])
    out = tf.cond(x > 0.0, positive, lambda: [-x, -x])
    assert isinstance(out, list) and len(out) == 2
    with tf.Session() as sess:
        for value, expected in [(20.0, [20.0, 40.0]), (1.0, [3.0, 4.0]), (-2.0, [2.0, 2.0])]:
            assert sess.run(out, {x: value}) == expected


def test_while_loop_counts_and_its_gradient_goes_back_through_every_trip():
    x = tf.placeholder(tf.float64, (), name="x")
    i, power = tf.while_loop(lambda i, p: i < 5, lambda i, p: [i + 1, p * x],
                             [tf.constant(0), tf.constant(1.0, tf.float64)])
    (dpower,) = tf.gradients(power, x)
    (ddpower,) = tf.gradients(dpower, x)
    with tf.Session() as sess:
        assert sess.run([i, power, dpower, ddpower], {x: 2.0}) == [5, 32.0, 80.0, 160.0]


@settings(max_examples=10)
@given(st.floats(0.5, 50.0))
def test_newtons_square_root_in_a_while_loop(a_value):
    """The trip count depends on the data; d sqrt(a)/da = 1 / (2 sqrt(a))."""
    a = tf.placeholder(tf.float64, (), name="a")
    root = tf.while_loop(lambda r: tf.abs(r * r - a) > 1e-12 * a,
                         lambda r: 0.5 * (r + a / r), [tf.maximum(a, 1.0)])
    (slope,) = tf.gradients(root, a)
    with tf.Session() as sess:
        got_root, got_slope = sess.run([root, slope], {a: a_value})
    assert got_root == pytest.approx(np.sqrt(a_value), rel=1e-12)
    assert got_slope == pytest.approx(0.5 / np.sqrt(a_value), rel=1e-8)


def test_while_loop_with_maximum_iterations():
    x = tf.while_loop(lambda v: v < 1000.0, lambda v: v * 2, [tf.constant(1.0)],
                      maximum_iterations=4)
    with tf.Session() as sess:
        assert sess.run(x) == 16.0


def test_a_while_body_that_changes_a_dtype_or_assigns_is_refused():
    v = tf.Variable(1.0, name="v")
    with pytest.raises(TypeError, match="keeps its dtype and shape"):
        tf.while_loop(lambda i: i < 3, lambda i: tf.cast(i, tf.float64) + 1,
                      [tf.constant(0)])
    with pytest.raises(ValueError, match="assigning Variable 'v' inside"):
        tf.while_loop(lambda i: i < 3, lambda i: v.assign(i), [tf.constant(0.0)])
    with pytest.raises(TypeError, match="shape_invariants is not supported"):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)],
                      shape_invariants=[tf.TensorShape([])])
    with pytest.raises(TypeError, match="float32 and float64"):
        tf.cond(tf.constant(True), lambda: tf.constant(1.0),
                lambda: tf.constant(1.0, tf.float64))


def test_a_loop_variable_cannot_be_fetched():
    seen = []

    def body(i):
        seen.append(i)
        return i + 1
    tf.while_loop(lambda i: i < 3, body, [tf.constant(0)])
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="is a loop variable of a while_loop"):
            sess.run(seen[0])
