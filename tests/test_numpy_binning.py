"""isin, bincount, digitize, histogram and interp (jitflow/numpy/membership.py,
binning.py) against NumPy on drawn arrays, eagerly, traced and through NumPy's own
functions; bincount's and histogram's static sizes; bad inputs; derivatives."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same
from jitflow.errors import ConcretizationError
from jitflow.numpy.membership import sorts_as_float64
from jitflow.testing import check_grads
from numpy_programs import check_program
from strategies import DTYPES, arrays, shapes

pytestmark = pytest.mark.usefixtures("backend")
# a third of the profile's examples on each backend: every one traces and compiles
DRAWN = settings(max_examples=max(5, settings.default.max_examples // 3))


def vectors(data, dtype, label, min_size=0, **kwargs):
    size = data.draw(st.integers(min_size, 6), label=f"{label} size")
    return data.draw(arrays(dtype, (size,), **kwargs), label=label)


@DRAWN
@given(data=st.data())
def test_isin(backend, data):
    x = data.draw(arrays(data.draw(st.sampled_from(DTYPES)), data.draw(shapes())),
                  label="x")
    tests = vectors(data, data.draw(st.sampled_from(DTYPES)), "tests")
    invert = data.draw(st.booleans(), label="invert")
    # NumPy's float64 sort of int64 with uint64 is refused (test_program_fuzzer.py)
    assume(not sorts_as_float64(x.dtype, x.size, tests.dtype, tests.size, None))
    check_program(lambda xp, x, t: xp.isin(x, t, invert=invert), x, tests)


@DRAWN
@given(data=st.data())
def test_digitize(backend, data):
    x = data.draw(arrays(data.draw(st.sampled_from(DTYPES)), data.draw(shapes())),
                  label="x")
    dtype = data.draw(st.sampled_from(DTYPES[1:]), label="bins dtype")
    bins = np.sort(vectors(data, dtype, "bins", special=False))
    if data.draw(st.booleans(), label="decreasing"):
        bins = bins[::-1].copy()
    right = data.draw(st.booleans(), label="right")
    if data.draw(st.booleans(), label="traced bins"):
        check_program(lambda xp, x, b: xp.digitize(x, b, right=right), x, bins)
    else:
        check_program(lambda xp, x: xp.digitize(x, bins, right=right), x)


@DRAWN
@given(data=st.data())
def test_histogram_of_edges_or_a_range(backend, data):
    dtype = data.draw(st.sampled_from(DTYPES[1:]), label="dtype")
    a = data.draw(arrays(dtype, data.draw(shapes())), label="a")
    density = data.draw(st.sampled_from([None, True]), label="density")
    if data.draw(st.booleans(), label="edges"):
        edges = np.sort(vectors(data, np.dtype(np.float64), "edges", min_size=1,
                                special=False, min_value=-1e6, max_value=1e6))
        program = lambda xp, a: xp.histogram(a, edges, density=density)  # noqa: E731
    else:
        bins = data.draw(st.integers(1, 5), label="bins")
        low = data.draw(st.integers(-5, 5), label="low")
        high = low + data.draw(st.sampled_from([0, 0.5, 3, 7]), label="width")
        program = lambda xp, a: xp.histogram(a, bins, range=(low, high),  # noqa: E731
                                             density=density)
    check_program(program, a, rtol=1e-12)


@DRAWN
@given(data=st.data())
def test_histogram_weights_and_bincount(backend, data):
    size = data.draw(st.integers(0, 6), label="size")
    x = data.draw(arrays(np.dtype(np.int64), (size,), min_value=0, max_value=6), label="x")
    wdtype = data.draw(st.sampled_from(DTYPES[1:]), label="weights dtype")
    w = data.draw(arrays(wdtype, (size,), special=False, min_value=-100, max_value=100),
                  label="w")
    minlength = data.draw(st.integers(0, 8), label="minlength")
    counts, edges = jitflow.function(
        lambda x, w: jnp.histogram(x, 3, range=(0, 6), weights=w))(x, w)
    expected = np.histogram(x, 3, range=(0, 6), weights=w)
    assert_same(counts, expected[0], rtol=1e-6)
    assert_same(edges, expected[1])
    expected = np.bincount(x, w, minlength=minlength)
    assert_same(jnp.bincount(x, w, minlength), expected)
    length = expected.shape[0]
    # a shorter length drops the larger values, as in JAX
    short = min(length, 3)
    counts, weighed = jitflow.function(lambda x, w: (
        jnp.bincount(x, length=short), jnp.bincount(x, w, length=length)))(x, w)
    assert_same(weighed, expected)
    assert_same(counts, np.bincount(x[x < short], minlength=short))


@DRAWN
@given(data=st.data())
def test_interp(backend, data):
    dtype = data.draw(st.sampled_from(DTYPES[1:]), label="dtype")
    x = data.draw(arrays(dtype, data.draw(shapes())), label="x")
    xp_ = np.sort(vectors(data, np.dtype(np.float64), "xp", min_size=1, special=False,
                          min_value=-1e3, max_value=1e3))
    fp = data.draw(arrays(np.dtype(np.float64), xp_.shape), label="fp")
    ends = data.draw(st.sampled_from([{}, {"left": -7.0, "right": np.inf}]), label="ends")
    check_program(lambda xp, x, a, b: xp.interp(x, a, b, **ends), x, xp_, fp,
                  rtol=1e-12)


def test_traced_sizes_are_asked_for(backend):
    with pytest.raises(ConcretizationError, match="pass a static length="):
        jitflow.function(lambda x: np.bincount(x))(np.array([1, 2]))
    with pytest.raises(ConcretizationError, match=r"pass range=\(low, high\)"):
        jitflow.function(lambda x: np.histogram(x, 3))(np.array([1.0, 2.0]))


def test_bad_inputs(backend):
    with pytest.raises(ValueError, match="negative"):
        jnp.bincount(np.array([1, -1]))
    check_program(lambda xp, x: xp.bincount(x), np.array([1.0]))
    check_program(lambda xp, x: xp.bincount(x), np.array([[1]]))
    check_program(lambda xp, x: xp.bincount(x, minlength=-1), np.array([1]))
    check_program(lambda xp, x: xp.bincount(x, np.ones(3)), np.array([1]))
    check_program(lambda xp, x: xp.digitize(x, [1, 3, 2]), np.array([1.0]))
    check_program(lambda xp, x: xp.histogram(x, [1, 3, 2]), np.array([1.0]))
    check_program(lambda xp, x: xp.histogram(x, 2, range=(2, 1)), np.array([1.0]))
    check_program(lambda xp, x: xp.histogram(x, 0, range=(0, 1)), np.array([1.0]))
    check_program(lambda xp, x: xp.interp(x, [], []), np.array([1.0]))
    check_program(lambda xp, x: xp.interp(x, [1, 2], [1]), np.array([1.0]))
    check_program(lambda xp, x: xp.isin(x, [1], kind="hash"), np.array([1.0]))
    with pytest.raises(NotImplementedError, match="period="):
        jnp.interp(1.0, [0, 1], [0, 1], period=2)
    with pytest.raises(NotImplementedError, match="'auto'"):
        jnp.histogram(np.ones(3), "auto")


def test_derivatives(backend):
    x = np.array([0.3, 1.7, 0.9, -0.4])
    order = 2 if backend == "interpreter" else 1
    fp = np.array([1.0, -2.0, 0.5, 3.0])
    for fn, args in ((lambda w: jnp.bincount(np.array([2, 0, 2, 1]), w * w, length=4),
                      (x,)),
                     (lambda w: jnp.histogram(np.array([2, 0, 2, 1]), 2, range=(0, 2),
                                              weights=w * w)[0], (x,)),
                     (lambda x: jnp.interp(x, [-1.0, 0.0, 1.0, 2.0], [0.5, -1.0, 2.0, 0.0]),
                      (x,)),
                     (lambda x, fp: jnp.interp(x, [-1.0, 0.0, 1.0, 2.0], fp * fp),
                      (x, fp))):
        check_grads(fn, args, order=order)
        check_grads(jitflow.function(fn), args, order=1)
