"""Metric: the base of Keras-style stateful metrics (update_state, result,
reset_state).

A metric's work per batch is `totals(y_true, y_pred, weights)`: a tuple of sums over the
batch's examples, traceable, so that fit computes it inside the compiled step; the
running sums are kept in float64 outside it (`add_totals`), so an epoch's value is exact
whatever the batches. The weights are one per example, or one per step of an output
with a mask (nn/weighting.py). The base metric's values are `per_position` (the example
axis first), averaged to the weights' shape; its sums are (the weighted sum of its
values, the sum of the weights), and its result their ratio.
"""
import numpy as np

from .. import numpy as jnp
from .weighting import mean_to_rank, values_at_weights


class Metric:
    name = "metric"

    def __init__(self, name=None):
        self.name = name or type(self).name
        self.reset_state()

    def totals(self, y_true, y_pred, weights):
        weights = jnp.asarray(weights)
        values = values_at_weights(self.per_position(y_true, y_pred), weights,
                                   f"metric {self.name}")
        weights = jnp.asarray(weights, dtype=jnp.result_type(values))
        return jnp.sum(values * weights), jnp.sum(weights)

    def per_example(self, y_true, y_pred):
        """One value per example: per_position's mean over every axis but the first."""
        return mean_to_rank(self.per_position(y_true, y_pred), 1, f"metric {self.name}")

    def per_position(self, y_true, y_pred):
        raise NotImplementedError(
            f"{type(self).__name__}: a Metric defines per_position(y_true, y_pred), its "
            f"values with the example axis first (or its own totals)")

    def update_state(self, y_true, y_pred, sample_weight=None):
        count = np.shape(y_pred)[0]
        weights = np.ones(count) if sample_weight is None else sample_weight
        self.add_totals(*self.totals(y_true, y_pred, weights))

    def add_totals(self, total, count):
        self.total += float(total)
        self.count += float(count)

    def result(self):
        return self.total / self.count if self.count else 0.0

    def reset_state(self):
        self.total, self.count = 0.0, 0.0

    def __repr__(self):
        return f"{type(self).__name__}(name={self.name!r})"


__all__ = ["Metric"]
