"""scan: cumulative operations and recurrences against NumPy and Python loops, eager and
compiled on both backends, forwards and reversed, with pytrees, derivatives of every
order and clear errors."""
import numpy as np
import pytest
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same, given_per_backend
from jitflow.testing import check_grads
from strategies import arrays, shapes


def cumulative(xs, reverse):
    """Running sums and products along the leading axis, in one scan."""
    def step(carry, x):
        total, product = carry[0] + x, carry[1] * x
        return (total, product), {"sum": total, "prod": product}
    init = (jnp.zeros_like(xs[0]), jnp.ones_like(xs[0]))
    return jitflow.scan(step, init, xs, reverse=reverse)


@given_per_backend(st.sampled_from([np.float32, np.float64, np.int64]),
                   shapes(min_dims=1, max_dims=3), st.booleans(), st.data())
def test_cumulative_sums_and_products_match_numpy(dtype, shape, reverse, data):
    if shape[0] == 0:
        shape = (1,) + shape[1:]
    xs = data.draw(arrays(np.dtype(dtype), shape, min_value=-3, max_value=3))
    (total, product), ys = jitflow.function(cumulative, static_argnames="reverse")(
        xs, reverse=reverse)
    ordered = xs[::-1] if reverse else xs
    # From 0 and 1 as the scan starts: np.cumsum takes a first -0.0 as it is, 0 + -0.0 is 0.
    sums = np.cumsum(np.concatenate([np.zeros_like(xs[:1]), ordered]), axis=0)[1:]
    products = np.cumprod(np.concatenate([np.ones_like(xs[:1]), ordered]), axis=0)[1:]
    if reverse:
        sums, products = sums[::-1], products[::-1]
    assert_same(ys["sum"], sums, ulps=8)
    assert_same(ys["prod"], products, ulps=8)
    assert_same(total, sums[0] if reverse else sums[-1], ulps=8)
    eager = cumulative(xs, reverse)
    assert_same(eager[1]["sum"], sums, ulps=8)


def rnn(params, xs):
    """A small tanh RNN; the loss is the mean square of its outputs."""
    def cell(h, x):
        h = jnp.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
        return h, h @ params["wy"]
    h, ys = jitflow.scan(cell, jnp.zeros(params["wh"].shape[0]), xs)
    return jnp.mean(ys ** 2) + 0.1 * jnp.sum(h)


def rnn_params(rng):
    return {"wx": rng.standard_normal((3, 4)) * 0.5, "wh": rng.standard_normal((4, 4)) * 0.5,
            "b": rng.standard_normal(4) * 0.1, "wy": rng.standard_normal((4, 2))}


def test_rnn_gradients_of_every_order(backend):
    rng = np.random.default_rng(0)
    params, xs = rnn_params(rng), rng.standard_normal((5, 3))
    check_grads(rnn, (params, xs), order=2)
    check_grads(jitflow.function(rnn), (params, xs), order=1)


@given_per_backend(st.integers(0, 6), st.booleans())
def test_a_recurrence_against_the_python_loop(length, reverse):
    rng = np.random.default_rng(length)
    xs, w = rng.standard_normal((length, 2)), rng.standard_normal((2, 2))

    def step(c, x):
        c = jnp.sin(c @ w) + x
        return c, c.sum()
    compiled = jitflow.function(lambda xs: jitflow.scan(step, np.ones(2), xs, reverse=reverse))
    carry, ys = compiled(xs)
    expected_carry, expected_ys = np.ones(2), []
    for x in (xs[::-1] if reverse else xs):
        expected_carry = np.sin(expected_carry @ w) + x
        expected_ys.append(expected_carry.sum())
    expected_ys = np.array(expected_ys[::-1] if reverse else expected_ys).reshape(length)
    assert_same(carry, expected_carry, rtol=1e-12)
    assert_same(ys, expected_ys, rtol=1e-12)


def test_no_xs_and_no_ys(backend):
    def powers(x):
        return jitflow.scan(lambda c, _: (c * x, c), np.float64(1.0), None, length=4)
    carry, ys = jitflow.function(powers)(np.float64(2.0))
    assert_same(carry, np.float64(16.0))
    assert_same(ys, np.array([1.0, 2.0, 4.0, 8.0]))
    count, nothing = jitflow.function(lambda xs: jitflow.scan(
        lambda c, x: (c + 1, None), 0, xs))(np.ones((3, 2)))
    assert int(count) == 3 and nothing is None


@pytest.mark.parametrize("call, error, words", [
    (lambda: jitflow.scan(lambda c, x: (c, x), 0.0, {"a": np.ones(3), "b": np.ones(4)}),
     ValueError, r"scan: xs\['b'\] has 4 rows, but xs\['a'\] has 3"),
    (lambda: jitflow.scan(lambda c, x: (c, x), 0.0, np.ones(3), length=2),
     ValueError, r"xs has 3 rows, but length is 2"),
    (lambda: jitflow.scan(lambda c, x: (c, x), 0.0, np.float64(1.0)),
     ValueError, r"xs is a scalar"),
    (lambda: jitflow.function(lambda xs: jitflow.scan(lambda c, x: c + x, 0.0, xs))(
        np.ones(3)), TypeError, r"f must return a pair \(carry, y\)"),
    (lambda: jitflow.function(lambda xs: jitflow.scan(
        lambda c, x: (c.astype(np.float32), x), np.zeros(2), xs))(np.ones((3, 2))),
     TypeError, r"scan: f: returns carry is f32\[2\], but it came in as f64\[2\]"),
])
def test_bad_scans_are_clear_errors(call, error, words):
    with pytest.raises(error, match=words) as raised:
        call()
    assert "test_scan.py" in str(raised.value)


def test_a_gradient_tape_records_through_eager_and_compiled_scans():
    w = jitflow.Variable(np.array([[0.5, -0.3], [0.2, 0.9]]))
    xs = np.random.default_rng(3).standard_normal((4, 2))

    def loss():
        _, ys = jitflow.scan(lambda h, x: (jnp.tanh(h @ w + x),) * 2, np.zeros(2), xs)
        return jnp.sum(ys ** 2)

    def tape_gradient():
        with jitflow.GradientTape() as tape:
            value = loss()
        return tape.gradient(value, w)
    expected = jitflow.grad(lambda v: jnp.sum(jitflow.scan(
        lambda h, x: (jnp.tanh(h @ v + x),) * 2, np.zeros(2), xs)[1] ** 2))(w.numpy())
    assert_same(tape_gradient(), expected, rtol=1e-13)
    assert_same(jitflow.function(tape_gradient)(), expected, rtol=1e-12)


def test_vmap_of_a_scan_is_a_scan_per_element(backend):
    xs = np.random.default_rng(5).standard_normal((3, 4))  # 3 sequences of 4
    running = jitflow.function(jitflow.vmap(
        lambda seq: jitflow.scan(lambda c, x: (c * 0.5 + x, c), 0.0, seq)))
    carry, ys = running(xs)
    expected_carry, expected_ys = [], []
    for seq in xs:
        c, rows = 0.0, []
        for x in seq:
            rows.append(c)
            c = c * 0.5 + x
        expected_carry.append(c)
        expected_ys.append(rows)
    assert_same(carry, np.array(expected_carry), rtol=1e-15)
    assert_same(ys, np.array(expected_ys), rtol=1e-15)
