"""A small convnet learns the 8x8 handwritten digits, its training step compiled by
@jitflow.function (the README's first command runs this through examples/main.py).

    python examples/digits_convnet.py
"""
import sys
import time

import numpy as np

import jitflow
from jitflow import nn
from jitflow.datasets import load_digits
from jitflow.optim import Adam

CLASSES = 10


def build_model(seed=0):
    rng = np.random.default_rng(seed)
    return nn.Sequential([
        nn.Conv2D(16, 3, padding="same", activation="relu", rng=rng),
        nn.MaxPool2D(2),
        nn.Conv2D(32, 3, padding="same", activation="relu", rng=rng),
        nn.MaxPool2D(2),
        nn.Flatten(),
        nn.Dense(64, activation="relu", rng=rng),
        nn.Dense(CLASSES, rng=rng),
    ])


def make_train_step(model, optimizer):
    """One step of Adam on the mean cross-entropy of a batch; returns the loss."""
    def train_step(images, labels):
        with jitflow.GradientTape() as tape:
            logits = model(images, training=True)
            loss = nn.losses.sparse_softmax_cross_entropy_from_logits(labels, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return train_step


def accuracy(predict, images, labels):
    return float((np.asarray(predict(images)).argmax(axis=-1) == labels).mean())


def batches(count, batch_size, rng):
    """Index arrays of whole batches of a fresh shuffle (the remainder waits for the
    next epoch's shuffle), so every compiled call has one signature."""
    order = rng.permutation(count)
    return [order[i:i + batch_size] for i in range(0, count - batch_size + 1, batch_size)]


def train(epochs=12, batch_size=64, learning_rate=3e-3, seed=0, report=print):
    """Train on the digits; returns (test accuracy, the model, timings)."""
    (train_images, train_labels), (test_images, test_labels) = load_digits()
    model = build_model(seed)
    step = jitflow.function(make_train_step(model, Adam(learning_rate)))
    predict = jitflow.function(lambda images: model(images))
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    for epoch in range(epochs):
        losses = []
        for index in batches(len(train_labels), batch_size, rng):
            losses.append(float(step(train_images[index], train_labels[index])))
            if len(losses) == 1 and epoch == 0:
                step.wait()  # the first step's native code
            progress(epoch, epochs, losses, report)
        report("")
    seconds = time.perf_counter() - started
    return accuracy(predict, test_images, test_labels), model, seconds


def progress(epoch, epochs, losses, report):
    if report is not print:
        return
    done = int(30 * (epoch + 1) / epochs)
    sys.stdout.write(f"\r  epoch {epoch + 1:2d}/{epochs} [{'#' * done}{'.' * (30 - done)}] "
                     f"loss {np.mean(losses):.4f}")
    sys.stdout.flush()


def main():
    test_accuracy, _, seconds = train()
    print(f"test accuracy {test_accuracy:.4f} after {seconds:.1f} s of training")
    assert test_accuracy >= 0.95, "the convnet should reach 95% test accuracy"


if __name__ == "__main__":
    main()
