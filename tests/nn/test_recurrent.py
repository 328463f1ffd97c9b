"""SimpleRNN, LSTM, GRU and Bidirectional: symbolic shapes, values against a NumPy loop
over time written from Keras' equations, compiled == eager, gradients against finite
differences, and one scan (not a loop unrolled per step) in the compiled graph."""
import numpy as np
import pytest

import jitflow
from fidelity import assert_same
from jitflow import nn
from jitflow.testing import check_grads


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def simple_rnn_reference(layer, x, h):
    k, rk, b = (w.numpy().astype(np.float64) for w in layer.weights)
    outputs = []
    for t in range(x.shape[1]):
        h = np.tanh(x[:, t] @ k + h @ rk + b)
        outputs.append(h)
    return np.stack(outputs, 1), [h]


def lstm_reference(layer, x, h, c=None):
    k, rk, b = (w.numpy().astype(np.float64) for w in layer.weights)
    u = layer.units
    c = np.zeros_like(h) if c is None else c
    outputs = []
    for t in range(x.shape[1]):
        z = x[:, t] @ k + h @ rk + b
        i, f, g, o = z[:, :u], z[:, u:2 * u], z[:, 2 * u:3 * u], z[:, 3 * u:]
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        outputs.append(h)
    return np.stack(outputs, 1), [h, c]


def gru_reference(layer, x, h):
    k, rk, b = (w.numpy().astype(np.float64) for w in layer.weights)
    u = layer.units
    outputs = []
    for t in range(x.shape[1]):
        xz = x[:, t] @ k + b[0]
        rec = h @ rk + b[1]
        z = sigmoid(xz[:, :u] + rec[:, :u])
        r = sigmoid(xz[:, u:2 * u] + rec[:, u:2 * u])
        candidate = np.tanh(xz[:, 2 * u:] + r * rec[:, 2 * u:])
        h = z * h + (1 - z) * candidate
        outputs.append(h)
    return np.stack(outputs, 1), [h]


def gru_reset_before_reference(layer, x, h):
    k, rk, b = (w.numpy().astype(np.float64) for w in layer.weights)
    u = layer.units
    outputs = []
    for t in range(x.shape[1]):
        xz = x[:, t] @ k + b
        z = sigmoid(xz[:, :u] + h @ rk[:, :u])
        r = sigmoid(xz[:, u:2 * u] + h @ rk[:, u:2 * u])
        h = z * h + (1 - z) * np.tanh(xz[:, 2 * u:] + (r * h) @ rk[:, 2 * u:])
        outputs.append(h)
    return np.stack(outputs, 1), [h]


CASES = [(nn.SimpleRNN, {}, simple_rnn_reference), (nn.LSTM, {}, lstm_reference),
         (nn.GRU, {}, gru_reference),
         (nn.GRU, {"reset_after": False}, gru_reset_before_reference)]


def random_bias(layer, rng):
    layer.bias.assign(rng.standard_normal(layer.bias.shape).astype(np.float32))


@pytest.mark.parametrize("kind, options, reference", CASES)
def test_recurrent_layers_match_numpy_step_by_step(kind, options, reference):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5, 4)).astype(np.float32)
    layer = kind(6, return_sequences=True, return_state=True, **options)
    layer(x)
    random_bias(layer, rng)
    sequence, *states = layer(x)
    expected, expected_states = reference(layer, x.astype(np.float64), np.zeros((3, 6)))
    assert_same(np.asarray(sequence), expected.astype(np.float32), rtol=2e-5, atol=2e-6)
    assert len(states) == len(expected_states)
    for state, want in zip(states, expected_states):
        assert_same(np.asarray(state), want.astype(np.float32), rtol=2e-5, atol=2e-6)
    compiled = jitflow.function(lambda x: layer(x))(x)
    for got, want in zip(compiled, [sequence, *states]):
        assert_same(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


def test_lstm_starts_from_a_given_state_and_its_forget_bias_starts_at_one():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 3))
    h0, c0 = rng.standard_normal((2, 5)), rng.standard_normal((2, 5))
    layer = nn.LSTM(5, return_state=True)
    output, h, c = layer(x, initial_state=[h0, c0])
    assert_same(layer.bias.numpy(), np.repeat([0.0, 1.0, 0.0, 0.0], 5))
    _, (want_h, want_c) = lstm_reference(layer, x, h0, c0)
    assert_same(np.asarray(output), want_h, rtol=1e-12, atol=1e-12)
    assert_same(np.asarray(c), want_c, rtol=1e-12, atol=1e-12)


def test_go_backwards_reads_the_sequence_from_its_end():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 5, 3))
    backwards = nn.SimpleRNN(4, go_backwards=True, return_sequences=True)
    backwards(x)
    forwards = nn.SimpleRNN(4, return_sequences=True)
    forwards(x)
    for mine, theirs in zip(forwards.weights, backwards.weights):
        mine.assign(theirs.numpy())
    assert_same(np.asarray(backwards(x)), np.asarray(forwards(x[:, ::-1])))


@pytest.mark.parametrize("kind", [nn.SimpleRNN, nn.LSTM, nn.GRU])
def test_symbolic_shapes_of_recurrent_layers(kind):
    inputs = nn.Input((7, 3))
    assert kind(5)(inputs).shape == (None, 5)
    assert kind(5, return_sequences=True)(inputs).shape == (None, 7, 5)
    states = kind(5, return_state=True)(inputs)
    assert [s.shape for s in states] == [(None, 5)] * (3 if kind is nn.LSTM else 2)


def test_bidirectional_concatenates_forward_and_time_aligned_backward_outputs():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 6, 3)).astype(np.float32)
    layer = nn.Bidirectional(nn.GRU(4, return_sequences=True))
    y = layer(x)
    assert y.shape == (2, 6, 8)
    forward, backward = layer.forward_layer, layer.backward_layer
    assert backward.go_backwards and not forward.go_backwards
    assert_same(np.asarray(y[..., :4]), np.asarray(forward(x)))
    assert_same(np.asarray(y[..., 4:]), np.asarray(backward(x))[:, ::-1])
    assert len(layer.trainable_variables) == 6
    assert nn.Bidirectional(nn.LSTM(4), merge_mode="sum")(nn.Input((6, 3))).shape == (None, 4)
    states = nn.Bidirectional(nn.LSTM(4, return_state=True))(nn.Input((6, 3)))
    assert [s.shape for s in states] == [(None, 8)] + [(None, 4)] * 4


@pytest.mark.parametrize("kind", [nn.SimpleRNN, nn.LSTM, nn.GRU])
def test_recurrent_gradients_match_finite_differences(kind):
    rng = np.random.default_rng(4)
    layer = kind(3, return_sequences=True)
    x = rng.standard_normal((2, 4, 2))
    layer(x)
    weights = [w.numpy() for w in layer.weights]

    def output_of(x, kernel, recurrent, bias):
        return (_with_weights(layer, kernel, recurrent, bias)(x) ** 2).sum()
    check_grads(output_of, (x, *weights), order=1, rtol=1e-4, atol=1e-6)


def _with_weights(layer, kernel, recurrent, bias):
    """layer's computation with the given arrays in place of its Variables."""
    clone = type(layer).from_config(dict(layer.get_config(), name=layer.name + "_clone"))
    clone.kernel, clone.recurrent_kernel, clone.bias = kernel, recurrent, bias
    clone.built = True
    clone.input_shape = layer.input_shape
    return clone


def test_the_compiled_graph_has_one_scan_whatever_the_length():
    layer = nn.LSTM(3)
    step = jitflow.function(lambda x: layer(x))
    for steps in (4, 40):
        graph = step.trace(np.zeros((2, steps, 2), np.float32))
        assert [node.prim.name for node in graph.nodes].count("scan") == 1


def test_a_recurrent_layer_refuses_a_sequence_of_the_wrong_rank():
    with pytest.raises(ValueError, match=r"\(batch, time, features\), got shape \(2, 3\)"):
        nn.GRU(2)(np.zeros((2, 3)))


def test_time_distributed_applies_a_layer_to_every_step():
    rng = np.random.default_rng(5)
    frames = rng.standard_normal((2, 3, 6, 6, 1)).astype(np.float32)
    conv = nn.Conv2D(4, 3)
    layer = nn.TimeDistributed(conv)
    y = np.asarray(layer(frames))
    assert y.shape == (2, 3, 4, 4, 4)
    for t in range(3):
        assert_same(y[:, t], np.asarray(conv(frames[:, t])), rtol=1e-6, atol=1e-6)
    assert layer.weights == conv.weights
    inputs = nn.Input((5, 6, 6, 1))
    assert nn.TimeDistributed(nn.Flatten())(inputs).shape == (None, 5, 36)
    with pytest.raises(ValueError, match=r"takes \(batch, time, ...\)"):
        nn.TimeDistributed(nn.Dense(2))(np.ones((2, 3)))
