"""Metrics against NumPy: the three accuracies, Mean, and their running sums."""
import numpy as np
import pytest

from jitflow.nn import losses, metrics

RNG = np.random.default_rng(0)
SCORES = RNG.standard_normal((10, 3))
LABELS = RNG.integers(0, 3, 10)


def test_accuracies_match_numpy_and_accumulate_over_batches():
    hits = SCORES.argmax(1) == LABELS
    sparse, categorical = metrics.SparseCategoricalAccuracy(), metrics.CategoricalAccuracy()
    for start in (0, 4):
        rows = slice(start, start + 4 if start == 0 else None)
        sparse.update_state(LABELS[rows], SCORES[rows])
        categorical.update_state(np.eye(3)[LABELS[rows]], SCORES[rows])
    assert sparse.result() == categorical.result() == hits.mean()
    weights = RNG.uniform(0, 1, 10)
    sparse.reset_state()
    sparse.update_state(LABELS, SCORES, sample_weight=weights)
    assert sparse.result() == pytest.approx((hits * weights).sum() / weights.sum(), rel=1e-14)


def test_binary_accuracy_thresholds_both_sides():
    truth = (RNG.random((10, 2)) > 0.5).astype(np.float64)
    probabilities = RNG.random((10, 2))
    accuracy = metrics.BinaryAccuracy(threshold=0.3)
    accuracy.update_state(truth, probabilities)
    assert accuracy.result() == np.mean((probabilities > 0.3) == (truth > 0.3))


def test_mean_is_a_weighted_running_mean():
    mean = metrics.Mean()
    mean.update_state([1.0, 2.0])
    mean.update_state(4.0, sample_weight=2.0)
    assert mean.result() == (1 + 2 + 8) / 4
    mean.reset_state()
    assert mean.result() == 0.0


def test_get_picks_the_accuracy_that_fits_the_loss():
    assert type(metrics.get("accuracy", losses.BinaryCrossentropy())) is \
        metrics.BinaryAccuracy
    assert type(metrics.get("acc", losses.MeanSquaredError())) is \
        metrics.CategoricalAccuracy
    assert metrics.get("mse").name == "mse"
    with pytest.raises(ValueError, match="unknown metric 'f1'"):
        metrics.get("f1")
