"""Layers and Sequential: weights built from the first input, outputs against NumPy,
and compiled training steps against eager ones."""
import numpy as np
import pytest

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same
from jitflow import nn
from jitflow.nn.convolution import conv2d
from jitflow.nn.layers import AvgPool2D, Conv2D, Dense, Flatten, MaxPool2D
from jitflow.nn.sequential import Sequential

THIS_FILE = "test_layers.py"


def test_dense_builds_its_weights_from_the_first_input():
    layer = Dense(4, activation="relu", rng=np.random.default_rng(0))
    x = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32)
    y = layer(x)
    assert layer.kernel.shape == (5, 4) and layer.kernel.dtype == np.float32
    assert_same(layer.bias.value, np.zeros(4, np.float32))
    assert_same(y, np.maximum(x @ layer.kernel.numpy(), 0), rtol=1e-6)
    assert [w.name for w in layer.trainable_variables] == \
        [f"{layer.name}/kernel", f"{layer.name}/bias"]


def test_a_layer_refuses_inputs_of_another_shape():
    layer = Dense(2)
    layer(np.ones((4, 3)))
    layer(np.ones((7, 3)))  # another batch size is fine
    with pytest.raises(ValueError, match=r"built for inputs of shape \(batch, 3\), called "
                                         r"on \(4, 5\)") as error:
        layer(np.ones((4, 5)))
    assert THIS_FILE in str(error.value)


def test_conv2d_pool_and_flatten_layers_compose():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 8, 8, 1))
    conv = Conv2D(3, 3, padding="same", activation="tanh", rng=rng)
    model = Sequential([conv, MaxPool2D(2), AvgPool2D(2, strides=1), Flatten()])
    y = model(x)
    features = np.tanh(conv2d(x, conv.kernel.numpy(), 1, "same"))
    pooled = features.reshape(2, 4, 2, 4, 2, 3).max(axis=(2, 4))
    averaged = (pooled[:, :-1, :-1] + pooled[:, 1:, :-1] + pooled[:, :-1, 1:] +
                pooled[:, 1:, 1:]) / 4
    assert_same(y, averaged.reshape(2, -1), rtol=1e-12)
    assert len(model.trainable_variables) == 2


def test_predict_in_batches_matches_one_call():
    model = Sequential([Dense(5, activation="tanh"), Dense(2)])
    x = np.random.default_rng(3).standard_normal((10, 4)).astype(np.float32)
    assert_same(model.predict(x, batch_size=3), np.asarray(model(x)), rtol=1e-5, atol=1e-6)


def make_classifier(seed):
    rng = np.random.default_rng(seed)
    return Sequential([Conv2D(4, 3, activation="relu", rng=rng), MaxPool2D(2), Flatten(),
                       Dense(8, activation="tanh", rng=rng), Dense(3, rng=rng)])


def training_step(model, learning_rate=0.1):
    def step(x, labels):
        with jitflow.GradientTape() as tape:
            logits = model(x, training=True)
            log_probabilities = jnp.log_softmax(logits, axis=-1)
            picked = jnp.where(jnp.arange(3) == labels[:, None], log_probabilities, 0.0)
            loss = -picked.sum() / len(labels)
        grads = tape.gradient(loss, model.trainable_variables)
        for variable, grad in zip(model.trainable_variables, grads):
            variable.assign_sub(learning_rate * grad)
        return loss
    return step


def test_a_compiled_training_step_matches_the_eager_step(backend):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 6, 6, 1)).astype(np.float32)
    labels = rng.integers(0, 3, 6)
    eager_model, compiled_model = make_classifier(5), make_classifier(5)
    eager = training_step(eager_model)
    compiled = jitflow.function(training_step(compiled_model))
    losses = []
    for _ in range(8):
        losses.append(float(compiled(x, labels)))
        assert losses[-1] == pytest.approx(float(eager(x, labels)), rel=1e-5)
        for a, b in zip(compiled_model.weights, eager_model.weights):
            assert_same(a.value, b.value, rtol=1e-4, atol=1e-5)
    assert losses[-1] < losses[0]
    assert compiled.cache_info().traces == 1


def test_the_package_exports_the_layers():
    assert nn.Dense is Dense and nn.Conv2D is Conv2D and nn.Sequential is Sequential


def test_dropout_masks_while_training_only_and_repeats_compiled(backend):
    from jitflow.nn.regularization import Dropout
    x = np.ones((200, 50), np.float32)
    eager, compiled_layer = Dropout(0.25, seed=3), Dropout(0.25, seed=3)
    assert eager(x, training=False) is x
    compiled = jitflow.function(lambda x: compiled_layer(x, training=True))
    for _ in range(2):
        y = compiled(x)
        assert_same(y, eager(x, training=True))
        assert set(np.unique(y)) == {0.0, np.float32(1 / 0.75)}
        assert abs((y == 0).mean() - 0.25) < 0.02
    with pytest.raises(ValueError, match=r"rate must be in \[0, 1\), got 1.0"):
        Dropout(1.0)


def test_layer_norm_normalizes_each_example():
    from jitflow.nn.normalization import LayerNorm
    x = np.random.default_rng(6).standard_normal((4, 7)) * 5 + 3
    y = LayerNorm(epsilon=0.0)(x)
    assert_same(y, (x - x.mean(-1, keepdims=True)) / x.std(-1, keepdims=True), rtol=1e-12,
                atol=1e-14)


def test_batch_norm_trains_on_batch_statistics_and_infers_on_moving_ones(backend):
    from jitflow.nn.normalization import BatchNorm
    x = np.random.default_rng(7).standard_normal((32, 3)) * 2 + 1
    layer = BatchNorm(momentum=0.5, epsilon=0.0)
    step = jitflow.function(lambda x: layer(x, training=True))
    for _ in range(2):
        assert_same(step(x), (x - x.mean(0)) / x.std(0), rtol=1e-12, atol=1e-14)
    assert_same(layer.moving_mean.value, x.mean(0) * 0.75, rtol=1e-14)
    assert_same(layer.moving_variance.value, 0.25 + x.var(0) * 0.75, rtol=1e-14)
    assert_same(np.asarray(layer(x)), (x - layer.moving_mean.numpy()) /
                np.sqrt(layer.moving_variance.numpy()), rtol=1e-14)
    assert [w.name.split("/")[1] for w in layer.non_trainable_variables] == \
        ["moving_mean", "moving_variance"]
