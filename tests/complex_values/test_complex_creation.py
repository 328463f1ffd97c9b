"""Complex arrays made in traced code (zeros, ones, full, the *_like forms, eye,
arange, linspace, lists of complex and traced values) and more of NumPy's functions
of complex arrays (creation.py, more_arrays.py), against NumPy eagerly and traced:
dtypes, shapes and values, NaN and inf parts included."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from complex_checks import assert_complex_same
from fidelity import NATIVE_SHARE

pytestmark = pytest.mark.usefixtures("backend")

COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]

# Functions of a real argument x (float64, (3,)) that make complex arrays.
CREATION = {
    "zeros": lambda xp, x: xp.zeros((2, 3), np.complex64),
    "zeros_python_complex": lambda xp, x: xp.zeros(3, complex),
    "ones": lambda xp, x: xp.ones((2, 2), dtype=np.complex64),
    "full_python": lambda xp, x: xp.full((2, 3), 1 - 2j),
    "full_dtype": lambda xp, x: xp.full(3, 2, np.complex64),
    "full_traced": lambda xp, x: xp.full((2, 3), x * 1j),
    "zeros_like_dtype": lambda xp, x: xp.zeros_like(x, dtype=np.complex128),
    "zeros_like_complex": lambda xp, x: xp.zeros_like(x * 1j),
    "ones_like_complex64": lambda xp, x: xp.ones_like(x.astype(np.float32) * 1j),
    "full_like": lambda xp, x: xp.full_like(x * 1j, 3j),
    "full_like_shape": lambda xp, x: xp.full_like(x, 3j, dtype=complex, shape=(2, 2)),
    "eye": lambda xp, x: xp.eye(3, 4, 1, dtype=np.complex64),
    "identity": lambda xp, x: xp.identity(2, dtype=np.complex128),
    "arange": lambda xp, x: xp.arange(1, 7, 2, dtype=np.complex64),
    "linspace": lambda xp, x: xp.linspace(1 + 2j, -3j, 4, endpoint=False),
    "linspace_dtype": lambda xp, x: xp.linspace(0, 3, 4, dtype=np.complex64),
    "linspace_traced": lambda xp, x: xp.linspace(x[0] * 1j, x[2], 5),
    "array_of_list": lambda xp, x: xp.array([x[0], 1j, 2]),
    "array_nested": lambda xp, x: xp.array([[x[0], 1j], [x[1] * 1j, 2]]),
    "asarray_list_dtype": lambda xp, x: xp.asarray([x * 1j, x], dtype=np.complex64),
    "state_of_a_loop": lambda xp, x: xp.zeros((), np.complex128) + x[1] * (1 + 1j),
}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation_matches_numpy(name):
    x = np.array([1.5, -2.0, 0.25])
    fn = CREATION[name]
    expected = fn(np, x)
    assert_complex_same(jitflow.function(lambda x: fn(jnp, x))(x), expected, what=name)
    assert_complex_same(fn(jnp, x), expected, what=f"{name} eagerly")


def test_a_complex_result_written_into_a_zeros_array():
    """out = zeros(n, complex); out[i] = ...: made by jitflow.numpy, it takes traced
    values; NumPy's own array cannot, and says what to write instead."""
    def fill(xp, x):
        out = xp.zeros(x.shape[0], dtype=complex)
        for i in range(x.shape[0]):
            out[i] = np.exp(1j * x[i])
        return out
    x = np.linspace(0, 3, 5)
    assert_complex_same(jitflow.function(lambda x: fill(jnp, x))(x), fill(np, x), scale=1.0,
                        eps=8 * np.finfo(float).eps, what="filled")
    with pytest.raises(TypeError, match=r"jitflow.numpy.zeros\(n, complex\)"):
        jitflow.function(lambda x: fill(np, x))(x)


def test_empty_has_the_shape_and_dtype_asked_for():
    empty = jitflow.function(lambda x: jnp.empty((2, x.shape[0]), np.complex64))(np.ones(3))
    assert (empty.shape, empty.dtype) == ((2, 3), np.complex64)


def test_arange_with_complex_bounds_is_refused_by_name():
    with pytest.raises(TypeError, match="arange with complex start"):
        jitflow.function(lambda x: jnp.arange(1j, 3, dtype=complex))(np.ones(2))


@pytest.mark.parametrize("fn", [lambda xp, x: xp.full_like(x, 3j),
                                lambda xp, x: xp.full(3, x[1] * 1j + 2, np.float64),
                                lambda xp, x: xp.full_like(x.astype(np.int32), 2.5 + 1j)])
def test_complex_fill_values_of_real_arrays_keep_the_real_part_and_warn(fn):
    x = np.arange(3.0)
    with pytest.warns(np.exceptions.ComplexWarning):
        expected = fn(np, x)
    with pytest.warns(np.exceptions.ComplexWarning):
        got = jitflow.function(lambda x: fn(jnp, x))(x)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


# Functions of a complex z (4, 5), compared with NumPy to rounding (`exact`: bit for bit).
FUNCTIONS = {
    "diff": (lambda xp, z: xp.diff(z, axis=1), True),
    "diff_twice_prepend": (lambda xp, z: xp.diff(z, n=2, axis=0, prepend=1j), True),
    "split": (lambda xp, z: tuple(xp.split(z, 2, axis=0)), True),
    "array_split": (lambda xp, z: tuple(xp.array_split(z, 3, axis=1)), True),
    "hsplit": (lambda xp, z: tuple(xp.hsplit(z, [1, 3])), True),
    "vsplit": (lambda xp, z: tuple(xp.vsplit(z, 2)), True),
    "append": (lambda xp, z: xp.append(z, z[:1], axis=0), True),
    "append_real_flat": (lambda xp, z: xp.append(z, 1.5), True),
    "isclose": (lambda xp, z: xp.isclose(z, z * (1 + 1e-9)), True),
    "isclose_equal_nan": (lambda xp, z: xp.isclose(z, z, equal_nan=True), True),
    "allclose": (lambda xp, z: xp.allclose(z, z + 1e-12), True),
    "array_equal": (lambda xp, z: xp.array_equal(z, z + 0, equal_nan=True), True),
    "any": (lambda xp, z: xp.any(z * 0, axis=0), True),
    "all": (lambda xp, z: xp.all(z), True),
    "count_nonzero": (lambda xp, z: xp.count_nonzero(z.real * 1j), True),
    "isreal": (lambda xp, z: xp.isreal(z), True),
    "iscomplex": (lambda xp, z: xp.iscomplex(z), True),
    "round": (lambda xp, z: xp.round(z * 10, 1), True),
    "nan_to_num": (lambda xp, z: xp.nan_to_num(z, posinf=7.0), True),
    "resize": (lambda xp, z: xp.resize(z, (3, 7)), True),
    "rollaxis": (lambda xp, z: xp.rollaxis(z, 1), True),
    "take_along_axis": (lambda xp, z: xp.take_along_axis(z, np.array([[4], [0], [1], [2]]),
                                                          1), True),
    "linalg_trace": (lambda xp, z: xp.linalg.trace(z[:, :4]), True),
    "nansum": (lambda xp, z: xp.nansum(z, axis=1), False),
    "average": (lambda xp, z: xp.average(z, axis=1), False),
    "average_weighted": (lambda xp, z: xp.average(z, axis=0, weights=[1.0, 2.0, 0.5, 1.0]),
                         False),
    "einsum_one": (lambda xp, z: xp.einsum("ij->j", z), False),
    "einsum_two": (lambda xp, z: xp.einsum("ij,kj->ik", z, z.conj()), False),
    "convolve": (lambda xp, z: xp.convolve(z[0], z[1, :3]), False),
    "convolve_real": (lambda xp, z: xp.convolve(z[0].real, z[1]), False),
    "correlate": (lambda xp, z: xp.correlate(z[0], z[1, :3], "full"), False),
    "polyval": (lambda xp, z: xp.polyval(z[0], z[1]), False),
    "polyval_real_points": (lambda xp, z: xp.polyval(z[0], np.array([0.5, -1.0])), False),
}


def complex_values(dtype):
    part = np.float32 if dtype == np.complex64 else np.float64
    floats = st.floats(-4, 4, width=np.dtype(part).itemsize * 8) | st.sampled_from(
        [0.0, -0.0, np.inf, -np.inf, np.nan])
    return hnp.arrays(dtype, (4, 5), elements=st.builds(complex, floats, floats))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@settings(max_examples=max(2, settings.default.max_examples // NATIVE_SHARE))
@given(data=st.data())
def test_functions_match_numpy(name, data):
    fn, exact = FUNCTIONS[name]
    dtype = data.draw(st.sampled_from(COMPLEX), label="dtype")
    z = data.draw(complex_values(dtype), label="z")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        expected = fn(np, z)
        got = jitflow.function(lambda z: fn(jnp, z))(z)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    eps = 0 if exact else 64 * np.finfo(dtype).eps
    for g, e in zip(got, expected):
        finite = np.isfinite(e)
        if exact or not np.asarray(e).shape:
            assert_complex_same(g, e, scale=np.abs(e) + 1, eps=eps, zero_sign=exact,
                                what=name)
            continue
        # where an inf or NaN meets a sum, its order decides between them
        assert np.array_equal(np.isfinite(g), finite), name
        assert_complex_same(np.asarray(g)[finite], e[finite], scale=np.abs(e[finite]) + 4,
                            eps=eps, zero_sign=False, what=name)
