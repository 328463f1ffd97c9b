"""`a += traced` into a NumPy array the function made: allowed where the name is the
only way to the array, refused where NumPy could read the old contents another way."""
import numpy as np
import pytest

import jitflow

from fidelity import assert_same

SHARED = "another name, view or container also holds"


def compiled_result(fn, *args):
    """fn's result from the first call and from native code, which must agree."""
    compiled = jitflow.function(fn)
    first = compiled(*args)
    compiled.wait()
    assert_same(compiled(*args), first, what="native code")
    return first


def second_name(x):
    a = np.zeros(3)
    b = a
    a += x
    return b.sum()


def live_view(x):
    a = np.zeros(3)
    v = a[:2]
    a += x
    return v.sum()


def held_in_a_list(x):
    a = np.zeros(3)
    kept = [a]
    a += x
    return kept[0]


def written_through_a_view(x):
    a = np.zeros(3)
    v = a[1:]
    v += x[1:]
    return a


@pytest.mark.parametrize("fn", [second_name, live_view, held_in_a_list,
                                written_through_a_view])
def test_a_write_numpy_could_miss_raises_at_the_users_line(fn):
    with pytest.raises(TypeError, match=SHARED) as raised:
        jitflow.function(fn)(np.ones(3))
    assert "test_array_references.py" in str(raised.value)
    with pytest.raises(TypeError, match=SHARED):
        jitflow.grad(lambda x: np.sum(fn(x)))(np.ones(3))


def lone_local(x):
    a = np.zeros(3)
    a += x
    a *= x
    return a


def lone_list_slot(x):
    kept = [np.zeros(3)]
    kept[0] += x
    return kept[0]


def lone_view(x):
    a = np.arange(3.0).reshape(3)  # a view whose base nobody else holds
    a -= x
    return a


@pytest.mark.parametrize("fn", [lone_local, lone_list_slot, lone_view])
def test_a_write_through_the_only_name_gives_numpys_result(fn):
    x = np.array([1.0, -2.0, 0.5])
    assert_same(compiled_result(fn, x), fn(x))


def test_a_derivative_traced_eagerly_goes_through_a_lone_local():
    x = np.array([1.0, -2.0, 0.5])
    grad = jitflow.grad(lambda x: lone_local(x).sum())(x)
    assert_same(grad, 2 * x)


def test_a_lone_local_keeps_its_dtype_as_numpy_casts():
    def integer(x):
        a = np.zeros(3, np.int64)
        a += x
        return a
    with pytest.raises(TypeError, match="same_kind"):
        jitflow.grad(lambda x: integer(x).sum())(np.ones(3))
    with pytest.raises(TypeError, match="same_kind"):
        jitflow.function(integer)(np.ones(3))


def test_a_variable_added_into_a_lone_local_and_into_a_shared_one():
    variable = jitflow.Variable(np.array([1.0, 2.0, 3.0]))

    def lone(x):
        a = np.zeros(3)
        a += variable
        a *= x
        return a

    def shared(x):
        a = np.zeros(3)
        b = a
        a += variable
        return b

    x = np.full(3, 2.0)
    assert_same(compiled_result(lone, x), lone(x))
    with pytest.raises(TypeError, match=SHARED):
        jitflow.function(shared)(x)
