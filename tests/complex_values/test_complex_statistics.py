"""NumPy's statistics, choosing and arranging functions of complex arrays (running
products and their gradients, the nan-functions, ptp, median, nanmedian, cov, corrcoef, trapezoid, interp, searchsorted, clip,
select, choose, isin, insert, delete, broadcast_arrays, meshgrid, sinc, gradient,
ediff1d, matvec, vecmat) compiled, against NumPy: across shapes, axes and dtypes, with
NaN, inf and signed zeros among the values."""
import warnings

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitflow
from complex_checks import assert_complex_same, assert_gradient_matches_central_differences

pytestmark = pytest.mark.usefixtures("backend")
# Each example compiles its function anew: fewer of them in CI, many more when thorough.
EXAMPLES = settings(max_examples=15 if settings.default.max_examples < 1000 else 400)

NAN, INF = float("nan"), float("inf")
PARTS = [0.0, -0.0, 1.0, -1.0, 2.5, 0.5, NAN, INF, -INF]


def complex_arrays(min_side=0):
    """Complex64 or complex128 arrays of up to 3 axes, their parts drawn from corners
    (so that ties, NaNs of either part and infinities meet) and ordinary numbers."""
    part = st.sampled_from(PARTS) | st.floats(-10, 10)
    return st.sampled_from([np.complex64, np.complex128]).flatmap(
        lambda dtype: hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3,
                                                         min_side=min_side, max_side=4),
                                 elements=st.builds(complex, part, part)))


def axes_of(z, draw):
    return draw(st.sampled_from([None] + list(range(-z.ndim, z.ndim))))


def numpy_and_compiled(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        expected = fn(*args)
        return jitflow.function(fn)(*args), expected


# Functions whose results NumPy's arithmetic determines exactly (comparisons, choices).
EXACT = {
    "nanmax": lambda z, axis: np.nanmax(z, axis=axis),
    "nanmin keepdims": lambda z, axis: np.nanmin(z, axis=axis, keepdims=True),
    "ptp": lambda z, axis: np.ptp(z, axis=axis),
    "nanargmax": lambda z, axis: np.nanargmax(np.where(np.isnan(z), 0, z), axis=axis),
    "nanargmin, NaN read as inf": lambda z, axis: np.nanargmin(
        np.concatenate([z, np.ones_like(z)], axis=-1), axis=None if axis is None else -1),
    "nancumsum": lambda z, axis: np.nancumsum(z, axis=axis),
    "median": lambda z, axis: np.median(z, axis=axis),
    "nanmedian": lambda z, axis: np.nanmedian(z, axis=axis),
    "nanmedian keepdims": lambda z, axis: np.nanmedian(z, axis=axis, keepdims=True),
}


@pytest.mark.parametrize("name", sorted(EXACT))
@EXAMPLES
@given(data=st.data())
def test_choices_and_order_statistics_are_numpys(name, data):
    z = data.draw(complex_arrays(min_side=1))
    axis = axes_of(z, data.draw)
    got, expected = numpy_and_compiled(lambda z: EXACT[name](z, axis), z)
    assert_complex_same(got, expected, what=name)


ROUNDED = {
    "nanmean": lambda z, axis: np.nanmean(z, axis=axis),
    "nanvar": lambda z, axis: np.nanvar(z, axis=axis),
    "nanstd ddof": lambda z, axis: np.nanstd(z, axis=axis, ddof=1),
    "nanprod": lambda z, axis: np.nanprod(z, axis=axis),
    "trapezoid": lambda z, axis: np.trapezoid(z, axis=-1 if axis is None else axis),
    "cumprod": lambda z, axis: np.cumprod(z, axis=axis),
    "nancumprod": lambda z, axis: np.nancumprod(z, axis=axis),
    "cumulative_prod": lambda z, axis: np.cumulative_prod(
        z.ravel() if axis is None else z, axis=axis, include_initial=True),
    "cumulative_sum": lambda z, axis: np.cumulative_sum(
        z.ravel() if axis is None else z, axis=axis, include_initial=True),
}
PRODUCTS = {"nanprod", "cumprod", "nancumprod", "cumulative_prod"}


@pytest.mark.parametrize("name", sorted(ROUNDED))
@EXAMPLES
@given(data=st.data())
def test_sums_of_the_non_nan_elements_are_numpys_to_rounding(name, data):
    finite_or_nan = st.sampled_from([0.0, -0.0, 1.0, -2.5, NAN]) | st.floats(-10, 10)
    dtype = data.draw(st.sampled_from([np.complex64, np.complex128]))
    z = data.draw(hnp.arrays(dtype, hnp.array_shapes(max_dims=3, max_side=4),
                             elements=st.builds(complex, finite_or_nan, finite_or_nan)))
    axis = axes_of(z, data.draw)
    got, expected = numpy_and_compiled(lambda z: ROUNDED[name](z, axis), z)
    eps = 1e-5 if dtype == np.complex64 else 1e-13
    power = min(z.size, 100) if name in PRODUCTS else 2
    scale = (1 + float(np.nanmax(np.abs(z), initial=0))) ** power
    assert_complex_same(got, expected, eps=eps, scale=scale, zero_sign=False, what=name)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_running_product_gradients_match_central_differences(compiled):
    """Through zeros too (the rule never divides by an element)."""
    rng = np.random.default_rng(5)
    z = rng.standard_normal((2, 4)) + 1j * rng.standard_normal((2, 4))
    z[0, 1] = 0
    weights = rng.standard_normal((2, 4))

    def loss(z):
        return np.sum(np.abs(np.cumprod(z, axis=1) + 1) ** 2 * weights) + \
            np.sum(np.angle(np.cumprod(z) + 3j))
    assert_gradient_matches_central_differences(loss, z, compiled)


def test_nan_functions_corner_cases():
    cases = {
        # fmax.reduce skips NaNs; NaN read as -inf + 0j would beat -inf - 1j
        "nanmax beside -inf": (np.nanmax, np.array([NAN + 0j, -INF - 1j])),
        "nanmax of all NaN": (lambda z: np.nanmax(z, axis=1),
                              np.array([[NAN + 1j, complex(1, NAN)], [1 + 1j, 2j]])),
        "nanargmax, NumPy's -inf + 0j": (np.nanargmax, np.array([NAN + 0j, -INF - 1j])),
        "nanmean of all NaN": (np.nanmean, np.array([NAN + 0j, complex(0, NAN)])),
        "nanvar without freedom": (lambda z: np.nanvar(z, ddof=2), np.array([1j, NAN, 2])),
        "median with a NaN": (np.median, np.array([1 + 2j, complex(NAN, 1), 3 - 1j, 1j])),
        "median of none": (np.median, np.zeros(0, complex)),
        "median, inf beside": (np.median, np.array([complex(1, INF), 3 + 0j])),
        "median keepdims": (lambda z: np.median(z, axis=(0, 2), keepdims=True),
                            np.arange(24).reshape(2, 3, 4) * (1 - 1j)),
        # NumPy's two ways: a line of 600 or more (np.median of what is not NaN; all
        # NaN: the line's last element) and a shorter one (masked: all NaN is nan+0j)
        "nanmedian of long lines": (lambda z: np.nanmedian(z, axis=1), _long_lines()),
        "nanmedian of short lines": (lambda z: np.nanmedian(z[:, :7], axis=1), _long_lines()),
        "nanmedian of all NaN": (np.nanmedian, np.array([complex(NAN, 2), complex(1, NAN)])),
        "nanmedian over two axes": (lambda z: np.nanmedian(z, axis=(1, 0)),
                                    np.array([[NAN, 2 + 1j], [1j, complex(3, NAN)]])),
        "nanmedian of none": (lambda z: np.nanmedian(z, axis=0), np.zeros((0, 2), complex)),
        "nanmedian, inf beside": (lambda z: np.nanmedian(z, axis=-1),
                                  np.array([[complex(1, INF), 3 + 0j, NAN], [2 - 1j, NAN, NAN]])),
    }
    for name, (fn, z) in cases.items():
        got, expected = numpy_and_compiled(fn, z)
        assert_complex_same(got, expected, what=name)


def _long_lines():
    z = np.full((3, 650), complex(NAN, 1))
    z[0, :9] = np.arange(9) - 1j
    z[1, 100:110] = np.arange(10) * (1 + 1j)
    z[2, -1] = complex(3, NAN)
    return z


def test_cov_and_corrcoef_of_complex_variables():
    rng = np.random.default_rng(2)
    z = rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))
    x = rng.standard_normal(5)
    cases = {
        "rows": lambda z, x: np.cov(z), "one variable": lambda z, x: np.cov(z[0]),
        "with y": lambda z, x: np.cov(z[0], z[1] ** 2),
        "real y": lambda z, x: np.cov(z[0], x, ddof=0),
        "columns": lambda z, x: np.cov(z.T, rowvar=False, bias=True),
        "complex64": lambda z, x: np.cov(z.astype(np.complex64)),
        "corrcoef": lambda z, x: np.corrcoef(z), "corrcoef one": lambda z, x: np.corrcoef(z[1]),
        "corrcoef with y": lambda z, x: np.corrcoef(z[0], x),
    }
    for name, fn in cases.items():
        got, expected = numpy_and_compiled(fn, z, x)
        assert_complex_same(got, expected, eps=1e-14, scale=4, what=name)
    with pytest.raises(NotImplementedError, match="aweights"):
        jitflow.function(lambda z: np.cov(z, aweights=np.ones(5)))(z)


def test_interp_and_trapezoid_of_complex_values():
    fp = np.array([1 + 1j, 2 - 1j, NAN + 0j, 0.5j, -1 + 2j])
    xp = np.array([0.0, 1.0, 2.0, 3.5, 4.0])
    x = np.array([-1.0, 0.0, 0.25, 1.5, 2.5, 3.75, 4.0, 9.0])
    cases = {
        "interp": lambda fp: np.interp(x, xp, fp),
        "interp ends": lambda fp: np.interp(x, xp, fp, left=2j, right=-1.0),
        "trapezoid": lambda fp: np.trapezoid(fp, xp),
        "trapezoid dx": lambda fp: np.trapezoid(fp.reshape(1, 5), dx=0.5, axis=1),
        "trapezoid complex x": lambda fp: np.trapezoid(xp, fp),
    }
    for name, fn in cases.items():
        got, expected = numpy_and_compiled(fn, fp)
        assert_complex_same(got, expected, eps=1e-15, scale=8, what=name)


@EXAMPLES
@given(z=complex_arrays(), data=st.data())
def test_searchsorted_in_numpys_order_of_complex_numbers(z, data):
    v = data.draw(complex_arrays())
    side = data.draw(st.sampled_from(["left", "right"]))
    got, expected = numpy_and_compiled(
        lambda z, v: np.searchsorted(np.sort(z.ravel()), v, side=side), z, v)
    assert_complex_same(got, expected, what=side)
    got, expected = numpy_and_compiled(
        lambda z, v: np.searchsorted(z.ravel(), v, sorter=np.argsort(z.ravel())), z, v)
    assert_complex_same(got, expected, what="sorter")


@EXAMPLES
@given(z=complex_arrays(), low=st.sampled_from([None, 0, 1j, 0.5 - 0.5j, NAN,
                                                complex(1, NAN), complex(-0.0, 0.0)]),
       high=st.sampled_from([None, 1, 2 + 2j, -1j, complex(NAN, 1)]))
def test_clip_as_numpys_clip_loop_or_maximum_and_minimum(z, low, high):
    got, expected = numpy_and_compiled(lambda z: np.clip(z, low, high), z)
    assert_complex_same(got, expected)


CHOOSING = {
    "select": lambda z: np.select([z.real > 0, z.imag > 0], [z, 2 * z], 1j),
    "select of a real choice": lambda z: np.select([z.real > 0], [z.real], 1j),
    "choose": lambda z: np.choose(np.arange(z.size).reshape(z.shape) % 2, [z, -z]),
    "isin": lambda z: np.isin(z, z.ravel()[:2]),
    "isin inverted, real elements": lambda z: np.isin(z.real, z, invert=True),
    "delete": lambda z: np.delete(z, [0, -1]),
    "insert": lambda z: np.insert(z, 1, 5j),
    "insert into a real array": lambda z: np.insert(np.arange(3.0), 1, z.ravel()[:1]),
    "broadcast_arrays": lambda z: np.broadcast_arrays(z[None], z.real[..., :1]),
    "meshgrid": lambda z: np.meshgrid(z.ravel(), z.real.ravel()[:3]),
    "meshgrid ij sparse": lambda z: np.meshgrid(z.ravel()[:2], z.ravel(), indexing="ij",
                                                sparse=True),
    "sinc": lambda z: np.sinc(z),
    "gradient": lambda z: np.gradient(z, axis=-1) if z.shape[-1] > 1 else z,
    "ediff1d": lambda z: np.ediff1d(z, to_end=1j, to_begin=[1, 2]),
    "matvec": lambda z: np.matvec(np.outer(z, z), z.ravel()),
    "vecmat": lambda z: np.vecmat(z.ravel(), np.outer(z, z)),
    "vecmat of a real vector": lambda z: np.vecmat(z.real.ravel(), np.outer(z, z)),
}


@pytest.mark.parametrize("name", sorted(CHOOSING))
@EXAMPLES
@given(z=hnp.arrays(np.complex128, hnp.array_shapes(min_dims=1, max_dims=2, min_side=1,
                                                    max_side=4),
                    elements=st.builds(complex, st.floats(-4, 4), st.floats(-4, 4))))
def test_choosing_arranging_and_products_are_numpys(name, z):
    got, expected = numpy_and_compiled(CHOOSING[name], z)
    if isinstance(expected, (tuple, list)):
        assert len(got) == len(expected)
        for one, numpys in zip(got, expected):
            assert_complex_same(one, numpys, what=name)
        return
    if name == "sinc":  # (sin of complex values grows as e^|imag|)
        assert_complex_same(got, expected, eps=1e-13, scale=np.abs(expected),
                            zero_sign=False, what=name)
        return
    inexact = name in ("matvec", "vecmat", "vecmat of a real vector")
    assert_complex_same(got, expected, eps=1e-14 if inexact else 0, zero_sign=not inexact,
                        scale=1 + np.max(np.abs(z)) ** 2, what=name)


def test_what_numpy_refuses_is_refused():
    z = np.array([1 + 1j, 2j])
    with pytest.raises(TypeError, match="complex"):
        jitflow.function(lambda z: np.ediff1d(np.arange(3.0), to_end=z))(z)
    with pytest.raises(TypeError, match="complex"):
        jitflow.function(lambda z: np.insert(np.arange(3.0) * z.real[0], 1, 5j))(z)
    with pytest.raises(TypeError, match="percentile"):
        jitflow.function(lambda z: np.percentile(z, 50))(z)
