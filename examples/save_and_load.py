"""Save a trained model and use it where its source is not: a small classifier trained
with jitflow, saved with jitflow.save, then loaded by a fresh Python process that has
only the file. There it runs compiled, and its gradient (say, for a saliency map) is
taken as if it had been written there.

    python examples/save_and_load.py
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

import jitflow

LOADER = """
import sys
import numpy as np
import jitflow
classify = jitflow.load(sys.argv[1])
points = np.load(sys.argv[2])
print(classify)
print("classes:", classify(points).argmax(axis=1).tolist())
saliency = jitflow.grad(lambda p: classify(p)[:, 1].sum())(points)
print("saliency of the first point:", np.round(saliency[0], 4).tolist())
"""


def two_moons(count=100, seed=0):
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0, np.pi, count)
    first = np.stack([np.cos(angle), np.sin(angle)], 1)
    second = np.stack([1 - np.cos(angle), 0.5 - np.sin(angle)], 1)
    points = np.concatenate([first, second]) + rng.normal(0, 0.1, (2 * count, 2))
    return points, np.repeat([0, 1], count)


def probabilities(params, x):
    w1, w2 = params
    return jitflow.nn.softmax(np.tanh(x @ w1) @ w2, axis=1)


def train(points, labels, steps=300):
    rng = np.random.default_rng(1)
    w1 = jitflow.Variable(rng.normal(0, 1, (2, 16)), name="w1")
    w2 = jitflow.Variable(rng.normal(0, 0.5, (16, 2)), name="w2")
    optimizer = jitflow.optim.Adam(0.05)

    @jitflow.function
    def classify(x):
        return probabilities([w1, w2], x)

    @jitflow.function
    def step(x, y):
        def loss(params):
            return -np.log(probabilities(params, x)[np.arange(len(y)), y]).mean()
        value, grads = jitflow.value_and_grad(loss)([w1.value, w2.value])
        optimizer.apply_gradients(zip(grads, [w1, w2]))
        return value
    for _ in range(steps):
        loss = step(points, labels)
    return classify, float(loss)


def main(steps=300):
    points, labels = two_moons()
    classify, loss = train(points, labels, steps)
    accuracy = (classify(points).argmax(axis=1) == labels).mean()
    print(f"trained: loss {loss:.3f}, accuracy {accuracy:.2f}")
    with tempfile.TemporaryDirectory() as directory:
        path = jitflow.save(classify, os.path.join(directory, "classifier.jitflow"),
                            points[:4])
        np.save(os.path.join(directory, "points.npy"), points[:4])
        print(f"saved to {os.path.basename(path)} ({os.path.getsize(path)} bytes); "
              f"a fresh process loads it:")
        output = subprocess.run([sys.executable, "-c", LOADER, path,
                                 os.path.join(directory, "points.npy")],
                                capture_output=True, text=True, check=True).stdout
    print(output, end="")
    return classify, points[:4], output


if __name__ == "__main__":
    main()
