"""union1d, intersect1d, setdiff1d and setxor1d of complex arrays (and of a real one
with a complex one), compiled, against NumPy: NaNs of either part, infinities and
signed zeros among the values, so that the value standing for the NaNs is NumPy's."""
import warnings

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp

pytestmark = pytest.mark.usefixtures("backend")
EXAMPLES = settings(max_examples=10 if settings.default.max_examples < 1000 else 400)

NAN, INF = float("nan"), float("inf")
PARTS = [0.0, -0.0, 1.0, -1.0, 2.5, NAN, INF]
CALLS = [("union1d", {}), ("intersect1d", {}), ("intersect1d", {"return_indices": True}),
         ("setxor1d", {}), ("setdiff1d", {}), ("setdiff1d", {"assume_unique": True})]


def vectors(dtype):
    part = st.sampled_from(PARTS)
    element = st.builds(complex, part, part) if np.dtype(dtype).kind == "c" else part
    return hnp.arrays(dtype, st.integers(0, 6), elements=element)


def array_pairs():
    """Two vectors, at least one complex."""
    dtypes = st.sampled_from([np.complex64, np.complex128, np.float32])
    return st.tuples(dtypes, dtypes).filter(lambda d: np.dtype(d[0]).kind == "c" or
                                            np.dtype(d[1]).kind == "c").flatmap(
        lambda d: st.tuples(vectors(d[0]), vectors(d[1])))


def assert_same(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got, expected)
    for part in (np.real, np.imag):
        np.testing.assert_array_equal(part(got), part(expected))


def numpy_result(name, a, b, options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = getattr(np, name)(a, b, **options)
    return result if isinstance(result, tuple) else (result,)


@EXAMPLES
@given(array_pairs(), st.sampled_from(CALLS))
def test_set_functions_are_numpys(arrays, call):
    (a, b), (name, options) = arrays, call
    expected = numpy_result(name, a, b, options)
    count = len(expected[0])
    got = jitflow.function(lambda a, b: getattr(jnp, name)(a, b, size=count, **options))(a, b)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_same(g, e)


@pytest.mark.parametrize("name, options", CALLS)
def test_slots_past_the_count_hold_the_fill(name, options):
    a = np.array([2 + 1j, complex(NAN, 1), 1, 1, -0.5j], np.complex64)
    b = np.array([1, complex(3, NAN), 5j], np.complex64)
    expected = numpy_result(name, a, b, options)
    count = len(expected[0])
    got = jitflow.function(lambda a, b: getattr(jnp, name)(
        a, b, size=count + 2, fill_value=7 + 7j, **options))(a, b)
    values = got[0] if isinstance(got, tuple) else got
    assert_same(values[:count], expected[0])
    assert_same(values[count:], np.full(2, 7 + 7j, values.dtype))
