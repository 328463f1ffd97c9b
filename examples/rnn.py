"""A small recurrent network trained with jitflow.scan inside a compiled step: it
reads sine waves of random frequency and phase one sample at a time and predicts the
next sample. The recurrence is one scan over time, differentiated in reverse (a scan
back through the steps) and compiled with the optimizer's update.

    python examples/rnn.py
"""
import numpy as np

import jitflow
import jitflow.numpy as jnp
from jitflow.optim import Adam


def sine_waves(count, length, seed):
    """(length + 1, count) samples: each column a wave of its own frequency and phase."""
    rng = np.random.default_rng(seed)
    frequency = rng.uniform(0.1, 0.4, count)
    phase = rng.uniform(0, 2 * np.pi, count)
    t = np.arange(length + 1)[:, None]
    return np.sin(frequency * t + phase).astype(np.float32)


class RNN:
    """h <- tanh(x wx + h wh + b); prediction h wy + c."""

    def __init__(self, hidden=16, seed=0):
        rng = np.random.default_rng(seed)

        def weight(*shape, scale):
            return jitflow.Variable((rng.standard_normal(shape) * scale).astype(np.float32))
        self.wx = weight(1, hidden, scale=1.0)
        self.wh = weight(hidden, hidden, scale=1 / np.sqrt(hidden))
        self.b = jitflow.Variable(np.zeros(hidden, np.float32))
        self.wy = weight(hidden, 1, scale=1 / np.sqrt(hidden))
        self.c = jitflow.Variable(np.zeros(1, np.float32))
        self.weights = [self.wx, self.wh, self.b, self.wy, self.c]

    def predict(self, inputs):
        """inputs (time, batch): a prediction of the next sample at every step."""
        def cell(h, x):
            h = jnp.tanh(x[:, None] @ self.wx + h @ self.wh + self.b)
            return h, (h @ self.wy + self.c)[:, 0]
        h0 = jnp.zeros((inputs.shape[1], self.wh.shape[0]), np.float32)
        _, predictions = jitflow.scan(cell, h0, inputs)
        return predictions


def loss(model, waves):
    return jnp.mean((model.predict(waves[:-1]) - waves[1:]) ** 2)


def make_step(model, optimizer):
    def step(waves):
        with jitflow.GradientTape() as tape:
            value = loss(model, waves)
        optimizer.apply_gradients(zip(tape.gradient(value, model.weights), model.weights))
        return value
    return step


def train(steps=300, batch=32, length=30, report=print):
    model, optimizer = RNN(), Adam(0.01)
    step = jitflow.function(make_step(model, optimizer))
    for k in range(steps):
        value = step(sine_waves(batch, length, seed=k))
        if k % 100 == 0:
            report(f"step {k:4d}  loss {float(value):.5f}")
    return model


def main():
    model = train()
    test = sine_waves(256, 30, seed=10_000)
    mse = float(jitflow.function(lambda waves: loss(model, waves))(test))
    repeat = float(np.mean((test[:-1] - test[1:]) ** 2))  # predict "no change"
    print(f"held-out next-sample MSE {mse:.5f}; repeating the last sample: {repeat:.5f}")
    assert mse < 0.2 * repeat, "the RNN did not learn to predict the waves"


if __name__ == "__main__":
    main()
