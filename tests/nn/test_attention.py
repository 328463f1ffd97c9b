"""MultiHeadAttention against a NumPy reference written from its definition: heads,
masks, the causal option, attention scores, symbolic shapes and gradients."""
import numpy as np
import pytest

import jitflow
from fidelity import assert_same
from jitflow import nn
from jitflow.testing import check_grads


def softmax(z):
    z = z - z.max(-1, keepdims=True)
    return np.exp(z) / np.exp(z).sum(-1, keepdims=True)


def reference(layer, query, value, key=None, mask=None):
    """Per head, per example, with explicit loops over heads: softmax(q k^T / sqrt(d))
    v, heads mapped back by the output kernel."""
    key = value if key is None else key
    (wq, bq, wk, bk, wv, bv, wo, bo) = (w.numpy().astype(np.float64) for w in layer.weights)
    out = np.zeros(query.shape[:2] + (wo.shape[-1],))
    all_weights = []
    for h in range(layer.num_heads):
        q = query @ wq[:, h] + bq[h]
        k = key @ wk[:, h] + bk[h]
        v = value @ wv[:, h] + bv[h]
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(layer.key_dim)
        if mask is not None:
            scores = np.where(mask, scores, -1e9)
        weights = softmax(scores)
        all_weights.append(weights)
        out += (weights @ v) @ wo[h]
    return out + bo, np.stack(all_weights, 1)


def randomized(layer, rng):
    for weight in layer.weights:
        weight.assign((rng.standard_normal(weight.shape) * 0.5).astype(weight.dtype))
    return layer


def test_attention_matches_numpy_with_a_separate_key_and_scores():
    rng = np.random.default_rng(0)
    query, value, key = (rng.standard_normal((2, n, 5)) for n in (3, 4, 4))
    layer = nn.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=2)
    layer(query, value, key)
    randomized(layer, rng)
    output, scores = layer(query, value, key, return_attention_scores=True)
    want, want_scores = reference(layer, query, value, key)
    assert_same(np.asarray(output), want, rtol=1e-10, atol=1e-12)
    assert_same(np.asarray(scores), want_scores, rtol=1e-10, atol=1e-12)
    assert [w.name.split("/", 1)[1] for w in layer.weights] == [
        "query/kernel", "query/bias", "key/kernel", "key/bias", "value/kernel",
        "value/bias", "attention_output/kernel", "attention_output/bias"]
    assert layer.weights[0].shape == (5, 2, 3) and layer.weights[6].shape == (2, 2, 5)


def test_causal_and_explicit_masks_combine():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 6)).astype(np.float32)
    mask = rng.random((2, 4, 4)) > 0.3
    layer = nn.MultiHeadAttention(2, 4)
    layer(x, x)
    randomized(layer, rng)
    causal = np.tril(np.ones((4, 4), bool))
    got = layer(x, x, attention_mask=mask, use_causal_mask=True)
    want, _ = reference(layer, x.astype(np.float64), x.astype(np.float64),
                        mask=mask & causal)
    assert_same(np.asarray(got), want.astype(np.float32), rtol=1e-4, atol=1e-5)
    compiled = jitflow.function(
        lambda x, m: layer(x, x, attention_mask=m, use_causal_mask=True))(x, mask)
    assert_same(np.asarray(compiled), np.asarray(got), rtol=1e-5, atol=1e-6)


def test_a_causal_output_does_not_depend_on_later_positions():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 5, 4))
    layer = nn.MultiHeadAttention(2, 2)
    before = np.asarray(layer(x, x, use_causal_mask=True))
    x[:, 3:] += 10.0
    after = np.asarray(layer(x, x, use_causal_mask=True))
    assert_same(after[:, :3], before[:, :3])
    assert not np.allclose(after[:, 3:], before[:, 3:])


def test_symbolic_attention_records_its_options_in_the_model():
    tokens = nn.Input((6, 8))
    layer = nn.MultiHeadAttention(num_heads=2, key_dim=4)
    y = layer(tokens, tokens, use_causal_mask=True)
    assert y.shape == (None, 6, 8)
    model = nn.Model(tokens, y)
    x = np.random.default_rng(3).standard_normal((3, 6, 8)).astype(np.float32)
    assert_same(model.predict(x, verbose=0),
                np.asarray(layer(x, x, use_causal_mask=True)), rtol=1e-5, atol=1e-6)
    other = nn.MultiHeadAttention(1, 4, output_shape=3)(tokens, nn.Input((2, 5)))
    assert other.shape == (None, 6, 3)


def test_attention_gradients_match_finite_differences():
    rng = np.random.default_rng(4)
    layer = nn.MultiHeadAttention(2, 2)
    query, value = rng.standard_normal((1, 3, 3)), rng.standard_normal((1, 2, 3))
    mask = np.array([[[1, 0], [1, 1], [0, 1]]], bool)
    check_grads(lambda q, v: (layer(q, v, attention_mask=mask) ** 2).sum(),
                (query, value), order=1, rtol=1e-4, atol=1e-6)


def test_attention_explains_bad_calls():
    layer = nn.MultiHeadAttention(2, 2)
    with pytest.raises(TypeError, match="value is missing"):
        layer(np.ones((1, 2, 3)))
    with pytest.raises(ValueError, match=r"attention_mask must have shape"):
        layer(np.ones((1, 2, 3)), np.ones((1, 2, 3)), attention_mask=np.ones((1, 3, 3)))
