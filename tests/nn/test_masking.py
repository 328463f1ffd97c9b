"""Masks as Keras carries them: Embedding(mask_zero=True) and Masking make them, layers
that support masking pass them on, Sequential and functional models (and symbolic
tensors) carry them, and the recurrent layers, attention and GlobalAveragePooling1D
skip the padding. Values are checked against a NumPy loop over time written from Keras'
rule (a masked step keeps the states and repeats the last output), against the same
layer on the unpadded sequence, eagerly and compiled."""
import numpy as np
import pytest

import jitflow
from fidelity import assert_same
from jitflow import nn

RTOL, ATOL = 2e-5, 2e-6


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def numpy_cell(layer):
    """One step of `layer` in NumPy (float64): (states, x_t) -> new states."""
    k, rk, b = (w.numpy().astype(np.float64) for w in layer.weights)
    u = layer.units

    def simple_rnn(states, x):
        return [np.tanh(x @ k + states[0] @ rk + b)]

    def lstm(states, x):
        h, c = states
        z = x @ k + h @ rk + b
        c = sigmoid(z[:, u:2 * u]) * c + sigmoid(z[:, :u]) * np.tanh(z[:, 2 * u:3 * u])
        return [sigmoid(z[:, 3 * u:]) * np.tanh(c), c]

    def gru(states, x):
        h = states[0]
        xz, rec = x @ k + b[0], h @ rk + b[1]
        z = sigmoid(xz[:, :u] + rec[:, :u])
        r = sigmoid(xz[:, u:2 * u] + rec[:, u:2 * u])
        return [z * h + (1 - z) * np.tanh(xz[:, 2 * u:] + r * rec[:, 2 * u:])]
    return {nn.SimpleRNN: simple_rnn, nn.LSTM: lstm, nn.GRU: gru}[type(layer)]


def masked_reference(layer, x, mask, zero_output=False):
    """(outputs (batch, time, units), final states): Keras' masked loop."""
    cell = numpy_cell(layer)
    batch = x.shape[0]
    states = [np.zeros((batch, layer.units)) for _ in range(layer.state_count)]
    outputs = []
    for t in range(x.shape[1]):
        new = cell(states, x[:, t].astype(np.float64))
        kept = mask[:, t, None]
        previous = np.zeros_like(new[0]) if zero_output else states[0]
        outputs.append(np.where(kept, new[0], previous))
        states = [np.where(kept, n, s) for n, s in zip(new, states)]
    return np.stack(outputs, 1), states


KINDS = [nn.SimpleRNN, nn.LSTM, nn.GRU]
RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 6, 4)).astype(np.float32)
MASK = np.array([[1, 1, 1, 1, 0, 0], [1, 0, 1, 1, 1, 1], [0, 0, 1, 1, 1, 0]], bool)


def with_random_bias(layer):
    layer(X)
    layer.bias.assign(RNG.standard_normal(layer.bias.shape).astype(np.float32))
    return layer


@pytest.mark.parametrize("kind", KINDS)
def test_a_masked_recurrent_layer_keeps_its_state_and_output_on_masked_steps(kind):
    layer = with_random_bias(kind(5, return_sequences=True, return_state=True))
    expected, expected_states = masked_reference(layer, X, MASK)
    compiled = jitflow.function(lambda x, m: layer(x, mask=m))
    for outputs in (layer(X, mask=MASK), compiled(X, MASK)):
        sequence, *states = outputs
        assert_same(np.asarray(sequence), expected.astype(np.float32), rtol=RTOL, atol=ATOL)
        for state, want in zip(states, expected_states, strict=True):
            assert_same(np.asarray(state), want.astype(np.float32), rtol=RTOL, atol=ATOL)
    zeros = with_random_bias(kind(5, return_sequences=True, zero_output_for_mask=True))
    want, _ = masked_reference(zeros, X, MASK, zero_output=True)
    assert_same(np.asarray(zeros(X, mask=MASK)), want.astype(np.float32), rtol=RTOL,
                atol=ATOL)


@pytest.mark.parametrize("kind", KINDS)
def test_a_padded_batch_ends_in_the_states_of_the_unpadded_sequences(kind):
    lengths = [5, 2, 3]
    tokens = np.zeros((3, 6), np.int64)
    for row, length in enumerate(lengths):
        tokens[row, :length] = RNG.integers(1, 9, length)
    embedding = nn.Embedding(9, 4, mask_zero=True)
    recurrent = kind(5, return_state=True)
    model = nn.Sequential([nn.Input((6,), dtype="int64"), embedding, recurrent])
    model.compile("sgd", "mse")
    eager = model(tokens)
    predicted = model.predict(tokens, verbose=0)
    for row, length in enumerate(lengths):
        alone = recurrent(embedding(tokens[row:row + 1, :length]))
        for got, compiled, want in zip(eager, predicted, alone, strict=True):
            assert_same(np.asarray(got)[row], np.asarray(want)[0], rtol=RTOL, atol=ATOL)
            assert_same(np.asarray(compiled)[row], np.asarray(want)[0], rtol=RTOL,
                        atol=ATOL)


def test_embedding_and_masking_make_masks_that_symbolic_tensors_carry():
    tokens = np.array([[3, 1, 0, 0], [2, 0, 5, 0]])
    embedding = nn.Embedding(6, 2, mask_zero=True)
    assert_same(np.asarray(embedding.compute_mask(tokens)), tokens != 0)
    assert nn.Embedding(6, 2).compute_mask(tokens) is None
    x = RNG.standard_normal((2, 4, 3))
    x[0, 1] = -1.0
    x[1, 3] = -1.0
    masking = nn.Masking(mask_value=-1.0)
    kept = np.array([[True, False, True, True], [True, True, True, False]])
    assert_same(np.asarray(masking.compute_mask(x)), kept)
    assert_same(np.asarray(masking(x)), x * kept[..., None])
    inputs = nn.Input((4,), dtype="int64")
    hidden = nn.Dense(3)(embedding(inputs))
    assert hidden._keras_mask.shape == (None, 4) and hidden._keras_mask.dtype == bool
    assert nn.LSTM(2)(hidden)._keras_mask is None
    assert nn.LSTM(2, return_sequences=True)(hidden)._keras_mask.shape == (None, 4)
    assert inputs._keras_mask is None


def test_a_functional_model_carries_the_mask_through_dense_and_dropout_to_pooling():
    tokens = np.array([[4, 2, 7, 0, 0], [1, 0, 3, 3, 0]])
    inputs = nn.Input((5,), dtype="int64")
    embedded = nn.Embedding(8, 3, mask_zero=True)(inputs)
    hidden = nn.Dropout(0.5)(nn.Dense(4, activation="tanh")(embedded))
    sequence = nn.GRU(3, return_sequences=True)(hidden)
    model = nn.Model(inputs, nn.GlobalAveragePooling1D()(sequence))
    embedding, dense, gru = (model.get_layer(index=i) for i in (1, 2, 4))
    mask = tokens != 0
    hidden_values = np.tanh(embedding.embeddings.numpy()[tokens] @ dense.kernel.numpy()
                            + dense.bias.numpy())
    steps, _ = masked_reference(gru, hidden_values, mask)
    expected = (steps * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    for got in (model(tokens), jitflow.function(lambda t: model(t))(tokens)):
        assert_same(np.asarray(got), expected.astype(np.float32), rtol=RTOL, atol=ATOL)
    assert model.compute_mask(tokens) is None  # pooling ends the mask
    sequences = nn.Model(inputs, sequence)
    assert_same(np.asarray(sequences.compute_mask(tokens)), mask)


def test_global_average_pooling_1d_averages_the_kept_steps_only():
    x = RNG.standard_normal((2, 5, 3)).astype(np.float32)
    mask = np.array([[1, 1, 0, 1, 0], [0, 1, 1, 1, 1]], bool)
    pool = nn.GlobalAveragePooling1D()
    want = ((x * mask[..., None]).sum(1) / mask.sum(1)[:, None]).astype(np.float32)
    assert_same(np.asarray(pool(x, mask=mask)), want, rtol=1e-6, atol=1e-7)
    assert_same(np.asarray(pool(x)), x.mean(1), rtol=1e-6, atol=1e-7)
    assert pool.compute_mask(x, mask) is None


def test_attention_takes_the_query_and_value_masks_as_keras_joins_them():
    query = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    value = RNG.standard_normal((2, 5, 4)).astype(np.float32)
    query_mask = np.array([[1, 1, 0], [1, 1, 1]], bool)
    value_mask = np.array([[1, 0, 1, 1, 0], [1, 1, 1, 0, 0]], bool)
    mha = nn.MultiHeadAttention(2, 3)
    joined = query_mask[:, :, None] & value_mask[:, None, :]
    want = np.asarray(mha(query, value, attention_mask=joined))
    got = mha(query, value, query_mask=query_mask, value_mask=value_mask)
    assert_same(np.asarray(got), want, rtol=1e-6, atol=1e-7)
    compiled = jitflow.function(lambda q, v, qm, vm: mha(q, v, query_mask=qm, value_mask=vm))
    assert_same(np.asarray(compiled(query, value, query_mask, value_mask)), want,
                rtol=1e-5, atol=1e-6)
    causal = np.asarray(mha(query, value[:, :3], use_causal_mask=True,
                            value_mask=value_mask[:, :3]))
    lower = np.tril(np.ones((3, 3), bool))
    assert_same(causal, np.asarray(mha(query, value[:, :3], attention_mask=lower
                                       & value_mask[:, None, :3])), rtol=1e-6, atol=1e-7)
    assert_same(np.asarray(mha.compute_mask(None, {"query": query_mask})), query_mask)
    with pytest.raises(TypeError, match="query_mask=, value_mask= and key_mask="):
        mha(query, value, mask=query_mask)
    with pytest.raises(ValueError, match=r"value mask must have shape \(batch, positions\) "
                                         r"= \(2, 5\), got \(2, 4\)"):
        mha(query, value, value_mask=value_mask[:, :4])


def test_attention_in_a_model_reads_the_masks_of_its_inputs():
    tokens = np.array([[5, 2, 0, 0], [1, 3, 6, 0]])
    inputs = nn.Input((4,), dtype="int64")
    embedded = nn.Embedding(7, 4, mask_zero=True)(inputs)
    mha = nn.MultiHeadAttention(2, 2)
    attended = mha(embedded, embedded)
    assert attended._keras_mask.shape == (None, 4)
    model = nn.Model(inputs, attended)
    embedding = model.get_layer(index=1)
    x = np.asarray(embedding(tokens))
    mask = tokens != 0
    want = np.asarray(mha(x, x, attention_mask=mask[:, :, None] & mask[:, None, :]))
    assert_same(np.asarray(model(tokens)), want, rtol=1e-6, atol=1e-7)
    assert_same(np.asarray(model.predict(tokens, verbose=0)), want, rtol=1e-5, atol=1e-6)


def test_bidirectional_skips_the_padding_both_ways():
    layer = nn.Bidirectional(nn.LSTM(3, return_sequences=True, return_state=True))
    sequence, *states = layer(X, mask=MASK)
    forward, backward = layer.forward_layer, layer.backward_layer
    want_forward, forward_states = masked_reference(forward, X, MASK, zero_output=True)
    want_backward, backward_states = masked_reference(backward, X[:, ::-1], MASK[:, ::-1],
                                                      zero_output=True)
    want = np.concatenate([want_forward, want_backward[:, ::-1]], -1)
    assert_same(np.asarray(sequence), want.astype(np.float32), rtol=RTOL, atol=ATOL)
    for got, expected in zip(states, forward_states + backward_states, strict=True):
        assert_same(np.asarray(got), expected.astype(np.float32), rtol=RTOL, atol=ATOL)
    assert layer.compute_mask(X, MASK)[0] is MASK


def test_merge_layers_join_masks_and_unsupporting_layers_drop_them_with_a_warning():
    a, b = (RNG.standard_normal((2, 3, 2)) for _ in range(2))
    mask = np.array([[1, 0, 1], [1, 1, 0]], bool)
    assert_same(np.asarray(nn.Add().compute_mask([a, b], [mask, None])), mask)
    both = nn.Multiply().compute_mask([a, b], [mask, mask[:, ::-1]])
    assert_same(np.asarray(both), mask & mask[:, ::-1])
    along_time = nn.Concatenate(axis=1).compute_mask([a, b], [mask, None])
    assert_same(np.asarray(along_time), np.concatenate([mask, np.ones((2, 3), bool)], 1))
    inputs = nn.Input((3,), dtype="int64")
    with pytest.warns(UserWarning, match="conv1d.*does not support masking"):
        convolved = nn.Conv1D(2, 2)(nn.Embedding(4, 2, mask_zero=True)(inputs))
        assert convolved._keras_mask is None
        _, out_mask = nn.Model(inputs, convolved).call_with_mask(np.array([[1, 2, 0]]), None)
    assert out_mask is None
    with pytest.raises(TypeError, match="mask= is for arrays"):
        nn.Dense(2)(inputs, mask=inputs)


def test_a_model_with_masks_trains_with_fit():
    tokens = RNG.integers(1, 6, (16, 5))
    tokens[::2, 3:] = 0
    labels = (tokens.sum(1, keepdims=True) > 12).astype(np.float32)
    model = nn.Sequential([nn.Input((5,), dtype="int64"), nn.Embedding(6, 4, mask_zero=True),
                           nn.LSTM(4), nn.Dense(1, activation="sigmoid")])
    model.compile("adam", "binary_crossentropy")
    history = model.fit(tokens, labels, batch_size=8, epochs=2, verbose=0, shuffle=False)
    assert np.all(np.isfinite(history.history["loss"]))
    embedding, lstm, dense = model.layers
    unpadded = dense(lstm(embedding(tokens[:1, :3])))
    assert_same(model.predict(tokens[:1], verbose=0), np.asarray(unpadded), rtol=RTOL,
                atol=ATOL)


def test_a_saved_model_carries_its_masks_after_loading(tmp_path):
    tokens = np.array([[3, 1, 4, 0, 0], [2, 2, 0, 0, 0]])
    inputs = nn.Input((5,), dtype="int64")
    embedded = nn.Embedding(5, 3, mask_zero=True)(inputs)
    sequence = nn.GRU(2, return_sequences=True, dropout=0.2, recurrent_dropout=0.1,
                      seed=4)(embedded)
    model = nn.Model(inputs, nn.GlobalAveragePooling1D()(sequence))
    model.save(tmp_path / "masked.jitflow")
    loaded = nn.load_model(tmp_path / "masked.jitflow")
    assert_same(np.asarray(loaded(tokens)), np.asarray(model(tokens)))
    gru = loaded.get_layer(model.layers[2].name)
    assert (gru.dropout, gru.recurrent_dropout, gru.seed) == (0.2, 0.1, 4)
    assert loaded.layers[1].mask_zero


def test_a_mask_of_the_wrong_shape_is_refused_with_both_shapes():
    with pytest.raises(ValueError, match=r"lstm.*mask of a sequence of shape \(3, 6, 4\) "
                                         r"must have shape \(batch, time\) = \(3, 6\), got "
                                         r"\(3, 4\)"):
        nn.LSTM(2)(X, mask=MASK[:, :4])
