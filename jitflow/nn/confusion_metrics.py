"""Precision, Recall and AUC, as Keras computes them: from the weighted counts of true
and false positives and negatives at thresholds on the predictions, summed over every
batch (so they are exact over an epoch, not a mean of batch values).

A prediction counts as positive when it is above the threshold; y_true counts as
positive when it is nonzero. Every element counts (a multi-label output's features
too), weighted by its example's sample_weight (times its step's mask, for a masked
sequence).
"""
import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from .metric_base import Metric

EPSILON = 1e-7  # Keras' epsilon: the end thresholds lie just outside [0, 1]


class _Confusion(Metric):
    """Sums (true positives, false positives, true negatives, false negatives), each
    an array over the thresholds `self.cutoffs`."""

    def totals(self, y_true, y_pred, weights):
        y_pred, weights = jnp.asarray(y_pred), jnp.asarray(weights, dtype=np.float64)
        # One row per weight (per example, or per step of a masked sequence).
        rows = _weighted_rows(self, y_pred, weights)
        positive = jnp.reshape(jnp.asarray(y_true) != 0, (rows, -1))
        scores = jnp.reshape(y_pred, (rows, -1))
        above = scores[..., None] > jnp.asarray(self.cutoffs, dtype=scores.dtype)
        weight = jnp.reshape(weights, (rows, 1, 1))
        positive = positive[..., None]

        def count(mask):
            return jnp.sum(jnp.where(mask, weight, 0.0), axis=(0, 1))
        return (count(above & positive), count(above & ~positive),
                count(~above & ~positive), count(~above & positive))

    def add_totals(self, tp, fp, tn, fn):
        for name, value in zip(("tp", "fp", "tn", "fn"), (tp, fp, tn, fn)):
            setattr(self, name, getattr(self, name) + np.asarray(value, np.float64))

    def reset_state(self):
        zeros = np.zeros(len(self.cutoffs))
        self.tp, self.fp, self.tn, self.fn = (zeros.copy() for _ in range(4))


class Precision(_Confusion):
    """tp / (tp + fp) at `thresholds` (0.5 by default; a list gives one value each)."""
    name = "precision"

    def __init__(self, thresholds=None, name=None):
        self.thresholds = thresholds
        self.cutoffs = _thresholds(thresholds, type(self).__name__)
        super().__init__(name)

    def result(self):
        return _ratio(self.tp, self.tp + self.fp, self.cutoffs)


class Recall(_Confusion):
    """tp / (tp + fn) at `thresholds` (0.5 by default)."""
    name = "recall"

    def __init__(self, thresholds=None, name=None):
        self.thresholds = thresholds
        self.cutoffs = _thresholds(thresholds, type(self).__name__)
        super().__init__(name)

    def result(self):
        return _ratio(self.tp, self.tp + self.fn, self.cutoffs)


class AUC(_Confusion):
    """The area under the ROC curve (curve='ROC', true against false positive rate)
    or the precision-recall curve (curve='PR'), from the counts at num_thresholds
    thresholds evenly spaced over [0, 1]; summation_method 'interpolation' (trapezoids
    for ROC, Davis and Goadrich's interpolation for PR, as Keras), 'minoring' or
    'majoring' (the lower or upper of each step's two heights)."""
    name = "auc"

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name=None):
        if int(num_thresholds) < 2:
            raise ValueError(at_user_line(
                f"AUC: num_thresholds must be at least 2, got {num_thresholds}"))
        if curve not in ("ROC", "PR"):
            raise ValueError(at_user_line(f"AUC: curve must be 'ROC' or 'PR', got {curve!r}"))
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(at_user_line(
                f"AUC: summation_method must be 'interpolation', 'minoring' or "
                f"'majoring', got {summation_method!r}"))
        self.num_thresholds, self.curve = int(num_thresholds), curve
        self.summation_method = summation_method
        inner = [(i + 1) / (self.num_thresholds - 1) for i in range(self.num_thresholds - 2)]
        self.cutoffs = np.array([-EPSILON, *inner, 1 + EPSILON])
        super().__init__(name)

    def result(self):
        if self.curve == "PR" and self.summation_method == "interpolation":
            return _interpolated_pr_auc(self.tp, self.fp, self.fn)
        if self.curve == "ROC":
            x = _divided(self.fp, self.fp + self.tn)  # false positive rate
            y = _divided(self.tp, self.tp + self.fn)  # true positive rate
        else:
            x = _divided(self.tp, self.tp + self.fn)  # recall
            y = _divided(self.tp, self.tp + self.fp)  # precision
        heights = {"interpolation": (y[:-1] + y[1:]) / 2,
                   "minoring": np.minimum(y[:-1], y[1:]),
                   "majoring": np.maximum(y[:-1], y[1:])}[self.summation_method]
        return float(np.sum((x[:-1] - x[1:]) * heights))


def _interpolated_pr_auc(tp, fp, fn):
    """Between two thresholds precision is interpolated along the positives
    predicted, p = tp + fp, with tp linear in p (Davis and Goadrich, 2006); each
    step's area is integrated exactly."""
    predicted = tp + fp
    d_tp, d_predicted = tp[:-1] - tp[1:], predicted[:-1] - predicted[1:]
    slope = _divided(d_tp, np.maximum(d_predicted, 0))
    intercept = tp[1:] - slope * predicted[1:]
    both = (predicted[:-1] > 0) & (predicted[1:] > 0)
    ratio = np.where(both, _divided(predicted[:-1], np.maximum(predicted[1:], 0)), 1.0)
    area = _divided(slope * (d_tp + intercept * np.log(ratio)), np.maximum(tp[1:] + fn[1:], 0))
    return float(np.sum(area))


def _weighted_rows(metric, y_pred, weights):
    """How many weights there are, after checking that they cover y_pred's first axes."""
    shape, weights_shape = tuple(jnp.shape(y_pred)), tuple(jnp.shape(weights))
    if shape[:len(weights_shape)] != weights_shape:
        raise ValueError(at_user_line(
            f"metric {metric.name}: predictions of shape {shape} do not fit weights of "
            f"shape {weights_shape} (one per example, or per step of a masked output)"))
    return int(np.prod(weights_shape))


def _thresholds(thresholds, what):
    values = np.atleast_1d(np.asarray(0.5 if thresholds is None else thresholds,
                                      dtype=np.float64))
    if values.ndim != 1 or np.any((values < 0) | (values > 1)):
        raise ValueError(at_user_line(
            f"{what}: thresholds must be numbers in [0, 1], got {thresholds!r}"))
    return values


def _divided(numerator, denominator):
    """numerator / denominator, 0 where the denominator is 0 (Keras' divide_no_nan)."""
    safe = np.where(denominator == 0, 1.0, denominator)
    return np.where(denominator == 0, 0.0, numerator / safe)


def _ratio(numerator, denominator, cutoffs):
    value = _divided(numerator, denominator)
    return float(value[0]) if len(cutoffs) == 1 else value


__all__ = ["Precision", "Recall", "AUC"]
