"""jitflow.GradientTape: gradients with respect to Variables, eagerly and inside
@jitflow.function, against jitflow.grad and closed forms."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same
from strategies import FLOAT_DTYPES, arrays, shapes

THIS_FILE = "test_tape.py"


def tanh_loss(w, b, x):
    return jnp.tanh(w * x + b).sum()


def tanh_loss_gradients(w, b, x):
    slope = 1 - np.tanh(w * x + b) ** 2
    return slope * x, slope.sum()


@given(st.sampled_from(FLOAT_DTYPES), shapes(min_dims=1, max_dims=2), st.data())
def test_eager_gradients_match_the_closed_form_and_grad(dtype, shape, data):
    w0 = data.draw(arrays(dtype, shape, min_value=-3, max_value=3))
    x = data.draw(arrays(dtype, shape, min_value=-3, max_value=3))
    w, b = jitflow.Variable(w0, name="w"), jitflow.Variable(dtype.type(0.25), name="b")
    with jitflow.GradientTape() as tape:
        loss = tanh_loss(w, b, x)
    gw, gb = tape.gradient(loss, [w, b])
    want_w, want_b = tanh_loss_gradients(w0, dtype.type(0.25), x)
    tolerance = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12)
    assert_same(gw, want_w.astype(dtype), **tolerance)
    assert_same(gb, np.asarray(want_b, dtype), **tolerance)
    by_grad = jitflow.grad(tanh_loss, argnums=(0, 1))(w, b, x)
    assert_same(gw, by_grad[0])
    assert_same(gb, by_grad[1])


def test_a_compiled_step_with_a_tape_matches_the_eager_step(backend):
    x = np.array([0.5, -1.5, 2.0], np.float32)

    def make():
        w = jitflow.Variable(np.array([1.0, -0.5, 0.25], np.float32), name="w")
        b = jitflow.Variable(np.float32(0.1), name="b")

        def step(x):
            with jitflow.GradientTape() as tape:
                loss = tanh_loss(w, b, x)
            grads = tape.gradient(loss, {"w": w, "b": b})
            w.assign_sub(0.5 * grads["w"])
            b.assign_sub(0.5 * grads["b"])
            return loss
        return step, w, b
    eager, eager_w, eager_b = make()
    compiled, w, b = make()
    compiled = jitflow.function(compiled)
    for _ in range(6):
        assert_same(np.asarray(compiled(x)), np.asarray(eager(x)), rtol=1e-6)
        assert_same(w.value, eager_w.value, rtol=1e-6, atol=1e-7)
        assert_same(b.value, eager_b.value, rtol=1e-6, atol=1e-7)
    assert compiled.cache_info().traces == 1


@pytest.mark.parametrize("compiled", [False, True])
def test_nested_tapes_give_second_derivatives(compiled):
    v = jitflow.Variable(np.array([3.0, -2.0]), name="v")

    def derivatives():
        with jitflow.GradientTape() as outer:
            with jitflow.GradientTape() as inner:
                y = (v * v * v).sum()
            dy = inner.gradient(y, v)
            total = dy.sum()
        return dy, outer.gradient(total, v)
    if compiled:
        derivatives = jitflow.function(derivatives)
    dy, d2y = derivatives()
    assert_same(np.asarray(dy), 3 * v.numpy() ** 2)
    assert_same(np.asarray(d2y), 6 * v.numpy())


def test_only_watched_variables_get_gradients():
    trainable = jitflow.Variable(2.0, name="trainable")
    frozen = jitflow.Variable(3.0, name="frozen", trainable=False)
    with jitflow.GradientTape() as tape:
        y = trainable * frozen
    assert tape.gradient(y, [trainable, frozen]) == [pytest.approx(3.0), None]
    with jitflow.GradientTape() as tape:
        tape.watch(frozen)
        y = trainable * frozen
    assert tape.gradient(y, [trainable, frozen]) == [pytest.approx(3.0), pytest.approx(2.0)]
    with jitflow.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch([frozen])
        y = trainable * frozen
    assert tape.gradient(y, [trainable, frozen]) == [None, pytest.approx(2.0)]


def test_unconnected_variables_get_none_or_zeros():
    used = jitflow.Variable(np.ones(2), name="used")
    unused = jitflow.Variable(np.ones(3), name="unused")
    with jitflow.GradientTape(persistent=True) as tape:
        y = (used * 2.0).sum()
    assert tape.gradient(y, unused) is None
    assert_same(tape.gradient(y, unused, unconnected_gradients="zero"), np.zeros(3))
    with pytest.raises(ValueError, match="unconnected_gradients must be one of"):
        tape.gradient(y, unused, unconnected_gradients="zeros")


def test_output_gradients_seed_the_backward_pass():
    v = jitflow.Variable(np.array([1.0, 2.0]), name="v")
    with jitflow.GradientTape() as tape:
        y = v * v
    assert_same(tape.gradient(y, v, output_gradients=np.array([10.0, 100.0])),
                np.array([20.0, 400.0]))


def test_a_tape_gives_gradients_once_unless_persistent():
    v = jitflow.Variable(1.5, name="v")
    with jitflow.GradientTape() as tape:
        y = v * v
    tape.gradient(y, v)
    with pytest.raises(RuntimeError, match="persistent=True") as error:
        tape.gradient(y, v)
    assert THIS_FILE in str(error.value)
    with jitflow.GradientTape(persistent=True) as tape:
        y = v * v
        z = y * y
    assert tape.gradient(y, v) == pytest.approx(3.0)
    assert tape.gradient(z, v) == pytest.approx(4 * 1.5 ** 3)
    assert tape.gradient(y * 2.0, v) is None  # worked out after the tape closed


def test_plain_arrays_inside_a_tape_stay_plain_and_values_act_as_arrays_after():
    v = jitflow.Variable(np.array([1.0, 2.0]), name="v")
    with jitflow.GradientTape() as tape:
        plain = np.ones(2) + 1.0
        y = (v * plain).sum()
    assert type(plain) is np.ndarray
    later = y + 1.0
    assert not isinstance(later, jitflow.Tracer)
    assert y.numpy() == pytest.approx(6.0) and type(y.numpy()) is np.ndarray
    with pytest.raises(jitflow.ConcretizationError, match=r"\.numpy\(\) needs a concrete"):
        jitflow.function(lambda x: x.numpy())(np.ones(2))
    assert later == pytest.approx(7.0)
    assert_same(tape.gradient(y, v), np.array([2.0, 2.0]))


def test_a_compiled_function_called_inside_a_tape_is_recorded():
    v = jitflow.Variable(np.array([1.0, -1.0]), name="v")
    square_sum = jitflow.function(lambda a: (a * a).sum())
    with jitflow.GradientTape() as tape:
        y = square_sum(v * 3.0)
    assert_same(tape.gradient(y, v), np.array([18.0, -18.0]))


def test_sources_must_be_variables():
    v = jitflow.Variable(1.0, name="v")
    with jitflow.GradientTape() as tape:
        y = v * 2.0
    with pytest.raises(TypeError, match="expected Variables, got a ndarray") as error:
        tape.gradient(y, [v, np.ones(2)])
    assert THIS_FILE in str(error.value)


def test_an_eager_assignment_inside_a_tape_takes_effect_at_once():
    v = jitflow.Variable(np.array([1.0, 2.0]), name="v")
    with jitflow.GradientTape() as tape:
        v.assign(v * 3.0)
        assert_same(v.numpy(), np.array([3.0, 6.0]))
        y = (v * v).sum()
    assert_same(tape.gradient(y, v), np.array([6.0, 12.0]))


@pytest.mark.parametrize("compiled", [False, True])
def test_a_tape_differentiates_through_grad_inside_it(compiled):
    """A gradient penalty: the loss is a function of a gradient (second order)."""
    rng = np.random.default_rng(0)
    w = jitflow.Variable(rng.standard_normal((2, 4)), name="w")
    v = jitflow.Variable(rng.standard_normal(4), name="v")
    x = rng.standard_normal((5, 2))

    def critic(z):
        return jnp.tanh(z @ w) @ v

    def penalty():
        slope = jitflow.grad(lambda z: critic(z).sum())(x)
        return (((slope * slope).sum(axis=1) - 1.0) ** 2).mean()

    def gradient():
        with jitflow.GradientTape() as tape:
            loss = penalty()
        return tape.gradient(loss, w)
    actual = (jitflow.function(gradient) if compiled else gradient)()
    start, step = w.numpy(), 1e-6
    expected = np.zeros_like(start)
    for index in np.ndindex(start.shape):
        for sign in (1, -1):
            moved = start.copy()
            moved[index] += sign * step
            w.assign(moved)
            expected[index] += sign * float(penalty()) / (2 * step)
    assert_same(np.asarray(actual), expected, rtol=1e-6, atol=1e-8)
