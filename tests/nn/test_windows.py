"""conv2d, max_pool2d and avg_pool2d against direct NumPy loops over the output pixels,
eagerly and compiled, with their gradients checked by finite differences."""
import numpy as np
import pytest
from hypothesis import strategies as st

import jitflow
from fidelity import assert_same, given_per_backend
from jitflow.nn.convolution import conv2d
from jitflow.nn.pooling import avg_pool2d, max_pool2d
from jitflow.testing import check_grads

THIS_FILE = "test_windows.py"


def reference_padding(n, k, s, padding):
    if padding == "valid":
        return 0, (n - k) // s + 1
    out = -(-n // s)
    return max((out - 1) * s + k - n, 0) // 2, out


def reference_windows(x, size, strides, padding, fill):
    """Every window of x (N, H, W, C), as an array (N, OH, OW, kh, kw, C), with `fill`
    where it reaches outside the image."""
    (kh, kw), (sh, sw) = size, strides
    top, oh = reference_padding(x.shape[1], kh, sh, padding)
    left, ow = reference_padding(x.shape[2], kw, sw, padding)
    out = np.full((x.shape[0], oh, ow, kh, kw, x.shape[3]), fill, x.dtype)
    for r in range(oh):
        for c in range(ow):
            for i in range(kh):
                for j in range(kw):
                    y, z = r * sh + i - top, c * sw + j - left
                    if 0 <= y < x.shape[1] and 0 <= z < x.shape[2]:
                        out[:, r, c, i, j, :] = x[:, y, z, :]
    return out


def reference_conv2d(x, kernel, strides, padding):
    windows = reference_windows(x, kernel.shape[:2], strides, padding, 0)
    return np.einsum("nrcijk,ijko->nrco", windows.astype(np.float64),
                     kernel.astype(np.float64)).astype(np.result_type(x, kernel))


def reference_max_pool(x, size, strides, padding):
    return reference_windows(x, size, strides, padding, -np.inf).max(axis=(3, 4))


def reference_avg_pool(x, size, strides, padding):
    windows = reference_windows(x, size, strides, padding, np.nan)
    return np.nanmean(windows.astype(np.float64), axis=(3, 4)).astype(x.dtype)


window_cases = st.fixed_dictionaries({
    "image": st.tuples(st.integers(1, 2), st.integers(3, 7), st.integers(3, 7),
                       st.integers(1, 3)),
    "size": st.tuples(st.integers(1, 3), st.integers(1, 3)),
    "strides": st.tuples(st.integers(1, 2), st.integers(1, 2)),
    "padding": st.sampled_from(["valid", "same"]),
    "dtype": st.sampled_from([np.float32, np.float64]),
    "seed": st.integers(0, 2 ** 16)})


@given_per_backend(window_cases, st.integers(1, 4))
def test_conv2d_matches_a_direct_loop(case, filters):
    rng = np.random.default_rng(case["seed"])
    x = rng.standard_normal(case["image"]).astype(case["dtype"])
    kernel = rng.standard_normal((*case["size"], x.shape[3], filters)).astype(case["dtype"])
    args = case["strides"], case["padding"]
    expected = reference_conv2d(x, kernel, *args)
    tolerance = dict(rtol=1e-5, atol=1e-5) if case["dtype"] == np.float32 else \
        dict(rtol=1e-12, atol=1e-12)
    assert_same(conv2d(x, kernel, *args), expected, **tolerance)
    compiled = jitflow.function(conv2d, static_argnames=("strides", "padding"))
    assert_same(compiled(x, kernel, *args), expected, **tolerance)


@given_per_backend(window_cases)
def test_pools_match_a_direct_loop(case):
    rng = np.random.default_rng(case["seed"])
    x = rng.standard_normal(case["image"]).astype(case["dtype"])
    args = case["size"], case["strides"], case["padding"]
    # the average adds up to 9 values: a few roundings of their magnitudes
    tolerance = dict(rtol=1e-6, atol=4e-6) if case["dtype"] == np.float32 else \
        dict(rtol=1e-14, atol=1e-14)
    for pool, reference, exact in [(max_pool2d, reference_max_pool, {}),
                                   (avg_pool2d, reference_avg_pool, tolerance)]:
        expected = reference(x, *args)
        assert_same(pool(x, *args), expected, **exact)
        compiled = jitflow.function(pool, static_argnames=("pool_size", "strides",
                                                           "padding"))
        assert_same(compiled(x, *args), expected, **exact)


@pytest.mark.parametrize("padding, strides", [("valid", 1), ("same", 2)])
def test_window_gradients_match_finite_differences(padding, strides):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 4, 2))
    kernel = rng.standard_normal((3, 2, 2, 3))
    check_grads(lambda x, k: conv2d(x, k, strides, padding), (x, kernel), order=2)
    check_grads(lambda x: avg_pool2d(x, 2, strides, padding), (x,), order=1)
    check_grads(lambda x: max_pool2d(x, 2, strides, padding), (x,), order=1)


def test_max_pool_keeps_numpys_nan_and_inf():
    x = np.zeros((1, 2, 2, 1))
    x[0, 0, 0, 0], x[0, 1, 1, 0] = np.nan, np.inf
    assert np.isnan(max_pool2d(x)[0, 0, 0, 0])
    x[0, 0, 0, 0] = -np.inf
    assert max_pool2d(x)[0, 0, 0, 0] == np.inf


@pytest.mark.parametrize("call, words", [
    (lambda: conv2d(np.ones((3, 3, 1)), np.ones((2, 2, 1, 1))), r"input must be 4-D"),
    (lambda: conv2d(np.ones((1, 3, 3, 2)), np.ones((2, 2, 1, 1))),
     r"takes 1 channels, but the images \(1, 3, 3, 2\) have 2"),
    (lambda: conv2d(np.ones((1, 3, 3, 1)), np.ones((4, 4, 1, 1))), r"does not fit"),
    (lambda: max_pool2d(np.ones((1, 4, 4, 1)), padding="full"), r"padding must be one of"),
    (lambda: avg_pool2d(np.ones((1, 4, 4, 1)), pool_size=0), r"pool_size must be a positive"),
])
def test_bad_windows_are_clear_errors(call, words):
    with pytest.raises(ValueError, match=words) as error:
        call()
    assert THIS_FILE in str(error.value)
