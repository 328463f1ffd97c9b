"""jitflow.Variable used eagerly: it acts as the array it holds, and assignments check
their values and never change a value read before them."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same
from strategies import DTYPES, FLOAT_DTYPES, arrays, shapes

THIS_FILE = "test_variables.py"


@given(st.sampled_from(DTYPES).flatmap(lambda d: shapes().flatmap(
    lambda s: st.tuples(arrays(d, s), arrays(d, s)))))
def test_a_variable_acts_as_the_array_it_holds(pair):
    x, y = pair
    v = jitflow.Variable(x)
    with np.errstate(all="ignore"):
        assert_same(v + y, x + y)
        assert_same(y * v, y * x)
        assert_same(v == y, x == y)
        assert_same(np.maximum(v, y), np.maximum(x, y))
        assert_same(np.sum(v, axis=0) if x.ndim else np.sum(v), np.sum(x, axis=0)
                    if x.ndim else np.sum(x))
        assert_same(jnp.sum(v), np.sum(x))
        assert_same(v.sum(), x.sum())
        assert_same(v.T, x.T)
        assert_same(np.concatenate([v.reshape(-1), y.reshape(-1)]),
                    np.concatenate([x.reshape(-1), y.reshape(-1)]))
        assert_same(np.asarray(v), x)
        if x.ndim and len(x):
            assert_same(v[0], x[0])
        if x.dtype.kind != "b":
            assert_same(-v, -x)
    assert v.shape == x.shape and v.dtype == x.dtype and v.ndim == x.ndim


def test_a_variable_holds_a_copy_in_the_dtype_asked_for():
    source = np.arange(4.0)
    v = jitflow.Variable(source, name="w", dtype=np.float32)
    source[0] = 99.0
    assert_same(v.numpy(), np.arange(4.0, dtype=np.float32))
    assert v.name == "w" and v.trainable
    assert not jitflow.Variable(1.0, trainable=False).trainable


def test_unnamed_variables_get_distinct_names():
    assert jitflow.Variable(0.0).name != jitflow.Variable(0.0).name


@pytest.mark.parametrize("value, kind, words", [
    (np.array(["a"]), TypeError, "dtype <U1 is not supported"),
    (np.arange(3, dtype=np.longdouble), TypeError, "dtype float128 is not supported"),
    ([[1.0], [1.0, 2.0]], TypeError, "cannot make an array"),
])
def test_a_variable_of_an_unusable_value_is_a_clear_error(value, kind, words):
    with pytest.raises(kind, match=words) as error:
        jitflow.Variable(value, name="bad")
    assert "'bad'" in str(error.value) and THIS_FILE in str(error.value)


@given(st.sampled_from(FLOAT_DTYPES), shapes(), st.data())
def test_assignments_give_numpys_values(dtype, shape, data):
    x, y = data.draw(arrays(dtype, shape)), data.draw(arrays(dtype, shape))
    v = jitflow.Variable(x)
    with np.errstate(all="ignore"):
        v.assign_add(y)
        assert_same(v.value, x + y)
        v.assign_sub(x)
        assert_same(v.value, (x + y) - x)
    v.assign(y)
    assert_same(v.value, y)
    v.assign(2)
    assert_same(v.value, np.full(shape, 2, dtype))


def test_a_value_read_before_an_assignment_keeps_its_value():
    v = jitflow.Variable(np.zeros(3, np.float32))
    snapshot, as_array = v.value, np.asarray(v)
    v.assign(np.ones(3, np.float32))
    v.assign_add(np.ones(3, np.float32))
    assert_same(snapshot, np.zeros(3, np.float32))
    assert_same(as_array, np.zeros(3, np.float32))
    assert_same(v.value, np.full(3, 2, np.float32))


def test_an_assignment_nothing_else_sees_reuses_the_buffer():
    v = jitflow.Variable(np.zeros(1000))
    address = v.value.__array_interface__["data"][0]
    v.assign(np.ones(1000))
    assert v.value.__array_interface__["data"][0] == address
    held = v.value
    v.assign(np.full(1000, 2.0))
    assert v.value.__array_interface__["data"][0] != address
    assert_same(held, np.ones(1000))


def test_the_value_is_read_only_and_the_variable_refuses_item_assignment():
    v = jitflow.Variable(np.zeros(3))
    with pytest.raises(ValueError, match="read-only"):
        v.value[0] = 1.0
    with pytest.raises(TypeError, match=r"'.*' does not support item assignment.*assign"):
        v[0] = 1.0
    with pytest.raises(TypeError, match="assign"):
        np.add(v, 1.0, out=v)
    copy = v.numpy()
    copy[0] = 5.0
    assert_same(v.value, np.zeros(3))


@pytest.mark.parametrize("assign, kind, words", [
    (lambda v: v.assign(np.zeros(4, np.float32)), ValueError,
     r"'w'.assign: the value has shape \(4,\), but the Variable has shape \(3,\)"),
    (lambda v: v.assign(np.zeros(3)), TypeError,
     "'w'.assign: the value has dtype float64, but the Variable holds float32"),
    (lambda v: v.assign_add(np.ones(3)), TypeError,
     "'w'.assign_add: the value has dtype float64"),
    (lambda v: v.assign_sub(np.ones((2, 3), np.float32)), ValueError,
     r"'w'.assign_sub: the value has shape \(2, 3\)"),
    (lambda v: v.assign("text"), TypeError, "the value is a str"),
])
def test_assigning_a_value_of_another_type_is_a_clear_error(assign, kind, words):
    v = jitflow.Variable(np.zeros(3, np.float32), name="w")
    with pytest.raises(kind, match=words) as error:
        assign(v)
    assert THIS_FILE in str(error.value)
    assert_same(v.value, np.zeros(3, np.float32))


def test_python_numbers_follow_numpys_weak_promotion():
    counts = jitflow.Variable(np.zeros(2, np.int32))
    counts.assign_add(3)
    assert_same(counts.value, np.full(2, 3, np.int32))
    with pytest.raises(TypeError, match="dtype float64, but the Variable holds int32"):
        counts.assign(0.5)
    scale = jitflow.Variable(np.ones(2, np.float32))
    scale.assign(scale * 0.5)
    assert_same(scale.value, np.full(2, 0.5, np.float32))


def test_repr_shows_name_type_and_value():
    v = jitflow.Variable(np.arange(2, dtype=np.int32), name="count")
    assert repr(v) == ("<jitflow.Variable 'count' shape=(2,) dtype=int32, "
                       "numpy=array([0, 1], dtype=int32)>")


def test_a_traced_initial_value_is_a_clear_error():
    @jitflow.function
    def make(x):
        return jitflow.Variable(x * 2)
    with pytest.raises(TypeError, match="initial value is a traced value") as error:
        make(np.ones(2))
    assert THIS_FILE in str(error.value)
