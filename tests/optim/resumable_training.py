"""A small training run that stops, is pickled, and continues in a fresh process
(tests/optim/test_optimizer_pickling.py runs this file as a script for the second half).

    python resumable_training.py STATE.pkl START STOP OUT.npz

loads the cases pickled in STATE.pkl, trains each from step START to STOP and saves the
values of every Variable of each case in OUT.npz.
"""
import pickle
import sys

import numpy as np

import jitflow
import jitflow.numpy as jnp
from jitflow import nn, optim

# Every compiled step runs native code, in this process as in the test's.
jitflow.config.background_compile = False

OPTIMIZERS = {
    "sgd-momentum": lambda: optim.SGD(0.05, momentum=0.9, nesterov=True),
    "adam": lambda: optim.Adam(0.01, amsgrad=True),
    "adamw": lambda: optim.AdamW(optim.schedules.ExponentialDecay(0.01, 3, 0.5)),
    "rmsprop": lambda: optim.RMSprop(0.01, momentum=0.5, centered=True),
}


def make_model():
    """Dense layers with an activation by name, dropout (a random Generator's state)
    and batch normalization (non-trainable state)."""
    return nn.Sequential([
        nn.Dense(8, activation="tanh", rng=np.random.default_rng(1)),
        nn.Dropout(0.25, seed=3),
        nn.BatchNorm(),
        nn.Dense(1, activation=nn.gelu, rng=np.random.default_rng(2)),
    ])


def batch(step):
    rng = np.random.default_rng(100 + step)
    x = rng.standard_normal((16, 4)).astype(np.float32)
    return x, np.sin(x.sum(axis=1, keepdims=True))


class Trainer:
    """A model, its optimizer and its training step (compiled: a jitflow.function of a
    bound method, which pickles as the method; its traces are rebuilt)."""

    def __init__(self, model, optimizer, compiled):
        self.model, self.optimizer = model, optimizer
        self.step = jitflow.function(self._step) if compiled else self._step

    def _step(self, x, y):
        with jitflow.GradientTape() as tape:
            loss = jnp.mean((self.model(x, training=True) - y) ** 2)
        variables = self.model.trainable_variables  # made by the first call
        self.optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    def train(self, start, stop):
        for step in range(start, stop):
            self.step(*batch(step))

    def values(self):
        """Every Variable's value: the model's, then the optimizer's (its step count and
        slots)."""
        return [v.numpy() for v in self.model.weights + self.optimizer.variables()]


# Compiling is the slow part: every optimizer runs eagerly, two of them compiled too.
CASES = [(name, False) for name in OPTIMIZERS] + [("adam", True), ("rmsprop", True)]


def cases():
    return {f"{name}-{'compiled' if compiled else 'eager'}":
            Trainer(make_model(), OPTIMIZERS[name](), compiled) for name, compiled in CASES}


def restore(saved):
    """A Trainer pickled whole, or rebuilt from its model and optimizer pickled apart."""
    if isinstance(saved, Trainer):
        return saved
    model, optimizer = pickle.loads(saved["model"]), pickle.loads(saved["optimizer"])
    return Trainer(model, optimizer, saved["compiled"])


def main(state_path, start, stop, out_path):
    with open(state_path, "rb") as file:
        saved = pickle.load(file)
    values = {}
    for name, case in saved.items():
        trainer = restore(case)
        trainer.train(int(start), int(stop))
        for index, value in enumerate(trainer.values()):
            values[f"{name}/{index}"] = value
    np.savez(out_path, **values)


if __name__ == "__main__":
    import resumable_training  # the module the pickles name, not __main__
    resumable_training.main(*sys.argv[1:])
