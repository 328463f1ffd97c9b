"""Donated arguments (jitflow.function(..., donate_argnames=...)): the same results as a
call without donation, written into the donated arrays, which are returned; a call that
raises leaves them as they were. And which outputs native code writes over its inputs
(codegen/runtime/in_place.py)."""
import numpy as np
import pytest

import jitflow
from jitflow.codegen.runtime.in_place import in_place_outputs
from jitflow.ir.passes.fuse import fuse

RNG = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def on_each_backend(backend):
    return backend


def sgd_step(params, x, y):
    w, b = params
    error = x @ w + b - y
    loss = (error * error).mean()
    gw, gb = x.T @ error, error.sum(axis=0)
    return (w - 0.1 * gw, b - 0.1 * gb), loss


def problem():
    w, b = RNG.standard_normal((5, 3)), RNG.standard_normal(3)
    return (w, b), RNG.standard_normal((8, 5)), RNG.standard_normal((8, 3))


@pytest.mark.parametrize("donation", [{"donate_argnames": ("params",)},
                                      {"donate_argnums": 0}, {"donate_argnums": (-3,)}])
def test_donated_steps_give_the_undonated_results_in_the_donated_arrays(donation):
    plain, donating = jitflow.function(sgd_step), jitflow.function(sgd_step, **donation)
    params, x, y = problem()
    expected = tuple(p.copy() for p in params)
    for _ in range(3):
        expected, expected_loss = plain(expected, x, y)
        new, loss = donating(params, x, y)
        assert new[0] is params[0] and new[1] is params[1]
        np.testing.assert_allclose(params[0], expected[0], rtol=1e-12)
        np.testing.assert_allclose(params[1], expected[1], rtol=1e-12)
        np.testing.assert_allclose(loss, expected_loss, rtol=1e-12)


def test_a_donated_array_read_after_its_update_gives_numpys_result():
    def step(w, g):
        return w - 0.5 * g, (w * w).sum()  # the sum reads w after the update is made
    w, g = RNG.standard_normal(100), RNG.standard_normal(100)
    expected = step(w, g)
    new, total = jitflow.function(step, donate_argnames="w")(w, g)
    assert new is w
    np.testing.assert_allclose(w, expected[0], rtol=1e-12)
    np.testing.assert_allclose(total, expected[1], rtol=1e-12)


def test_results_cross_donated_arrays_and_the_unmatched_stay_as_they_were():
    def swap(a, b, c):
        return b * 2, a + 1, a.sum()
    a, b, c = (RNG.standard_normal(6) for _ in range(3))
    expected, c_before = swap(a, b, c), c.copy()
    result = jitflow.function(swap, donate_argnames=("a", "b", "c"))(a, b, c)
    assert result[0] is a and result[1] is b  # in order: the first array that matches
    for got, want in zip(result, expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_array_equal(c, c_before)


def test_one_array_donated_twice_takes_one_result():
    def both(u, v):
        return u + v, u - v
    u = RNG.standard_normal(7)
    expected = both(u, u)
    first, second = jitflow.function(both, donate_argnums=(0, 1))(u, u)
    assert first is u and second is not u
    np.testing.assert_allclose(first, expected[0])
    np.testing.assert_allclose(second, expected[1])


def test_a_call_that_raises_leaves_donated_arrays_and_variables_as_they_were():
    v = jitflow.Variable(np.zeros(4))

    def step(w, i):
        v.assign_add(w)
        return w * 3, w[i]
    stepping = jitflow.function(step, donate_argnames="w")
    w = np.arange(4.0)
    stepping(w, np.int64(1))
    np.testing.assert_array_equal(w, [0, 3, 6, 9])
    with pytest.raises(IndexError):
        stepping(w, np.int64(9))
    np.testing.assert_array_equal(w, [0, 3, 6, 9])
    np.testing.assert_array_equal(v.numpy(), [0, 1, 2, 3])


def test_donation_eagerly_writes_the_donated_arrays():
    w = np.ones(3)
    jitflow.config.run_eagerly = True
    try:
        result = jitflow.function(lambda w: w * 5, donate_argnums=0)(w)
    finally:
        jitflow.config.run_eagerly = False
    assert result is w
    np.testing.assert_array_equal(w, [5, 5, 5])


def test_out_exactly_an_argument_of_an_update_gives_numpys_result():
    @jitflow.function
    def adam_like(m, v, g):
        m2 = 0.9 * m + 0.1 * g
        v2 = 0.99 * v + 0.01 * g * g
        return m2, v2, m2 / (np.sqrt(v2) + 1e-8)
    m, v, g = (RNG.standard_normal(1000).astype(np.float32) for _ in range(3))
    v = np.abs(v)
    expected = adam_like.fn(m, v, g)
    step = np.empty(1000, np.float32)
    adam_like(m, v, g, out=(m, v, step))
    for got, want in zip((m, v, step), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("names, error", [
    (("nope",), "donate_argnames \\['nope'\\] are not parameters"),
])
def test_bad_donations_are_refused(names, error):
    with pytest.raises(ValueError, match=error):
        jitflow.function(sgd_step, donate_argnames=names)
    with pytest.raises(ValueError, match="donate_argnums 5 is no parameter"):
        jitflow.function(sgd_step, donate_argnums=5)
    with pytest.raises(ValueError, match="static; only arrays can be donated"):
        jitflow.function(sgd_step, static_argnames="x", donate_argnames="x")


def relu_step(params, x):
    """A step whose parameters are written over in place: it cannot fail, and reads
    each parameter before the update that writes it."""
    h = np.maximum(x @ params["w"], 0)
    loss = (h * h).mean()
    mask = (x @ params["w"] > 0) * 2.0 * h / h.size
    return {"w": params["w"] - 0.1 * (x.T @ mask), "b": params["b"] * 0.5 + loss}, loss


def relu_problem():
    params = {"w": RNG.standard_normal((6, 4)), "b": RNG.standard_normal(4)}
    return params, RNG.standard_normal((5, 6))


def test_donated_steps_go_straight_to_native_code_with_the_checked_paths_bits(
        backend, monkeypatch):
    """From a signature's second call on, each parameter is passed to the native entry
    as the output it takes, and written in place: no Executable runs."""
    plain = jitflow.function(relu_step)
    donating = jitflow.function(relu_step, donate_argnames="params")
    params, x = relu_problem()
    expected = {k: v.copy() for k, v in params.items()}
    expected, expected_loss = plain(expected, x)
    new, loss = donating(params, x)
    if backend == "native":
        monkeypatch.setattr(jitflow.executable.Executable, "__call__", None)
    for _ in range(3):
        expected, expected_loss = plain(expected, x)
        new, loss = donating(params, x)
        assert new["w"] is params["w"] and new["b"] is params["b"]
        for name in params:
            assert params[name].tobytes() == expected[name].tobytes()
        assert loss == expected_loss and type(loss) is type(expected_loss)


@pytest.mark.parametrize("spoil", ["read-only", "shared", "read as x too"])
def test_donations_the_native_entry_cannot_write_take_the_checked_path(spoil):
    """A donated array that may not be written, or that shares memory with another
    donated or read one: the checked path's choice (no donation of it, or results
    computed apart), with NumPy's results."""
    params, x = relu_problem()
    if spoil == "read-only":
        params["w"].flags.writeable = False
    elif spoil == "shared":
        params["b"] = params["w"][0]  # a view: the two donated arrays overlap
    elif spoil == "read as x too":
        buffer = RNG.standard_normal(30)
        params["w"], x = buffer[:24].reshape(6, 4), buffer.reshape(5, 6)
    donating = jitflow.function(relu_step, donate_argnames="params")
    for _ in range(3):
        before = {k: v.copy() for k, v in params.items()}
        expected, expected_loss = relu_step(before, x.copy())
        new, loss = donating(params, x)
        for name in params:
            np.testing.assert_allclose(new[name], expected[name], rtol=1e-12)
        np.testing.assert_allclose(loss, expected_loss, rtol=1e-12)
        if spoil == "read-only":
            assert new["w"] is not params["w"]
            np.testing.assert_array_equal(params["w"], before["w"])


def test_a_donated_step_that_cannot_be_written_in_place_copies_its_results():
    """An embedding's gather may fail (an index out of range): its parameters'
    results are computed apart and copied over only after the call succeeded."""
    def step(table, tokens):
        return table - 0.1 * table[tokens].sum(), table[tokens].sum()
    table = RNG.standard_normal((10, 3))
    donating = jitflow.function(step, donate_argnames="table")
    for tokens in (np.array([1, 2]), np.array([3, 9])):
        expected = step(table.copy(), tokens)
        new, total = donating(table, tokens)
        assert new is table
        np.testing.assert_allclose(table, expected[0], rtol=1e-12)
    before = table.copy()
    with pytest.raises(IndexError):
        donating(table, np.array([0, 10]))
    np.testing.assert_array_equal(table, before)


# --- which outputs the code may write over its inputs -----------------------------------

def in_place_of(fn, *args):
    return in_place_outputs(fuse(jitflow.function(fn).trace(*args)))


W = np.ones(8, np.float32)


@pytest.mark.parametrize("fn, expected", [
    (lambda w, g: w - 0.5 * g, {0: {0, 1}}),
    (lambda w, g: (w - 0.5 * g, (w * w).sum()), {0: {1}}),  # w is read after
    (lambda w, g: ((w * w).sum(), w - 2 * g), {1: {0, 1}}),
    (lambda w, g: (g * 2, w + 1), {0: {1}, 1: {0}}),
    (lambda w, g: (w + 1, w.reshape(2, 4)), {}),  # a view of w is returned
    (lambda w, g: (w + 1).sum() + g, {}),  # a reduction in between: not elementwise
    (lambda w, g: (w + w[::-1], g), {}),  # a view of w read by the same node
    (lambda w, g: w.reshape(4, 2).T, {}),
    (lambda w, g: w - 0.5 * g * (w > 0), {0: {0, 1}}),  # a mask by a Python number
])
def test_outputs_written_over_inputs_only_where_each_element_is_read_first(fn, expected):
    assert {k: set(v) for k, v in in_place_of(fn, W, W).items()} == expected


def test_no_output_is_written_over_an_input_in_code_that_can_fail():
    assert in_place_of(lambda w, i: w * 2 + w[i], W, np.int64(0)) == {}
    assert in_place_of(lambda w, g: w * 2 + g, W.astype(np.int32), W.astype(np.int32)) == {}


# --- Variables' old arrays reused for their new values (recycled_variables.py) ----------

def test_large_variables_stepped_in_turn_hold_numpys_values_and_old_values_stay():
    n = 50_000  # float64: above the size whose arrays are reused
    start = RNG.standard_normal(n)
    v = jitflow.Variable(start)

    @jitflow.function
    def step(g):
        v.assign_sub(0.5 * g)
        return v * 1.0
    expected, kept, held = start.copy(), [], []
    for i in range(8):
        g = RNG.standard_normal(n)
        if i % 3 == 0:  # a reference to the value held now
            kept.append((v.value, v.value.copy()))
        expected = expected - 0.5 * g
        np.testing.assert_allclose(step(g), expected, rtol=1e-12)
        np.testing.assert_allclose(v.numpy(), expected, rtol=1e-12)
        held.append(id(v.value))
    for array, then in kept:  # no value anyone holds was written by a later step
        np.testing.assert_array_equal(array, then)
    if jitflow.config.backend == "native":  # the others' arrays were used again
        assert len(set(held)) < len(held)


def test_a_step_that_raises_leaves_large_variables_as_they_were():
    n = 40_000
    v = jitflow.Variable(np.zeros(n))

    @jitflow.function
    def step(x, i):
        v.assign_add(x)
        return x[i]
    x = np.ones(n)
    for _ in range(3):
        step(x, np.int64(0))
    with pytest.raises(IndexError):
        step(x, np.int64(n))
    np.testing.assert_array_equal(v.numpy(), np.full(n, 3.0))
    step(x, np.int64(0))
    np.testing.assert_array_equal(v.numpy(), np.full(n, 4.0))
