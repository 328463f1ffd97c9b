"""NumPy 2's unique_values, unique_counts, unique_inverse, unique_all (uniques.py) and
the set functions intersect1d, union1d, setdiff1d, setxor1d (set_operations.py)
against NumPy: eagerly, and traced with a static size= (NumPy's results cut to `size`
or filled past the count); the error that asks for size=."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same, run_traced
from jitflow.errors import ConcretizationError
from jitflow.testing import check_grads
from strategies import DTYPES, shapes

pytestmark = pytest.mark.usefixtures("backend")
# a third of the profile's examples on each backend: every one traces and compiles
DRAWN = settings(max_examples=max(5, settings.default.max_examples // 3))


def few_values(dtype, shape):
    """Arrays of a few values (so that the arrays share some), NaN, infinities and both
    zeros among the floats'."""
    values = [False, True] if dtype == np.bool_ else [0, 1, 2, 5]
    if dtype.kind == "i":
        values += [-1, -7]
    if dtype.kind == "f":
        values += [np.nan, -np.inf, np.inf, -0.0, 0.5]
    return hnp.arrays(dtype, shape, elements=st.sampled_from(values).map(dtype.type))


@st.composite
def pair(draw, same_dtype=False):
    dtype1 = draw(st.sampled_from(DTYPES), label="dtype1")
    dtype2 = dtype1 if same_dtype else draw(st.sampled_from(DTYPES), label="dtype2")
    a = draw(few_values(dtype1, shapes(max_dims=2, max_side=5)), label="a")
    b = draw(few_values(dtype2, shapes(max_dims=2, max_side=5)), label="b")
    return a, b


def cut(result, size, fill):
    """NumPy's 1-d result held to `size` values: its first ones, then `fill`."""
    kept = result[:size]
    return np.concatenate([kept, np.full(size - kept.shape[0], fill, result.dtype)])


def first_or_zero(result):
    return result[0] if result.size else np.zeros((), result.dtype)


def sorted_values(result):  # NumPy's unique_values leaves its order unspecified
    return np.sort(result)


ARRAY_API = {
    "unique_values": lambda xp, x, **k: (xp.unique_values(x, **k),),
    "unique_counts": lambda xp, x, **k: tuple(xp.unique_counts(x, **k)),
    "unique_inverse": lambda xp, x, **k: tuple(xp.unique_inverse(x, **k)),
    "unique_all": lambda xp, x, **k: tuple(xp.unique_all(x, **k)),
}


def numpy_unique(name, x):
    expected = ARRAY_API[name](np, x)
    return (sorted_values(expected[0]),) + expected[1:]


@DRAWN
@given(data=st.data())
def test_unique_forms_eagerly_as_numpy(data):
    x = data.draw(pair(), label="pair")[0]
    name = data.draw(st.sampled_from(sorted(ARRAY_API)), label="name")
    got, expected = ARRAY_API[name](jnp, x), numpy_unique(name, x)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_same(g, e, zero_sign=False, what=name)
    assert type(getattr(jnp, name)(x)).__name__ == type(getattr(np, name)(x)).__name__


@DRAWN
@given(data=st.data())
def test_unique_forms_traced_with_size(data):
    x = data.draw(pair(), label="pair")[0]
    name = data.draw(st.sampled_from(sorted(ARRAY_API)), label="name")
    size = data.draw(st.integers(0, 7), label="size")
    expected = numpy_unique(name, x)
    fills = {"values": first_or_zero(expected[0]), "counts": 0, "inverse_indices": None,
             "indices": first_or_zero(expected[1]) if name == "unique_all" else 0}
    got = run_traced(lambda x: ARRAY_API[name](jnp, x, size=size), x)
    fields = getattr(np, name)(x)._fields if name != "unique_values" else ("values",)
    for field, g, e in zip(fields, got, expected):
        if field == "inverse_indices":
            if expected[0].size <= size:  # values dropped: their inverse points past
                assert_same(g, e, what=field)
        else:
            assert_same(g, cut(e, size, fills[field]), zero_sign=False, what=field)


SETS = {
    "intersect1d": lambda xp, a, b, **k: xp.intersect1d(a, b, **k),
    "intersect1d_indices": lambda xp, a, b, **k: xp.intersect1d(a, b, return_indices=True,
                                                                **k),
    "union1d": lambda xp, a, b, **k: xp.union1d(a, b, **k),
    "setdiff1d": lambda xp, a, b, **k: xp.setdiff1d(a, b, **k),
    "setxor1d": lambda xp, a, b, **k: xp.setxor1d(a, b, **k),
    # assume_unique=True, given unique arrays (drawn_pair makes them so)
    "setdiff1d_unique": lambda xp, a, b, **k: xp.setdiff1d(a, b, True, **k),
    "intersect1d_unique": lambda xp, a, b, **k: xp.intersect1d(a, b, True, True, **k),
    "setxor1d_unique": lambda xp, a, b, **k: xp.setxor1d(a, b, True, **k),
}


def drawn_pair(data, name):
    a, b = data.draw(pair(), label="pair")
    if name.endswith("_unique"):
        a, b = np.unique(a)[::-1].copy(), np.unique(b)
    return a, b


def as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


@DRAWN
@given(data=st.data())
def test_set_functions_eagerly_as_numpy(data):
    name = data.draw(st.sampled_from(sorted(SETS)), label="name")
    a, b = drawn_pair(data, name)
    got, expected = as_tuple(SETS[name](jnp, a, b)), as_tuple(SETS[name](np, a, b))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_same(g, e, zero_sign=False, what=name)


@DRAWN
@given(data=st.data())
def test_set_functions_traced_with_size(data):
    name = data.draw(st.sampled_from(sorted(SETS)), label="name")
    a, b = drawn_pair(data, name)
    size = data.draw(st.integers(0, 6), label="size")
    fill = data.draw(st.sampled_from([None, 3]), label="fill")
    expected = as_tuple(SETS[name](np, a, b))
    got = as_tuple(run_traced(lambda a, b: SETS[name](jnp, a, b, size=size,
                                                      fill_value=fill), a, b))
    values = expected[0]
    value_fill = first_or_zero(values) if fill is None else \
        np.asarray(fill).astype(values.dtype)
    assert_same(got[0], cut(values, size, value_fill), zero_sign=False, what=name)
    for g, e in zip(got[1:], expected[1:]):  # intersect1d's indices
        assert_same(g, cut(e, size, first_or_zero(e)), what=f"{name} indices")


def test_the_error_that_asks_for_size():
    a, b = np.array([3, 1, 3], np.int32), np.array([1, 2], np.int64)
    for call in (lambda a, b: np.intersect1d(a, b), lambda a, b: np.union1d(a, b),
                 lambda a, b: np.setdiff1d(a, b), lambda a, b: np.setxor1d(a, b),
                 lambda a, b: np.unique_counts(a)):
        with pytest.raises(ConcretizationError, match="(?s)jitflow.numpy.*size="):
            jitflow.function(call)(a, b)
    with pytest.raises(ValueError, match="size= must not be negative"):
        jitflow.function(lambda a: jnp.intersect1d(a, a, size=-1))(a)
    with pytest.raises(NotImplementedError, match="compares every pair"):
        jnp.setxor1d(np.zeros(jnp.uniques.MAX_ELEMENTS + 1), [1.0])


def test_derivatives_reach_the_values_kept():
    # (an element equal to one of b's leaves the intersection or enters the difference
    # when moved: the derivatives there are checked by value below)
    a, b = np.array([0.25, -1.0, 2.5, 3.0]), np.array([2.0, 0.5, 7.0])
    for fn in (lambda a: jnp.sum(jnp.setdiff1d(a, b, size=2) ** 3),
               lambda a: jnp.sum(jnp.union1d(a, b, size=5) * jnp.arange(5.0)),
               lambda a: jnp.sum(jnp.unique_values(a, size=3) ** 2)):
        check_grads(fn, (a,), order=1)
    a = np.array([0.5, -1.0, 2.0, 0.5])
    grad = jitflow.function(jitflow.grad(
        lambda a: jnp.sum(jnp.intersect1d(a, b, size=2) ** 2)))(a)
    assert_same(grad, np.array([1.0, 0.0, 4.0, 0.0]))
    grad = jitflow.function(jitflow.grad(
        lambda a: jnp.sum(jnp.intersect1d(a, a[::-1], size=3) ** 2)))(a)
    assert_same(grad, np.array([1.0, -2.0, 4.0, 0.0]))  # each value's first occurrence


@pytest.mark.parametrize("name", ["unique_values", "intersect1d", "setdiff1d", "setxor1d",
                                  "union1d"])
def test_vmap_over_rows(name):
    rows, other = np.array([[3, 1, 3, 0], [2, 2, 5, 0], [7, 7, 7, 7]]), np.array([1, 5, 0])
    call = {"unique_values": lambda r: jnp.unique_values(r, size=3)}.get(
        name, lambda r: getattr(jnp, name)(r, other, size=3))
    got = jitflow.function(jitflow.vmap(call))(rows)
    assert_same(got, np.stack([call(r) for r in rows]))
