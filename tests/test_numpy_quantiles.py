"""median, percentile, quantile and their nan- forms of jitflow.numpy against NumPy:
every method, q as a Python number, a list or an array, axes (several at once too),
keepdims, NaN in the data; values, dtypes, shapes and errors, eagerly and traced (also
through NumPy's own names), with derivatives against central differences."""
import math

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same, error_kinds, given_per_backend, numpy_outcome, run_traced
from jitflow.numpy.quantiles import METHODS
from jitflow.testing import check_grads
from numpy_programs import check_program
from strategies import CORE_DTYPES as DTYPES, shapes

pytestmark = [pytest.mark.usefixtures("backend"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]  # NumPy's all-NaN


def data_array(data, min_size=1):
    """Moderate values (differences of them do not overflow), NaN in some floats."""
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    shape = data.draw(shapes(min_dims=1, min_side=min_size, max_side=4), label="shape")
    if dtype.kind == "b":
        elements = st.booleans()
    elif dtype.kind == "i":
        elements = st.integers(-1000, 1000)
    else:
        elements = st.floats(-1e3, 1e3, width=8 * dtype.itemsize) | st.sampled_from(
            [0.0, -0.0, math.nan])
    return data.draw(hnp.arrays(dtype, shape, elements=elements), label="a")


def axis_for(data, ndim):
    single = st.integers(-ndim, ndim - 1)
    several = st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True)
    return data.draw(st.none() | single | several.map(tuple), label="axis")


Q = st.one_of(st.sampled_from([0, 1, 0.5, 0.25, 0.1, 0.9]),
              st.floats(0, 1),
              st.lists(st.floats(0, 1), min_size=1, max_size=3),
              st.floats(0, 1).map(np.float32),
              st.lists(st.floats(0, 1), min_size=1, max_size=2).map(
                  lambda qs: np.array(qs)[:, None]))


@given_per_backend(data=st.data())
def test_quantiles(data):
    a = data_array(data)
    axis = axis_for(data, a.ndim)
    q = data.draw(Q, label="q")
    method = data.draw(st.sampled_from(METHODS), label="method")
    keepdims = data.draw(st.booleans(), label="keepdims")
    name = data.draw(st.sampled_from(["quantile", "nanquantile", "percentile",
                                      "nanpercentile"]), label="function")
    if "percentile" in name:
        q = np.multiply(q, 100) if not isinstance(q, (int, float)) else q * 100

    def program(xp, a):
        return getattr(xp, name)(a, q, axis=axis, method=method, keepdims=keepdims)
    # (zero_sign: of 0.0 and -0.0 tied at a chosen rank, which one NumPy's partition
    # returns depends on its introselect's visiting order)
    check_program(program, a, what=f"{name}({a.dtype}{a.shape}, {q!r}, {axis}, {method})",
                  rtol=4 * float(np.finfo(np.float32).eps) if a.dtype == np.float32 else 1e-15,
                  zero_sign=False)


@given_per_backend(data=st.data())
def test_medians(data):
    a = data_array(data, min_size=0)
    axis = axis_for(data, a.ndim)
    keepdims = data.draw(st.booleans(), label="keepdims")
    for name in ("median", "nanmedian"):
        check_program(lambda xp, a: getattr(xp, name)(a, axis=axis, keepdims=keepdims), a,
                      what=f"{name}({a.dtype}{a.shape}, {axis})",
                      rtol=4 * float(np.finfo(np.float32).eps) if a.dtype == np.float32 else 0)


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.float64], ids=str)
@pytest.mark.parametrize("shape", [(0, 0, 0), (0, 0, 3), (2, 0, 3)])
def test_nanmedian_of_an_empty_array_of_any_dtype(backend, dtype, shape):
    # NumPy takes nanmean for every empty array, also where median raises (found by the
    # program fuzzer)
    x = np.zeros(shape, dtype)
    check_program(lambda xp, x: xp.nanmedian(x, axis=(0, 1)), x)
    check_program(lambda xp, x: xp.nanmedian(x, axis=(0, 1), keepdims=True), x)


@pytest.mark.parametrize("shape, axis", [((1, 13, 1), 0), ((13, 1), 1), ((3, 13), 0),
                                         ((13,), 0), ((13,), None), ((1, 13), None)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=str)
def test_nanmedian_of_the_largest_numbers(backend, shape, axis, dtype):
    """NumPy's sort of several short slices adds the middle number to itself and halves
    the sum, so the largest numbers of the dtype overflow to inf; its loop over one
    slice takes the number itself (found by the program fuzzer)."""
    largest = np.finfo(dtype).max
    values = np.array([largest, -largest, np.nan, -0.0, 0.5, 3, -1, largest / 2,
                       np.nan, 2, -3, largest, 1], dtype)
    a = np.resize(values, shape).astype(dtype)
    check_program(lambda xp, a: xp.nanmedian(a, axis=axis), a, zero_sign=True)
    check_program(lambda xp, a: xp.nanmedian(a[..., :1] if a.ndim > 1 else a, axis=axis),
                  a, zero_sign=True)


@pytest.mark.parametrize("call", [
    lambda xp, a: xp.quantile(a, 1.5),
    lambda xp, a: xp.percentile(a, [10, -1]),
    lambda xp, a: xp.quantile(a, 0.5, method="closest"),
    lambda xp, a: xp.quantile(a, np.zeros((1, 1, 1))),
    lambda xp, a: xp.quantile(a[:0], 0.5),
    lambda xp, a: xp.median(a, axis=2),
    lambda xp, a: xp.nanquantile(a, 0.5, axis=(0, 0)),
])
def test_errors_are_numpys(call):
    check_program(call, np.arange(6.0).reshape(2, 3), what="a bad call")


@given_per_backend(data=st.data())
def test_a_traced_q_gives_numpys_quantiles(data):
    a = data_array(data)
    axis = axis_for(data, a.ndim)
    q = data.draw(Q, label="q")
    q = np.array(q) if isinstance(q, list) else q  # a Python float stays weak
    method = data.draw(st.sampled_from(METHODS), label="method")
    name = data.draw(st.sampled_from(["quantile", "nanquantile", "percentile",
                                      "nanpercentile"]), label="function")
    if "percentile" in name:
        q = np.multiply(q, 100) if not isinstance(q, (int, float)) else q * 100

    def program(a, q):
        return getattr(np, name)(a, q, axis=axis, method=method)
    expected, error = numpy_outcome(program, a, q)
    if error is not None:  # (NumPy's boolean subtraction, for one)
        with pytest.raises(error_kinds(error)):
            run_traced(program, a, q)
        return
    rtol = 4 * float(np.finfo(np.float32).eps) if a.dtype == np.float32 else 1e-15
    # zero_sign: which of -0.0 and 0.0 NumPy picks among equal values depends on where
    # its partition (and its moving of NaN to the end) happened to leave them
    assert_same(run_traced(program, a, q), expected, rtol=rtol, zero_sign=False,
                what=f"{name}({a.dtype}{a.shape}, traced {q!r}, {axis}, {method})")


@given_per_backend(data=st.data(), ci_examples=20)
def test_weighted_quantiles_are_numpys(data):
    a = data_array(data)
    axis = axis_for(data, a.ndim)
    along = a.shape if axis is None or data.draw(st.booleans(), label="whole") else \
        tuple(a.shape[i] for i in ((axis,) if isinstance(axis, int) else axis))
    weight_dtype = data.draw(st.sampled_from([np.float64, np.float32, np.int64]),
                             label="weight dtype")
    weights = data.draw(hnp.arrays(weight_dtype, along, elements=st.integers(0, 3)),
                        label="weights")
    q = data.draw(Q, label="q")
    name = data.draw(st.sampled_from(["quantile", "percentile", "nanquantile",
                                      "nanpercentile"]), label="function")
    keepdims = data.draw(st.booleans(), label="keepdims")
    if name.endswith("percentile"):
        q = np.multiply(q, 100) if not isinstance(q, (int, float)) else q * 100

    def program(xp, a, weights):
        return getattr(xp, name)(a, q, axis=axis, method="inverted_cdf", weights=weights,
                                 keepdims=keepdims)
    what = f"{name}({a.dtype}{a.shape}, {q!r}, {axis}, weights {weights!r})"
    if name.startswith("nan") and _slices_weighed_by_numpys_index_error(a, axis, weights):
        # (NumPy computes the first slice before failing to index the second's weights,
        # so that slice's ValueError may come first; jitflow raises IndexError)
        with pytest.raises(IndexError, match="pass weights of a's shape"):
            program(jnp, a, weights)
        return
    # zero_sign: which of -0.0 and 0.0 NumPy sorts first is its argsort's (not stable:
    # on an AVX-512 CPU it took 0.0 before an earlier -0.0), after its nan- forms moved
    # the last numbers into the NaNs' places
    check_program(program, a, weights, what=what, zero_sign=False)


def _slices_weighed_by_numpys_index_error(a, axis, weights):
    """Weights along `axis` only, of an array of several slices (NumPy 2.4's nan- forms
    index them per slice)."""
    if axis is None or a.ndim == 1 or weights.shape == a.shape or a.size == 0:
        return False
    axes = [i % a.ndim for i in ((axis,) if isinstance(axis, int) else axis)]
    return np.prod([n for i, n in enumerate(a.shape) if i not in axes]) > 1


@pytest.mark.parametrize("call", [
    lambda xp, a, w: xp.quantile(a, 0.5, weights=w),                     # not inverted_cdf
    lambda xp, a, w: xp.quantile(a, 0.5, method="inverted_cdf", weights=w[0]),  # no axis
    lambda xp, a, w: xp.quantile(a, 0.5, axis=1, method="inverted_cdf", weights=w[:, 0]),
])
def test_weights_errors_are_numpys(call):
    check_program(call, np.arange(6.0).reshape(2, 3), np.ones((2, 3)), what="a bad call")


@pytest.mark.parametrize("weights, message", [
    (np.array([1.0, -1.0, 2.0]), "Weights must be non-negative"),
    (np.zeros(3), "Weights included NaN, inf or were all zero"),
    (np.array([1.0, np.inf, 1.0]), "Weights included NaN, inf or were all zero")])
def test_weights_known_only_at_run_time_raise_numpys_errors_there(backend, weights, message):
    quantile = jitflow.function(lambda a, w: np.quantile(a, 0.5, method="inverted_cdf",
                                                         weights=w))
    a = np.arange(3.0)
    for _ in range(2):  # the first call and native code
        assert_same(quantile(a, np.ones(3)), np.quantile(a, 0.5, method="inverted_cdf",
                                                         weights=np.ones(3)))
        with pytest.raises(ValueError, match=message + r"(.|\n)*test_numpy_quantiles.py"):
            quantile(a, weights)
        quantile.wait()


def test_the_nan_forms_drop_each_nan_with_its_weight(backend):
    """A slice of NaN only gives NaN (its weights, all dropped, raise nothing); weights
    of NaN elements count for nothing, even NaN ones; weights along the axis only of
    several slices raise NumPy 2.4's IndexError."""
    a = np.array([[1.0, np.nan, 3.0, 2.0], [np.nan] * 4, [4.0, 0.5, np.nan, -1.0]])
    weights = np.array([[1.0, 9.0, 0.0, 2.0], [0.0] * 4, [1.0, 1.0, np.nan, 1.0]])

    def program(xp, a, w):
        return (xp.nanquantile(a, [0.0, 0.5, 1.0], axis=1, method="inverted_cdf", weights=w),
                xp.nanpercentile(a, 40, axis=None, method="inverted_cdf", weights=w))
    check_program(program, a, weights, what="nan- forms with weights")
    check_program(lambda xp, a, w: xp.nanquantile(a, 0.5, axis=1, method="inverted_cdf",
                                                  weights=w[0]), a, weights,
                  what="weights along the axis only")


def test_a_traced_q_outside_its_range_raises_numpys_error_at_its_line(backend):
    quantile = jitflow.function(lambda a, q: np.quantile(a, q))
    percentile = jitflow.function(lambda a, q: np.nanpercentile(a, q))
    a = np.arange(4.0)
    for _ in range(2):  # the first call and native code
        assert_same(quantile(a, np.array([0.0, 1.0])), np.quantile(a, [0.0, 1.0]))
        for bad in (np.array([0.5, 1.5]), -0.1, np.nan):
            with pytest.raises(ValueError, match=r"Quantiles must be in the range \[0, 1\]"
                               r"(.|\n)*test_numpy_quantiles.py"):
                quantile(a, bad)
        with pytest.raises(ValueError, match=r"Percentiles must be in the range"):
            percentile(a, 101.0)
        quantile.wait(), percentile.wait()


@pytest.mark.parametrize("name, method", [
    ("median", None), ("nanmedian", None), ("quantile", "linear"), ("quantile", "hazen"),
    ("quantile", "midpoint"), ("quantile", "lower"), ("nanquantile", "linear"),
    ("percentile", "weibull")])
@pytest.mark.parametrize("shape, axis", [((5,), None), ((3, 4), 0), ((2, 3, 2), (0, 2))])
def test_derivatives(backend, name, method, shape, axis):
    size = int(np.prod(shape))
    x = (np.random.default_rng(size).permutation(size) * 0.5 - size / 4).reshape(shape)
    q = [0.2, 0.7] if name != "percentile" else [20, 70]

    def fn(a):
        if "median" in name:
            return getattr(jnp, name)(a, axis=axis)
        return getattr(jnp, name)(a, q, axis=axis, method=method)
    check_grads(fn, (x,), order=2)
    check_grads(jitflow.function(fn), (x,), order=1)
