"""f(..., out=arrays): a compiled function's results written into the caller's arrays,
on both backends, against NumPy's results; and every out= jitflow refuses."""
import numpy as np
import pytest

import jitflow

RNG = np.random.default_rng(7)


def floats(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


@pytest.fixture(autouse=True)
def on_each_backend(backend):
    return backend


def test_an_elementwise_result_is_written_into_out_and_out_returned():
    @jitflow.function
    def triad(b, c, s):
        return b + s * c
    b, c, out = floats(1000), floats(1000), np.zeros(1000, np.float32)
    s = np.float32(3)
    assert triad(b, c, s, out=out) is out
    np.testing.assert_allclose(out, b + s * c, rtol=1e-6)
    np.testing.assert_allclose(triad(c, b, s, out=out), c + s * b, rtol=1e-6)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions_into_out(axis):
    @jitflow.function
    def total(x):
        return np.tanh(x).sum(axis=axis)
    x = floats(6, 5, dtype=np.float64)
    expected = np.tanh(x).sum(axis=axis)
    out = np.empty(np.shape(expected))
    assert total(x, out=out) is out
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_a_matmul_into_out():
    @jitflow.function
    def product(a, b):
        return a @ b
    a, b = floats(33, 17), floats(17, 9)
    out = np.empty((33, 9), np.float32)
    product(a, b, out=out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("container", [tuple, list])
def test_several_results_into_a_container_of_arrays(container):
    @jitflow.function
    def stats(x):
        return x.mean(axis=0), x - x.mean(axis=0), (x * x).sum()
    x = floats(8, 3, dtype=np.float64)
    out = container([np.empty(3), np.empty((8, 3)), np.empty(())])
    assert stats(x, out=out) is out
    for got, want in zip(out, (x.mean(axis=0), x - x.mean(axis=0), (x * x).sum())):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_dict_of_results_into_a_dict_of_arrays():
    @jitflow.function
    def parts(x):
        return {"double": 2 * x, "neg": -x}
    x = floats(4)
    out = {"double": np.empty(4, np.float32), "neg": np.empty(4, np.float32)}
    parts(x, out=out)
    np.testing.assert_array_equal(out["double"], 2 * x)
    np.testing.assert_array_equal(out["neg"], -x)


def test_out_the_same_array_as_an_argument_gives_numpys_result():
    @jitflow.function
    def step(w, g):
        return w - 0.5 * g
    w, g = floats(257), floats(257)
    expected = w - 0.5 * g
    step(w, g, out=w)
    np.testing.assert_allclose(w, expected, rtol=1e-6)


def test_out_overlapping_an_argument_that_is_read_whole_gives_numpys_result():
    @jitflow.function
    def both(a):
        return a @ a, np.cumsum(a, axis=0)
    a = floats(16, 16, dtype=np.float64)
    expected = (a @ a, np.cumsum(a, axis=0))
    shifted = np.empty((17, 16))
    shifted[1:] = a
    out = (a, np.empty((16, 16)))
    both(shifted[1:], out=(shifted[:16], out[1]))  # out shares rows with the argument
    np.testing.assert_allclose(shifted[:16], expected[0], rtol=1e-12)
    np.testing.assert_allclose(out[1], expected[1], rtol=1e-12)


def test_out_not_contiguous_gets_the_result():
    @jitflow.function
    def double(x):
        return 2 * x
    x = floats(5, 4)
    wide = np.zeros((5, 8), np.float32)
    double(x, out=wide[:, ::2])
    np.testing.assert_array_equal(wide[:, ::2], 2 * x)
    np.testing.assert_array_equal(wide[:, 1::2], 0)


def test_out_with_variables_writes_both():
    v = jitflow.Variable(np.zeros(3))

    @jitflow.function
    def accumulate(x):
        v.assign_add(x)
        return v * 2
    out = np.empty(3)
    accumulate(np.ones(3), out=out)
    accumulate(np.ones(3), out=out)
    np.testing.assert_array_equal(v.numpy(), [2, 2, 2])
    np.testing.assert_array_equal(out, [4, 4, 4])


def test_a_function_with_its_own_out_parameter_gets_it():
    @jitflow.function
    def shifted(x, out=1.0):
        return x + out
    np.testing.assert_array_equal(shifted(np.zeros(2), out=3.0), [3, 3])


def test_out_eagerly_writes_the_result():
    @jitflow.function
    def square(x):
        return x * x
    out = np.empty(3)
    jitflow.config.run_eagerly = True
    try:
        assert square(np.arange(3.0), out=out) is out
    finally:
        jitflow.config.run_eagerly = False
    np.testing.assert_array_equal(out, [0, 1, 4])


@jitflow.function
def pair(x):
    return x + 1, x.sum()


@pytest.mark.parametrize("out, error, words", [
    ((np.empty(4), np.empty(())), ValueError, "out[0] is float64[4], the result is float64[3]"),
    ((np.empty(3, np.float32), np.empty(())), ValueError, "out[0] is float32[3]"),
    ((np.empty(3), np.empty(1)), ValueError, "out[1] is float64[1]"),
    (np.empty(3), TypeError, "structure of the results (a tuple of 2 arrays)"),
    ((np.empty(3),), TypeError, "got a tuple of 1 arrays"),
    (([1.0, 2, 3], np.empty(())), TypeError, "got a tuple of 4 arrays"),
    ((np.empty(3), 0.0), TypeError, "out[1] must be a NumPy array, got float"),
])
def test_bad_out_is_refused_naming_the_function_and_array(out, error, words):
    with pytest.raises(error, match="pair") as raised:
        pair(np.zeros(3), out=out)
    assert words in str(raised.value)


def test_read_only_out_is_refused():
    out = (np.empty(3), np.empty(()))
    out[0].flags.writeable = False
    with pytest.raises(ValueError, match=r"pair\(out=...\): out\[0\] is read-only"):
        pair(np.zeros(3), out=out)


def test_outs_sharing_memory_are_refused():
    @jitflow.function
    def twice(x):
        return x + 1, x + 2
    buffer = np.empty(6)
    with pytest.raises(ValueError, match=r"out\[0\] and out\[1\] share memory"):
        twice(np.zeros(4), out=(buffer[:4], buffer[2:]))


def test_out_inside_a_trace_is_refused():
    @jitflow.function
    def inner(x):
        return x + 1

    @jitflow.function
    def outer(x):
        return inner(x, out=x)
    with pytest.raises(TypeError, match="inner.*inside a traced function"):
        outer(np.zeros(3))


def test_out_and_donation_while_checking_for_nans():
    @jitflow.function
    def halve(x):
        return x / 2
    step = jitflow.function(lambda w: w - 1, donate_argnums=0)
    out, w = np.empty(3), np.zeros(3)
    jitflow.config.debug_nans = True
    try:
        assert halve(np.arange(3.0), out=out) is out
        assert step(w) is w
    finally:
        jitflow.config.debug_nans = False
    np.testing.assert_array_equal(out, [0, 0.5, 1])
    np.testing.assert_array_equal(w, [-1, -1, -1])


def test_out_after_out_goes_straight_to_native_code(backend, monkeypatch):
    """From the second out= call of a signature on, the native entry takes the arrays
    itself: no Executable runs."""
    @jitflow.function
    def halves(x):
        return x / 2, x.sum()
    x, out = floats(40), (np.empty(40, np.float32), np.empty((), np.float32))
    assert halves(x, out=out) is out
    np.testing.assert_array_equal(out[0], x / 2)
    if backend != "native":
        return
    monkeypatch.setattr(jitflow.executable.Executable, "__call__", None)
    y = floats(40)
    assert halves(y, out=out) is out
    np.testing.assert_array_equal(out[0], y / 2)
    np.testing.assert_allclose(out[1], y.sum(), rtol=1e-5)
    assert halves.cache_info().hits >= 1


def odd_outs(base):
    """out= arrays for scaled(base[1:-1]) that the native entry declines, each with the
    error jitflow gives (None: it writes NumPy's result)."""
    size = base.size - 2
    read_only = np.zeros(size)
    read_only.flags.writeable = False
    return {
        "the argument": (base[1:-1], None),
        "one ahead of the argument": (base[2:], None),  # each write lands on a later read
        "every other element": (np.zeros(2 * size)[::2], None),
        "float32": (np.zeros(size, np.float32),
                    f"out is float32[{size}], the result is float64[{size}]"),
        "read-only": (read_only, "out is read-only"),
        "a list of one": ([np.zeros(size)], "structure of the results"),
    }


@pytest.mark.parametrize("case", list(odd_outs(np.zeros(102))))
def test_out_after_out_with_any_array_gets_numpys_result_or_the_same_error(case):
    @jitflow.function
    def scaled(x):
        return 3 * x - 1
    base = np.arange(102.0)
    expected = 3 * base[1:-1] - 1
    scaled(base[1:-1], out=np.empty(100))  # the next call may go straight to native code
    out, error = odd_outs(base)[case]
    if error is not None:
        with pytest.raises((TypeError, ValueError), match="scaled") as raised:
            scaled(base[1:-1], out=out)
        assert error in str(raised.value)
        return
    assert scaled(base[1:-1], out=out) is out
    np.testing.assert_array_equal(out, expected)
