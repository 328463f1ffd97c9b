"""unique of complex values and its array-API forms, compiled and eager, against NumPy:
which value holding a NaN stands for the rest follows NumPy's path (the first to occur
when only the values are asked for, the first in sorted order otherwise)."""
import warnings

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from jitflow.numpy.uniques import MAX_ELEMENTS

pytestmark = pytest.mark.usefixtures("backend")
EXAMPLES = settings(max_examples=10 if settings.default.max_examples < 1000 else 400)

NAN, INF = float("nan"), float("inf")
PARTS = [0.0, -0.0, 1.0, -1.0, 2.5, NAN, INF, -INF]
RESULTS = [{}, {"return_counts": True}, {"return_index": True}, {"return_inverse": True},
           {"return_index": True, "return_inverse": True, "return_counts": True},
           {"equal_nan": False}, {"equal_nan": False, "return_index": True}]
ARRAY_API = ["unique_values", "unique_counts", "unique_inverse", "unique_all"]


def complex_arrays():
    """Few distinct parts, so that ties, ±0, NaNs of either part and infinities meet."""
    part = st.sampled_from(PARTS)
    return st.sampled_from([np.complex64, np.complex128]).flatmap(
        lambda dtype: hnp.arrays(dtype, hnp.array_shapes(max_dims=2, max_side=5),
                                 elements=st.builds(complex, part, part)))


def assert_same(got, expected):
    """Same dtypes, shapes and values, NaNs in the same parts; zeros of either sign."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got, expected)
    for part in (np.real, np.imag):
        np.testing.assert_array_equal(part(got), part(expected))


def assert_all_same(got, expected):
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_same(g, e)


def numpy_unique(z, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.unique(z, **options)


@EXAMPLES
@given(complex_arrays(), st.sampled_from(RESULTS))
def test_unique_is_numpys(z, options):
    expected = numpy_unique(z, **options)
    count = len(expected[0] if isinstance(expected, tuple) else expected)
    got = jitflow.function(lambda z: jnp.unique(z, size=count, **options))(z)
    assert_all_same(got, expected)


@EXAMPLES
@given(complex_arrays(), st.sampled_from(ARRAY_API))
def test_the_array_api_forms_are_numpys_in_sorted_order(z, name):
    expected = getattr(np, name)(z)
    if name == "unique_values":  # NumPy leaves its order open; jitflow sorts
        expected = np.sort(expected)
    count = len(expected if name == "unique_values" else expected[0])
    got = jitflow.function(lambda z: getattr(jnp, name)(z, size=count))(z)
    if name != "unique_values":
        assert type(got).__name__ == type(expected).__name__
        got, expected = tuple(got), tuple(expected)
    if name == "unique_inverse":
        # NumPy finds the inverse with an unstable sort: of equal NaNs (each a value of
        # its own here), which goes to which slot is its sort's; the values they point
        # at are the same
        assert_same(got[0], expected[0])
        assert_same(got[0][got[1]], expected[0][expected[1]])
        return
    assert_all_same(got, expected)


def test_the_nan_kept_is_the_first_to_occur_or_the_first_in_sorted_order():
    z = np.array([complex(NAN, 2), 1 + 1j, complex(3, NAN), complex(NAN, 0)])
    unique = jitflow.function(lambda z: jnp.unique(z, size=2))
    counted = jitflow.function(lambda z: jnp.unique(z, size=2, return_counts=True))
    assert_same(unique(z), np.array([1 + 1j, complex(NAN, 2)]))
    assert_all_same(counted(z), (np.array([1 + 1j, complex(3, NAN)]), np.array([1, 3])))
    assert_all_same(counted(z), numpy_unique(z, return_counts=True))
    assert_same(unique(z), numpy_unique(z))


@pytest.mark.parametrize("size", [1, 3, 6])
def test_a_size_keeps_the_first_values_and_fills_the_rest(size):
    z = np.array([3 + 1j, 1, 1, complex(NAN, 2), 2j], np.complex64)
    values, index, counts = jitflow.function(lambda z: jnp.unique(
        z, size=size, fill_value=9 - 1j, return_index=True, return_counts=True))(z)
    all_values, all_index, all_counts = numpy_unique(z, return_index=True,
                                                     return_counts=True)
    kept = min(size, len(all_values))
    assert_same(values, np.concatenate([all_values[:kept],
                                        np.full(size - kept, 9 - 1j, np.complex64)]))
    np.testing.assert_array_equal(index[:kept], all_index[:kept])
    np.testing.assert_array_equal(index[kept:], all_index[0])
    np.testing.assert_array_equal(counts, np.concatenate([all_counts[:kept],
                                                          np.zeros(size - kept, int)]))


def test_eager_calls_with_a_size_give_numpy_arrays():
    z = np.array([2j, 1, 1 + 0j, complex(NAN, 1)])
    values = jnp.unique(z, size=4)
    assert type(values) is np.ndarray
    assert_same(values, np.array([2j, 1, complex(NAN, 1), 2j]))  # filled with the smallest
    everything = jnp.unique_all(z, size=3)
    assert type(everything).__name__ == "UniqueAllResult"
    assert_same(everything.values, numpy_unique(z))
    assert_same(jnp.unique(z), numpy_unique(z))  # without jitflow's keywords: NumPy's


def test_without_a_size_a_traced_unique_asks_for_one():
    with pytest.raises(jitflow.ConcretizationError, match="pass a static size="):
        jitflow.function(lambda z: np.unique(z))(np.array([1j, 1j]))


def test_more_elements_than_it_compares_in_pairs_is_an_error():
    z = np.zeros(MAX_ELEMENTS + 1, np.complex64)
    with pytest.raises(NotImplementedError, match=r"jitflow\.numpy\.unique of .* complex"):
        jitflow.function(lambda z: jnp.unique(z, size=1))(z)
