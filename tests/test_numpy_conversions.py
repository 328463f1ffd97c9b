"""Conversions, type questions and index arrays (jitflow/numpy/conversions.py) against
NumPy, eagerly, traced and (where NumPy dispatches) through NumPy's own functions."""
import numpy as np
import pytest

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same
from numpy_programs import check_program

pytestmark = pytest.mark.usefixtures("backend")

X = np.array([[1.5, -0.25, -2.0], [0.75, 4.0, 1.0], [0.5, 2.0, -1.0]])
XI = np.array([[3, -7, 5, 0], [1, 2, -3, 4]], np.int32)

# NumPy's own conversions read their argument's memory and do not dispatch to jitflow:
# these are checked through jitflow.numpy's, eagerly and traced
LAYOUTS = {
    "asanyarray": lambda xp, x, xi: xp.asanyarray(xi, dtype=np.float32),
    "ascontiguousarray": lambda xp, x, xi: xp.ascontiguousarray(x.T),
    "ascontiguousarray_0d": lambda xp, x, xi: xp.ascontiguousarray(x[0, 0]),
    "asfortranarray": lambda xp, x, xi: xp.asfortranarray(xi, dtype=np.float64),
    "asfortranarray_0d": lambda xp, x, xi: xp.asfortranarray(xi[0, 0]),
    "require": lambda xp, x, xi: xp.require(xi, np.int64, ["F", "W"]),
    "require_none": lambda xp, x, xi: xp.require(x),
}

PROGRAMS = {
    "require_both_orders": lambda xp, x, xi: xp.require(x, None, "CF"),
    "iscomplex": lambda xp, x, xi: xp.iscomplex(x),
    "iscomplex_0d": lambda xp, x, xi: xp.iscomplex(xi[0, 0]),
    "isreal": lambda xp, x, xi: xp.isreal(xi),
    "real_if_close": lambda xp, x, xi: xp.real_if_close(x),
    "bitwise_invert": lambda xp, x, xi: xp.bitwise_invert(xi),
    "bitwise_invert_bool": lambda xp, x, xi: xp.bitwise_invert(x > 0),
    "tril_indices_from": lambda xp, x, xi: x[xp.tril_indices_from(x)],
    "triu_indices_from_k": lambda xp, x, xi: xi[xp.triu_indices_from(xi, k=1)],
    "tril_indices_from_1d": lambda xp, x, xi: xp.tril_indices_from(x[0]),
    "diag_indices_from": lambda xp, x, xi: x[xp.diag_indices_from(x)],
    "diag_indices_from_unequal": lambda xp, x, xi: xp.diag_indices_from(xi),
    "tril_indices": lambda xp, x, xi: x[xp.tril_indices(3, -1)],
    "triu_indices": lambda xp, x, xi: xi[xp.triu_indices(2, 1, 4)],
    "diag_indices": lambda xp, x, xi: x[xp.diag_indices(2)],
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_numpy(name, backend):
    check_program(PROGRAMS[name], X, XI, what=name)


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_layout_requests_give_the_values(name, backend):
    expected = LAYOUTS[name](np, X, XI)
    for label, got in (("eagerly", LAYOUTS[name](jnp, X, XI)),
                       ("traced", jitflow.function(lambda *a: LAYOUTS[name](jnp, *a))(X, XI))):
        assert_same(got, expected, what=f"{name} {label}")


@pytest.mark.parametrize("x", [np.ones(2), np.float32(1.5), 2, 2.5, [1, 2]],
                         ids=["array", "float32", "int", "float", "list"])
def test_object_predicates(x, backend):
    for name in ("iscomplexobj", "isrealobj", "isreal", "iscomplex"):
        expected = getattr(np, name)(x)
        got = getattr(jnp, name)(x)
        assert type(got) is type(expected) and np.array_equal(got, expected), name
    traced = jitflow.function(lambda x: jnp.asarray(jnp.iscomplexobj(x)) + x)
    np.testing.assert_array_equal(traced(np.ones(2)), np.ones(2))


@pytest.mark.parametrize("x", [np.array([1.5, -2.0]), np.array([1.0, np.inf]),
                               np.array([[np.nan]], np.float32), np.array([3, 4]),
                               np.array([1 + 2j, 3j]), np.array([complex(1, np.nan)])],
                         ids=["finite", "inf", "nan", "int", "complex", "complex_nan"])
def test_asarray_chkfinite_raises_at_run_time_as_numpy_does(x, backend):
    traced = jitflow.function(lambda x: jnp.asarray_chkfinite(x) * 2)
    try:
        expected = np.asarray_chkfinite(x) * 2
    except ValueError:
        for run in (lambda: jnp.asarray_chkfinite(x), lambda: traced(x)):
            with pytest.raises(ValueError, match="must not contain infs or NaNs"):
                run()
        return
    assert_same(jnp.asarray_chkfinite(x) * 2, expected, what="eagerly")
    assert_same(traced(x), expected, what="traced")
    assert_same(traced(x), expected, what="traced, again")


def test_asarray_chkfinite_checks_values_it_does_not_use_and_keeps_gradients():
    checked = jitflow.function(lambda x: (jnp.asarray_chkfinite(x), 1.0)[1] + x.sum())
    with pytest.raises(ValueError, match="infs or NaNs"):
        checked(np.array([np.nan, 1.0]))
    gradient = jitflow.function(jitflow.grad(lambda x: (jnp.asarray_chkfinite(x) ** 2).sum()))
    np.testing.assert_array_equal(gradient(np.array([1.0, -3.0])), [2.0, -6.0])


def test_eager_layouts_are_numpy_s():
    assert jnp.asfortranarray(np.ones((2, 3))).flags.f_contiguous
    assert jnp.ascontiguousarray(np.ones((2, 3)).T).flags.c_contiguous
    with pytest.raises(KeyError):
        jnp.require(np.ones(2), requirements="Z")
