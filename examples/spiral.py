"""Three interleaved spirals, told apart by a small network trained with a compiled
step; it must reach 95% training accuracy. Saves spiral.png (the decision regions) when
matplotlib is installed.

    python examples/spiral.py
"""
import numpy as np

import jitflow
from jitflow import nn
from jitflow.optim import Adam


def spiral_data(points_per_class=100, classes=3, noise=0.2, seed=0):
    """Points on `classes` spiral arms in the plane, with their arm as the label."""
    rng = np.random.default_rng(seed)
    radius = np.tile(np.linspace(0.0, 1.0, points_per_class), classes)
    arm = np.repeat(np.arange(classes), points_per_class)
    angle = arm * 4.0 + radius * 4.0 + rng.standard_normal(radius.size) * noise
    points = np.stack([radius * np.sin(angle), radius * np.cos(angle)], axis=1)
    return points.astype(np.float32), arm


def train(points, labels, steps=1500, hidden=64, learning_rate=1e-2, seed=0):
    rng = np.random.default_rng(seed)
    model = nn.Sequential([nn.Dense(hidden, activation="relu", rng=rng),
                           nn.Dense(hidden, activation="relu", rng=rng),
                           nn.Dense(int(labels.max()) + 1, rng=rng)])
    optimizer = Adam(learning_rate)

    @jitflow.function
    def step(points, labels):
        with jitflow.GradientTape() as tape:
            loss = nn.losses.sparse_softmax_cross_entropy_from_logits(labels, model(points))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                      model.trainable_variables))
        return loss
    losses = [float(step(points, labels)) for _ in range(steps)]
    return model, losses


def save_plot(model, points, labels, path="spiral.png"):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    grid = np.linspace(-1.1, 1.1, 200, dtype=np.float32)
    xx, yy = np.meshgrid(grid, grid)
    regions = model.predict(np.stack([xx.ravel(), yy.ravel()], 1)).argmax(1)
    plt.contourf(xx, yy, regions.reshape(xx.shape), alpha=0.3)
    plt.scatter(points[:, 0], points[:, 1], c=labels, s=8)
    plt.savefig(path)
    return path


def main():
    points, labels = spiral_data()
    model, losses = train(points, labels)
    accuracy = float((model.predict(points).argmax(1) == labels).mean())
    for step in range(0, len(losses), 300):
        print(f"step {step:5d}: loss {losses[step]:.4f}")
    print(f"training accuracy {accuracy:.3f}")
    saved = save_plot(model, points, labels)
    if saved:
        print(f"decision regions saved to {saved}")
    assert accuracy >= 0.95, "the spiral classifier should reach 95% training accuracy"


if __name__ == "__main__":
    main()
