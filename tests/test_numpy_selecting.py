"""nonzero, argwhere, flatnonzero, where(condition), extract and compress
(jitflow/numpy/selecting.py): NumPy's results eagerly; traced with a static size=,
NumPy's results cut to `size` or filled past the count; the error that asks for size=;
derivatives of the values taken."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same
from jitflow.errors import ConcretizationError
from jitflow.testing import check_grads
from numpy_programs import check_program
from strategies import DTYPES, arrays, shapes

pytestmark = pytest.mark.usefixtures("backend")
# a third of the profile's examples on each backend: every one traces and compiles
DRAWN = settings(max_examples=max(5, settings.default.max_examples // 3))


def sized(result, size, fill):
    """NumPy's 1-d `result` held to `size` elements: the first ones, then `fill`."""
    kept = result[:size]
    padding = np.full((size - kept.shape[0],) + result.shape[1:], fill, result.dtype)
    return np.concatenate([kept, padding])


def check_sized(jitflow_fn, expected):
    """jitflow_fn eagerly and compiled gives the arrays `expected`."""
    for run in (lambda *a: jitflow_fn(*a), jitflow.function(jitflow_fn)):
        got = run()
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert_same(g, e)


SELECTIONS = {
    "nonzero": lambda xp, x: xp.nonzero(x),
    "where": lambda xp, x: xp.where(x),
    "argwhere": lambda xp, x: xp.argwhere(x),
    "flatnonzero": lambda xp, x: xp.flatnonzero(x),
    "extract": lambda xp, x: xp.extract(x, x),
    "compress": lambda xp, x: xp.compress(xp.ravel(x)[:3] > 0, x),
}


@DRAWN
@given(data=st.data())
def test_eagerly_as_numpy(backend, data):
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    x = data.draw(arrays(dtype, data.draw(shapes(), label="shape")), label="x")
    name = data.draw(st.sampled_from(sorted(SELECTIONS)), label="name")
    expected = None
    try:
        expected = SELECTIONS[name](np, x)
    except ValueError:  # nonzero of 0-d
        with pytest.raises(ValueError, match="0d arrays"):
            SELECTIONS[name](jnp, x)
        return
    got = SELECTIONS[name](jnp, x)
    for g, e in zip(got if isinstance(got, tuple) else (got,),
                    expected if isinstance(expected, tuple) else (expected,)):
        assert_same(g, e, what=name)


@DRAWN
@given(data=st.data())
def test_traced_with_size_holds_the_first_elements(backend, data):
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    x = data.draw(arrays(dtype, data.draw(shapes(min_dims=1), label="shape")), label="x")
    size = data.draw(st.integers(0, 6), label="size")
    fill = data.draw(st.integers(-3, 3), label="fill")
    which = data.draw(st.sampled_from(["nonzero", "argwhere", "flatnonzero", "extract",
                                       "compress"]), label="which")
    if which == "nonzero":
        expected = [sized(i, size, fill) for i in np.nonzero(x)]
        fn = jitflow.function(lambda x: jnp.nonzero(x, size=size, fill_value=fill))
    elif which == "argwhere":
        expected = [sized(np.argwhere(x), size, fill)]
        fn = jitflow.function(lambda x: jnp.argwhere(x, size=size, fill_value=fill))
    elif which == "flatnonzero":
        expected = [sized(np.flatnonzero(x), size, fill)]
        fn = jitflow.function(lambda x: jnp.flatnonzero(x, size=size, fill_value=fill))
    elif which == "extract":
        expected = [sized(np.extract(x, x), size, np.asarray(fill).astype(dtype))]
        fn = jitflow.function(lambda x: jnp.extract(x, x, size=size, fill_value=fill))
    else:
        condition = np.ravel(x)[:x.shape[0]] != 0
        expected = [sized(np.compress(condition, x, 0), size,
                          np.asarray(fill).astype(dtype))]
        fn = jitflow.function(lambda x: jnp.compress(
            jnp.ravel(x)[:x.shape[0]] != 0, x, axis=0, size=size, fill_value=fill))
    got = fn(x)
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected):
        assert_same(g, e, what=which)


def test_nonzero_methods_and_numpy_dispatch(backend):
    x = np.array([[0.0, 1.5, np.nan], [-0.0, 2.0, 0.0]])
    expected = np.nonzero(x)
    check_sized(lambda: jnp.asarray(x).nonzero(), expected)
    got = jitflow.function(lambda x: x.nonzero(size=3))(x)
    for g, e in zip(got, expected):
        assert_same(g, e)
    got = jitflow.function(lambda x: x.compress([True, False, True], axis=1, size=2))(x)
    assert_same(got, x.compress([True, False, True], axis=1))


def test_fill_values_per_axis_and_where_with_one_argument(backend):
    x = np.array([[0, 3, 0], [4, 0, 5]], np.int32)
    got = jitflow.function(lambda x: jnp.where(x > 0, size=5, fill_value=(-1, -2)))(x)
    rows, cols = np.nonzero(x > 0)
    assert_same(got[0], sized(rows, 5, -1))
    assert_same(got[1], sized(cols, 5, -2))
    got = jitflow.function(lambda x: jnp.argwhere(x, size=4, fill_value=9))(x)
    assert_same(got, sized(np.argwhere(x), 4, 9))


@pytest.mark.parametrize("name", ["nonzero", "argwhere", "flatnonzero", "where"])
def test_traced_without_size_asks_for_it(backend, name):
    fn = jitflow.function(lambda x: getattr(np, name)(x))
    with pytest.raises(ConcretizationError, match=f"(?s)jitflow.numpy.{name}.*pass a static "
                                                  f"size="):
        fn(np.ones(3))


def test_extract_and_compress_without_size_ask_for_it(backend):
    with pytest.raises(ConcretizationError, match="(?s)jitflow.numpy.extract.*size="):
        jitflow.function(lambda x: np.extract(x > 0, x))(np.ones(3))
    with pytest.raises(ConcretizationError, match="(?s)jitflow.numpy.compress.*size="):
        jitflow.function(lambda x: np.compress(x > 0, x))(np.ones(3))


def test_bad_inputs(backend):
    x = np.arange(4.0)
    with pytest.raises(ValueError, match="negative"):
        jnp.nonzero(x, size=-1)
    with pytest.raises(TypeError, match="Python int"):
        jitflow.function(lambda x, n: jnp.nonzero(x, size=n))(x, np.int64(2))
    with pytest.raises(ValueError, match="either both or neither"):
        jnp.where(x > 1, x)
    with pytest.raises(ValueError, match="1-d"):
        jnp.compress(np.ones((2, 2), bool), x)
    with pytest.raises(ValueError, match="2 values"):
        jnp.nonzero(np.eye(2), size=2, fill_value=(1, 2, 3))
    # a condition longer than the array: NumPy's IndexError when a true lies past it
    check_program(lambda xp, x: xp.compress([1, 0, 1, 1, 1], x), x)
    check_program(lambda xp, x: xp.extract([1, 0, 1, 1, 0, 0], x), x)
    with pytest.raises(IndexError, match="more than the 4"):
        jitflow.function(lambda x, c: jnp.extract(c, x, size=2))(x, np.ones(5, bool))


def test_derivatives_of_the_values_taken(backend):
    x = np.array([0.7, -1.2, 2.0, 0.3, -0.4])
    order = 2 if backend == "interpreter" else 1
    for fn in (lambda x: jnp.extract(x > 0, x, size=4) ** 2,
               lambda x: jnp.extract(x > 0, x * x, size=5) * 3.0,
               lambda x: jnp.compress(x > 0, x, size=2, fill_value=1.0) ** 3,
               lambda x: jnp.reshape(x, (5, 1))[jnp.nonzero(x < 0, size=3)] * 2.0):
        check_grads(fn, (x,), order=order)
        check_grads(jitflow.function(fn), (x,), order=1)
    # eagerly the count is known: no size needed
    check_grads(lambda x: jnp.extract(x > 0, x * x) * 3.0, (x,), order=order)
