"""jitflow.v1's creation and random operations: zeros, ones, fill, random_normal and
random_uniform (new values at each run, the same sequence for the same seed)."""
import numpy as np
import pytest

import jitflow.v1 as tf
from fidelity import assert_same


@pytest.fixture(autouse=True)
def fresh_graph(backend):
    tf.reset_default_graph()


def test_creation_ops_take_tensorflows_default_dtypes():
    made = [tf.zeros([2, 3]), tf.ones((2,), tf.int64), tf.fill([2], 7.0), tf.fill([1], 3),
            tf.zeros_like(tf.constant([1, 2])), tf.ones_like(tf.constant([1.5]), tf.float64)]
    with tf.Session() as sess:
        got = sess.run(made)
    expected = [np.zeros((2, 3), np.float32), np.ones(2, np.int64),
                np.full(2, 7.0, np.float32), np.full(1, 3, np.int32), np.zeros(2, np.int32),
                np.ones(1, np.float64)]
    for g, e, t in zip(got, expected, made):
        assert_same(g, e)
        assert t.dtype == e.dtype


def draws(seed):
    tf.reset_default_graph()
    normal = tf.random_normal([1000], mean=3.0, stddev=2.0, seed=seed)
    uniform = tf.random_uniform([1000], -1.0, 1.0, dtype=tf.float64, seed=seed)
    with tf.Session() as sess:
        return [sess.run([normal, uniform]) for _ in range(2)]


def test_random_ops_draw_anew_at_each_run_and_repeat_for_a_seed():
    (n1, u1), (n2, u2) = draws(seed=5)
    assert n1.dtype == np.float32 and u1.dtype == np.float64
    assert not np.array_equal(n1, n2) and not np.array_equal(u1, u2)
    assert abs(n1.mean() - 3.0) < 0.3 and abs(n1.std() - 2.0) < 0.3
    assert u1.min() >= -1.0 and u1.max() < 1.0 and abs(u1.mean()) < 0.1
    (m1, v1), (m2, v2) = draws(seed=5)
    assert_same(m1, n1)
    assert_same(m2, n2)
    assert_same(v1, u1)


def test_a_variable_initialized_from_a_random_op():
    w = tf.Variable(tf.random_normal([3, 2], stddev=0.1, seed=0), name="w")
    with tf.Session() as sess:
        sess.run(w.initializer)
        first = sess.run(w)
        assert_same(sess.run(w), first)  # the Variable holds one draw
        sess.run(w.initializer)
        assert not np.array_equal(sess.run(w), first)  # initializing again draws again
