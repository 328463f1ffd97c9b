"""Symbolic inputs and models: shapes inferred from the layers' traced computation, the
functional Model, its subclasses and Sequential against NumPy, summary(), and the
errors of graphs that do not fit."""
import numpy as np
import pytest

import jitflow
from fidelity import assert_same
from jitflow import nn

THIS_FILE = "test_model.py"
RNG = np.random.default_rng(0)

# (a layer, the shape of one example it takes); every layer class of jitflow.nn.
LAYERS = [
    (lambda: nn.Dense(3, activation="relu"), (4,)),
    (lambda: nn.Dense(2), (5, 4)),
    (lambda: nn.Conv2D(3, 3), (7, 6, 2)),
    (lambda: nn.Conv2D(2, (3, 2), strides=2, padding="same"), (7, 6, 2)),
    (lambda: nn.MaxPool2D(2), (7, 6, 2)),
    (lambda: nn.AvgPool2D(3, strides=1, padding="same"), (5, 5, 1)),
    (lambda: nn.Flatten(), (3, 4, 2)),
    (lambda: nn.Dropout(0.5), (6,)),
    (lambda: nn.LayerNorm(), (6,)),
    (lambda: nn.BatchNorm(), (2, 6)),
    (lambda: nn.InputLayer((4,)), (4,)),
    (lambda: nn.Sequential([nn.Conv2D(2, 3), nn.Flatten(), nn.Dense(3)]), (6, 6, 1)),
    (lambda: small_functional(), (4,)),
]


def small_functional():
    inputs = nn.Input((4,))
    return nn.Model(inputs, nn.Dense(2)(nn.Dense(3, activation="tanh")(inputs)))


@pytest.mark.parametrize("make, example", LAYERS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_symbolic_outputs_have_the_shapes_and_dtypes_of_computed_ones(make, example, dtype):
    layer = make()
    symbolic = layer(nn.Input(example, dtype=dtype))
    computed = np.asarray(layer(np.ones((5, *example), dtype)))
    assert symbolic.shape == (None, *computed.shape[1:])
    assert symbolic.dtype == computed.dtype
    assert symbolic.layer is layer and symbolic.node in layer._inbound_nodes
    assert layer.output_shape == symbolic.shape


def test_an_input_is_a_symbolic_tensor_made_by_an_input_layer():
    x = nn.Input((3, 2), dtype="float64", name="pixels")
    assert (x.shape, x.dtype, x.name) == ((None, 3, 2), np.float64, "pixels")
    assert isinstance(x.layer, nn.InputLayer) and x.layer.name == "pixels"
    assert nn.Input(4, batch_size=8).shape == (8, 4)
    assert nn.Dense(2)(nn.Input(4, batch_size=8)).shape == (8, 2)
    with pytest.raises(ValueError, match=r"Input 'bad': shape \(None, 2\) must be "
                                         r"non-negative ints"):
        nn.Input((None, 2), name="bad")
    with pytest.raises(TypeError, match="Input 'c': dtype complex128 is not supported"):
        nn.Input(2, dtype="complex128", name="c")
    with pytest.raises(TypeError, match="has no value yet"):
        bool(x)


def mlp_layers(seed):
    rng = np.random.default_rng(seed)
    return [nn.Dense(5, activation="tanh", rng=rng), nn.Dense(3, rng=rng)]


def numpy_mlp(x, first, second):
    hidden = np.tanh(x @ first.kernel.numpy() + first.bias.numpy())
    return hidden @ second.kernel.numpy() + second.bias.numpy()


def test_functional_equals_sequential_equals_numpy(backend):
    first, second = mlp_layers(1)
    inputs = nn.Input((4,), dtype="float64")
    functional = nn.Model(inputs, second(first(inputs)))
    sequential = nn.Sequential([first, second])
    x = RNG.standard_normal((6, 4))
    expected = numpy_mlp(x, first, second)
    assert_same(functional(x), expected, rtol=1e-13, atol=1e-15)
    assert_same(sequential(x), functional(x))
    compiled = jitflow.function(lambda x: (functional(x), sequential(x)))
    for result in compiled(x):
        assert_same(result, expected, rtol=1e-12, atol=1e-14)


def two_input_model():
    """Two inputs, two outputs, a layer used twice and a nested model."""
    a, b = nn.Input((4,), "float64", name="a"), nn.Input((3,), "float64", name="b")
    shared = nn.Dense(4, activation="relu", name="shared", rng=np.random.default_rng(2))
    inner_in = nn.Input((4,), "float64")
    inner = nn.Model(inner_in, nn.Dense(2, name="head", rng=np.random.default_rng(3))(
        inner_in), name="inner")
    from_b = nn.Dense(4, name="project", rng=np.random.default_rng(4))(b)
    return nn.Model([a, b], [inner(shared(a)), shared(from_b)], name="two")


def test_several_inputs_and_outputs_shared_layers_and_nested_models(backend):
    model = two_input_model()
    shared, head, project = (model.get_layer(n) for n in ("shared", "inner", "project"))
    head = head.get_layer("head")
    xa, xb = RNG.standard_normal((5, 4)), RNG.standard_normal((5, 3))

    def dense(layer, x):
        return x @ layer.kernel.numpy() + layer.bias.numpy()
    relu = lambda v: np.maximum(v, 0)  # noqa: E731
    expected = [dense(head, relu(dense(shared, xa))), relu(dense(shared, dense(project, xb)))]
    for result in (model([xa, xb]), model({"b": xb, "a": xa}),
                   jitflow.function(model)([xa, xb])):
        for got, want in zip(result, expected, strict=True):
            assert_same(got, want, rtol=1e-12, atol=1e-14)
    assert [layer.name for layer in model.layers] == ["a", "b", "shared", "inner", "project"]
    assert model.output_shape == [(None, 2), (None, 4)]
    assert [t.name for t in model.inputs] == ["a", "b"]
    assert model.count_params() == 20 + 10 + 16 == sum(w.size for w in model.weights)
    assert len(model.trainable_variables) == 6


def test_a_subclassed_model_calls_its_own_call():
    class Residual(nn.Model):
        def __init__(self):
            super().__init__(name="residual")
            self.blocks = [nn.Dense(4, activation="tanh", rng=np.random.default_rng(s))
                           for s in (5, 6)]

        def call(self, x, training=False):
            for block in self.blocks:
                x = x + block(x)
            return x
    model = Residual()
    x = RNG.standard_normal((3, 4))
    y = x
    first = model(x)
    for block in model.blocks:
        y = y + np.tanh(y @ block.kernel.numpy() + block.bias.numpy())
    assert_same(first, y, rtol=1e-13, atol=1e-15)
    assert model.layers == model.blocks and model.count_params() == 40
    inputs = nn.Input((4,), "float64")
    outer = nn.Model(inputs, model(inputs))
    assert outer.output_shape == (None, 4)
    assert_same(outer(x), first)


def test_summary_prints_the_keras_table():
    lines = []
    two_input_model().summary(print_fn=lines.append)
    text = lines[0]
    rows = [line.split() for line in text.splitlines()]
    assert text.startswith('Model: "two"')
    assert ["Layer", "(type)", "Output", "Shape", "Param", "#", "Connected", "to"] in rows
    assert ["shared", "(Dense)", "(None,", "4)", "20", "a[0][0]"] in rows
    assert ["project[0][0]"] in rows  # the shared layer's second call
    assert ["inner", "(Model)", "(None,", "2)", "10", "shared[0][0]"] in rows
    assert ["Total", "params:", "46"] in rows and ["Trainable", "params:", "46"] in rows
    sequential = nn.Sequential([nn.Input((3,)), nn.Dense(2), nn.BatchNorm()])
    lines.clear()
    sequential.summary(print_fn=lines.append)
    rows = [line.split() for line in lines[0].splitlines()]
    assert rows[2] == ["Layer", "(type)", "Output", "Shape", "Param", "#"]
    assert ["Non-trainable", "params:", "4"] in rows and ["Total", "params:", "16"] in rows


def test_sequential_knows_its_output_shape_from_the_first_call():
    model = nn.Sequential([nn.Conv2D(2, 3), nn.Flatten()])
    model(np.ones((2, 5, 5, 1), np.float32))
    assert model.output_shape == (None, 18)
    assert model.inputs[0].shape == (None, 5, 5, 1)


def test_an_output_the_inputs_do_not_reach_is_an_error_naming_it():
    a, b = nn.Input((2,), name="a"), nn.Input((2,), name="b")
    out = nn.Dense(1, name="from_b")(b)
    with pytest.raises(ValueError, match=r"output 'from_b' \(shape \(None, 1\)\) is not "
                                         r"reachable from the inputs \['a'\]: it needs "
                                         r"Input 'b'") as error:
        nn.Model(a, out)
    assert THIS_FILE in str(error.value)


def test_an_unused_input_is_an_error_naming_it():
    a, b = nn.Input((2,), name="a"), nn.Input((2,), name="b")
    with pytest.raises(ValueError, match=r"input\(s\) \['b'\] are not used"):
        nn.Model([a, b], nn.Dense(1, name="d")(a))


def test_layers_report_symbolic_shapes_that_do_not_fit():
    dense = nn.Dense(2, name="narrow")
    dense(nn.Input((4,)))
    with pytest.raises(ValueError, match=r"narrow: built for inputs of shape \(batch, 4\), "
                                         r"called on \(None, 3\)") as error:
        dense(nn.Input((3,)))
    assert THIS_FILE in str(error.value)
    with pytest.raises(ValueError, match=r"conv \(Conv2D\) called on symbolic inputs of "
                                         r"shape \(None, 2, 2, 1\)"):
        nn.Conv2D(1, 3, name="conv")(nn.Input((2, 2, 1)))
    with pytest.raises(TypeError, match=r"d \(Dense\): called on a mix of symbolic"):
        nn.Dense(1, name="d")([nn.Input((2,)), np.ones((1, 2))])


def test_a_model_checks_the_arrays_it_is_called_on():
    model = two_input_model()
    with pytest.raises(ValueError, match=r"Model 'two': input 'b' expects shape "
                                         r"\(None, 3\), got an array of shape \(5, 2\)"):
        model([np.ones((5, 4)), np.ones((5, 2))])
    with pytest.raises(ValueError, match=r"expected 2 input\(s\) \['a', 'b'\]"):
        model(np.ones((5, 4)))
    with pytest.raises(ValueError, match=r"no layer named 'nope'; its layers are \['a'"):
        model.get_layer("nope")


def test_a_sequential_called_on_a_symbolic_tensor_builds_its_layers_for_any_batch():
    inner = nn.Sequential([nn.Dense(3), nn.Dense(2)], name="inner")
    inputs = nn.Input((5,))
    outer = nn.Model(inputs, inner(inputs))
    assert [layer.input_shape for layer in inner.layers] == [(None, 5), (None, 3)]
    assert inner.output_shape == outer.output_shape == (None, 2)
    lines = []
    outer.summary(print_fn=lines.append)
    assert ["inner", "(Sequential)", "(None,", "2)", "26"] in \
        [line.split()[:5] for line in lines[0].splitlines()]


def test_an_output_whose_rank_follows_the_batch_size_is_refused():
    class Odd(nn.Layer):
        def call(self, x, training=False):
            return x.reshape((2,) * (x.shape[0] - 1) + (-1,))
    with pytest.raises(ValueError, match=r"odd \(Odd\): the rank of its output depends "
                                         r"on the batch size"):
        Odd(name="odd")(nn.Input((4,)))


def test_a_dimension_that_follows_the_batch_size_is_unknown():
    class Pairs(nn.Layer):
        def call(self, x, training=False):
            return x.reshape((-1, 2))
    assert Pairs()(nn.Input((4,))).shape == (None, 2)
    assert Pairs()(nn.Input((4,), batch_size=3)).shape == (6, 2)
