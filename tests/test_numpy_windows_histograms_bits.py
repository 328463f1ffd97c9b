"""The windows (bartlett, blackman, hamming, hanning), histogram_bin_edges,
histogram2d, histogramdd (histograms.py), trim_zeros (selecting.py: size= when traced),
polydiv, packbits and unpackbits (bits.py) and einsum_path against NumPy: values,
dtypes, shapes and errors, eagerly and traced; derivatives through them."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same, error_kinds, numpy_outcome, run_traced
from jitflow.errors import ConcretizationError
from jitflow.testing import check_grads
from strategies import DTYPES, FLOAT_DTYPES, arrays, shapes

pytestmark = pytest.mark.usefixtures("backend")
# a third of the profile's examples on each backend: every one traces and compiles
DRAWN = settings(max_examples=max(5, settings.default.max_examples // 3))
BIT_DTYPES = [d for d in DTYPES if d.kind in "biu"]


def as_tuple(result):
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def check_like_numpy(call, *arrays, traced=True, **tolerance):
    """call(np, *arrays) eagerly and traced gives NumPy's results or its kind of error."""
    expected, error = numpy_outcome(call, np, *arrays)
    runs = [lambda: call(jnp, *arrays)]
    if traced:
        runs.append(lambda: run_traced(lambda *a: call(jnp, *a), *arrays))
    for run in runs:
        if error is not None:
            with pytest.raises(error_kinds(error)):
                run()
            continue
        got, want = as_tuple(run()), as_tuple(expected)
        assert len(got) == len(want)
        for g, e in zip(got, want):
            assert_same(g, e, **tolerance)


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
@pytest.mark.parametrize("M", [-1, 0, 1, 2, 5, 6.0, 3.5, True])
def test_windows_as_numpy(name, M):
    expected = getattr(np, name)(M)
    assert_same(getattr(jnp, name)(M), expected)
    assert_same(run_traced(lambda: getattr(jnp, name)(M)), expected)
    with pytest.raises(TypeError, match="constant scalar"):
        jitflow.function(lambda m: getattr(jnp, name)(m))(np.int64(4))


@st.composite
def points(draw, dimensions):
    dtype = draw(st.sampled_from(FLOAT_DTYPES + [np.dtype(np.int32)]), label="dtype")
    count = draw(st.integers(0, 8), label="count")
    elements = st.sampled_from([-2.0, -1.0, -0.5, 0.0, 0.25, 1.0, 1.5, 3.0]) \
        if dtype.kind == "f" else st.integers(-3, 3)
    return draw(hnp.arrays(dtype, (count, dimensions), elements=elements), label="sample")


BINS = st.one_of(st.integers(1, 4), st.just(np.array([-1.0, 0.0, 0.5, 1.5])),
                 st.just(np.array([-2, 0, 3])))


def flat(histogram):
    """histogramdd's (counts, [edges...]) as (counts, edges...)."""
    return (histogram[0], *histogram[1])


@DRAWN
@given(data=st.data())
def test_histogramdd_and_histogram2d_as_numpy(data):
    dimensions = data.draw(st.integers(1, 3), label="dimensions")
    sample = data.draw(points(dimensions), label="sample")
    bins = [data.draw(BINS, label="bins") for _ in range(dimensions)]
    ranges = [(-1.5, 2), (0, 0), (-3.0, 1.0)][:dimensions]
    density = data.draw(st.booleans(), label="density")
    weights = np.linspace(-1, 2, sample.shape[0]) if data.draw(st.booleans()) else None
    check_like_numpy(lambda xp, s: flat(xp.histogramdd(s, bins, ranges, density, weights)),
                     sample, rtol=1e-12, atol=1e-12)
    check_like_numpy(lambda xp, s: flat(xp.histogramdd(s, bins, None, density)), sample,
                     traced=False, rtol=1e-12, atol=1e-12)
    if dimensions == 2:
        check_like_numpy(lambda xp, x, y: xp.histogram2d(x, y, bins[0], [(-1, 2), (0, 3)],
                                                         density, weights),
                         sample[:, 0], sample[:, 1], rtol=1e-12, atol=1e-12)


def test_histograms_errors_and_derivatives():
    x, y = np.array([0.5, 1.5, -1.0, 0.0]), np.array([1.0, 2.0, 0.0, 0.5])
    calls = [lambda xp: xp.histogramdd(np.ones((3, 2)), bins=[2, 2, 2]),
             lambda xp: xp.histogramdd(np.ones((3, 2)), range=[(0, 1)]),
             lambda xp: xp.histogramdd(np.ones((3, 2)), bins=[0, 2]),
             lambda xp: xp.histogramdd(np.ones((3, 2)), bins=[2.5, 2]),
             lambda xp: xp.histogramdd(np.ones((3, 1)), bins=[np.array([1.0, 0.0])]),
             lambda xp: xp.histogramdd(np.ones((3, 1)), range=[(1, 0)]),
             lambda xp: xp.histogram2d(x, y, weights=np.ones(3)),
             lambda xp: xp.histogram2d(x, y[:3]),
             lambda xp: xp.histogram_bin_edges(x, 2, weights=np.ones(3))]
    for call in calls:
        _, error = numpy_outcome(call, np)
        assert error is not None
        with pytest.raises(error_kinds(error)):
            call(jnp)
    with pytest.raises(ConcretizationError, match="(?s)histogramdd.*range="):
        jitflow.function(lambda x, y: jnp.histogram2d(x, y, 3))(x, y)
    weights = np.array([0.5, 2.0, 1.0, 3.0])
    check_grads(lambda w: jnp.sum(jnp.histogram2d(x, y, 2, [(-1, 2), (0, 2)], weights=w,
                                                  density=True)[0] ** 2), (weights,),
                order=1)
    for bins, range_ in ((3, (-1, 1)), (np.array([0, 0.5, 2.0]), None)):
        check_like_numpy(lambda xp, x: xp.histogram_bin_edges(x, bins, range_), x)


@DRAWN
@given(data=st.data())
def test_trim_zeros_as_numpy(data):
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    shape = data.draw(shapes(max_dims=2, max_side=5), label="shape")
    filt = data.draw(hnp.arrays(dtype, shape, elements=st.sampled_from([0, 0, 0, 1, 3])
                                .map(dtype.type)), label="filt")
    trim = data.draw(st.sampled_from(["fb", "f", "b", "BF", "x"]), label="trim")
    axis = data.draw(st.sampled_from([None, 0, -1]), label="axis") if filt.ndim else None
    expected, error = numpy_outcome(np.trim_zeros, filt, trim, axis)
    if error is not None:
        with pytest.raises(error_kinds(error)):
            jnp.trim_zeros(filt, trim, axis)
        return
    assert_same(jnp.trim_zeros(filt, trim, axis), expected)
    if filt.ndim == 1:
        size = data.draw(st.integers(0, 6), label="size")
        got = run_traced(lambda f: jnp.trim_zeros(f, trim, size=size, fill_value=2), filt)
        kept = expected[:size]
        assert_same(got, np.concatenate([kept, np.full(size - kept.size, 2, dtype)]))


def test_trim_zeros_traced():
    filt = np.array([0.0, 0.0, 1.5, 0.0, -2.0, 0.0])
    with pytest.raises(ConcretizationError, match="(?s)trim_zeros.*size="):
        jitflow.function(lambda f: np.trim_zeros(f))(filt)
    grad = jitflow.grad(lambda f: jnp.sum(jnp.trim_zeros(f) ** 2))(filt)  # eagerly known
    assert_same(grad, 2 * filt)
    # (a zero at an end moved off 0 would be kept: the ends here are not zero)
    check_grads(lambda f: jnp.sum(jnp.trim_zeros(f, size=5) ** 3),
                (np.array([1.5, 0.0, -2.0, 0.5]),), order=1)


@DRAWN
@given(data=st.data())
def test_polydiv_as_numpy(data):
    u = data.draw(arrays(data.draw(st.sampled_from(DTYPES)), (data.draw(st.integers(1, 5)),),
                         min_value=-4, max_value=4, special=False), label="u")
    v = data.draw(arrays(data.draw(st.sampled_from(FLOAT_DTYPES)),
                         (data.draw(st.integers(1, 3)),), min_value=0.5, max_value=4,
                         special=False), label="v")
    expected = np.polydiv(u, v)
    for g, e in zip(jnp.polydiv(u, v), expected, strict=True):
        assert_same(g, e, what="polydiv")
    q, r = run_traced(lambda u, v: jnp.polydiv(u, v, trim_leading_zeros=False), u, v)
    assert_same(q, expected[0], what="traced quotient")
    assert r.shape == u.shape and r.dtype == expected[1].dtype
    assert_same(r[r.size - expected[1].size:], expected[1], rtol=1e-6, atol=1e-6)


def test_polydiv_traced_remainder_and_derivatives():
    u, v = np.array([3.0, 5.0, 2.0, 1.0]), np.array([2.0, 1.0])
    with pytest.raises(ConcretizationError, match="trim_leading_zeros=False"):
        jitflow.function(lambda u: np.polydiv(u, v))(u)
    check_grads(lambda u, v: jnp.polydiv(u, v, trim_leading_zeros=False), (u, v), order=1)


@DRAWN
@given(data=st.data())
def test_packbits_and_unpackbits_as_numpy(data):
    dtype = data.draw(st.sampled_from(BIT_DTYPES), label="dtype")
    a = data.draw(arrays(dtype, shapes(max_dims=3, max_side=10), min_value=0,
                         max_value=2), label="a")
    axis = data.draw(st.sampled_from([None, 0, -1, 3]), label="axis")
    order = data.draw(st.sampled_from(["big", "little", "l", "bi", "x", None]),
                      label="bitorder")
    check_like_numpy(lambda xp, a: xp.packbits(a, axis=axis, bitorder=order), a)
    packed, error = numpy_outcome(np.packbits, a, axis=axis)
    if error is not None:  # an axis out of range
        return
    count = data.draw(st.none() | st.integers(-20, 20), label="count")
    if packed.size == 0 and count and count > 0:
        count = None  # NumPy leaves those bits uninitialized
    check_like_numpy(lambda xp, p: xp.unpackbits(p, axis=axis, count=count,
                                                 bitorder=order), packed)
    check_like_numpy(lambda xp, a: xp.unpackbits(a), a)  # (uint8 only)


def test_einsum_path_is_numpys_on_shapes():
    a, b, c = np.ones((2, 3)), np.ones((3, 40)), np.ones((40, 5))

    def contract(a, b, c):
        path = np.einsum_path("ij,jk,kl->il", a, b, c, optimize="optimal")
        assert path == np.einsum_path("ij,jk,kl->il", np.ones((2, 3)), np.ones((3, 40)),
                                      np.ones((40, 5)), optimize="optimal")
        return np.einsum("ij,jk,kl->il", a, b, c, optimize=path[0])
    assert_same(run_traced(contract, a, b, c), contract(a, b, c))
    assert jnp.einsum_path(a, [0, 1], b, [1, 2])[0] == np.einsum_path(a, [0, 1], b,
                                                                       [1, 2])[0]


@pytest.mark.parametrize("name", ["packbits", "unpackbits", "trim_zeros", "histogram2d",
                                  "polydiv"])
def test_vmap_over_rows(name):
    rows = np.array([[3, 1, 3, 0], [0, 2, 5, 0], [0, 0, 0, 0]])
    call = {"packbits": lambda r: jnp.packbits(r, bitorder="little"),
            "unpackbits": lambda r: jnp.unpackbits(r.astype(np.uint8), count=5),
            "trim_zeros": lambda r: jnp.trim_zeros(r, size=3, fill_value=-1),
            "histogram2d": lambda r: jnp.histogram2d(r, r[::-1], 2, [(0, 4), (0, 4)])[0],
            "polydiv": lambda r: jnp.polydiv(r, np.array([2.0, 1.0]),
                                             trim_leading_zeros=False)[0]}[name]
    got = jitflow.function(jitflow.vmap(call))(rows)
    assert_same(got, np.stack([call(r) for r in rows]))
