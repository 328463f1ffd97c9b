"""The throughput of model.fit against a hand-written @jitflow.function training loop
doing the same work, to show what fit costs beyond its compiled step: a small MLP on
the digits (64 -> Dense 64 relu -> Dense 10, sparse softmax cross-entropy from logits)
and a small LSTM on a sequence task (20 steps of 1 feature -> LSTM 32 -> Dense 1, the
sequence's sum, mean squared error), both with Adam and batches of 64 examples, the
examples shuffled each epoch and the last batch smaller than the others.

The hand-written loop is what a user writes: one compiled step (forward, loss, tape
gradients, the optimizer's update), called on each shuffled batch in a Python loop, the
mean loss summed in float64. Its last, smaller batch is a second signature, compiled
once. fit pads that batch instead (nn/training.py), so it compiles its step once; the
script prints how many times each compiled its step.

Each round runs one fit call of EPOCHS epochs and EPOCHS epochs of the loop, every epoch
timed; both warm up first (their compiles are not in the timings, but printed: each
step's trace and compile until its native code is ready, for each batch size).
Prints the CPU, the median samples per second of each and the median over the rounds of
their ratio (fit / loop: 1 means fit costs nothing more).

    python benchmarks/bench_fit.py
"""
import os
import statistics
import time

import numpy as np

os.environ["JITFLOW_CACHE"] = "0"  # every compile happens here, as on a first run
import jitflow  # noqa: E402
from jitflow import nn  # noqa: E402
from jitflow.datasets import load_digits  # noqa: E402
from jitflow.optim import Adam  # noqa: E402
from jitflow.tape import GradientTape  # noqa: E402
from peers import cpu_name  # noqa: E402

BATCH = 64
# The machine is shared and its speed drifts: short rounds, fit's and the loop's epochs
# taken seconds apart, and the median of the rounds' ratios.
EPOCHS = 2  # timed epochs per round
ROUNDS = 8
SEQUENCE_LENGTH, SEQUENCES = 20, 1000


class EpochTimes(nn.callbacks.Callback):
    """The seconds each of fit's epochs took."""

    def __init__(self):
        super().__init__()
        self.seconds = []

    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.seconds.append(time.perf_counter() - self.start)


# --- the tasks ------------------------------------------------------------------------------

def digits_task():
    (images, labels), _ = load_digits()
    x = images.reshape(len(images), 64)

    def model():
        rng = np.random.default_rng(0)
        return nn.Sequential([nn.Input((64,)), nn.Dense(64, activation="relu", rng=rng),
                              nn.Dense(10, rng=rng)])
    return "MLP on digits", x, labels, model, \
        lambda: nn.losses.SparseCategoricalCrossentropy(from_logits=True)


def sequence_task():
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (SEQUENCES, SEQUENCE_LENGTH, 1)).astype(np.float32)
    y = x.sum(axis=(1, 2))[:, None]

    def model():
        rng = np.random.default_rng(0)
        return nn.Sequential([nn.Input((SEQUENCE_LENGTH, 1)), nn.LSTM(32, rng=rng),
                              nn.Dense(1, rng=rng)])
    return "LSTM on sequences", x, y, model, nn.losses.MeanSquaredError


# --- the two ways to train ----------------------------------------------------------------

def fit_epochs(model, x, y, epochs):
    """The seconds of each of `epochs` epochs of one fit call."""
    timer = EpochTimes()
    model.fit(x, y, batch_size=BATCH, epochs=epochs, verbose=0, callbacks=[timer])
    return timer.seconds


def hand_written_loop(model, loss):
    """A function running epochs of a plain compiled-step loop; (it, its step)."""
    optimizer = Adam()
    variables = model.trainable_variables

    @jitflow.function
    def step(x, y):
        with GradientTape() as tape:
            value = loss(y, model(x, training=True))
        optimizer.apply_gradients(zip(tape.gradient(value, variables), variables))
        return value

    def epochs(x, y, count, seed=[0]):
        seconds = []
        for _ in range(count):
            start = time.perf_counter()
            seed[0] += 1
            order = np.random.default_rng(seed[0]).permutation(len(x))
            total = 0.0
            for first in range(0, len(x), BATCH):
                rows = order[first:first + BATCH]
                total += float(step(x[rows], y[rows])) * len(rows)
            seconds.append(time.perf_counter() - start)
        return seconds
    return epochs, step


def compile_seconds(step, x, y, last):
    """The seconds the hand-written step takes to trace and compile for a full batch,
    then for the last, smaller one (each until its native code is ready)."""
    seconds = []
    for rows in (BATCH, last):
        start = time.perf_counter()
        step(x[:rows], y[:rows])
        step.wait()
        seconds.append(time.perf_counter() - start)
    return seconds


def measure(task):
    name, x, y, make_model, make_loss = task
    fitted = make_model()
    fitted.compile(Adam(), make_loss())
    looped = make_model()
    looped(x[:1])
    loop, step = hand_written_loop(looped, make_loss())
    last = len(x) % BATCH or BATCH
    start = time.perf_counter()  # warm up: compile, then run the native code
    fitted.train_on_batch(x[:BATCH], y[:BATCH])  # fit's signature: it pads the last batch
    fitted._train_function.wait()
    fit_compile = time.perf_counter() - start
    fit_epochs(fitted, x, y, 2)
    full_compile, last_compile = compile_seconds(step, x, y, last)
    loop(x, y, 2)
    fit_seconds, loop_seconds, ratios = [], [], []
    for _ in range(ROUNDS):
        fit_seconds += fit_epochs(fitted, x, y, EPOCHS)
        loop_seconds += loop(x, y, EPOCHS)
        ratios.append(sum(loop_seconds[-EPOCHS:]) / sum(fit_seconds[-EPOCHS:]))
    print(f"{name}: {len(x)} examples, batches of {BATCH} (the last of {last})")
    for label, seconds, compiled in (("fit", fit_seconds, fitted._train_function),
                                     ("hand-written loop", loop_seconds, step)):
        print(f"  {label:18} {len(x) / statistics.median(seconds):10,.0f} samples/s   "
              f"(its step compiled {compiled.cache_info().traces} time(s))")
    print(f"  fit / loop         {statistics.median(ratios):10.2f}")
    print(f"  compiles: fit's step {fit_compile:.2f} s, once; the loop's step "
          f"{full_compile:.2f} s for full batches and {last_compile:.2f} s more for the "
          f"last batch of {last}")


def main():
    print(f"CPU: {cpu_name()}; jitflow backend {jitflow.config.backend}; "
          f"median of {ROUNDS * EPOCHS} epochs each")
    tasks = (digits_task(), sequence_task())
    # The process's first training step compiles slower (LLVM and the runtime being set
    # up: 1.3 s against 0.5 s here); a throwaway one pays that, not a measured one.
    _, x, y, make_model, make_loss = tasks[0]
    throwaway = make_model()
    throwaway.compile(Adam(), make_loss())
    throwaway.train_on_batch(x[:BATCH], y[:BATCH])
    throwaway._train_function.wait()
    for task in tasks:
        measure(task)


if __name__ == "__main__":
    main()
