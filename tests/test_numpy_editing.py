"""Editing, summing and special functions (jitflow/numpy/editing.py, summing.py,
special.py) against NumPy: values, dtypes and shapes eagerly, traced, and through
NumPy's own functions on traced values; NumPy's errors; derivatives."""
import warnings

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from fidelity import given_per_backend
from jitflow.testing import check_grads
from numpy_programs import check_program, native_ulps
from strategies import DTYPES, arrays

pytestmark = pytest.mark.usefixtures("backend")

X = np.array([[1.5, -0.25, -2.0, 3.0], [0.75, 4.0, 1.0, -0.0], [0.5, 2.0, -1.0, 4.0]])
XI = np.array([[3, -7, 5, 0], [1, 2, -3, 4], [9, 8, -1, 2]], np.int32)
TWO = np.array([[1, 0, 2, 1], [0, 1, 1, 2], [2, 2, 0, 1]])

PROGRAMS = {
    "delete_flat": lambda xp, x, xi: xp.delete(x, 3),
    "delete_axis": lambda xp, x, xi: xp.delete(xi, [0, -1], axis=1),
    "delete_slice": lambda xp, x, xi: xp.delete(x, slice(None, None, 2), axis=1),
    "delete_mask": lambda xp, x, xi: xp.delete(xi, np.array([True, False, True]), 0),
    "delete_empty": lambda xp, x, xi: xp.delete(x, [], axis=0),
    "delete_out_of_bounds": lambda xp, x, xi: xp.delete(x, 5, axis=1),
    "insert_scalar": lambda xp, x, xi: xp.insert(x, 2, 9.5),
    "insert_column": lambda xp, x, xi: xp.insert(x, 1, xi[:, 0], axis=1),
    "insert_rows": lambda xp, x, xi: xp.insert(xi, [1], x[:2], axis=0),
    "insert_many": lambda xp, x, xi: xp.insert(xi, [3, 0, 3], x[0, :3], axis=1),
    "insert_slice": lambda xp, x, xi: xp.insert(x, slice(0, 2), -1, axis=0),
    "insert_truncates": lambda xp, x, xi: xp.insert(xi, 0, x[0]),
    "insert_negative": lambda xp, x, xi: xp.insert(x, -1, [[1.0], [2.0], [3.0]], axis=1),
    "insert_out_of_bounds": lambda xp, x, xi: xp.insert(x, 9, 1.0, axis=1),
    "insert_mismatch": lambda xp, x, xi: xp.insert(x, [0, 1], x[:, :3], axis=1),
    "block_2d": lambda xp, x, xi: xp.block([[x, xi[:, :1]], [xi[:1], x[:1, :1]]]),
    "block_1d": lambda xp, x, xi: xp.block([x[0], xi[1], 5]),
    "block_ranks": lambda xp, x, xi: xp.block([[x[0]], [xi[1]]]),
    "block_depth_mismatch": lambda xp, x, xi: xp.block([[x], x]),
    "vstack_as_row_stack": lambda xp, x, xi: xp.vstack([x[0], xi]),
    "rollaxis": lambda xp, x, xi: xp.rollaxis(x[None], 2, 0),
    "rollaxis_start": lambda xp, x, xi: xp.rollaxis(xi[None], 0, 3),
    "rollaxis_bad_start": lambda xp, x, xi: xp.rollaxis(x, 0, 5),
    "resize_grow": lambda xp, x, xi: xp.resize(xi, (5, 3)),
    "resize_shrink": lambda xp, x, xi: xp.resize(x, 5),
    "resize_empty": lambda xp, x, xi: xp.resize(x, (0, 2)),
    "choose": lambda xp, x, xi: xp.choose(TWO, [x, xi, -1.0]),
    "choose_broadcast": lambda xp, x, xi: xp.choose(TWO[0], [xi[0], xi[1], xi[2]]),
    "choose_wrap": lambda xp, x, xi: xp.choose(xi, [x, -x], mode="wrap"),
    "choose_clip": lambda xp, x, xi: xp.choose(xi, [x, -x, x * 2], mode="clip"),
    "piecewise": lambda xp, x, xi: xp.piecewise(x, [x < 0, x > 2], [lambda v: -v, 7.0]),
    "piecewise_else": lambda xp, x, xi: xp.piecewise(x, [x < 0], [0.0, lambda v: v * v]),
    "piecewise_int": lambda xp, x, xi: xp.piecewise(xi, [xi < 0, xi > 3],
                                                    [lambda v: v // 2, 1.5, 100]),
    "piecewise_count": lambda xp, x, xi: xp.piecewise(x, [x < 0], [1.0, 2.0, 3.0]),
    "apply_along_axis": lambda xp, x, xi: xp.apply_along_axis(lambda v: v[::-1] * 2, 1, x),
    "apply_along_axis_scalar": lambda xp, x, xi: xp.apply_along_axis(xp.sum, 0, xi),
    "apply_along_axis_matrix": lambda xp, x, xi: xp.apply_along_axis(xp.diag, -1, x),
    "apply_over_axes": lambda xp, x, xi: xp.apply_over_axes(xp.sum, x, [0, 1]),
    "apply_over_axes_keep": lambda xp, x, xi: xp.apply_over_axes(
        lambda a, ax: xp.cumsum(a, axis=ax), xi, 1),
    "cumulative_sum": lambda xp, x, xi: xp.cumulative_sum(x[0]),
    "cumulative_sum_axis": lambda xp, x, xi: xp.cumulative_sum(xi, axis=1,
                                                               include_initial=True),
    "cumulative_sum_dtype": lambda xp, x, xi: xp.cumulative_sum(xi, axis=0,
                                                                dtype=np.float32),
    "cumulative_sum_needs_axis": lambda xp, x, xi: xp.cumulative_sum(x),
    "cumulative_prod": lambda xp, x, xi: xp.cumulative_prod(x, axis=0,
                                                            include_initial=True),
    "cumulative_prod_int": lambda xp, x, xi: xp.cumulative_prod(xi[1]),
    "vdot": lambda xp, x, xi: xp.vdot(x, xi),
    "vdot_int": lambda xp, x, xi: xp.vdot(xi[0], xi[1]),
    "vdot_lengths": lambda xp, x, xi: xp.vdot(x, xi[0]),
    "trapezoid": lambda xp, x, xi: xp.trapezoid(x),
    "trapezoid_dx": lambda xp, x, xi: xp.trapezoid(xi, dx=0.5, axis=0),
    "trapezoid_x": lambda xp, x, xi: xp.trapezoid(x, x=xi[0]),
    "trapezoid_x_2d": lambda xp, x, xi: xp.trapezoid(xi, x=x, axis=0),
    "trapezoid_float32": lambda xp, x, xi: xp.trapezoid(x.astype(np.float32)),
    "sinc": lambda xp, x, xi: xp.sinc(x),
    "sinc_int": lambda xp, x, xi: xp.sinc(xi),
    "sinc_float32": lambda xp, x, xi: xp.sinc(x.astype(np.float32)),
    "unwrap": lambda xp, x, xi: xp.unwrap(x * 3),
    "unwrap_axis": lambda xp, x, xi: xp.unwrap(x * 3, axis=0, discont=4.0),
    "unwrap_int_period": lambda xp, x, xi: xp.unwrap(xi, period=6),
    "unwrap_odd_period": lambda xp, x, xi: xp.unwrap(xi * 3, period=5),
    "isposinf": lambda xp, x, xi: xp.isposinf(x / xp.sign(x)),
    "isneginf": lambda xp, x, xi: xp.isneginf(x / xp.sign(x)),
    "isposinf_int": lambda xp, x, xi: xp.isposinf(xi),
    "i0": lambda xp, x, xi: xp.i0(x * 3),
    "i0_int": lambda xp, x, xi: xp.i0(xi),
    "geomspace": lambda xp, x, xi: xp.geomspace(x[0, 0], x[1, 1] * 100, 6),
    "geomspace_negative": lambda xp, x, xi: xp.geomspace(-x[0, 0], -x[2, 1], 5,
                                                         endpoint=False),
    "geomspace_arrays": lambda xp, x, xi: xp.geomspace(x[2, :2], x[1, 1:3], 4, axis=1),
    "geomspace_int": lambda xp, x, xi: xp.geomspace(xi[0, 0], xi[2, 0] * 100, 4, dtype=int),
    "geomspace_float32": lambda xp, x, xi: xp.geomspace(x[0, :1].astype(np.float32), 8, 3,
                                                        dtype=np.float32),
}

TRANSCENDENTAL = ("sinc", "i0", "kaiser", "geomspace")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_numpy(name, backend):
    tolerance = native_ulps(8) if name.startswith(TRANSCENDENTAL) else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check_program(PROGRAMS[name], X, XI, what=name, rtol=1e-14, **tolerance)


@pytest.mark.parametrize("points", [1, 2, 7])
def test_kaiser_with_a_traced_beta(points, backend):
    # (NumPy's own kaiser builds a NumPy array of beta: only jitflow.numpy's is traced)
    for beta in (0.0, 2.5, 14.0):
        expected = np.kaiser(points, beta)
        for got in (jnp.kaiser(points, beta),
                    jitflow.function(lambda b: jnp.kaiser(points, b))(np.array(beta))):
            assert got.dtype == expected.dtype and got.shape == expected.shape
            np.testing.assert_allclose(got, expected, rtol=1e-14)


def test_row_stack_is_vstack():
    assert jnp.row_stack is jnp.vstack or jnp.row_stack.__wrapped__ is \
        jnp.vstack.__wrapped__


def test_choose_raises_on_indices_out_of_range(backend):
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.choose(np.array([0, 2]), [np.zeros(2), np.ones(2)])
    chosen = jitflow.function(lambda a, x: jnp.choose(a, [x, -x]))
    np.testing.assert_array_equal(chosen(np.array([1, 0]), X[0, :2]), [-1.5, -0.25])
    for bad in ([0, 2], [-1, 0]):
        with pytest.raises(IndexError):
            chosen(np.array(bad), X[0, :2])


def test_traced_positions_are_refused(backend):
    with pytest.raises(TypeError, match="delete: obj must be known"):
        jitflow.function(lambda x, i: jnp.delete(x, i))(X, np.array(1))


def test_traced_geomspace_with_a_zero_endpoint_is_nan(backend):
    got = jitflow.function(lambda a: jnp.geomspace(a, 10.0, 3))(np.array(0.0))
    assert np.isnan(got).all()
    with pytest.raises(ValueError, match="cannot include zero"):
        jnp.geomspace(0.0, 10.0, 3)


@given_per_backend(data=st.data())
def test_delete_and_insert_on_drawn_arrays(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), label="shape")
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    x = data.draw(arrays(dtype, shape), label="x")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    size = shape[axis]
    positions = data.draw(st.lists(st.integers(-size, size), max_size=3), label="obj")
    check_program(lambda xp, x: xp.delete(x, [p for p in positions if p < size], axis),
                  x, what="delete")
    check_program(lambda xp, x: xp.insert(x, positions, 7, axis=axis), x, what="insert")


DIFFERENTIABLE = {
    "delete": lambda x: jnp.delete(x, [0, 2], axis=1),
    "insert": lambda x: jnp.insert(x, [1, 1], x * 3, axis=0),
    "cumulative_sum": lambda x: jnp.cumulative_sum(x, axis=1, include_initial=True),
    "cumulative_prod": lambda x: jnp.cumulative_prod(x, axis=0),
    "vdot": lambda x: jnp.vdot(x, x[::-1]),
    "trapezoid_x": lambda x: jnp.trapezoid(x, x=x[0] * 4),
    "trapezoid_dx": lambda x: jnp.trapezoid(x, dx=0.3, axis=0),
    "sinc": lambda x: jnp.sinc(x),
    "unwrap": lambda x: jnp.unwrap(x * 4),
    "i0": lambda x: jnp.i0(x * 6),
    "block": lambda x: jnp.block([[x, x], [x, x]]),
    "choose": lambda x: jnp.choose(np.array([[0, 1, 0], [1, 1, 0]]), [x, x * x]),
    "piecewise": lambda x: jnp.piecewise(x, [x < 0], [lambda v: v * v, lambda v: 2 * v]),
    "apply_along_axis": lambda x: jnp.apply_along_axis(lambda v: v * v[0], 1, x),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_derivatives(name, backend):
    x = np.array([[0.7, -1.2, 2.0], [0.3, 1.1, -0.4]])
    fn = DIFFERENTIABLE[name]
    check_grads(fn, (x,), order=2 if backend == "interpreter" else 1)
    check_grads(jitflow.function(fn), (x,), order=1)
