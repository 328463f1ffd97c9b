"""Losses and metrics weighted by an output's mask, as Keras weighs them: a sequence
labelling model (Embedding(mask_zero=True) -> LSTM(return_sequences=True) -> Dense)
trained and evaluated with fit, evaluate and the batch methods. Its losses and metrics
are checked against NumPy over the kept steps only (each step weighted by its example's
sample weight times the mask; the loss divided by the number of kept steps), its
gradients against the same layers run without masks on the sequences with the padding
removed, and a model without a mask against the plain mean over every step."""
import numpy as np
import pytest

import jitflow
from fidelity import assert_same
from jitflow import nn
from jitflow.optim import SGD

RNG = np.random.default_rng(3)
VOCABULARY, CLASSES, STEPS = 7, 3, 5


def padded_tokens(count):
    """Token sequences with padding (0) at the end, in the middle, and one row of
    padding only."""
    tokens = RNG.integers(1, VOCABULARY, (count, STEPS))
    tokens[0, 3:] = 0
    tokens[1, 1] = 0
    tokens[2, :] = 0
    tokens[3, :4] = 0
    tokens[5::3, 2:] = 0
    return tokens


TOKENS = padded_tokens(10)
LABELS = RNG.integers(0, CLASSES, TOKENS.shape)
WEIGHTS = RNG.uniform(0.5, 2.0, len(TOKENS))


def tagger(mask_zero=True, seed=0):
    """A float64 sequence labeller: a class's logits at every step."""
    rng = np.random.default_rng(seed)
    return nn.Sequential([
        nn.Input((STEPS,), dtype="int64"),
        nn.Embedding(VOCABULARY, 4, dtype="float64", rng=rng, mask_zero=mask_zero),
        nn.LSTM(6, return_sequences=True, rng=rng),
        nn.Dense(CLASSES, rng=rng)])


# --- NumPy references -----------------------------------------------------------------------

def step_losses(logits, labels):
    """Each step's softmax cross-entropy, (batch, steps)."""
    shifted = logits - logits.max(-1, keepdims=True)
    log_probabilities = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -np.take_along_axis(log_probabilities, labels[..., None], -1)[..., 0]


def step_weights(weights, kept):
    """The weight of each step: its example's weight (or its own) times the mask."""
    return (weights if weights.ndim == 2 else weights[:, None]) * kept


def masked_loss(logits, labels, kept, weights):
    """Keras' loss of a masked output: sum(loss * weight * mask) / kept steps."""
    return (step_losses(logits, labels) * step_weights(weights, kept)).sum() / \
        max(kept.sum(), 1)


def masked_accuracy(logits, labels, kept, weights):
    hits = logits.argmax(-1) == labels
    return (hits * step_weights(weights, kept)).sum() / step_weights(weights, kept).sum()


def epoch_values(logits, labels, kept, weights, batch_size):
    """(the epoch's loss, its accuracy): the loss the mean of the batches' losses
    weighted by their numbers of examples (Keras' loss tracker), the accuracy over every
    kept step of the epoch."""
    total = 0.0
    for start in range(0, len(labels), batch_size):
        rows = slice(start, start + batch_size)
        total += masked_loss(logits[rows], labels[rows], kept[rows], weights[rows]) * \
            len(labels[rows])
    return total / len(labels), masked_accuracy(logits, labels, kept, weights)


# --- tests ------------------------------------------------------------------------------------

@pytest.mark.parametrize("per_step", [False, True], ids=["per_example", "per_step"])
def test_fit_and_evaluate_weigh_losses_and_metrics_by_the_mask(per_step):
    """Sample weights one per example, or one per step (Keras' temporal weights)."""
    weights = RNG.uniform(0.5, 2.0, TOKENS.shape) if per_step else WEIGHTS
    model = tagger()
    # learning rate 0: every batch of the epoch sees the same weights as predict.
    model.compile(SGD(0.0), nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    logits = model.predict(TOKENS, verbose=0)
    kept = TOKENS != 0
    # 10 examples in batches of 4: the last batch of 2 is padded with repeats.
    history = model.fit(TOKENS, LABELS, batch_size=4, sample_weight=weights, shuffle=False,
                        verbose=0)
    loss, accuracy = epoch_values(logits, LABELS, kept, weights, 4)
    assert_same(history.history["loss"][0], loss, rtol=1e-12)
    assert_same(history.history["accuracy"][0], accuracy, rtol=1e-12)
    assert model._train_function.cache_info().traces == 1
    evaluated = model.evaluate(TOKENS, LABELS, batch_size=3, sample_weight=weights,
                               verbose=0, return_dict=True)
    loss, accuracy = epoch_values(logits, LABELS, kept, weights, 3)
    assert_same(evaluated["loss"], loss, rtol=1e-12)
    assert_same(evaluated["accuracy"], accuracy, rtol=1e-12)
    # Without sample weights the mask alone weighs the steps.
    loss, accuracy = model.test_on_batch(TOKENS[:6], LABELS[:6])
    assert_same(loss, masked_loss(logits[:6], LABELS[:6], kept[:6], np.ones(6)), rtol=1e-12)
    assert_same(accuracy, masked_accuracy(logits[:6], LABELS[:6], kept[:6], np.ones(6)),
                rtol=1e-12)


def unpadded_loss_and_gradients(model, tokens, labels, weights):
    """The masked loss and its gradients computed without masks: the same weights, run
    eagerly on each sequence with its padding removed (the Dense written out, as the
    layer keeps to the length it was built for)."""
    embedding, lstm, dense = model.layers
    kept = tokens != 0
    with jitflow.GradientTape() as tape:
        total = 0.0
        for row in np.flatnonzero(kept.any(1)):
            sequence = tokens[row][kept[row]][None]
            logits = lstm(embedding(sequence)) @ dense.kernel + dense.bias
            losses = nn.losses.sparse_softmax_cross_entropy_from_logits(
                labels[row][kept[row]][None], logits, reduction="none")
            total = total + losses.sum() * weights[row]
        loss = total / kept.sum()
    return float(loss), tape.gradient(loss, model.trainable_variables)


def test_train_on_batch_follows_the_gradient_of_the_loss_over_the_kept_steps_only():
    model = tagger(seed=1)
    learning_rate = 0.5
    model.compile(SGD(learning_rate), nn.losses.SparseCategoricalCrossentropy(
        from_logits=True))
    before = [np.array(w.value) for w in model.trainable_variables]
    expected_loss, gradients = unpadded_loss_and_gradients(model, TOKENS, LABELS, WEIGHTS)
    loss = model.train_on_batch(TOKENS, LABELS, sample_weight=WEIGHTS)
    assert_same(loss, expected_loss, rtol=1e-12)
    for weight, old, gradient in zip(model.trainable_variables, before, gradients,
                                     strict=True):
        assert_same(np.asarray(weight.value), old - learning_rate * np.asarray(gradient),
                    rtol=1e-10, atol=1e-14)
    # The padding's embedding row takes no part: it is not trained.
    assert_same(np.asarray(model.layers[0].embeddings.value)[0], before[0][0])


def test_a_masked_regression_weighs_mse_metrics_and_precision_by_the_mask():
    """Masking on a float sequence, several metrics, a functional model."""
    x = RNG.standard_normal((6, STEPS, 2))
    x[0, 3:] = 0.0
    x[4, :2] = 0.0
    y = RNG.standard_normal((6, STEPS, 1))
    inputs = nn.Input((STEPS, 2), dtype="float64")
    hidden = nn.GRU(3, return_sequences=True, rng=np.random.default_rng(2))(
        nn.Masking(0.0)(inputs))
    model = nn.Model(inputs, nn.Dense(1, rng=np.random.default_rng(4))(hidden))
    model.compile(SGD(0.0), "mse", metrics=["mae", nn.metrics.Precision(0.0)])
    prediction = model.predict(x, verbose=0)
    kept = np.any(x != 0.0, -1)
    weights = RNG.uniform(0.5, 2.0, len(x))
    step_weights = weights[:, None] * kept
    results = model.evaluate(x, y, sample_weight=weights, batch_size=6, verbose=0,
                             return_dict=True)
    squared, absolute = ((prediction - y) ** 2)[..., 0], np.abs(prediction - y)[..., 0]
    assert_same(results["loss"], (squared * step_weights).sum() / kept.sum(), rtol=1e-12)
    assert_same(results["mae"], (absolute * step_weights).sum() / step_weights.sum(),
                rtol=1e-12)
    called = (prediction > 0.0)[..., 0]
    positive = (y != 0)[..., 0]
    precision = (step_weights * called * positive).sum() / (step_weights * called).sum()
    assert_same(results["precision"], precision, rtol=1e-12)


def test_a_model_without_a_mask_takes_the_mean_over_every_step():
    model = tagger(mask_zero=False)
    model.compile(SGD(0.0), nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    logits = model.predict(TOKENS, verbose=0)
    loss, accuracy = model.test_on_batch(TOKENS, LABELS, sample_weight=WEIGHTS)
    everywhere = np.ones(TOKENS.shape, bool)
    assert_same(loss, masked_loss(logits, LABELS, everywhere, WEIGHTS), rtol=1e-12)
    assert_same(accuracy, masked_accuracy(logits, LABELS, everywhere, WEIGHTS), rtol=1e-12)
    assert not np.isclose(loss, masked_loss(logits, LABELS, TOKENS != 0, WEIGHTS))


def test_a_loss_function_must_give_a_value_per_step_of_a_masked_output():
    model = tagger()
    model.compile("sgd", lambda y, p: ((p - y[..., None]) ** 2).sum(-1).mean(-1))
    with pytest.raises(ValueError, match=r"loss <lambda> of an output with a mask of shape "
                                         r"\(10, 5\).*shape \(10,\).*at least 2 axes"):
        model.train_on_batch(TOKENS, LABELS)
    model.compile(SGD(0.0), lambda y, p: ((p - y[..., None]) ** 2).sum(-1))
    logits = model.predict(TOKENS, verbose=0)
    kept = TOKENS != 0
    squared = ((logits - LABELS[..., None]) ** 2).sum(-1)
    assert_same(model.test_on_batch(TOKENS, LABELS), (squared * kept).sum() / kept.sum(),
                rtol=1e-12)


def test_class_weight_refuses_sequences_of_labels():
    model = tagger()
    model.compile("sgd", nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    with pytest.raises(ValueError, match=r"class_weight takes y of one integer label or "
                                         r"one one-hot row per example; y has shape "
                                         r"\(10, 5\)"):
        model.fit(TOKENS, LABELS, class_weight={0: 1.0, 1: 2.0, 2: 1.0}, verbose=0)


def test_a_loss_called_with_a_weight_per_step_weighs_each_step():
    logits = RNG.standard_normal((4, STEPS, CLASSES))
    labels = LABELS[:4]
    step_weights = RNG.uniform(0, 2, (4, STEPS))
    loss = nn.losses.SparseCategoricalCrossentropy(from_logits=True)
    # Keras' sum_over_batch_size: the weighted sum over the number of weights.
    expected = (step_losses(logits, labels) * step_weights).sum() / step_weights.size
    assert_same(float(loss(labels, logits, sample_weight=step_weights)), expected,
                rtol=1e-12)
    with pytest.raises(ValueError, match=r"weights .* have shape \(4, 3\)"):
        loss(labels, logits, sample_weight=step_weights[:, :3])


def test_weights_per_step_without_a_mask_weigh_each_step():
    model = tagger(mask_zero=False)
    model.compile(SGD(0.0), nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    logits = model.predict(TOKENS, verbose=0)
    weights = RNG.uniform(0.0, 2.0, TOKENS.shape)
    results = model.evaluate(TOKENS, LABELS, sample_weight=weights, batch_size=4,
                             verbose=0, return_dict=True)
    everywhere = np.ones(TOKENS.shape, bool)
    # Keras' sum_over_batch_size: each batch's weighted sum over its number of weights,
    # the masked loss with every step kept.
    loss, accuracy = epoch_values(logits, LABELS, everywhere, weights, 4)
    assert_same(results["loss"], loss, rtol=1e-12)
    assert_same(results["accuracy"], accuracy, rtol=1e-12)
    with pytest.raises(ValueError, match=r"sample_weight has shape \(9, 5\); it needs one "
                                         r"weight per example, shape \(10,\), or one per "
                                         r"step"):
        model.evaluate(TOKENS, LABELS, sample_weight=weights[:9])
    masked = tagger()
    masked.compile("sgd", nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    with pytest.raises(ValueError, match=r"sample_weight of shape \(10, 4\) \(one per "
                                         r"step\) does not fit the output's mask of shape "
                                         r"\(10, 5\)"):
        masked.test_on_batch(TOKENS, LABELS, sample_weight=weights[:, :4])
