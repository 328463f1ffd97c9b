"""The short compositions of jitflow/numpy/assorted.py and fft.py against NumPy:
values, dtypes and shapes eagerly, traced, and through NumPy's own functions; the
complex transforms refused by name; derivatives of the differentiable ones."""
import warnings

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same, given_per_backend
from jitflow.testing import check_grads
from numpy_programs import check_program
from strategies import DTYPES, arrays

pytestmark = pytest.mark.usefixtures("backend")

X = np.array([[1.5, np.nan, -2.0, 3.0], [np.nan, np.nan, 1.0, -0.0], [0.5, 2.0, -1.0, 4.0]])
XI = np.array([[3, -7, 5, 0], [1, 2, -3, 4], [9, 8, -1, 2]], np.int32)
INDICES = np.array([[0, 3], [2, 1], [-1, 0]])

PROGRAMS = {
    "divmod_int": lambda xp, x, xi: xp.divmod(xi, 3),
    "divmod_float": lambda xp, x, xi: xp.divmod(x, -1.5),
    "conj": lambda xp, x, xi: xp.conj(x),
    "conjugate_int": lambda xp, x, xi: xp.conjugate(xi),
    "real": lambda xp, x, xi: xp.real(x),
    "imag": lambda xp, x, xi: xp.imag(xi),
    "angle": lambda xp, x, xi: xp.angle(x),
    "angle_deg": lambda xp, x, xi: xp.angle(xi, deg=True),
    "nanvar": lambda xp, x, xi: xp.nanvar(x),
    "nanvar_axis": lambda xp, x, xi: xp.nanvar(x, axis=0),
    "nanstd_ddof": lambda xp, x, xi: xp.nanstd(x, axis=1, ddof=1, keepdims=True),
    "nanvar_int": lambda xp, x, xi: xp.nanvar(xi, axis=1),
    "nanvar_float32": lambda xp, x, xi: xp.nanvar(x.astype(np.float32), axis=(0, 1)),
    "array_equal": lambda xp, x, xi: xp.array_equal(x, x),
    "array_equal_nan": lambda xp, x, xi: xp.array_equal(x, x, equal_nan=True),
    "array_equal_shapes": lambda xp, x, xi: xp.array_equal(x, x[0]),
    "array_equiv": lambda xp, x, xi: xp.array_equiv(xi[0], xi),
    "diagflat": lambda xp, x, xi: xp.diagflat(xi[:2, :2], 1),
    "ediff1d": lambda xp, x, xi: xp.ediff1d(x, to_begin=[7], to_end=2),
    "ediff1d_int": lambda xp, x, xi: xp.ediff1d(xi),
    "select": lambda xp, x, xi: xp.select([x > 0, xi < 0], [x, xi], default=-5),
    "select_promotes_the_default": lambda xp, x, xi: xp.select(
        [x > 0], [x.astype(np.float32)]),
    "take_along_axis": lambda xp, x, xi: xp.take_along_axis(x, INDICES, 1),
    "take_along_axis_none": lambda xp, x, xi: xp.take_along_axis(xi, INDICES[0], None),
    "cross": lambda xp, x, xi: xp.cross(x[:, :3], xi[:, 1:]),
    "cross_axes": lambda xp, x, xi: xp.cross(x[:, :3].T, xi[0, 1:], axisa=0, axisc=0),
    "cross_2d": lambda xp, x, xi: xp.cross(x[:, 1:3], xi[:, :2]),
    "linalg_cross": lambda xp, x, xi: xp.linalg.cross(xi[:, 1:], xi[0, :3]),
    "linalg_tensordot": lambda xp, x, xi: xp.linalg.tensordot(xi, x.T, axes=1),
    "linalg_matrix_transpose": lambda xp, x, xi: xp.linalg.matrix_transpose(x),
    "polyval": lambda xp, x, xi: xp.polyval(xi[1], x),
    "correlate": lambda xp, x, xi: xp.correlate(x[2], xi[0, :2]),
    "correlate_same_swapped": lambda xp, x, xi: xp.correlate(xi[0, :2], x[2], "same"),
    "convolve": lambda xp, x, xi: xp.convolve(xi[2], x[2, :3]),
    "convolve_valid_int": lambda xp, x, xi: xp.convolve(xi.ravel(), xi[0, :3], "valid"),
    "pad_reflect": lambda xp, x, xi: xp.pad(xi, 2, mode="reflect"),
    "pad_edge": lambda xp, x, xi: xp.pad(x, ((1, 3), (0, 2)), mode="edge"),
    "pad_wrap": lambda xp, x, xi: xp.pad(xi, 5, mode="wrap"),
    "pad_symmetric": lambda xp, x, xi: xp.pad(x[0], (2, 1), mode="symmetric"),
    "gradient": lambda xp, x, xi: xp.gradient(x),
    "gradient_spacing_axis": lambda xp, x, xi: xp.gradient(xi, 0.5, axis=1),
    "gradient_second_order": lambda xp, x, xi: xp.gradient(xi.astype(np.float32), 2.0, 0.25,
                                                           edge_order=2),
    "fftshift": lambda xp, x, xi: xp.fft.fftshift(xi),
    "ifftshift_axis": lambda xp, x, xi: xp.fft.ifftshift(x[:, :3], axes=1),
    "fftfreq": lambda xp, x, xi: xp.fft.fftfreq(7, 0.3) + xi[0, 0],
    "fftfreq_traced_spacing": lambda xp, x, xi: xp.fft.fftfreq(6, x[0, 0]),
    "rfftfreq": lambda xp, x, xi: xp.fft.rfftfreq(8) * x[2, 0],
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_numpy(name, backend):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check_program(PROGRAMS[name], X, XI, what=name, rtol=1e-14)


UFUNC_METHODS = {
    "add.accumulate": lambda x, xi: np.add.accumulate(x),
    "multiply.accumulate": lambda x, xi: np.multiply.accumulate(xi, axis=1),
    "add.accumulate_dtype": lambda x, xi: np.add.accumulate(xi, dtype=np.float32),
    "multiply.outer": lambda x, xi: np.multiply.outer(x, xi[0]),
    "subtract.outer": lambda x, xi: np.subtract.outer(xi[:, 0], x[0]),
    "maximum.outer_scalar": lambda x, xi: np.maximum.outer(x[0], 0.5),
    "greater.outer": lambda x, xi: np.greater.outer(x[1], x[0]),
}


@pytest.mark.parametrize("name", sorted(UFUNC_METHODS))
def test_ufunc_methods_on_traced_values(name, backend):
    program = UFUNC_METHODS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = program(X, XI)
        got = jitflow.function(program)(X, XI)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    np.testing.assert_array_equal(got, expected)


@given_per_backend(data=st.data())
def test_nanvar_and_divmod_on_drawn_arrays(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), label="shape")
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    x = data.draw(arrays(dtype, shape), label="x")
    axis = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1), label="axis")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if dtype.kind == "f":
            check_program(lambda xp, x: xp.nanvar(x, axis=axis), x, what="nanvar",
                          rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-30)
        check_program(lambda xp, x: xp.divmod(x, 3), x, what="divmod")


def test_pad_modes_that_compute_are_refused_by_name(backend):
    with pytest.raises(NotImplementedError, match="mode='mean' is not supported"):
        jitflow.function(lambda x: np.pad(x, 1, mode="mean"))(np.ones(3))


def test_derivatives(backend):
    x = np.array([[0.7, -1.2, 2.0], [0.3, 1.1, -0.4]])
    order = 2 if backend == "interpreter" else 1
    for fn in (lambda x: jnp.nanvar(x, axis=1), lambda x: jnp.nanstd(x),
               lambda x: jnp.take_along_axis(x, np.array([[2, 0], [1, 1]]), 1),
               lambda x: jnp.select([x > 0.5], [x * x], default=x),
               lambda x: jnp.ediff1d(x, to_end=1.0), lambda x: jnp.fft.fftshift(x),
               lambda x: jnp.convolve(x[0], x[1, :2], "same"),
               lambda x: jnp.polyval(x[1], x[0]), lambda x: jnp.pad(x, 2, mode="reflect"),
               lambda x: jnp.gradient(x, 0.5, axis=1, edge_order=2)):
        check_grads(fn, (x,), order=order)
        check_grads(jitflow.function(fn), (x,), order=1)


SPACES = {
    "linspace": lambda xp, a, b, v, w: xp.linspace(a, b, 7),
    "linspace_open": lambda xp, a, b, v, w: xp.linspace(a, 3.0, 5, endpoint=False),
    "linspace_arrays": lambda xp, a, b, v, w: xp.linspace(v, w, 4),
    "linspace_axis": lambda xp, a, b, v, w: xp.linspace(v, w, 4, axis=1),
    "linspace_float32": lambda xp, a, b, v, w: xp.linspace(a.astype(np.float32), 2.0, 6),
    "linspace_one": lambda xp, a, b, v, w: xp.linspace(a, b, 1),
    "linspace_subnormal_step": lambda xp, a, b, v, w: xp.linspace(a * 0, b * 0 + 1e-320, 3),
    "linspace_int": lambda xp, a, b, v, w: xp.linspace(a, b * 10, 5, dtype=np.int32),
    "logspace": lambda xp, a, b, v, w: xp.logspace(a, b, 5),
    "logspace_base": lambda xp, a, b, v, w: xp.logspace(a.astype(np.float32), 2, 4, base=2.0),
}


@pytest.mark.parametrize("name", sorted(SPACES))
def test_spaces_with_traced_endpoints(name, backend):
    a, b = np.array(0.5), np.array(2.25)
    v, w = np.array([0.0, 1.0, -3.0]), np.array([1.0, 1.0, 5.0])
    transcendental = name.startswith("logspace") and backend == "native"
    check_program(SPACES[name], a, b, v, w, what=name,
                  **({"ulps": 4} if transcendental else {}))


@pytest.mark.parametrize("fn", [lambda xp, x: xp.angle(x),
                                lambda xp, x: xp.fft.fftshift(x),
                                lambda xp, x: xp.fft.ifftshift(x)],
                         ids=["angle", "fftshift", "ifftshift"])
@pytest.mark.parametrize("x", [np.array(False), np.array([True, False]), np.array(2.5),
                               np.arange(5, dtype=np.int32)], ids=["bool", "bools", "0-d",
                                                                   "ints"])
def test_fuzzer_finds_angle_of_bools_and_shifts_of_no_axes(backend, fn, x):
    # angle of bool is float64 in NumPy (arctan2 of an int zero), and fftshift of a 0-d
    # array raises ValueError (NumPy's roll of no axes)
    check_program(fn, x)


@pytest.mark.parametrize("x", [np.zeros(0, bool), np.array([True]), np.zeros(0),
                               np.array(3.0)], ids=["no-bools", "one-bool", "none", "0-d"])
def test_ediff1d_of_bools_raises_even_with_nothing_to_subtract(backend, x):
    check_program(lambda xp, x: xp.ediff1d(x), x)  # (found by the fuzzer)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("special", [np.nan, np.inf])
def test_correlate_edges_sum_only_the_terms_inside(mode, special, backend):
    """A window past an end of a has fewer terms; an inf or NaN of v outside them must
    not reach it through a padding zero (NumPy's edge results stay finite)."""
    a, v = np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([1.0, special, 0.5])
    for fn in (lambda a, v: np.correlate(a, v, mode), lambda a, v: np.convolve(a, v, mode),
               lambda a, v: np.convolve(v, a, mode)):
        got = jitflow.function(lambda a, v: fn.__call__(a, v))(a, v)
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(got, fn(a, v), rtol=1e-15)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_half_correlate_multiplies_and_sums_in_float32(mode, backend):
    """NumPy's half dot rounds once, at the end: 65504 * -3 + inf is inf, where products
    rounded to half would give -inf + inf = NaN (found by the fuzzer)."""
    a = np.array([0.0, 1.0, -1.0, np.nan, np.inf, 2.5, -3.0, 0.5, np.inf, -0.0, 65504.0,
                  1.0, -1.0, np.inf, 2.5, -3.0, 0.5, np.inf, -0.0, 65504.0, -0.0], np.float16)
    for fn in (lambda a, v: np.correlate(a, v, mode), lambda a, v: np.convolve(a, v, mode),
               lambda a, v: np.convolve(a[:9], v, mode)):
        with np.errstate(all="ignore"):
            expected = fn(a, a)
        assert_same(jitflow.function(fn)(a, a), expected)
