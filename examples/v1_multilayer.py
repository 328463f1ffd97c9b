"""A multi-layer perceptron in the graph API: red points near the origin, blue ones on a
ring around them, which no straight line separates. A hidden sigmoid layer under name
scopes, a softmax output, and gradient descent on the cross-entropy.

    python examples/v1_multilayer.py
"""
import numpy as np

import jitflow.v1 as tf


def points(count=50, seed=0):
    """Red points inside the unit circle, blue ones on a ring of radius 2 to 3."""
    rng = np.random.default_rng(seed)
    angles = rng.uniform(0, 2 * np.pi, (2, count))
    radii = np.stack([rng.uniform(0, 1, count), rng.uniform(2, 3, count)])
    rings = np.stack([radii * np.cos(angles), radii * np.sin(angles)], axis=-1)
    return rings[0], rings[1]


def dense(x, size, activation, name, rng):
    with tf.name_scope(name):
        W = tf.Variable(rng.standard_normal((x.shape[1], size)), name="W")
        b = tf.Variable(rng.standard_normal(size), name="b")
        return activation(tf.add(tf.matmul(x, W), b))


def train(steps=1000, learning_rate=0.03, hidden=4, report=print):
    red, blue = points()
    tf.reset_default_graph()
    rng = np.random.default_rng(1)
    X = tf.placeholder(tf.float64, shape=(None, 2), name="X")
    c = tf.placeholder(tf.float64, shape=(None, 2), name="c")
    hidden_layer = dense(X, hidden, tf.sigmoid, "hidden", rng)
    p = dense(hidden_layer, 2, tf.nn.softmax, "output", rng)
    J = tf.negative(tf.reduce_sum(tf.reduce_sum(tf.multiply(c, tf.log(p)), axis=1)))
    minimization_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(J)
    correct = tf.equal(tf.argmax(p, axis=1), tf.argmax(c, axis=1))
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float64))

    feed_dict = {X: np.concatenate((blue, red)),
                 c: [[1, 0]] * len(blue) + [[0, 1]] * len(red)}
    losses = []
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        for step in range(steps):
            J_value, _ = session.run([J, minimization_op], feed_dict)
            losses.append(float(J_value))
            if step % 100 == 0:
                report(f"Step: {step} Loss: {J_value:.4f}")
        final = session.run(accuracy, feed_dict)
    report(f"Accuracy: {final:.2f}")
    return losses, final


if __name__ == "__main__":
    train()
