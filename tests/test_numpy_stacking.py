"""jitflow.numpy's joining, splitting and rearranging functions against NumPy: values,
dtypes, shapes and errors, eagerly and traced (also through NumPy's own names), their
derivatives against central differences, and writes through the views NumPy gives."""
import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from fidelity import given_per_backend
from jitflow.testing import check_grads
from numpy_programs import check_program
from strategies import DTYPES, arrays, shapes

pytestmark = pytest.mark.usefixtures("backend")


def draw_array(data, shape=None, dtypes=DTYPES, label="x"):
    shape = data.draw(shapes(), label=f"shape of {label}") if shape is None else shape
    dtype = data.draw(st.sampled_from(dtypes), label=f"dtype of {label}")
    return data.draw(arrays(dtype, shape), label=label)


def partner(data, x, axis=None, label="y"):
    """An array that joins x along `axis` (any length there), of any dtype; or, now
    and then, one of another rank, which NumPy refuses."""
    shape = list(np.shape(x))
    if axis is not None and shape:
        shape[axis] = data.draw(st.integers(0, 3), label=f"length of {label}")
    if data.draw(st.integers(0, 5), label="misfit") == 0:
        shape = shape[1:]
    return draw_array(data, tuple(shape), label=label)


STACKERS = {
    "vstack": (lambda xp, x, y: xp.vstack([x, y]), 0),
    "hstack": (lambda xp, x, y: xp.hstack((x, y)), 1),
    "dstack": (lambda xp, x, y: xp.dstack([x, y]), 2),
    "column_stack": (lambda xp, x, y: xp.column_stack([x, y]), 1),
}


@pytest.mark.parametrize("name", sorted(STACKERS))
@given_per_backend(data=st.data())
def test_stacking(name, data):
    program, axis = STACKERS[name]
    x = draw_array(data)
    along = min(axis, np.ndim(x) - 1) if np.ndim(x) else None
    if name == "hstack" and np.ndim(x) == 1:
        along = 0
    check_program(program, x, partner(data, x, along), what=name)


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@given_per_backend(data=st.data())
def test_atleast(name, data):
    x, y = draw_array(data), draw_array(data, label="y")
    check_program(lambda xp, x: getattr(xp, name)(x), x, what=name)
    check_program(lambda xp, x, y: getattr(xp, name)(x, y), x, y, what=name)


def sections(data, length):
    """A number of sections, or a list of split points (negative, past the end and
    decreasing ones too)."""
    if data.draw(st.booleans(), label="count"):
        return data.draw(st.integers(0, 5), label="sections")
    return data.draw(st.lists(st.integers(-length - 2, length + 2), max_size=4),
                     label="indices")


@pytest.mark.parametrize("name", ["split", "array_split"])
@given_per_backend(data=st.data())
def test_split(name, data):
    x = draw_array(data, data.draw(shapes(min_dims=1), label="shape"))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    where = sections(data, x.shape[axis])
    check_program(lambda xp, x: getattr(xp, name)(x, where, axis=axis), x, what=name)


@pytest.mark.parametrize("name", ["hsplit", "vsplit", "dsplit"])
@given_per_backend(data=st.data())
def test_split_along(name, data):
    x = draw_array(data)
    where = sections(data, max(np.shape(x) or (0,)))
    check_program(lambda xp, x: getattr(xp, name)(x, where), x, what=name)


def test_split_pieces_are_views_written_through(backend):
    def fn(x):
        left, right = np.split(x, 2, axis=1)
        right[0, 0] = -1.0
        return x

    x = np.arange(8.0).reshape(2, 4)
    expected = fn(x.copy())
    np.testing.assert_array_equal(jitflow.function(fn)(x.copy()), expected)


def test_a_traced_number_of_sections_is_refused_by_name(backend):
    with pytest.raises(TypeError, match="array_split: the number of sections must be "
                                        "known when the function is traced"):
        jitflow.function(lambda x, n: jnp.array_split(x, n))(np.ones(4), np.int64(2))


def test_stacking_needs_a_sequence(backend):
    with pytest.raises(TypeError, match="vstack: arrays to stack must be passed as a "
                                        "list or tuple"):
        jitflow.function(lambda x: jnp.vstack(x))(np.ones((2, 2)))


# --- rearranging ---------------------------------------------------------------------------

def axes_of(data, ndim):
    return data.draw(st.none() | st.integers(-ndim - 1, ndim) |
                     st.lists(st.integers(-ndim, max(ndim - 1, 0)), max_size=ndim)
                     .map(tuple),
                     label="axis")


@given_per_backend(data=st.data())
def test_flip(data):
    x = draw_array(data)
    axis = axes_of(data, x.ndim)
    check_program(lambda xp, x: xp.flip(x, axis), x, what="flip")
    check_program(lambda xp, x: xp.fliplr(x), x, what="fliplr")
    check_program(lambda xp, x: xp.flipud(x), x, what="flipud")


@given_per_backend(data=st.data())
def test_rot90(data):
    x = draw_array(data)
    k = data.draw(st.integers(-5, 5), label="k")
    axes = data.draw(st.tuples(st.integers(-3, 3), st.integers(-3, 3)) |
                     st.just((0, 1)), label="axes")
    check_program(lambda xp, x: xp.rot90(x, k, axes), x, what="rot90")


@given_per_backend(data=st.data())
def test_roll(data):
    x = draw_array(data)
    shift = data.draw(st.integers(-7, 7) | st.lists(st.integers(-7, 7), min_size=1,
                                                      max_size=3).map(tuple), label="shift")
    axis = data.draw(st.none() | st.integers(-x.ndim - 1, x.ndim) |
                     st.lists(st.integers(-x.ndim, max(x.ndim - 1, 0)), min_size=1,
                              max_size=3).map(tuple), label="axis")
    check_program(lambda xp, x: xp.roll(x, shift, axis), x, what="roll")


@given_per_backend(data=st.data())
def test_tile(data):
    x = draw_array(data)
    reps = data.draw(st.integers(-1, 3) | st.lists(st.integers(0, 3), max_size=4)
                     .map(tuple), label="reps")
    check_program(lambda xp, x: xp.tile(x, reps), x, what="tile")


@pytest.mark.parametrize("shape, reps", [((0,), -1), ((0, 2), -1), ((0, 2), (-1, 1)),
                                         ((2,), -1), ((0, 2), (3, 0, -1))])
def test_tile_of_an_empty_array_by_a_negative_count(backend, shape, reps):
    # NumPy reshapes an empty array to the product shape: a negative count raises only
    # where it meets an axis longer than 0 (found by hypothesis)
    check_program(lambda xp, x: xp.tile(x, reps), np.zeros(shape, np.int32), what="tile")


@given_per_backend(data=st.data())
def test_repeat(data):
    x = draw_array(data)
    axis = data.draw(st.none() | st.integers(-x.ndim - 1, x.ndim), label="axis")
    length = x.size if axis is None else x.shape[axis] if -x.ndim <= axis < x.ndim else 1
    repeats = data.draw(st.integers(-1, 3) | st.lists(st.integers(0, 3), min_size=length,
                                                       max_size=length + 1), label="repeats")
    check_program(lambda xp, x: xp.repeat(x, repeats, axis=axis), x, what="repeat")


@given_per_backend(data=st.data())
def test_diff(data):
    x = draw_array(data)
    n = data.draw(st.integers(-1, 3), label="n")
    axis = data.draw(st.integers(-x.ndim - 1, x.ndim), label="axis")
    check_program(lambda xp, x: xp.diff(x, n, axis), x, what="diff")
    if x.ndim and -x.ndim <= axis < x.ndim:
        edge = list(x.shape)
        edge[axis] = data.draw(st.integers(0, 2), label="edge length")
        y = draw_array(data, data.draw(st.sampled_from([(), tuple(edge)])), label="edge")
        check_program(lambda xp, x, y: xp.diff(x, 1, axis, prepend=y, append=y), x, y,
                      what="diff with prepend and append")


def test_tile_and_repeat_give_new_arrays(backend):
    def fn(x):
        t, r = np.tile(x, 1), np.repeat(x, 1)
        t[0], r[1] = 7.0, 8.0
        return x, t, r

    x = np.arange(3.0)
    for got, expected in zip(jitflow.function(fn)(x.copy()), fn(x.copy())):
        np.testing.assert_array_equal(got, expected)
    for got, expected in zip(fn(x.copy()), (x, [7.0, 1.0, 2.0], [0.0, 8.0, 2.0])):
        np.testing.assert_array_equal(got, expected)


def test_flip_and_rot90_are_views_written_through(backend):
    def fn(x):
        np.flip(x, 0)[0, 1] = -1.0
        np.rot90(x)[0, 0] = -2.0
        return x

    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(jitflow.function(fn)(x.copy()), fn(x.copy()))


# --- derivatives ---------------------------------------------------------------------------

DIFFERENTIABLE = {
    "vstack": lambda x: jnp.vstack([x, 2 * x]),
    "hstack": lambda x: jnp.hstack([x, x * x]),
    "dstack": lambda x: jnp.dstack([x, x]),
    "column_stack": lambda x: jnp.column_stack([x, -x]),
    "array_split": lambda x: jnp.array_split(x, 3)[1] * jnp.array_split(x, 3)[0][:1],
    "flip": lambda x: jnp.flip(x) * x,
    "rot90": lambda x: jnp.rot90(x, 1, (0, -1)) ** 2,
    "roll": lambda x: jnp.roll(x, 2, 0) * x,
    "tile": lambda x: jnp.tile(x, (2, 1, 3)) ** 2,
    "repeat": lambda x: jnp.repeat(x, [2, 0, 1][:x.shape[0]] + [1] * (x.shape[0] - 3),
                                   axis=0) ** 2,
    "diff": lambda x: jnp.diff(x * x, 2, axis=0, prepend=0.5),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
@given_per_backend(x=hnp.arrays(np.float64, st.sampled_from([(3, 2), (4, 2), (3, 1, 2)]),
                                elements=st.floats(-2, 2)), ci_examples=12)
def test_derivatives(name, x):
    fn = DIFFERENTIABLE[name]
    check_grads(fn, (x,), order=2)
    check_grads(jitflow.function(fn), (x,), order=1)


# --- more joining and splitting ------------------------------------------------------------

@given_per_backend(data=st.data())
def test_append_unstack_broadcast_arrays(data):
    x = draw_array(data)
    axis = data.draw(st.none() | st.integers(-x.ndim - 1, x.ndim), label="axis")
    check_program(lambda xp, x, y: xp.append(x, y, axis=axis), x,
                  partner(data, x, None if axis is None or not -x.ndim <= axis < x.ndim
                          else axis), what="append")
    unstack_axis = data.draw(st.integers(-x.ndim - 1, x.ndim), label="unstack axis")
    check_program(lambda xp, x: xp.unstack(x, axis=unstack_axis), x, what="unstack")
    y = draw_array(data, label="y")
    check_program(lambda xp, x, y: xp.broadcast_arrays(x, y), x, y,
                  what="broadcast_arrays")


@given_per_backend(data=st.data())
def test_meshgrid(data):
    vectors = [draw_array(data, (data.draw(st.integers(0, 3), label="length"),),
                          label=f"x{i}") for i in range(data.draw(st.integers(1, 3)))]
    indexing = data.draw(st.sampled_from(["xy", "ij"]), label="indexing")
    sparse = data.draw(st.booleans(), label="sparse")
    check_program(lambda xp, *xs: xp.meshgrid(*xs, indexing=indexing, sparse=sparse),
                  *vectors, what="meshgrid")


def test_unstack_gives_views_written_through(backend):
    def fn(x):
        first, _ = np.unstack(x)
        first[1] = -1.0
        return x
    x = np.arange(4.0).reshape(2, 2)
    np.testing.assert_array_equal(jitflow.function(fn)(x.copy()), fn(x.copy()))
