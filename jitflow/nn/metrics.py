"""Metrics, as Keras' stateful metrics: update_state, result, reset_state (the base,
Metric, is in metric_base.py; precision, recall and AUC in confusion_metrics.py).

Accuracies and losses as metrics are weighted means of per-example values: the exact
weighted mean over an epoch's examples, whatever the batches.
"""
import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from . import loss_classes
from .confusion_metrics import AUC, Precision, Recall
from .metric_base import Metric


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

    def per_position(self, y_true, y_pred):
        hits = (jnp.asarray(y_pred) > self.threshold) == (jnp.asarray(y_true) > self.threshold)
        return jnp.astype(hits, np.float64)


class CategoricalAccuracy(Metric):
    """Whether the largest prediction is at the one-hot label's class."""
    name = "categorical_accuracy"

    def per_position(self, y_true, y_pred):
        hits = jnp.argmax(y_pred, axis=-1) == jnp.argmax(y_true, axis=-1)
        return jnp.astype(hits, np.float64)


class SparseCategoricalAccuracy(Metric):
    """Whether the largest prediction is at the integer label's class."""
    name = "sparse_categorical_accuracy"

    def per_position(self, y_true, y_pred):
        labels = loss_classes._squeezed_labels(y_true, y_pred)
        hits = jnp.argmax(y_pred, axis=-1) == jnp.astype(labels, np.int64)
        return jnp.astype(hits, np.float64)


class TopKCategoricalAccuracy(Metric):
    """Whether the one-hot label's class is among the k largest predictions (a class
    tied with the k-th largest counts as among them, as in TensorFlow's in_top_k)."""
    name = "top_k_categorical_accuracy"

    def __init__(self, k=5, name=None):
        self.k = int(k)
        super().__init__(name)

    def per_position(self, y_true, y_pred):
        return _in_top_k(y_pred, jnp.argmax(y_true, axis=-1), self.k)


class SparseTopKCategoricalAccuracy(TopKCategoricalAccuracy):
    """Whether the integer label's class is among the k largest predictions."""
    name = "sparse_top_k_categorical_accuracy"

    def per_position(self, y_true, y_pred):
        labels = loss_classes._squeezed_labels(y_true, y_pred)
        return _in_top_k(y_pred, jnp.astype(labels, np.int64), self.k)


def _in_top_k(y_pred, labels, k):
    """1.0 where fewer than k classes score strictly above the label's class."""
    classes = jnp.shape(y_pred)[-1]
    at_label = jnp.arange(classes) == labels[..., None]
    label_score = jnp.sum(jnp.where(at_label, y_pred, 0), axis=-1, keepdims=True)
    above = jnp.sum(jnp.astype(y_pred > label_score, np.int64), axis=-1)
    return jnp.astype(above < k, np.float64)


class LossMetric(Metric):
    """A loss's per-example values, averaged (metrics=['mse'])."""

    def __init__(self, loss, name=None):
        self.loss = loss
        super().__init__(name or loss.name)

    def per_position(self, y_true, y_pred):
        return self.loss.per_position(y_true, y_pred)


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
                                         SparseCategoricalAccuracy, TopKCategoricalAccuracy,
                                         SparseTopKCategoricalAccuracy, Precision, Recall,
                                         AUC)}
    if isinstance(identifier, str) and identifier in by_name:
        return by_name[identifier]()
    if isinstance(identifier, str) and identifier in loss_classes._BY_NAME:
        return LossMetric(loss_classes.get(identifier), name=identifier)
    raise ValueError(at_user_line(
        f"unknown metric {identifier!r}; give a jitflow.nn.metrics.Metric, 'accuracy', "
        f"one of {', '.join(sorted(by_name))} or a loss name "
        f"({', '.join(sorted(loss_classes._BY_NAME))})"))


__all__ = ["Metric", "Mean", "BinaryAccuracy", "CategoricalAccuracy",
           "SparseCategoricalAccuracy", "TopKCategoricalAccuracy",
           "SparseTopKCategoricalAccuracy", "Precision", "Recall", "AUC", "LossMetric",
           "get"]
