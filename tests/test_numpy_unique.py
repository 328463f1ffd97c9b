"""unique (jitflow/numpy/uniques.py) against NumPy: values, first indices, inverse and
counts, NaN equal or not, eagerly and traced with a static size= (NumPy's results cut
to `size` or filled past the count); the error that asks for size=."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same
from jitflow.errors import ConcretizationError
from strategies import DTYPES, arrays, shapes

pytestmark = pytest.mark.usefixtures("backend")
# a third of the profile's examples on each backend: every one traces and compiles
DRAWN = settings(max_examples=max(5, settings.default.max_examples // 3))

ALL = dict(return_index=True, return_inverse=True, return_counts=True)


def padded(result, size, fill):
    kept = result[:size]
    return np.concatenate([kept, np.full(size - kept.shape[0], fill, result.dtype)])


def assert_unique(got, expected, what):
    for name, g, e in zip(("values", "index", "inverse", "counts"), got, expected):
        # of 0.0 and -0.0 the first occurrence is kept, which NumPy's sort may not keep
        assert_same(g, e, zero_sign=False, what=f"{what} {name}")


@DRAWN
@given(data=st.data())
def test_eagerly_as_numpy(backend, data):
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    x = data.draw(arrays(dtype, data.draw(shapes(max_side=5))), label="x")
    equal_nan = data.draw(st.booleans(), label="equal_nan")
    expected = np.unique(x, equal_nan=equal_nan, **ALL)
    assert_unique(jnp.unique(x, equal_nan=equal_nan, **ALL), expected, "eager")
    assert_same(jnp.unique(x), np.unique(x), zero_sign=False)


@DRAWN
@given(data=st.data())
def test_traced_with_size(backend, data):
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    x = data.draw(arrays(dtype, data.draw(shapes(max_side=5))), label="x")
    equal_nan = data.draw(st.booleans(), label="equal_nan")
    size = data.draw(st.integers(1, 8), label="size")
    fill = data.draw(st.sampled_from([None, 1]), label="fill")
    values, index, inverse, counts = np.unique(x, equal_nan=equal_nan, **ALL)
    fill_values = (values[0] if values.size else np.zeros((), x.dtype)) if fill is None \
        else np.asarray(fill).astype(x.dtype)
    expected = (padded(values, size, fill_values),
                padded(index, size, index[0] if index.size else 0), inverse,
                padded(counts, size, 0))
    got = jitflow.function(lambda x: jnp.unique(x, equal_nan=equal_nan, size=size,
                                                fill_value=fill, **ALL))(x)
    if values.size > size:  # values dropped: their inverse points past the size
        got, expected = got[:2] + got[3:], expected[:2] + expected[3:]
    assert_unique(got, expected, "traced")


def test_through_numpy_and_errors(backend):
    x = np.array([3, 1, 3, 2], np.int32)
    with pytest.raises(ConcretizationError, match="(?s)jitflow.numpy.unique.*size="):
        jitflow.function(lambda x: np.unique(x))(x)
    with pytest.raises(NotImplementedError, match="axis="):
        jnp.unique(np.eye(2), axis=0)
    with pytest.raises(NotImplementedError, match="compares every pair"):
        jnp.unique(np.zeros(jnp.uniques.MAX_ELEMENTS + 1))
    assert_same(jitflow.function(lambda x: jnp.unique(x, size=3))(x), np.unique(x))
