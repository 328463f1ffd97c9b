"""while_loop and fori_loop: eager Python loops, compiled loops on both backends, their
derivatives in both modes (reverse mode with a trip count known only at run time, with
and without checkpoints) and clear errors."""
import numpy as np
import pytest
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same, given_per_backend
from jitflow.testing import check_grads
from strategies import arrays, shapes

THIS_FILE = "test_while_loop.py"


def shrink(x, limit):
    """Halve x until its largest magnitude is under `limit`, counting the trips."""
    return jitflow.while_loop(lambda c: jnp.any(jnp.abs(c[0]) > limit),
                              lambda c: (c[0] * 0.5 - 0.25, c[1] + 1), (x, 0))


@given_per_backend(st.sampled_from([np.float32, np.float64]), shapes(min_dims=1, max_dims=2),
                   st.floats(0.5, 4.0), st.data())
def test_a_data_dependent_trip_count_matches_the_python_loop(dtype, shape, limit, data):
    x = data.draw(arrays(np.dtype(dtype), shape, min_value=-1e3, max_value=1e3))
    compiled = jitflow.function(shrink)
    value, trips = compiled(x, limit)
    expected_value, expected_trips = shrink(x, limit)
    assert int(trips) == expected_trips
    assert_same(value, expected_value)


def newton_sqrt(a):
    """sqrt(a) by Newton's method, to convergence (the trip count depends on a)."""
    def improve(x):
        return 0.5 * (x + a / x)
    return jitflow.while_loop(lambda x: jnp.any(jnp.abs(x * x - a) > 1e-13 * a), improve,
                              jnp.maximum(a, 1.0))


@given_per_backend(st.lists(st.floats(0.01, 1e4), min_size=1, max_size=5))
def test_newton_sqrt_and_its_gradient(values):
    a = np.array(values)
    compiled = jitflow.function(newton_sqrt)
    gradient = jitflow.function(jitflow.grad(lambda a: newton_sqrt(a).sum()))
    assert_same(compiled(a), np.sqrt(a), rtol=1e-13)
    np.testing.assert_allclose(gradient(a), 0.5 / np.sqrt(a), rtol=1e-10)


def damped(x, w):
    """A loop whose carry is a pytree with an integer leaf, closing over w."""
    def body(c):
        return {"x": jnp.sin(c["x"]) * w + 0.1 * c["x"], "k": c["k"] + 1}
    return jitflow.while_loop(lambda c: c["k"] < 4, body, {"x": x, "k": 0})["x"].sum()


def test_derivatives_of_every_order_through_a_while_loop(backend):
    x, w = np.array([0.3, -1.2, 0.8]), np.array([0.9, 1.1, -0.7])
    check_grads(damped, (x, w), order=2)
    check_grads(jitflow.function(damped), (x, w), order=2)


MIX = np.array([[0.9, -0.6], [0.5, 1.1]])


@pytest.mark.parametrize("every", [1, 2, 3, 7])
def test_checkpoints_give_the_same_gradient(every, backend):
    def f(x, steps):
        def body(c):
            return (jnp.tanh(MIX @ c[0] + 0.2), c[1] + 1)
        return jitflow.while_loop(lambda c: c[1] < steps, body, (x, 0),
                                  checkpoint_every=every)[0].sum()
    gradient = jitflow.function(jitflow.grad(f))
    x = np.array([0.4, -0.9])
    for steps in (0, 1, 5, 6, 7, 13):
        value, slopes = x, []
        for _ in range(steps):
            value = np.tanh(MIX @ value + 0.2)
            slopes.append((1 - value ** 2)[:, None] * MIX)  # this step's Jacobian
        expected = np.ones_like(x)
        for jacobian in reversed(slopes):  # the chain rule, backwards, by hand
            expected = jacobian.T @ expected
        np.testing.assert_allclose(gradient(x, steps), expected, rtol=1e-12)
    check_grads(lambda x: f(x, 5), (x,), order=2)  # through the checkpoints, twice


def test_second_derivatives_of_a_data_dependent_loop(backend):
    def root(a):
        return newton_sqrt(a).sum()
    a = np.array([2.0, 9.0, 0.3])
    hessian = jitflow.function(jitflow.hessian(root))(a)
    assert_same(np.diag(hessian), -0.25 * a ** -1.5, rtol=1e-9)
    second = jitflow.function(jitflow.grad(lambda a: jitflow.grad(root)(a).sum()))(a)
    assert_same(second, -0.25 * a ** -1.5, rtol=1e-9)


@given_per_backend(st.integers(-3, 6), st.integers(-3, 6))
def test_fori_loop_with_static_and_traced_bounds(lower, upper):
    def body(i, c):
        return c * 1.5 + i
    expected = 1.0
    for i in range(lower, upper):
        expected = expected * 1.5 + i
    static = jitflow.function(lambda c: jitflow.fori_loop(lower, upper, body, c))
    traced = jitflow.function(lambda lo, hi, c: jitflow.fori_loop(lo, hi, body, c))
    assert_same(jitflow.fori_loop(lower, upper, body, 1.0), expected)
    assert_same(static(np.float64(1.0)), np.float64(expected))
    assert_same(traced(lower, upper, np.float64(1.0)), np.float64(expected))


def test_fori_loop_gradients(backend):
    def f(x, n):
        return jitflow.fori_loop(0, n, lambda i, c: jnp.sin(c) * 1.1 + 0.1 * i, x).sum()
    x = np.array([0.5, -0.3])
    check_grads(lambda x: f(x, 4), (x,), order=2)
    check_grads(lambda x: jitflow.function(f)(x, np.int64(4)), (x,), order=2)


def test_an_error_in_the_body_ends_the_loop_and_raises(backend):
    table = np.arange(5.0)
    walk = jitflow.function(lambda i: jitflow.while_loop(
        lambda c: c[1] < 10.0, lambda c: (c[0] + 1, c[1] + jnp.take(table, c[0])),
        (i, 0.0)))
    assert int(walk(np.int64(0))[0]) == 5  # 0+0+1+2+3+4 reaches 10 inside the table
    with pytest.raises(IndexError):
        jitflow.function(lambda i: jitflow.while_loop(
            lambda c: c[1] < 100.0, lambda c: (c[0] + 1, c[1] + jnp.take(table, c[0])),
            (i, 0.0)))(np.int64(0))


def test_eager_loops_are_plain_python():
    seen = []

    def body(x):
        seen.append(float(x))  # a concrete value: only eagerly
        return x * 2.0
    assert jitflow.while_loop(lambda x: x < 10.0, body, 1.0) == 16.0
    assert seen == [1.0, 2.0, 4.0, 8.0]


def test_vmap_of_a_while_loop():
    limits = np.array([1.0, 10.0, 100.0])
    counted = jitflow.vmap(lambda limit: jitflow.while_loop(
        lambda c: c[0] < limit, lambda c: (c[0] * 3.0, c[1] + 1), (1.0, 0))[1])
    assert_same(np.asarray(counted(limits)), np.array([0, 3, 5]))


@pytest.mark.parametrize("body, words", [
    (lambda c: (c[0].astype(np.float32), c[1]),
     r"while_loop: body_fn: returns carry\[0\] is f32\[2\], but it came in as f64\[2\]"),
    (lambda c: c[0], r"returns \(carry\), but the carry is \(carry\[0\], carry\[1\]\)"),
    (lambda c: (c[0][:1], c[1]), r"carry\[0\] is f64\[1\], but it came in as f64\[2\]"),
])
def test_a_body_changing_the_carry_is_a_clear_error(body, words):
    compiled = jitflow.function(lambda x: jitflow.while_loop(lambda c: c[1] < 3, body, (x, 0)))
    with pytest.raises(TypeError, match=words) as error:
        compiled(np.ones(2))
    assert THIS_FILE in str(error.value)


def test_a_condition_that_is_not_a_boolean_scalar_is_a_clear_error():
    with pytest.raises(TypeError, match=r"cond_fn must return a boolean scalar, got "
                                        r"\(bool\[2\]\)") as error:
        jitflow.function(lambda x: jitflow.while_loop(lambda c: c > 0, lambda c: c - 1,
                                                      x))(np.ones(2))
    assert THIS_FILE in str(error.value)
    with pytest.raises(TypeError, match=r"cond_fn must return a boolean scalar, got f64\[\]"):
        jitflow.while_loop(lambda c: c, lambda c: c - 1, 1.0)
    with pytest.raises(ValueError, match="checkpoint_every must be a positive int"):
        jitflow.while_loop(lambda c: c > 0, lambda c: c - 1, 1.0, checkpoint_every=0)


def test_variables_in_loop_bodies_are_read_not_assigned():
    w = jitflow.Variable(np.array([0.5, 2.0]))
    x = np.array([1.0, -1.0])

    def loss():
        return jitflow.while_loop(lambda c: c[1] < 3, lambda c: (jnp.sin(c[0] * w), c[1] + 1),
                                  (x, 0))[0].sum()

    def tape_gradient():
        with jitflow.GradientTape() as tape:
            value = loss()
        return tape.gradient(value, w)
    expected = tape_gradient()
    check = jitflow.grad(lambda v: jitflow.while_loop(
        lambda c: c[1] < 3, lambda c: (jnp.sin(c[0] * v), c[1] + 1), (x, 0))[0].sum())
    assert_same(expected, check(w.numpy()), rtol=1e-14)
    assert_same(jitflow.function(tape_gradient)(), expected, rtol=1e-13)
    with pytest.raises(TypeError, match="assigned inside .* a branch or loop body") as error:
        jitflow.function(lambda: jitflow.fori_loop(
            0, 2, lambda i, c: (w.assign_add(np.ones(2)), c)[1], 0.0))()
    assert THIS_FILE in str(error.value)
