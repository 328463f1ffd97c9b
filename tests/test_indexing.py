"""Traced indexing against NumPy: x[index] inside a jitflow.function gives NumPy's
x[index] (values, dtype, shape), or the same kind of error.

Static index entries (ints, slices, None, Ellipsis, constant arrays and masks) are baked
into the trace; "traced" integer arrays are passed to the function as arguments.
"""
import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from fidelity import given_per_backend
from strategies import DTYPES, INT_DTYPES, arrays, shapes

# Traced functions run on the interpreter and on native code (conftest.py).
pytestmark = pytest.mark.usefixtures("backend")


class Traced:
    """Marks an index array that is passed to the function as an argument."""

    def __init__(self, array):
        self.array = np.asarray(array)

    def __repr__(self):
        return f"Traced({self.array!r})"


def traced_getitem(x, index):
    """x[index] run through jitflow.function, Traced entries passed as arguments."""
    entries = index if isinstance(index, tuple) else (index,)
    arguments = [e.array for e in entries if isinstance(e, Traced)]

    def fn(x, *traced):
        supply = iter(traced)
        filled = tuple(next(supply) if isinstance(e, Traced) else e for e in entries)
        return x[filled if isinstance(index, tuple) else filled[0]]
    return jitflow.function(fn)(x, *arguments)


def numpy_getitem(x, index):
    entries = index if isinstance(index, tuple) else (index,)
    filled = tuple(e.array if isinstance(e, Traced) else e for e in entries)
    return x[filled if isinstance(index, tuple) else filled[0]]


def assert_same_as_numpy(x, index):
    expected = np.asarray(numpy_getitem(x, index))
    got = np.asarray(traced_getitem(x, index))
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_array_equal(got, expected)


def assert_raises_like_numpy(x, index, error):
    with pytest.raises(error):
        numpy_getitem(x, index)
    with pytest.raises(error):
        traced_getitem(x, index)


# --- strategies -----------------------------------------------------------------------

any_dtype = st.sampled_from(DTYPES)


@st.composite
def any_array(draw, min_dims=0, max_dims=4, min_side=0):
    dtype = draw(any_dtype)
    shape = draw(shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side))
    return draw(arrays(dtype, shape))


def bounds(length):
    """Slice bounds, in range or out of it on either side, or None."""
    return st.none() | st.integers(-length - 3, length + 3)


def slices(length):
    steps = st.none() | st.integers(-3, 3).filter(bool)
    return st.builds(slice, bounds(length), bounds(length), steps)


def axis_entry(length):
    """A basic index for one axis: an int in bounds (negative too) or a slice."""
    choices = slices(length)
    if length:
        choices = st.integers(-length, length - 1) | choices
    return choices


@st.composite
def basic_indices(draw, shape):
    """An entry per axis, then either the trailing ones left off or one Ellipsis standing
    for a run of axes; with None inserted anywhere."""
    entries = [draw(axis_entry(length)) for length in shape]
    start = draw(st.integers(0, len(entries)))
    stop = draw(st.integers(start, len(entries)))
    if draw(st.booleans()):
        entries[start:stop] = [Ellipsis]
    else:
        del entries[start:]
    for _ in range(draw(st.integers(0, 2))):
        entries.insert(draw(st.integers(0, len(entries))), None)
    if len(entries) == 1 and draw(st.booleans()):
        return entries[0]  # a bare entry rather than a 1-tuple
    return tuple(entries)


@st.composite
def index_arrays(draw, lengths, traced):
    """Integer arrays (negative too) for axes of `lengths`, shapes broadcast together."""
    shapes_ = draw(hnp.mutually_broadcastable_shapes(num_shapes=len(lengths), max_dims=2,
                                                     min_side=0, max_side=3)).input_shapes
    dtype = draw(st.sampled_from(INT_DTYPES))
    result = []
    for length, shape in zip(lengths, shapes_):
        array = draw(arrays(dtype, shape, min_value=-length, max_value=length - 1))
        result.append(Traced(array) if draw(traced) else array)
    return result


@st.composite
def mixed_indices(draw, shape):
    """One entry per axis: an array, an int or a slice (at least one array), plus Nones:
    covers adjacent and separated array indices and ints mixed with arrays."""
    kinds = draw(st.lists(st.sampled_from(["array", "int", "slice"]),
                          min_size=len(shape), max_size=len(shape)))
    if "array" not in kinds:
        kinds[draw(st.integers(0, len(shape) - 1))] = "array"
    array_axes = [i for i, k in enumerate(kinds) if k == "array"]
    supply = iter(draw(index_arrays([shape[i] for i in array_axes],
                                    traced=st.booleans())))
    entries = []
    for length, kind in zip(shape, kinds):
        if kind == "array":
            entries.append(next(supply))
        elif kind == "int":
            entries.append(draw(st.integers(-length, length - 1)))
        else:
            entries.append(draw(slices(length)))
    for _ in range(draw(st.integers(0, 1))):
        entries.insert(draw(st.integers(0, len(entries))), None)
    if draw(st.booleans()):  # leave off the trailing axes
        while entries and isinstance(entries[-1], slice) and draw(st.booleans()):
            entries.pop()
    return tuple(entries)


# --- basic indexing -------------------------------------------------------------------

@given_per_backend(st.data())
def test_basic_indexing_matches_numpy(data):
    x = data.draw(any_array())
    index = data.draw(basic_indices(x.shape), label="index")
    assert_same_as_numpy(x, index)


@pytest.mark.parametrize("index", [
    0, -1, (1, 2), (-2, -3, -1), (slice(None, None, -1),), (slice(10, -10, -2), 1),
    (slice(-10, 10, 3), slice(None), slice(2, 1)), (None, Ellipsis, None), (Ellipsis, 0),
    (0, Ellipsis, -1, None), (), Ellipsis, None, (slice(1, 1),), (slice(5, None, -1),),
])
def test_basic_indexing_table(index):
    assert_same_as_numpy(np.arange(24, dtype=np.float32).reshape(2, 3, 4), index)


def test_zero_d_array():
    x = np.array(2.5)
    for index in [(), Ellipsis, None, (None, Ellipsis, None)]:
        assert_same_as_numpy(x, index)


# --- integer-array indexing -----------------------------------------------------------

@given_per_backend(st.data())
def test_single_array_index_matches_numpy(data):
    x = data.draw(any_array(min_dims=1, min_side=1))
    axis = data.draw(st.integers(0, x.ndim - 1))
    (array,) = data.draw(index_arrays([x.shape[axis]], traced=st.booleans()))
    assert_same_as_numpy(x, (slice(None),) * axis + (array,))


@given_per_backend(st.data())
def test_mixed_array_indices_match_numpy(data):
    x = data.draw(any_array(min_dims=1, max_dims=4, min_side=1))
    index = data.draw(mixed_indices(x.shape), label="index")
    assert_same_as_numpy(x, index)


X = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
I = np.array([[0, -1], [2, 1]])
J = np.array([3, -4])


@pytest.mark.parametrize("index", [
    (Traced(I),),                                 # one array: its shape replaces axis 0
    (slice(None), Traced(J), Traced(I[:, :1])),   # adjacent, broadcast together
    (Traced(I[0]), slice(None), Traced(J)),       # separated: broadcast axes go first
    (Traced(I[:, :1]), None, Traced(J)),          # separated by a new axis
    (0, slice(None), Traced(J)),                  # an int among arrays is an array
    (slice(None), 1, Traced(J)),                  # adjacent to an int
    (Ellipsis, Traced(I)),
    (None, Traced(I), Ellipsis, None),
    ([0, 2], [1, 3]),                             # constant lists
    (np.array(1), slice(None), np.array([0, 4])),  # a 0-d array among arrays
    ([],),                                        # an empty list indexes nothing
    ((0, 2),),                                    # a tuple inside the index is a list
    (Traced(np.array(2)),),                       # a traced 0-d integer
    (slice(None), Traced(np.zeros((2, 0), np.int64))),  # an empty index array
    (np.array([2, 0], np.uint8),),                # unsigned indices are integers too
])
def test_array_indexing_table(index):
    assert_same_as_numpy(X, index)


def test_list_of_traced_integers_is_an_index_array():
    # x[[i, j]] stacks i and j into one index array, as NumPy does.
    f = jitflow.function(lambda x, i, j: x[[i, j], 1:])
    np.testing.assert_array_equal(f(X, 2, np.int32(-3)), X[[2, -3], 1:])


def test_array_indexing_of_an_empty_axis():
    x = np.zeros((0, 3), np.float32)
    assert_same_as_numpy(x, (Traced(np.zeros(0, np.int32)), 1))
    assert_same_as_numpy(x, (slice(None), Traced(np.array([[2], [-3]]))))


# --- constant masks -------------------------------------------------------------------

@given_per_backend(st.data())
def test_constant_mask_matches_numpy(data):
    x = data.draw(any_array(min_dims=1))
    start = data.draw(st.integers(0, x.ndim - 1))
    stop = data.draw(st.integers(start + 1, x.ndim))
    mask = data.draw(arrays(np.bool_, x.shape[start:stop]))
    before = [data.draw(axis_entry(n)) for n in x.shape[:start]]
    index = tuple(before) + (mask,)
    if data.draw(st.booleans()):
        index += (Ellipsis,)
    assert_same_as_numpy(x, index)


@pytest.mark.parametrize("index", [
    (np.array([True, False, True]),),
    (slice(None), np.array([False, True, True, False])),
    (np.array([[True, False, True, False]] * 3), slice(None, None, -1)),
    (None, np.array([True, True, False]), [1, 3]),  # a mask among arrays
    ([True, False, True],),                        # a list of bools is a mask too
    (True,), (False,), (True, 0), (slice(None), True, [0, 1]),  # scalar bools
    (np.array(False), Ellipsis),
])
def test_constant_mask_table(index):
    assert_same_as_numpy(X, index)


@pytest.mark.parametrize("mask", [np.array([True, False]),
                                  np.array([True, False, False, True]),
                                  np.ones((3, 5), bool)])
def test_mask_of_the_wrong_shape_raises(mask):
    # A mask that does not fit must not quietly pick some elements.
    assert_raises_like_numpy(X, (mask,), IndexError)


# --- errors ---------------------------------------------------------------------------

def test_traced_mask_raises_boolean_index_error():
    f = jitflow.function(lambda x, m: x[m])
    with pytest.raises(jitflow.BooleanIndexError, match="where") as info:
        f(np.arange(3.0), np.array([True, False, True]))
    assert isinstance(info.value, IndexError)


@pytest.mark.parametrize("index", [3, -4, (0, 4), (slice(None), slice(None), -6),
                                   (Traced(np.array([0, 3])),), (Traced(np.array(-4)),),
                                   (slice(None), Traced(np.array([[4]]))),
                                   (Traced(np.array([1, 0])), [0, -5])])
def test_out_of_bounds_raises(index):
    # Traced index arrays are checked when the function runs, never read out of bounds.
    assert_raises_like_numpy(X, index, IndexError)


@pytest.mark.parametrize("index", [(Traced(np.array([5])),), (Traced(np.array([0, -4])), 0),
                                   (slice(None), Traced(np.array([[2, 0]])))])
def test_out_of_bounds_raises_even_when_the_result_is_empty(index):
    # NumPy checks every index, also when another axis of size 0 leaves nothing to take.
    assert_raises_like_numpy(np.zeros((3, 2, 0)), index, IndexError)


@pytest.mark.parametrize("index", [(0, 0, 0, 0), (0, 0, 0, None, 0), (Ellipsis, 0, 0, 0, 0),
                                   (Traced(np.array([0])),) * 4])
def test_too_many_indices_raises(index):
    assert_raises_like_numpy(X, index, IndexError)


@pytest.mark.parametrize("index", [1.0, (0, np.float64(1)), np.array([0.0]),
                                   Traced(np.array([0.0])), "a", (Ellipsis, Ellipsis)])
def test_invalid_index_raises(index):
    assert_raises_like_numpy(X, index, IndexError)


def test_traced_index_is_checked_at_every_call():
    f = jitflow.function(lambda x, i: x[i])
    x = np.arange(5.0)
    np.testing.assert_array_equal(f(x, np.array([4, -5])), [4.0, 0.0])
    with pytest.raises(IndexError):
        f(x, np.array([5, 0]))  # same signature: the cached function checks too
    with pytest.raises(IndexError):
        f(x, np.array([-6]))


def test_out_of_bounds_index_into_a_constant_raises_at_call_time():
    # Constant folding must leave the error to the call, never fold in garbage.
    f = jitflow.function(lambda x: x + jnp.arange(3.0)[np.array([5])])
    with pytest.raises(IndexError):
        f(1.0)
    g = jitflow.function(lambda x, i: jnp.arange(3.0)[i] + x)
    with pytest.raises(IndexError):
        g(1.0, np.array([3]))
