"""Layers, models, Variables, Generators and compiled functions pickle and deep-copy:
the copy computes what the original does, activations and initializers travel by name,
and compiled code is rebuilt, never pickled."""
import copy
import inspect
import pickle

import numpy as np
import pytest

import jitflow
import jitflow.numpy as jnp
from jitflow import nn
from jitflow.nn import activations, initializers

IMAGES = np.random.default_rng(0).standard_normal((2, 6, 6, 3)).astype(np.float32)
ROWS = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32)

# Every layer class of jitflow.nn, made with options that are not the defaults.
LAYERS = {
    nn.Dense: (lambda: nn.Dense(4, activation="tanh", kernel_initializer="he_normal",
                                bias_initializer=initializers.constant(0.5)), ROWS),
    nn.Conv2D: (lambda: nn.Conv2D(2, 3, activation="softmax", padding="same"), IMAGES),
    nn.MaxPool2D: (lambda: nn.MaxPool2D(3, strides=1), IMAGES),
    nn.AvgPool2D: (lambda: nn.AvgPool2D(2), IMAGES),
    nn.Flatten: (lambda: nn.Flatten(), IMAGES),
    nn.Dropout: (lambda: nn.Dropout(0.5, seed=7), ROWS),
    nn.LayerNorm: (lambda: nn.LayerNorm(epsilon=1e-2), ROWS),
    nn.BatchNorm: (lambda: nn.BatchNorm(momentum=0.5), ROWS),
    nn.Sequential: (lambda: nn.Sequential([nn.Dense(4, activation="gelu"), nn.Dropout(0.5),
                                           nn.Dense(2, activation=nn.leaky_relu)]), ROWS),
    nn.Model: (lambda: functional_model(), ROWS),
    nn.InputLayer: (lambda: nn.InputLayer((5,)), ROWS),
}
SEQUENCES = np.random.default_rng(2).standard_normal((2, 4, 3)).astype(np.float32)
ATTENDED = {"query": SEQUENCES, "value": SEQUENCES[:, :3], "key": None,
            "attention_mask": None}
LAYERS.update({
    nn.SimpleRNN: (lambda: nn.SimpleRNN(3, activation="relu", go_backwards=True), SEQUENCES),
    nn.LSTM: (lambda: nn.LSTM(3, return_sequences=True, unit_forget_bias=False, dropout=0.5,
                              recurrent_dropout=0.25, seed=3), SEQUENCES),
    nn.GRU: (lambda: nn.GRU(3, return_state=True, reset_after=False), SEQUENCES),
    nn.Bidirectional: (lambda: nn.Bidirectional(nn.GRU(2), merge_mode="ave"), SEQUENCES),
    nn.TimeDistributed: (lambda: nn.TimeDistributed(nn.Dense(2)), SEQUENCES),
    nn.MultiHeadAttention: (lambda: nn.MultiHeadAttention(2, 3, dropout=0.5), ATTENDED),
    nn.Embedding: (lambda: nn.Embedding(5, 2, mask_zero=True), np.array([[0, 4], [3, 1]])),
    nn.Masking: (lambda: nn.Masking(mask_value=0.5), SEQUENCES),
    nn.Conv1D: (lambda: nn.Conv1D(2, 2, padding="causal"), SEQUENCES),
    nn.Conv2DTranspose: (lambda: nn.Conv2DTranspose(2, 3, strides=2), IMAGES),
    nn.UpSampling2D: (lambda: nn.UpSampling2D(3), IMAGES),
    nn.GlobalAveragePooling1D: (lambda: nn.GlobalAveragePooling1D(), SEQUENCES),
    nn.GlobalMaxPooling1D: (lambda: nn.GlobalMaxPooling1D(keepdims=True), SEQUENCES),
    nn.GlobalAveragePooling2D: (lambda: nn.GlobalAveragePooling2D(), IMAGES),
    nn.GlobalMaxPooling2D: (lambda: nn.GlobalMaxPooling2D(), IMAGES),
    nn.Reshape: (lambda: nn.Reshape((-1, 2)), SEQUENCES[:, :, :2]),
    nn.Permute: (lambda: nn.Permute((2, 1)), SEQUENCES),
    nn.RepeatVector: (lambda: nn.RepeatVector(2), ROWS),
    nn.Activation: (lambda: nn.Activation("softplus"), ROWS),
    nn.Lambda: (lambda: nn.Lambda(jnp.cumsum, arguments={"axis": 1}), ROWS),
    nn.Add: (lambda: nn.Add(), [ROWS, ROWS[::-1]]),
    nn.Subtract: (lambda: nn.Subtract(), [ROWS, ROWS[::-1]]),
    nn.Multiply: (lambda: nn.Multiply(), [ROWS, ROWS[::-1]]),
    nn.Average: (lambda: nn.Average(), [ROWS, ROWS[::-1]]),
    nn.Maximum: (lambda: nn.Maximum(), [ROWS, ROWS[::-1]]),
    nn.Minimum: (lambda: nn.Minimum(), [ROWS, ROWS[::-1]]),
    nn.Concatenate: (lambda: nn.Concatenate(axis=1), [ROWS, ROWS[::-1]]),
})
BUILT_WHEN_MADE = (nn.Model, nn.InputLayer)  # their input shapes are given


def functional_model():
    inputs = nn.Input((5,))
    hidden = nn.Dense(4, activation="relu")(inputs)
    return nn.Model(inputs, nn.BatchNorm()(nn.Dropout(0.5)(hidden)))
ROUND_TRIPS = {"pickle": lambda obj: pickle.loads(pickle.dumps(obj)),
               "deepcopy": copy.deepcopy}


def test_the_table_has_every_layer_of_jitflow_nn():
    classes = {value for value in vars(nn).values() if inspect.isclass(value)
               and issubclass(value, nn.Layer) and value is not nn.Layer}
    assert classes == set(LAYERS)


@pytest.mark.parametrize("round_trip", ROUND_TRIPS)
@pytest.mark.parametrize("cls", LAYERS, ids=lambda cls: cls.__name__)
def test_a_layer_copied_before_or_after_it_is_built_computes_the_same(cls, round_trip):
    make, x = LAYERS[cls]
    unbuilt = ROUND_TRIPS[round_trip](make())
    assert unbuilt.built == (cls in BUILT_WHEN_MADE)
    layer = make()
    layer(x, training=True)  # built; a Dropout's or BatchNorm's state moves on
    twin = ROUND_TRIPS[round_trip](layer)
    assert [w.name for w in twin.weights] == [w.name for w in layer.weights]
    for a, b in zip(twin.weights, layer.weights, strict=True):
        assert a is not b
        np.testing.assert_array_equal(a.value, b.value)
    for training in (True, False, True):
        np.testing.assert_array_equal(twin(x, training=training), layer(x, training=training))


@pytest.mark.parametrize("name", sorted(activations._BY_NAME))
def test_every_activation_by_name_pickles_as_itself(name):
    function = activations.get(name)
    assert pickle.loads(pickle.dumps(function)) is function
    layer = pickle.loads(pickle.dumps(nn.Dense(2, activation=name)))
    assert layer.activation is function


def test_jitflow_numpy_functions_pickle_as_themselves():
    for function in (jnp.tanh, jnp.sum, jnp.softmax, jnp.asarray, jnp.where):
        assert pickle.loads(pickle.dumps(function)) is function


def test_an_unpickled_variable_holds_a_read_only_array():
    v = jitflow.Variable(np.arange(3.0), name="pickled/v", trainable=False)
    for twin in (pickle.loads(pickle.dumps(v)), copy.deepcopy(v)):
        assert (twin.name, twin.trainable) == ("pickled/v", False)
        assert not twin.value.flags.writeable
        np.testing.assert_array_equal(twin.value, v.value)
        twin.assign(twin * 2)
        np.testing.assert_array_equal(v.value, np.arange(3.0))


def test_a_model_and_its_variables_stay_shared_in_one_pickle():
    model = nn.Sequential([nn.Dense(2)])
    model(ROWS)
    twin_model, twin_kernel = pickle.loads(pickle.dumps((model, model.layers[0].kernel)))
    assert twin_model.layers[0].kernel is twin_kernel


def test_a_generator_continues_its_stream():
    generator = jitflow.random.Generator(11)
    generator.normal((3,))
    twin = pickle.loads(pickle.dumps(generator))
    np.testing.assert_array_equal(twin.uniform((4,)), generator.uniform((4,)))
    np.testing.assert_array_equal(copy.deepcopy(twin).bits((2, 2)), twin.bits((2, 2)))


class Predictor:
    def __init__(self):
        self.model = nn.Sequential([nn.Dense(3, activation="tanh"), nn.Dense(1)])
        self.predict = jitflow.function(self._predict)

    def _predict(self, x):
        return self.model(x)


@pytest.mark.parametrize("round_trip", ROUND_TRIPS)
def test_a_compiled_method_is_copied_without_its_traces(round_trip):
    predictor = Predictor()
    expected = predictor.predict(ROWS)
    twin = ROUND_TRIPS[round_trip](predictor)
    assert twin.predict.fn.__self__ is twin
    assert twin.predict.cache_info().traces == 0
    np.testing.assert_array_equal(twin.predict(ROWS), expected)
    assert twin.predict.cache_info().traces == 1


def test_static_argument_names_survive():
    scale = jitflow.function(_scaled, static_argnames="factor")
    twin = pickle.loads(pickle.dumps(scale))
    assert twin.static == frozenset({"factor"})
    np.testing.assert_array_equal(twin(np.ones(2), factor=3), np.full(2, 3.0))


def _scaled(x, factor):
    return x * factor


def test_layers_made_after_unpickling_are_named_apart_from_the_unpickled_ones():
    """In a fresh process the names count from 0 again: an unpickled model's names are
    taken, so that its Variables' names (which an optimizer pickled apart finds its
    slots by) stay its own."""
    loaded = pickle.loads(pickle.dumps(nn.Dense(2, name="dense_9999")))
    made = nn.Dense(2)
    assert loaded.name == "dense_9999" and made.name == "dense_10000"
    assert pickle.loads(pickle.dumps(nn.Flatten(name="custom"))).name == "custom"


@jitflow.function
def doubled(x):
    return x * 2


def test_a_function_decorated_where_it_is_defined_pickles_by_name():
    assert pickle.loads(pickle.dumps(doubled)) is doubled
    assert copy.deepcopy(doubled) is doubled
    holder = pickle.loads(pickle.dumps({"step": doubled}))
    np.testing.assert_array_equal(holder["step"](np.ones(2)), np.full(2, 2.0))
