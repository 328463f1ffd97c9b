"""Three interleaved spirals, told apart by a small network trained with compile and
fit (each step one compiled function); it must reach 95% training accuracy. Saves spiral.png (the decision regions) when
matplotlib is installed.

    python examples/spiral.py
"""
import numpy as np

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
    """The model and its loss at each step (one full batch per epoch)."""
    rng = np.random.default_rng(seed)
    model = nn.Sequential([nn.Input((2,)),
                           nn.Dense(hidden, activation="relu", rng=rng),
                           nn.Dense(hidden, activation="relu", rng=rng),
                           nn.Dense(int(labels.max()) + 1, rng=rng)])
    model.compile(Adam(learning_rate),
                  nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(points, labels, batch_size=len(points), epochs=steps,
                        shuffle=False, verbose=0)
    return model, history.history["loss"]


def save_plot(model, points, labels, path="spiral.png"):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    grid = np.linspace(-1.1, 1.1, 200, dtype=np.float32)
    xx, yy = np.meshgrid(grid, grid)
    regions = model.predict(np.stack([xx.ravel(), yy.ravel()], 1), batch_size=4096,
                            verbose=0).argmax(1)
    plt.contourf(xx, yy, regions.reshape(xx.shape), alpha=0.3)
    plt.scatter(points[:, 0], points[:, 1], c=labels, s=8)
    plt.savefig(path)
    return path


def main():
    points, labels = spiral_data()
    model, losses = train(points, labels)
    model.summary()
    _, accuracy = model.evaluate(points, labels, verbose=0)
    for step in range(0, len(losses), 300):
        print(f"step {step:5d}: loss {losses[step]:.4f}")
    print(f"training accuracy {accuracy:.3f}")
    saved = save_plot(model, points, labels)
    if saved:
        print(f"decision regions saved to {saved}")
    assert accuracy >= 0.95, "the spiral classifier should reach 95% training accuracy"


if __name__ == "__main__":
    main()
