"""Turning a value a derivative is taken through into a plain NumPy array would drop the
derivative silently: it raises, naming the user's line and the two ways out. Python
numbers, printing and comparisons keep working eagerly; jitflow.numpy.asarray/array keep
the derivative."""
import inspect

import numpy as np
import pytest

import jitflow
from tests_support import line_of
import jitflow.numpy as jnp
from fidelity import assert_same


def _assign_into_plain_array(x):
    out = np.zeros((2,) + np.shape(x))
    out[:] = [x, x]  # converts
    return out


CONVERSIONS = {
    "np.asarray": np.asarray,
    "np.array": np.array,
    "np.array with dtype": lambda x: np.array(x, dtype=np.float32),
    "np.asarray copy=False": lambda x: np.asarray(x, copy=False),
    "np.array of a list": lambda x: np.array([x, 2 * x]),
    "np.array of a nested list": lambda x: np.array([[x, 1.0], [2.0, x]]),
    "__array__": lambda x: x.__array__(),
    "slice assignment into an ndarray": _assign_into_plain_array,
}


def _uses(convert):
    def f(x):
        y = x * 3.0
        return (convert(y).sum() * x).sum()  # converts
    return f


def _line_converting(convert, f):
    """Where `convert` turns its argument into an array: the user's own line (f's, for
    NumPy's own functions)."""
    if not inspect.isfunction(convert):
        return line_of("# converts", f)
    if convert.__name__ == "<lambda>":
        return f"test_conversions.py:{convert.__code__.co_firstlineno}"
    return line_of("# converts", convert)


@pytest.mark.parametrize("name", CONVERSIONS)
@pytest.mark.parametrize("x", [2.0, np.array([1.0, -2.0], np.float32)])
def test_converting_a_value_under_grad_raises_naming_the_line_and_the_ways_out(name, x):
    f = _uses(CONVERSIONS[name])
    with pytest.raises(TypeError) as info:
        jitflow.grad(f)(x)
    message = str(info.value)
    assert not isinstance(info.value, jitflow.ConcretizationError)
    assert "derivative" in message and "grad of" in message
    assert "jitflow.numpy.asarray" in message and "jitflow.stop_gradient" in message
    assert _line_converting(CONVERSIONS[name], f) in message


def _tape_gradient(f, x):
    v = jitflow.Variable(x, name="v")
    with jitflow.GradientTape() as tape:
        y = f(v.read())
    return tape.gradient(y, v)


TRANSFORMS = {
    "grad": lambda f, x: jitflow.grad(f)(x),
    "value_and_grad": lambda f, x: jitflow.value_and_grad(f)(x),
    "vjp": lambda f, x: jitflow.vjp(f, x)[1](1.0),
    "jvp": lambda f, x: jitflow.jvp(f, (x,), (1.0,)),
    "jacobian": lambda f, x: jitflow.jacobian(f)(x),
    "hessian": lambda f, x: jitflow.hessian(f)(x),
    "GradientTape": _tape_gradient,
}


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_every_eager_derivative_refuses_the_conversion(transform):
    with pytest.raises(TypeError, match="would silently drop that derivative") as info:
        TRANSFORMS[transform](lambda x: np.asarray(x) * x, 2.0)
    assert "test_conversions.py" in str(info.value)


def test_the_examples_that_used_to_drop_the_derivative():
    with pytest.raises(TypeError, match="jitflow.stop_gradient"):
        jitflow.grad(lambda x: np.asarray(x).sum() * x)(2.0)
    with pytest.raises(TypeError, match="jitflow.numpy.array"):
        jitflow.grad(lambda x: np.array([x, 2 * x]).sum())(2.0)


def test_storing_a_value_into_an_ndarray_item_refuses_too():
    """NumPy converts the value with float() there: NumPy reports a ValueError whose
    cause is jitflow's error."""
    def f(x):
        out = np.zeros(2, dtype=np.float32)
        out[1] = x * 3  # stores
        return (out * x).sum()
    with pytest.raises((TypeError, ValueError)) as info:
        jitflow.grad(f)(2.0)
    error = info.value if "derivative" in str(info.value) else info.value.__cause__
    assert "would silently drop that derivative" in str(error)
    assert line_of("# stores", f) in str(error)


def test_storing_into_python_containers_and_converting_explicitly_still_work():
    def f(x):
        held, listed = {}, [0.0]
        held["x"], listed[0] = x * 1.0, x * 2.0
        plain = np.zeros(2)
        plain[0] = float(x)  # an explicit Python number: no derivative, on purpose
        return held["x"] * listed[0] + plain.sum() * x
    assert jitflow.grad(f)(3.0) == pytest.approx(4 * 3.0 + 3.0)


# --- the ways out ---------------------------------------------------------------------------

@pytest.mark.parametrize("run", ["eager", "compiled"])
def test_jitflow_numpy_asarray_and_array_keep_the_derivative(run):
    def wrap(g):
        return g if run == "eager" else jitflow.function(g)
    assert wrap(jitflow.grad(lambda x: jnp.asarray(x).sum() * x))(2.0) == pytest.approx(4.0)
    assert wrap(jitflow.grad(lambda x: jnp.array([x, 2 * x]).sum()))(2.0) == pytest.approx(3.0)
    def nested(x):
        return (jnp.array([[x, 1.0], [x * x, 3]], dtype=np.float32) ** 2).sum()
    assert wrap(jitflow.grad(nested))(np.float32(1.5)) == pytest.approx(2 * 1.5 + 4 * 1.5 ** 3)


def test_lists_of_traced_values_make_the_array_numpy_makes():
    makers = [lambda x: [x, 1], lambda x: [[x, x], [2, 3]], lambda x: (x, x * 2),
              lambda x: [x, True], lambda x: [[x], [np.float32(1)]]]
    for make in makers:
        for x in [np.float32(2.0), 2.0, np.int32(3)]:
            expected = np.array(make(x))
            assert_same(jitflow.function(lambda x: jnp.array(make(x)))(x), expected)
            assert_same(jnp.array(make(x)), expected)


def test_operations_take_lists_of_traced_values_as_arrays():
    assert jitflow.grad(lambda x: jnp.add([x, 2 * x], 1.0).sum())(2.0) == pytest.approx(3.0)
    assert jitflow.function(lambda x: jnp.add([x, 2 * x], 1.0))(2.0).tolist() == [3.0, 5.0]


def test_stop_gradient_drops_the_derivative_on_purpose():
    assert jitflow.stop_gradient is jitflow.ops.stop_gradient
    f = lambda x: np.asarray(jitflow.stop_gradient(x)).sum() * x  # noqa: E731
    assert jitflow.grad(f)(2.0) == pytest.approx(2.0)
    assert jitflow.grad(lambda x: np.array([jitflow.stop_gradient(x), 2.0]).sum() * x)(
        3.0) == pytest.approx(5.0)


# --- what keeps working ---------------------------------------------------------------------

def test_python_numbers_printing_and_comparisons_work_eagerly(capsys):
    seen = {}

    def f(x):
        print("x =", x)
        seen["repr"] = repr(x)
        seen["float"], seen["int"], seen["item"] = float(x), int(x), x.item()
        seen["bool"] = bool(x > 1)
        if x > 1 and x == 2.5:  # Python control flow on the value
            return x * x
        return x
    assert jitflow.grad(f)(2.5) == pytest.approx(5.0)
    assert "x = 2.5" in capsys.readouterr().out
    assert "2.5" in seen["repr"]
    assert (seen["float"], seen["int"], seen["item"], seen["bool"]) == (2.5, 2, 2.5, True)
    assert type(seen["float"]) is float and type(seen["item"]) is float
    assert type(seen["int"]) is int


@pytest.mark.parametrize("value", [
    lambda x: x > 0,                      # bool: carries no derivative
    lambda x: x.astype(np.int64),         # ints carry none either
    lambda x: jnp.ones(3) * 2.0,          # computed from constants only
])
def test_values_without_a_derivative_convert(value):
    seen = {}

    def f(x):
        seen["array"] = np.asarray(value(x))
        return x * x
    assert jitflow.grad(f)(1.5) == pytest.approx(3.0)
    assert type(seen["array"]) is np.ndarray


def test_arguments_not_differentiated_convert():
    f = lambda x, y: x * np.asarray(y).sum()  # noqa: E731
    assert jitflow.grad(f, argnums=0)(2.0, np.array([1.0, 2.0])) == pytest.approx(3.0)


def test_a_closed_tape_values_are_arrays_and_writing_to_them_leaves_the_tape_alone():
    v = jitflow.Variable(np.array([1.0, 2.0]), name="v")
    with jitflow.GradientTape() as tape:
        y = v * v
        z = (y * y).sum()
    as_array = np.asarray(y)
    assert type(as_array) is np.ndarray and as_array.tolist() == [1.0, 4.0]
    as_array[:] = 100.0  # a copy: the backward pass still reads y's value
    assert np.asarray(y, dtype=np.float32).dtype == np.float32
    view = np.array(y, copy=False)
    assert not view.flags.writeable
    assert_same(tape.gradient(z, v), 4 * np.array([1.0, 2.0]) ** 3)


def test_variable_numpy_inside_a_tape_is_its_value():
    v = jitflow.Variable(np.array([1.0, 2.0]), name="v")
    with jitflow.GradientTape():
        w = v * 3.0
        assert w.numpy().tolist() == [3.0, 6.0]
        with pytest.raises(TypeError, match="derivative"):
            np.asarray(v)


# --- inside a traced function ---------------------------------------------------------------

@pytest.mark.parametrize("convert", [np.asarray, lambda x: np.array([x, x]),
                                     lambda x: x.numpy(), lambda x: x.tolist()])
def test_converting_inside_a_traced_function_says_what_to_use_instead(convert):
    f = jitflow.function(lambda x: convert(x * 2))
    with pytest.raises(jitflow.ConcretizationError) as info:
        f(np.ones(3))
    assert "jitflow.numpy.asarray" in str(info.value)


@pytest.mark.parametrize("convert", [bool, int, float, complex, np.asarray,
                                     lambda x: [1, 2][x], lambda x: x.item(),
                                     lambda x: x.tolist(), lambda x: x.numpy()])
def test_every_concretization_error_ends_in_advice(convert):
    f = jitflow.function(lambda x: convert(x * 2))
    with pytest.raises(jitflow.ConcretizationError) as info:
        f(np.int64(1))
    advice = str(info.value).split("To fix it:")[1]
    assert len(advice.strip()) > 40 and "jitflow." in advice


# --- jitflow.numpy.asarray and array follow NumPy's typing and copying --------------------

def test_asarray_of_a_python_scalar_argument_is_typed_as_numpys():
    """np.asarray(2.0) is a float64 array, no longer a weakly typed Python float."""
    f = jitflow.function(lambda x: (jnp.asarray(x) * np.float32(2),
                                    jnp.array(x) * np.float32(2), x * np.float32(2)))
    expected = (np.asarray(2.0) * np.float32(2), np.array(2.0) * np.float32(2),
                2.0 * np.float32(2))
    for got, want in zip(f(2.0), expected, strict=True):
        assert_same(got, want)


def test_array_of_a_traced_value_is_a_new_value():
    def f(x):
        y = jnp.array(x)
        assert y is not x and jnp.asarray(x, dtype=x.dtype) is not None
        return (y * x).sum()
    x = np.array([1.0, 2.0])
    assert_same(jitflow.grad(f)(x), 2 * x)
    assert_same(jitflow.function(jitflow.grad(f))(x), 2 * x)
