"""RegisterGradient and gradient_override_map: an operation's derivative written with
graph operations replaces jitflow's own, to any order, and only where the map applies."""
import numpy as np
import pytest

import jitflow.v1 as tf
from fidelity import assert_same


@tf.RegisterGradient("ClippedSquareGrad")
def _clipped_square(op, grad):
    return tf.clip_by_value(grad * 2.0 * op.inputs[0], -1.0, 1.0)


@tf.RegisterGradient("SplitGradTimesIndex")
def _split_times_index(op, *grads):
    return [tf.concat([g * float(i + 1) for i, g in enumerate(grads)], axis=0)]


@pytest.fixture(autouse=True)
def fresh_graph(backend):
    tf.reset_default_graph()


def test_an_overridden_gradient_replaces_jitflows_where_the_map_applies():
    x = tf.placeholder(tf.float64, (3,), name="x")
    with tf.get_default_graph().gradient_override_map({"Square": "ClippedSquareGrad"}):
        clipped = tf.square(x)
    plain = tf.square(x)
    (d_clipped,) = tf.gradients(tf.reduce_sum(clipped), x)
    (d_plain,) = tf.gradients(tf.reduce_sum(plain), x)
    (second,) = tf.gradients(tf.reduce_sum(d_clipped * x), x)
    value = np.array([0.1, 2.0, -3.0])
    with tf.Session() as sess:
        got = sess.run([clipped, d_clipped, d_plain, second], {x: value})
    assert_same(got[0], value ** 2)
    assert_same(got[1], np.clip(2 * value, -1, 1))
    assert_same(got[2], 2 * value)
    # d/dx (clip(2x) x) = clip(2x) + x * (2 where |2x| < 1, else 0)
    assert_same(got[3], np.clip(2 * value, -1, 1) + np.where(abs(2 * value) < 1, 2 * value, 0))


def test_an_overridden_gradient_of_an_operation_with_several_outputs():
    x = tf.placeholder(tf.float64, (4,), name="x")
    with tf.get_default_graph().gradient_override_map({"Split": "SplitGradTimesIndex"}):
        first, second = tf.split(x, 2)
    (dx,) = tf.gradients(tf.reduce_sum(first) + tf.reduce_sum(second), x)
    with tf.Session() as sess:
        assert_same(sess.run(dx, {x: np.zeros(4)}), np.array([1.0, 1.0, 2.0, 2.0]))


def test_unregistered_names_and_bad_gradients_are_refused():
    with pytest.raises(KeyError, match="no gradient is registered as 'Nothing'"):
        with tf.get_default_graph().gradient_override_map({"Square": "Nothing"}):
            pass
    with pytest.raises(KeyError, match="registered already"):
        tf.RegisterGradient("ClippedSquareGrad")(lambda op, grad: grad)
    x = tf.placeholder(tf.float64, (2,), name="x")
    with tf.get_default_graph().gradient_override_map({"Mul": "SplitGradTimesIndex"}):
        product = x * x
    with pytest.raises(TypeError, match="must return one Tensor \\(or None\\) for each of "
                                        "its 2 inputs"):
        tf.gradients(product, x)
