"""The main example: train a convnet on the 8x8 handwritten digits with a training step
compiled by @jitflow.function.

Prints how long one training step takes eagerly (plain NumPy through jitflow.numpy), how
long the compiled step took to build and how long it takes per call, then trains with a
progress bar and prints the test accuracy.

    pip install -e . && python examples/main.py
"""
import statistics
import time

import numpy as np

import jitflow
from jitflow.datasets import load_digits
from jitflow.optim import Adam

from digits_convnet import (accuracy, batches, build_model, make_train_step,
                            progress)

EPOCHS, BATCH, LEARNING_RATE = 12, 64, 3e-3


def median_seconds(step, batch, calls):
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        step(*batch)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    (images, labels), (test_images, test_labels) = load_digits()
    first = images[:BATCH], labels[:BATCH]

    eager_step = make_train_step(build_model(), Adam(LEARNING_RATE))
    eager = median_seconds(eager_step, first, 5)
    print(f"eager training step:    {eager * 1e3:7.2f} ms")

    model = build_model()
    step = jitflow.function(make_train_step(model, Adam(LEARNING_RATE)))
    start = time.perf_counter()
    step(*first)  # traced; runs on the interpreter while native code is built
    step.wait()
    print(f"compile (trace, optimize, LLVM): {(time.perf_counter() - start) * 1e3:.0f} ms")
    compiled = median_seconds(step, first, 20)
    print(f"compiled training step: {compiled * 1e3:7.2f} ms ({eager / compiled:.0f}x faster)")

    rng = np.random.default_rng(0)
    for epoch in range(EPOCHS):
        losses = []
        for index in batches(len(labels), BATCH, rng):
            losses.append(float(step(images[index], labels[index])))
            progress(epoch, EPOCHS, losses, print)
        print()
    predict = jitflow.function(lambda x: model(x))
    test_accuracy = accuracy(predict, test_images, test_labels)
    print(f"test accuracy: {test_accuracy:.4f}")
    assert test_accuracy >= 0.95, "the convnet should reach 95% test accuracy"


if __name__ == "__main__":
    main()
