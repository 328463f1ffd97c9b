"""x[mask] op= v and x[mask] = y[mask] with a traced boolean mask: NumPy's values,
dtypes and errors, though how many elements the mask selects is known only at run
time; every other use of such a selection raises BooleanIndexError at the user's line."""
import operator

import numpy as np
import pytest
from hypothesis import strategies as st

import jitflow
from jitflow.testing import check_grads
from fidelity import (assert_same, error_kinds, given_per_backend, native_tolerance,
                      numpy_outcome)
from strategies import DTYPES, arrays, shapes

UPDATES = {"=": None, "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul}


def masked_update(op, value_is_selection):
    def f(x, chooser, other):
        x = x.copy()
        mask = chooser > 0
        value = other[mask] if value_is_selection else other
        if op == "=":
            x[mask] = value
        else:
            x[mask] = UPDATES[op](x[mask], value)  # what `x[mask] op= value` runs
        return x
    return f


@st.composite
def updates(draw):
    shape = draw(shapes(min_dims=1, max_dims=3))
    mask_dims = draw(st.integers(1, len(shape)))
    x = draw(arrays(draw(st.sampled_from(DTYPES)), shape, special=False, min_value=-50,
                    max_value=50))
    chooser = draw(arrays(np.float64, shape[:mask_dims], special=False))
    selection = draw(st.booleans())
    other_shape = shape if selection else draw(st.sampled_from(
        [(), (1,), shape[mask_dims:], (1,) + shape[mask_dims:]]))
    other = draw(arrays(draw(st.sampled_from(DTYPES)), other_shape, special=False,
                        min_value=-50, max_value=50))
    return draw(st.sampled_from(sorted(UPDATES))), selection, x, chooser, other


@given_per_backend(case=updates())
def test_masked_updates_match_numpy(backend, case):
    op, selection, x, chooser, other = case
    f = masked_update(op, selection)
    expected, error = numpy_outcome(f, x, chooser, other)
    if error is not None:
        with pytest.raises(error_kinds(error)):
            jitflow.function(f)(x, chooser, other)
        return
    try:
        actual = jitflow.function(f)(x, chooser, other)
    except TypeError as refused:  # writes.py's stated limit for traced scalars
        assert "NumPy checks at run time that the number" in str(refused)
        return
    assert_same(actual, expected, what=f"x[mask] {op} {'y[mask]' if selection else 'v'}",
                **native_tolerance({}, False))


def test_the_mask_may_be_computed_twice(backend):
    def f(x, y):
        x = x.copy()
        x[y > 0] = y[y > 0]  # two computations of one mask
        x[x > 1] += 10.0
        return x
    x, y = np.array([0.0, 1.0, 2.0, 3.0]), np.array([-1.0, 5.0, -2.0, 0.5])
    np.testing.assert_array_equal(jitflow.function(f)(x, y), f(x, y))


def test_derivatives_flow_through_masked_updates(backend):
    def f(x, w):
        y = x * 1.0
        m = x > 0
        y[m] *= w[m]
        y[m] += 2.0 * w[m]
        return (y ** 2).sum()
    x = np.array([-1.0, 2.0, 3.0, -0.5])
    check_grads(jitflow.function(f), (x, np.array([0.5, -1.5, 2.0, 1.0])), order=1)


@pytest.mark.parametrize("expression", [
    lambda x, y, m: np.exp(y[m]) * 2 + x[m],
    lambda x, y, m: -(y[m] ** 2) / (1.0 + abs(x[m])),
    lambda x, y, m: np.where(True, 1.0, 0.0) * np.maximum(x[m], y[m]),
    lambda x, y, m: (x[m] > y[m]) * 1.5,
], ids=["exp", "operators", "binary-ufunc", "comparison"])
def test_elementwise_expressions_of_selections_are_assigned_as_numpy_does(backend,
                                                                          expression):
    def f(x, y):
        x = x.copy()
        m = y > 0
        x[m] = expression(x, y, m)
        return x
    x, y = np.linspace(-2, 2, 6), np.array([0.5, -1.0, 2.0, 0.0, -3.0, 1.0])
    assert_same(jitflow.function(f)(x, y), f(x, y), what="result",
                **native_tolerance({}, True))


@pytest.mark.parametrize("use", [
    lambda x, m: x[m] * 2,  # a selection returned
    lambda x, m: x[m].sum(),
    lambda x, m: np.sum(x[m]),
    lambda x, m: float(x[m]),
    lambda x, m: x[m].shape,
], ids=["arithmetic", "method", "numpy", "float", "attribute"])
def test_other_uses_of_a_selection_raise_at_the_users_line(backend, use):
    @jitflow.function
    def f(x):
        return use(x, x > 0)
    with pytest.raises(jitflow.BooleanIndexError, match="test_masked_selection.py"):
        f(np.arange(3.0))


def test_a_selection_assigned_at_another_mask_raises(backend):
    @jitflow.function
    def f(x, y):
        x = x.copy()
        x[x > 0] = y[y > 0]
        return x
    with pytest.raises(jitflow.BooleanIndexError, match="selection can be written to"):
        f(np.arange(3.0), np.arange(3.0))


def test_an_array_value_that_must_match_the_count_raises(backend):
    @jitflow.function
    def f(x):
        x = x.copy()
        x[x > 0] += np.ones(3)
        return x
    with pytest.raises(ValueError, match="known only at run time"):
        f(np.arange(3.0))


EMPTY_MASKS = [((1,), (0,)), ((5,), (0,)), ((2, 3), (0,)), ((2, 3), (0, 3)), ((2, 3), (0, 0)),
               ((1, 2, 3), (1, 0, 3)), ((1, 2, 3), (0, 5)), ((1, 2, 3), (5, 0)),
               ((1, 2, 3), (1, 0, 5)), ((1, 2, 3), (3, 0, 0))]


@pytest.mark.parametrize("constant", [False, True], ids=["traced", "constant"])
@pytest.mark.parametrize("shape,mask_shape", EMPTY_MASKS)
def test_an_empty_boolean_index_selects_nothing_where_its_axes_fit(backend, shape,
                                                                   mask_shape, constant):
    # NumPy takes a boolean index's axis of length 0 as fitting any axis, and selects
    # nothing; an axis of another length must match (a slice's length-1 row at one
    # batch size met a length-0 mask: found by the dynamic-axes fuzzer, for a traced
    # mask, then for a constant one)
    x, mask = np.arange(np.prod(shape), dtype=np.float32).reshape(shape), \
        np.zeros(mask_shape, bool)

    def assign(x, mask, value):
        x = x.copy()
        x[mask] = value
        return x

    def select(x, mask):
        return x[mask] * 2
    for fn, arguments in ((select, (x, mask)), (assign, (x, mask, 7.0))):
        compiled = jitflow.function(
            (lambda x, *rest: fn(x, mask, *rest)) if constant else fn)
        given = arguments[:1] + arguments[2:] if constant else arguments
        try:
            expected = fn(*arguments)
        except IndexError:
            with pytest.raises(IndexError, match="boolean index"):
                compiled(*given)
        else:
            assert_same(compiled(*given), expected)
    if all(size in (0, length) for length, size in zip(shape, mask_shape)):
        with pytest.raises(ValueError, match="shape mismatch"):
            jitflow.function(assign)(x, mask, np.ones(2, np.float32))
