"""dropout and recurrent_dropout of SimpleRNN, LSTM and GRU, as in Keras: only while
training, one mask per call over the input's features and one over the state's units,
used at every step, scaled by 1 / (1 - rate); reproducible from the seed, eagerly and
compiled; gradients flow through the kept units only."""
import numpy as np
import pytest

import jitflow
from fidelity import assert_same
from jitflow import nn
from jitflow.tape import GradientTape

RATE = 0.3
KINDS = [nn.SimpleRNN, nn.LSTM, nn.GRU]


def identity_rnn(units, **options):
    """A linear SimpleRNN whose kernel and recurrent kernel are the identity, so its
    outputs show the dropout masks: h_t = x_t * m + (h_{t-1} * r)."""
    layer = nn.SimpleRNN(units, activation="linear", use_bias=False,
                         return_sequences=True, **options)
    layer(np.zeros((1, 1, units), np.float32))
    layer.kernel.assign(np.eye(units, dtype=np.float32))
    layer.recurrent_kernel.assign(np.eye(units, dtype=np.float32))
    return layer


@pytest.mark.parametrize("kind", KINDS)
def test_outside_training_dropout_changes_nothing_and_in_training_it_does(kind):
    x = np.random.default_rng(0).standard_normal((4, 5, 3)).astype(np.float32)
    plain = kind(6, return_sequences=True)
    plain(x)
    dropped = kind(6, return_sequences=True, dropout=RATE, recurrent_dropout=RATE, seed=3)
    dropped(x)
    for mine, theirs in zip(dropped.weights, plain.weights, strict=True):
        mine.assign(theirs.numpy())
    assert_same(np.asarray(dropped(x)), np.asarray(plain(x)))
    assert_same(np.asarray(dropped(x, training=False)), np.asarray(plain(x)))
    assert not np.allclose(np.asarray(dropped(x, training=True)), np.asarray(plain(x)))


def test_the_input_mask_drops_the_rate_of_features_once_per_sequence():
    layer = identity_rnn(32, dropout=RATE, seed=1)
    x = np.zeros((64, 3, 32), np.float32)
    x[:, 0] = 1.0  # h_0 = m, then h_t = h_{t-1}: every step shows the mask
    steps = np.asarray(layer(x, training=True))
    mask = steps[:, 0]
    assert set(np.unique(mask).tolist()) <= {0.0, np.float32(1 / (1 - RATE))}
    assert abs((mask == 0).mean() - RATE) < 0.05  # 2048 draws: 5 standard deviations
    assert_same(steps[:, 2], mask)
    x[:, 1:] = 1.0  # the same mask multiplies every step's input
    steps = np.asarray(layer(x, training=True))
    fresh = steps[:, 0]
    assert not np.array_equal(fresh, mask)  # a new call draws a new mask
    assert_same(steps[:, 1], fresh * 2, rtol=1e-6)


def test_the_recurrent_mask_is_drawn_once_and_multiplies_the_state_at_every_step():
    layer = identity_rnn(32, recurrent_dropout=RATE, seed=2)
    x = np.zeros((64, 3, 32), np.float32)
    x[:, 0] = 1.0  # h_0 = 1, h_1 = r, h_2 = r * r
    steps = np.asarray(layer(x, training=True))
    assert_same(steps[:, 0], np.ones((64, 32), np.float32))
    r = steps[:, 1]
    assert set(np.unique(r).tolist()) <= {0.0, np.float32(1 / (1 - RATE))}
    assert abs((r == 0).mean() - RATE) < 0.05
    assert_same(steps[:, 2], r * r, rtol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_the_same_seed_draws_the_same_masks_eagerly_and_compiled(kind):
    x = np.random.default_rng(3).standard_normal((2, 4, 3)).astype(np.float32)
    layers = [kind(4, dropout=RATE, recurrent_dropout=RATE, seed=5) for _ in range(2)]
    layers[0](x)
    layers[1](x)
    for mine, theirs in zip(layers[1].weights, layers[0].weights, strict=True):
        mine.assign(theirs.numpy())
    compiled = jitflow.function(lambda x: layers[1](x, training=True))
    for _ in range(2):  # each call draws new masks, the same ones both ways
        eager = np.asarray(layers[0](x, training=True))
        assert_same(np.asarray(compiled(x)), eager, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_gradients_flow_through_the_kept_features_only(kind):
    x = np.random.default_rng(4).standard_normal((1, 3, 40)).astype(np.float32)
    layer = kind(5, dropout=0.5, seed=6)
    layer(x)
    inputs = jitflow.Variable(x)

    def gradients():
        with GradientTape() as tape:
            loss = (layer(inputs.value, training=True) ** 2).sum()
        return tape.gradient(loss, [inputs, layer.kernel])
    for grad_x, grad_kernel in (gradients(), jitflow.function(gradients)()):
        grad_x, grad_kernel = np.asarray(grad_x), np.asarray(grad_kernel)
        dropped = np.all(grad_x[0] == 0, axis=0)  # a feature dropped at every step
        assert 5 < dropped.sum() < 35
        assert np.all(grad_kernel[dropped] == 0)
        assert np.all(np.abs(grad_kernel[~dropped]).sum(1) > 0)
        assert np.all(np.isfinite(grad_kernel))


def test_dropout_rates_outside_zero_to_one_are_refused():
    with pytest.raises(ValueError, match=r"lstm.*: recurrent_dropout must be in \[0, 1\)"):
        nn.LSTM(2, recurrent_dropout=1.0)
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\), got -0.1"):
        nn.GRU(2, dropout=-0.1)


def test_fit_with_dropout_drops_units_and_repeats_itself_from_the_same_seeds():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((24, 5, 3)).astype(np.float32)
    y = x.sum(axis=(1, 2))[:, None]

    def trained(rate=RATE):
        model = nn.Sequential([nn.Input((5, 3)),
                               nn.GRU(4, dropout=rate, recurrent_dropout=rate, seed=8,
                                      rng=np.random.default_rng(9)),
                               nn.Dense(1, rng=np.random.default_rng(10))])
        model.compile("adam", "mse")
        history = model.fit(x, y, batch_size=8, epochs=2, verbose=0)
        return history.history["loss"], model.get_weights()
    (losses, weights), (again, weights_again) = trained(), trained()
    assert losses == again and np.all(np.isfinite(losses))
    for mine, theirs in zip(weights, weights_again, strict=True):
        assert_same(mine, theirs)
    assert trained(0.0)[0] != losses  # the compiled step did drop units
