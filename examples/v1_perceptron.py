"""A perceptron separating red points from blue ones, in the graph API: placeholders for
the points and their classes, Variables for the weights, softmax and cross-entropy as
operations, and gradient descent as one operation that a Session runs step after step.

    python examples/v1_perceptron.py
"""
import numpy as np

import jitflow.v1 as tf


def points(count=50, seed=0):
    """Red points around (-2, -2), blue ones around (2, 2)."""
    rng = np.random.default_rng(seed)
    red = rng.standard_normal((count, 2)) - 2 * np.ones((count, 2))
    blue = rng.standard_normal((count, 2)) + 2 * np.ones((count, 2))
    return red, blue


def train(steps=100, learning_rate=0.01, report=print):
    red, blue = points()
    tf.reset_default_graph()
    X = tf.placeholder(tf.float64, name="X")
    c = tf.placeholder(tf.float64, name="c")
    rng = np.random.default_rng(1)
    W = tf.Variable(rng.standard_normal((2, 2)), name="W")
    b = tf.Variable(rng.standard_normal(2), name="b")

    p = tf.nn.softmax(tf.add(tf.matmul(X, W), b))
    J = tf.negative(tf.reduce_sum(tf.reduce_sum(tf.multiply(c, tf.log(p)), axis=1)))
    minimization_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(J)

    feed_dict = {X: np.concatenate((blue, red)),
                 c: [[1, 0]] * len(blue) + [[0, 1]] * len(red)}
    losses = []
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        for step in range(steps):
            J_value = session.run(J, feed_dict)
            losses.append(float(J_value))
            if step % 10 == 0:
                report(f"Step: {step} Loss: {J_value:.4f}")
            session.run(minimization_op, feed_dict)
        W_value, b_value = session.run([W, b])
        accuracy = session.run(tf.reduce_mean(tf.cast(tf.equal(
            tf.argmax(p, axis=1), tf.argmax(c, axis=1)), tf.float64)), feed_dict)
    report(f"Weight matrix:\n{W_value}\nBias:\n{b_value}\nAccuracy: {accuracy:.2f}")
    return losses, accuracy


if __name__ == "__main__":
    train()
