"""Metrics, as Keras' stateful metrics: update_state, result, reset_state.

A metric's work per batch is `totals(y_true, y_pred, weights)`: (the weighted sum of its
per-example values, the sum of the weights), traceable, so that fit computes it inside
the compiled step; the running sums are kept in float64 outside it, so an epoch's value
is the exact weighted mean over its examples whatever the batches.
"""
import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from . import loss_classes


class Metric:
    name = "metric"

    def __init__(self, name=None):
        self.name = name or type(self).name
        self.reset_state()

    def totals(self, y_true, y_pred, weights):
        values = self.per_example(y_true, y_pred)
        weights = jnp.asarray(weights, dtype=jnp.result_type(values))
        return jnp.sum(values * weights), jnp.sum(weights)

    def per_example(self, y_true, y_pred):
        raise NotImplementedError(type(self).__name__)

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


class Mean(Metric):
    """The weighted mean of the values given to update_state(values, sample_weight)."""
    name = "mean"

    def update_state(self, values, sample_weight=None):
        values = np.asarray(values, np.float64)
        weights = np.ones_like(values) if sample_weight is None else \
            np.broadcast_to(np.asarray(sample_weight, np.float64), values.shape)
        self.add_totals(np.sum(values * weights), np.sum(weights))


class BinaryAccuracy(Metric):
    """Whether y_pred > threshold agrees with y_true > threshold, averaged over the
    features of each example."""
    name = "binary_accuracy"

    def __init__(self, name=None, threshold=0.5):
        self.threshold = float(threshold)
        super().__init__(name)

    def per_example(self, y_true, y_pred):
        hits = (jnp.asarray(y_pred) > self.threshold) == (jnp.asarray(y_true) > self.threshold)
        return _mean_over_features(jnp.astype(hits, np.float64))


class CategoricalAccuracy(Metric):
    """Whether the largest prediction is at the one-hot label's class."""
    name = "categorical_accuracy"

    def per_example(self, y_true, y_pred):
        hits = jnp.argmax(y_pred, axis=-1) == jnp.argmax(y_true, axis=-1)
        return jnp.astype(hits, np.float64)


class SparseCategoricalAccuracy(Metric):
    """Whether the largest prediction is at the integer label's class."""
    name = "sparse_categorical_accuracy"

    def per_example(self, y_true, y_pred):
        labels = loss_classes._squeezed_labels(y_true, y_pred)
        hits = jnp.argmax(y_pred, axis=-1) == jnp.astype(labels, np.int64)
        return jnp.astype(hits, np.float64)


class LossMetric(Metric):
    """A loss's per-example values, averaged (metrics=['mse'])."""

    def __init__(self, loss, name=None):
        self.loss = loss
        super().__init__(name or loss.name)

    def per_example(self, y_true, y_pred):
        return self.loss.per_example(y_true, y_pred)


def _mean_over_features(values):
    axes = tuple(range(1, len(jnp.shape(values))))
    return jnp.mean(values, axis=axes) if axes else values


_ACCURACIES = {"binary_crossentropy": BinaryAccuracy,
               "sparse_categorical_crossentropy": SparseCategoricalAccuracy}


def get(identifier, loss=None):
    """A Metric from a Metric or a name; 'accuracy' (or 'acc') is the accuracy that fits
    `loss`, as in Keras: binary for binary cross-entropy, sparse for sparse labels,
    categorical otherwise."""
    if isinstance(identifier, Metric):
        return identifier
    if identifier in ("accuracy", "acc"):
        kind = _ACCURACIES.get(getattr(loss, "name", None), CategoricalAccuracy)
        return kind(name=identifier)
    by_name = {cls.name: cls for cls in (BinaryAccuracy, CategoricalAccuracy,
                                         SparseCategoricalAccuracy)}
    if isinstance(identifier, str) and identifier in by_name:
        return by_name[identifier]()
    if isinstance(identifier, str) and identifier in loss_classes._BY_NAME:
        return LossMetric(loss_classes.get(identifier), name=identifier)
    raise ValueError(at_user_line(
        f"unknown metric {identifier!r}; give a jitflow.nn.metrics.Metric, 'accuracy', "
        f"one of {', '.join(sorted(by_name))} or a loss name "
        f"({', '.join(sorted(loss_classes._BY_NAME))})"))


__all__ = ["Metric", "Mean", "BinaryAccuracy", "CategoricalAccuracy",
           "SparseCategoricalAccuracy", "LossMetric", "get"]
