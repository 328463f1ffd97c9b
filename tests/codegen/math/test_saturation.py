"""exp and expm1 of inputs beyond their saturation bound (codegen/math/saturation.py):
the same results as NumPy, whichever lanes of a vector hold them."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import jitflow

BEYOND = [-1e30, -1e9, -800.0, -105.0, 105.0, 800.0, 1e9, np.inf, -np.inf, np.nan]
NEAR = [-103.9, -95.0, -87.5, -17.0, -1.0, 0.0, -0.0, 1e-30, 3.5, 88.5, 88.8, 709.0]


@pytest.mark.parametrize("name", ["exp", "expm1"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@given(data=st.data())
def test_saturated_lanes_match_numpy_among_ordinary_ones(name, dtype, data):
    size = data.draw(st.integers(1, 70), label="size")
    values = data.draw(st.lists(st.sampled_from(BEYOND + NEAR) | st.floats(-30, 30),
                                min_size=size, max_size=size), label="values")
    x = np.array(values, dtype)
    fn = getattr(np, name)
    with np.errstate(all="ignore"):
        expected = fn(x)
        result = jitflow.function(lambda x: fn(x))(x)
    bound = 104 if dtype == np.float32 else 746
    exact = ~(np.abs(x) <= bound)  # saturated, or NaN
    np.testing.assert_array_equal(result[exact], expected[exact])
    np.testing.assert_allclose(result[~exact], expected[~exact], rtol=4 * np.finfo(dtype).eps)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_masked_softmax_gives_exact_zeros_where_masked(dtype):
    rng = np.random.default_rng(0)
    scores = rng.standard_normal((3, 40, 40)).astype(dtype)
    causal = np.tril(np.ones((40, 40), bool))

    def softmax(s, fill):
        s = np.where(causal, s, fill)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    for fill in (-1e9, -np.inf):
        result = jitflow.function(lambda s: softmax(s, fill))(scores)
        assert (result[:, ~causal] == 0).all()
        np.testing.assert_allclose(result, softmax(scores, fill), rtol=1e-5, atol=1e-7)
