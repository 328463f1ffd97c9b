"""Embedding, Conv1D, Conv2DTranspose, UpSampling2D, global pooling, Reshape, Permute,
RepeatVector, Activation, Lambda and the merge layers: symbolic shapes, values against
NumPy written from each layer's definition, and compiled == eager."""
import numpy as np
import pytest

import jitflow
from fidelity import assert_same
from jitflow import nn

RNG = np.random.default_rng(0)


def images(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def conv_transpose_reference(x, kernel, stride, padding):
    """Each input pixel scatters kernel * x into the output at its position * stride;
    'same' keeps H * stride rows starting where the forward 'same' convolution pads."""
    n, h, w, _ = x.shape
    kh, kw, filters, _ = kernel.shape
    full = np.zeros((n, (h - 1) * stride + max(kh, stride), (w - 1) * stride + max(kw, stride),
                     filters))
    for i in range(h):
        for j in range(w):
            full[:, i * stride:i * stride + kh, j * stride:j * stride + kw] += np.einsum(
                "nc,abfc->nabf", x[:, i, j], kernel)
    if padding == "valid":
        return full
    top, left = max(kh - stride, 0) // 2, max(kw - stride, 0) // 2
    return full[:, top:top + h * stride, left:left + w * stride]


@pytest.mark.parametrize("kernel, stride, padding",
                         [(3, 1, "valid"), (3, 2, "valid"), (3, 2, "same"), (2, 3, "valid"),
                          (4, 2, "same"), (2, 3, "same"), (1, 2, "same")])
def test_conv2d_transpose_scatters_the_kernel(kernel, stride, padding):
    x = images(2, 3, 4, 2).astype(np.float64)
    layer = nn.Conv2DTranspose(3, kernel, strides=stride, padding=padding)
    y = layer(x)
    layer.bias.assign(RNG.standard_normal(3))
    y = layer(x)
    want = conv_transpose_reference(x, layer.kernel.numpy(), stride, padding) + \
        layer.bias.numpy()
    assert_same(np.asarray(y), want, rtol=1e-12, atol=1e-12)
    assert layer(nn.Input((3, 4, 2))).shape == (None, *want.shape[1:])


@pytest.mark.parametrize("padding", ["valid", "same", "causal"])
def test_conv1d_slides_over_steps(padding):
    x = images(2, 7, 3).astype(np.float64)
    layer = nn.Conv1D(4, 3, strides=1, padding=padding, activation="relu")
    y = np.asarray(layer(x))
    kernel = layer.kernel.numpy()
    before = {"valid": 0, "same": 1, "causal": 2}[padding]
    after = {"valid": 0, "same": 1, "causal": 0}[padding]
    padded = np.pad(x, ((0, 0), (before, after), (0, 0)))
    want = np.stack([np.einsum("nkc,kcf->nf", padded[:, t:t + 3], kernel)
                     for t in range(padded.shape[1] - 2)], 1)
    assert_same(y, np.maximum(want, 0), rtol=1e-12, atol=1e-12)
    strided = nn.Conv1D(2, 3, strides=2)(nn.Input((7, 3)))
    assert strided.shape == (None, 3, 2)


def test_upsampling_and_global_pooling():
    x = images(2, 3, 4, 5)
    assert_same(np.asarray(nn.UpSampling2D((2, 3))(x)), x.repeat(2, 1).repeat(3, 2))
    assert_same(np.asarray(nn.GlobalAveragePooling2D()(x)), x.mean((1, 2)), rtol=1e-6)
    assert_same(np.asarray(nn.GlobalMaxPooling2D(keepdims=True)(x)),
                x.max((1, 2), keepdims=True))
    sequence = images(2, 6, 3)
    assert_same(np.asarray(nn.GlobalAveragePooling1D()(sequence)), sequence.mean(1),
                rtol=1e-6)
    image_input = nn.Input((8, 6, 3))
    assert nn.UpSampling2D()(image_input).shape == (None, 16, 12, 3)
    assert nn.GlobalAveragePooling2D()(image_input).shape == (None, 3)
    assert nn.GlobalAveragePooling1D()(nn.Input((6, 3))).shape == (None, 3)
    with pytest.raises(ValueError, match=r"takes NHWC images, 4-D, got shape \(2, 6, 3\)"):
        nn.GlobalMaxPooling2D()(sequence)


def test_reshape_permute_repeat():
    x = images(2, 3, 4)
    assert_same(np.asarray(nn.Reshape((4, -1))(x)), x.reshape(2, 4, 3))
    assert_same(np.asarray(nn.Permute((2, 1))(x)), x.transpose(0, 2, 1))
    flat = images(2, 5)
    assert_same(np.asarray(nn.RepeatVector(3)(flat)), np.repeat(flat[:, None], 3, 1))
    inputs = nn.Input((3, 4))
    assert nn.Reshape((2, 6))(inputs).shape == (None, 2, 6)
    assert nn.Permute((2, 1))(inputs).shape == (None, 4, 3)
    assert nn.RepeatVector(7)(nn.Input((5,))).shape == (None, 7, 5)
    with pytest.raises(ValueError, match="cannot reshape examples of shape"):
        nn.Reshape((5, -1))(x)
    with pytest.raises(ValueError, match="must be a permutation"):
        nn.Permute((0, 1))


def test_activation_and_lambda():
    x = images(3, 4)
    assert_same(np.asarray(nn.Activation("relu")(x)), np.maximum(x, 0))
    double = nn.Lambda(lambda v, scale: v * scale, arguments={"scale": 2.0})
    assert_same(np.asarray(double(x)), x * 2)
    assert double(nn.Input((4,))).shape == (None, 4)
    halves = nn.Lambda(lambda v: v[:, :2])(nn.Input((4,)))
    assert halves.shape == (None, 2)


def test_merge_layers():
    a, b, c = images(2, 3), images(2, 3), images(2, 3)
    assert_same(np.asarray(nn.Add()([a, b, c])), a + b + c)
    assert_same(np.asarray(nn.Multiply()([a, b])), a * b)
    assert_same(np.asarray(nn.Average()([a, b])), (a + b) / 2)
    assert_same(np.asarray(nn.Subtract()([a, b])), a - b)
    assert_same(np.asarray(nn.Maximum()([a, b])), np.maximum(a, b))
    assert_same(np.asarray(nn.Concatenate()([a, images(2, 2)]))[:, :3], a)
    left, right = nn.Input((3,)), nn.Input((5,))
    joined = nn.Concatenate()([left, right])
    assert joined.shape == (None, 8)
    model = nn.Model([left, right], nn.Dense(1)(joined))
    y = model.predict([a, images(2, 5)], verbose=0)
    assert y.shape == (2, 1)
    with pytest.raises(ValueError, match="at least 2 inputs, got a single ndarray"):
        nn.Add()(a)
    with pytest.raises(ValueError, match="cannot be joined along axis 1"):
        nn.Concatenate(axis=1)([images(2, 3, 4), images(2, 3, 5)])


def test_embedding_picks_rows_and_trains_in_a_compiled_step():
    tokens = np.array([[1, 0, 3], [2, 2, 1]])
    layer = nn.Embedding(4, 5)
    y = layer(tokens)
    table = layer.embeddings.numpy()
    assert_same(np.asarray(y), table[tokens])
    assert float(np.abs(table).max()) <= 0.05
    assert layer(nn.Input((3,), dtype="int32")).shape == (None, 3, 5)
    assert layer(tokens[:, :2]).shape == (2, 2, 5)  # any sequence length
    inputs = nn.Input((3,), dtype="int32")
    model = nn.Model(inputs, nn.GlobalAveragePooling1D()(nn.Embedding(4, 2)(inputs)))
    model.compile("sgd", "mse")
    before = model.layers[1].embeddings.numpy()
    model.fit(np.array([[1, 0, 1], [2, 2, 1]]), np.ones((2, 2), np.float32), epochs=1,
              verbose=0)
    changed = np.abs(model.layers[1].embeddings.numpy() - before).sum(1) > 0
    assert changed.tolist() == [True, True, True, False]  # row 3 was not used
    with pytest.raises(TypeError, match="takes integer token indices"):
        layer(np.zeros((2, 3), np.float32))


def test_the_new_layers_compile_in_a_model_as_they_run_eagerly():
    inputs = nn.Input((6, 3))
    x = nn.Conv1D(4, 3, padding="same", activation="relu")(inputs)
    x = nn.Reshape((6, 2, 2))(x)
    x = nn.Conv2DTranspose(2, 2, strides=2)(x)
    x = nn.UpSampling2D()(x)
    x = nn.GlobalMaxPooling2D()(x)
    model = nn.Model(inputs, nn.Activation("tanh")(x))
    data = images(5, 6, 3)
    assert_same(model.predict(data, batch_size=2, verbose=0), np.asarray(model(data)),
                rtol=1e-5, atol=1e-6)
    assert model.output_shape == (None, 2)
    compiled = jitflow.function(lambda v: model(v))(data)
    assert_same(np.asarray(compiled), np.asarray(model(data)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("layer, shapes, expected", [
    (nn.Multiply(), [(4, 3), (4, 3)], (None, 4, 3)),
    (nn.Average(), [(3,), (3,), (3,)], (None, 3)),
    (nn.Subtract(), [(2, 5), (2, 5)], (None, 2, 5)),
    (nn.Maximum(), [(6,), (6,)], (None, 6)),
    (nn.Minimum(), [(6,), (6,)], (None, 6)),
    (nn.Concatenate(axis=1), [(2, 5), (3, 5)], (None, 5, 5)),
    (nn.Activation("softmax"), (7,), (None, 7)),
    (nn.GlobalMaxPooling1D(keepdims=True), (6, 3), (None, 1, 3)),
])
def test_symbolic_shapes_of_merges_and_activation(layer, shapes, expected):
    inputs = [nn.Input(s) for s in shapes] if isinstance(shapes, list) else nn.Input(shapes)
    assert layer(inputs).shape == expected
