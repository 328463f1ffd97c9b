"""jitflow.config.debug_nans / debug_infs: a compiled call that makes a NaN (an inf)
raises FloatingPointError at the operation and line that made it, and writes nothing."""
import numpy as np
import pytest

import jitflow
from tests_support import line_of


@pytest.fixture
def debug(request):
    """Turn on config.debug_nans and debug_infs for one test."""
    before = jitflow.config.debug_nans, jitflow.config.debug_infs
    jitflow.config.debug_nans = jitflow.config.debug_infs = True
    yield
    jitflow.config.debug_nans, jitflow.config.debug_infs = before


def test_a_nan_made_in_compiled_code_names_the_operation_and_line(backend, debug):
    w = jitflow.Variable(np.ones(3), name="w")
    total = np.zeros(3)

    def step(x):
        nonlocal total
        z = np.log(x * 2 - 1.0)  # makes a NaN
        w.assign(w + z)
        total += z
        return z.sum()
    compiled = jitflow.function(step)
    assert compiled(np.array([1.0, 2.0, 3.0])) == pytest.approx(np.log([1, 3, 5]).sum())
    w_before, total_before = w.numpy().copy(), total.copy()
    with pytest.raises(FloatingPointError, match="invalid value encountered in log") as info:
        compiled(np.array([1.0, 0.1, 3.0]))
    assert line_of("# makes a NaN", step) in str(info.value)
    assert "x: float64[3] min 0.1 max 3" in str(info.value)
    np.testing.assert_array_equal(w.numpy(), w_before)  # nothing was written
    np.testing.assert_array_equal(total, total_before)


def test_a_nan_given_as_input_is_said_to_come_from_the_inputs(backend, debug):
    f = jitflow.function(lambda x: x * 2)
    with pytest.raises(FloatingPointError, match="came in with the inputs"):
        f(np.array([np.nan, 1.0]))


@pytest.mark.parametrize("fn", [lambda x: x.T, lambda x: x @ x, lambda x: x.sum(axis=0)],
                         ids=["transpose", "matmul", "sum"])
def test_a_nan_that_only_moves_through_non_elementwise_work_is_caught(backend, debug, fn):
    """No elementwise operation sees it: the check of the outputs does."""
    x = np.eye(3)
    x[1, 2] = np.nan
    with pytest.raises(FloatingPointError, match="came in with the inputs"):
        jitflow.function(fn)(x)


def test_an_inf_made_by_a_matrix_product_is_caught(backend, debug):
    with pytest.raises(FloatingPointError, match="overflow encountered in matmul.*makes a NaN or an inf"):
        jitflow.function(lambda a: a @ a)(np.full((2, 2), 1e200))


@pytest.mark.parametrize("make", [lambda x: np.exp(x * 1000.0), lambda x: 1.0 / (x - x)],
                         ids=["overflow", "division-by-zero"])
def test_an_inf_is_refused_under_debug_infs(backend, debug, make):
    with pytest.raises(FloatingPointError, match="overflow|divide"):
        jitflow.function(make)(np.ones(2))


def test_debug_nans_holds_for_functions_run_eagerly(debug):
    jitflow.config.run_eagerly = True
    try:
        with pytest.raises(FloatingPointError, match="invalid value"):
            jitflow.function(lambda x: np.sqrt(x))(np.array([-1.0]))
    finally:
        jitflow.config.run_eagerly = False


def test_without_the_switches_a_nan_is_returned_as_numpy_returns_it(backend):
    assert not jitflow.config.debug_nans
    with np.errstate(invalid="ignore"):
        expected = np.log(np.array([-1.0]))
    result = jitflow.function(lambda x: np.log(x))(np.array([-1.0]))
    assert np.isnan(result).all() and np.isnan(expected).all()


def test_a_nan_no_result_shows_is_caught_inside_fused_code(backend, debug):
    def step(x):
        y = np.sqrt(x - 1.0)  # NaN where x < 1, then dropped
        return np.where(x >= 1.0, y, 0.0) * 2
    compiled = jitflow.function(step)
    fine = np.linspace(1.0, 3.0, 37)
    np.testing.assert_allclose(compiled(fine), step(fine))
    with pytest.raises(FloatingPointError, match="invalid value encountered in sqrt") as info:
        compiled(np.linspace(0.0, 3.0, 37))
    assert line_of("# NaN where x < 1", step) in str(info.value)


def test_an_inf_no_result_shows_is_caught_inside_fused_code(backend, debug):
    def step(x):
        return np.minimum(np.exp(x), 5.0).sum()  # exp overflows, then is clipped
    compiled = jitflow.function(step)
    assert compiled(np.zeros(5)) == 5.0
    with pytest.raises(FloatingPointError, match="overflow"):
        compiled(np.full(5, 1000.0))


@pytest.mark.parametrize("size", [1, 7, 13, 16, 17, 33, 100])
def test_no_nan_is_reported_where_none_is_made(backend, debug, size):
    # the lanes of a vector past the end of a row hold no numbers of the program's: a
    # 0/0 there is not the program's NaN
    def step(x):
        return (x / x + np.log(x) * np.sqrt(x)).sum(axis=-1)
    compiled = jitflow.function(step)
    x = np.linspace(0.5, 2.0, 3 * size).reshape(3, size)
    for _ in range(2):
        np.testing.assert_allclose(compiled(x), step(x), rtol=1e-12)
