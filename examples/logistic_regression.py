"""Logistic regression by gradient descent on jitflow.Variables, with jitflow.grad in a
compiled step; it recovers the direction of the weights that made the data.

    python examples/logistic_regression.py
"""
import numpy as np

import jitflow
from jitflow.nn.losses import binary_crossentropy_from_logits
from jitflow.optim import SGD


def make_data(samples=2000, features=5, seed=0):
    """Points whose label is drawn from the logistic of a known linear function."""
    rng = np.random.default_rng(seed)
    true_w = rng.standard_normal(features)
    x = rng.standard_normal((samples, features))
    probability = 1 / (1 + np.exp(-(x @ true_w + 0.5)))
    return x, (rng.random(samples) < probability).astype(np.float64), true_w


def fit(x, y, steps=300, learning_rate=0.5):
    w = jitflow.Variable(np.zeros(x.shape[1]), name="w")
    b = jitflow.Variable(0.0, name="b")
    optimizer = SGD(learning_rate, momentum=0.9)

    def loss(w, b):
        return binary_crossentropy_from_logits(y, x @ w + b)

    @jitflow.function
    def step():
        value, grads = jitflow.value_and_grad(loss, argnums=(0, 1))(w, b)
        optimizer.apply_gradients(zip(grads, [w, b]))
        return value
    losses = [float(step()) for _ in range(steps)]
    return w.numpy(), float(b.numpy()), losses


def main():
    x, y, true_w = make_data()
    w, b, losses = fit(x, y)
    accuracy = float(((x @ w + b > 0) == (y > 0.5)).mean())
    cosine = float(w @ true_w / np.linalg.norm(w) / np.linalg.norm(true_w))
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}; accuracy {accuracy:.3f}; "
          f"cosine to the true weights {cosine:.3f}; bias {b:.2f} (true 0.5)")
    assert losses[-1] < losses[0] and cosine > 0.95, "logistic regression did not fit"


if __name__ == "__main__":
    main()
