"""Learning-rate schedules: callables of the step count (an int64 array, or a traced
value inside @jitflow.function) written with jitflow.numpy, so they trace; they branch
with jnp.where, never with Python's `if`. The rate they give is float64; the optimizer
casts it to each Variable's dtype."""
import numpy as np

from .. import numpy as jnp


def _as_float(step):
    return jnp.asarray(step, dtype=np.float64)


class ExponentialDecay:
    """initial_learning_rate * decay_rate ** (step / decay_steps); with staircase the
    exponent is floor(step / decay_steps), so the rate drops every decay_steps steps."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False):
        self.initial_learning_rate = float(initial_learning_rate)
        self.decay_steps = float(decay_steps)
        self.decay_rate = float(decay_rate)
        self.staircase = bool(staircase)

    def __call__(self, step):
        progress = _as_float(step) / self.decay_steps
        if self.staircase:
            progress = jnp.floor(progress)
        return self.initial_learning_rate * self.decay_rate ** progress


class PiecewiseConstant:
    """values[0] while step <= boundaries[0], values[i] while boundaries[i - 1] < step <=
    boundaries[i], values[-1] after the last boundary."""

    def __init__(self, boundaries, values):
        if len(values) != len(boundaries) + 1:
            raise ValueError(f"PiecewiseConstant: {len(boundaries)} boundaries need "
                             f"{len(boundaries) + 1} values, got {len(values)}")
        self.boundaries = list(boundaries)
        self.values = [float(value) for value in values]

    def __call__(self, step):
        rate = jnp.asarray(self.values[-1], dtype=np.float64)
        # From the last interval back, so the first boundary the step is below wins.
        for boundary, value in zip(self.boundaries[::-1], self.values[-2::-1]):
            rate = jnp.where(step <= boundary, value, rate)
        return rate


class CosineDecay:
    """initial_learning_rate * ((1 - alpha) * cosine + alpha), cosine = (1 + cos(pi *
    min(step, decay_steps) / decay_steps)) / 2: from the initial rate down to alpha
    times it over decay_steps steps, then constant."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0):
        self.initial_learning_rate = float(initial_learning_rate)
        self.decay_steps = float(decay_steps)
        self.alpha = float(alpha)

    def __call__(self, step):
        progress = jnp.minimum(_as_float(step), self.decay_steps) / self.decay_steps
        cosine = 0.5 * (1 + jnp.cos(np.pi * progress))
        return self.initial_learning_rate * ((1 - self.alpha) * cosine + self.alpha)


__all__ = ["ExponentialDecay", "PiecewiseConstant", "CosineDecay"]
