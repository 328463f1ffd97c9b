"""Keras' loss classes against float64 NumPy formulas (Keras' own: a mean over the
features of each example, probabilities clipped to [1e-7, 1 - 1e-7]), eagerly and
compiled, with sample weights."""
import numpy as np
import pytest

import jitflow
from fidelity import assert_same
from jitflow.nn import losses, metrics

RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((6, 4)) * 3
PROBABILITIES = np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
SIGMOIDS = 1 / (1 + np.exp(-LOGITS))
TARGETS = RNG.standard_normal((6, 4))
BINARY = (RNG.random((6, 4)) > 0.5).astype(np.float64)
LABELS = RNG.integers(0, 4, 6)
ONE_HOT = np.eye(4)[LABELS]
EPS = 1e-7


def log_softmax(x):
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def binary_probabilities(z, p):
    p = np.clip(p, EPS, 1 - EPS)
    return -(z * np.log(p) + (1 - z) * np.log(1 - p))


def huber(e, delta=1.0):
    e = np.abs(e)
    return np.where(e <= delta, 0.5 * e * e, delta * (e - 0.5 * delta))


CASES = {  # name: (loss, y_true, y_pred, per-example reference)
    "mse": (losses.MeanSquaredError(), TARGETS, LOGITS, ((LOGITS - TARGETS) ** 2).mean(-1)),
    "mae": (losses.MeanAbsoluteError(), TARGETS, LOGITS, np.abs(LOGITS - TARGETS).mean(-1)),
    "huber": (losses.Huber(), TARGETS, LOGITS, huber(LOGITS - TARGETS).mean(-1)),
    "huber_2": (losses.Huber(2.0), TARGETS, LOGITS, huber(LOGITS - TARGETS, 2.0).mean(-1)),
    "bce_logits": (losses.BinaryCrossentropy(from_logits=True), BINARY, LOGITS,
                   binary_probabilities(BINARY, SIGMOIDS).mean(-1)),
    "bce": (losses.BinaryCrossentropy(), BINARY, SIGMOIDS,
            binary_probabilities(BINARY, SIGMOIDS).mean(-1)),
    "cce_logits": (losses.CategoricalCrossentropy(from_logits=True), ONE_HOT, LOGITS,
                   -(ONE_HOT * log_softmax(LOGITS)).sum(-1)),
    "cce": (losses.CategoricalCrossentropy(), ONE_HOT, PROBABILITIES,
            -(ONE_HOT * np.log(np.clip(PROBABILITIES, EPS, 1 - EPS))).sum(-1)),
    "scce_logits": (losses.SparseCategoricalCrossentropy(from_logits=True), LABELS,
                    LOGITS, -log_softmax(LOGITS)[np.arange(6), LABELS]),
    "scce": (losses.SparseCategoricalCrossentropy(), LABELS[:, None], PROBABILITIES,
             -np.log(np.clip(PROBABILITIES[np.arange(6), LABELS], EPS, 1 - EPS))),
}


@pytest.mark.parametrize("name", CASES)
def test_loss_classes_match_numpy(name, backend):
    loss, y_true, y_pred, expected = CASES[name]
    weights = RNG.uniform(0, 2, 6)
    assert_same(loss.per_example(y_true, y_pred), expected, rtol=1e-12, atol=1e-15)
    assert loss(y_true, y_pred) == pytest.approx(expected.mean(), rel=1e-12)
    compiled = jitflow.function(lambda t, p, w: loss(t, p, sample_weight=w))
    assert float(compiled(y_true, y_pred, weights)) == pytest.approx(
        (expected * weights).sum() / 6, rel=1e-12)


def test_float32_predictions_give_a_float32_loss():
    loss = losses.SparseCategoricalCrossentropy(from_logits=True)
    value = loss(LABELS, LOGITS.astype(np.float32))
    assert np.asarray(value).dtype == np.float32


def test_get_names_the_known_losses():
    assert isinstance(losses.get("sparse_categorical_crossentropy"),
                      losses.SparseCategoricalCrossentropy)
    with pytest.raises(ValueError, match="unknown loss 'nope'; give a"):
        losses.get("nope")


def test_sequence_losses_average_over_positions_as_keras():
    """Logits (batch, time, classes): one loss per example, the mean over its steps."""
    rng = np.random.default_rng(5)
    logits = rng.standard_normal((3, 4, 5))
    labels = rng.integers(0, 5, (3, 4))
    shifted = logits - logits.max(-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    expected = -np.take_along_axis(log_p, labels[..., None], -1)[..., 0].mean(1)
    sparse = losses.SparseCategoricalCrossentropy(from_logits=True)
    np.testing.assert_allclose(np.asarray(sparse.per_example(labels, logits)), expected,
                               rtol=1e-12)
    dense = losses.CategoricalCrossentropy(from_logits=True)
    np.testing.assert_allclose(np.asarray(dense.per_example(np.eye(5)[labels], logits)),
                               expected, rtol=1e-12)
    accuracy = metrics.SparseCategoricalAccuracy()
    accuracy.update_state(labels, logits)
    assert accuracy.result() == pytest.approx((logits.argmax(-1) == labels).mean(), abs=1e-15)
