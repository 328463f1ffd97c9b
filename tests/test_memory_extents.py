"""memory_extents against np.shares_memory tested pair by pair, on views of a few base
arrays (slices with steps, reversed, transposed, empty) and separate arrays."""
import numpy as np
from hypothesis import given, strategies as st

from jitflow.memory_extents import Extents, all_apart

BASES = [np.zeros((6, 8), np.float32), np.zeros(40, np.int64), np.zeros((3, 4, 5))]


@st.composite
def views(draw):
    base = draw(st.sampled_from(BASES + [None]))
    if base is None:  # an array of its own
        return np.zeros(draw(st.integers(0, 5)), np.float32)
    index = tuple(slice(draw(st.integers(0, n)), draw(st.integers(0, n)),
                        draw(st.sampled_from([1, 2, 3, -1]))) for n in base.shape)
    view = base[index]
    return view.T if draw(st.booleans()) else view


@given(st.lists(views(), max_size=8), views())
def test_sharing_memory_is_exactly_what_shares_memory_finds(arrays, probe):
    extents = Extents([*arrays, "not an array"])
    expected = [i for i, a in enumerate(arrays) if np.shares_memory(a, probe)]
    assert sorted(extents.sharing_memory(probe)) == expected
    assert set(expected) <= set(extents.overlapping(probe))


@given(st.lists(views(), max_size=8))
def test_all_apart_is_never_wrong_when_it_says_apart(arrays):
    sharing = any(np.shares_memory(a, b) for i, a in enumerate(arrays)
                  for b in arrays[i + 1:])
    if all_apart(arrays):
        assert not sharing


def test_separate_arrays_are_apart_and_a_view_is_not():
    arrays = [np.ones(4), np.ones((2, 3)), np.ones(0)]
    assert all_apart(arrays)
    assert not all_apart(arrays + [arrays[1][1]])
    assert all_apart([arrays[1][0], arrays[1][1]])  # rows of one array: disjoint bytes


@given(st.lists(views(), min_size=1, max_size=8), st.data())
def test_an_array_among_them_is_found_by_its_own_extent(arrays, data):
    """Queries about the arrays given reuse their extents (found by identity)."""
    extents = Extents(arrays)
    probe = data.draw(st.sampled_from(arrays))
    expected = [i for i, a in enumerate(arrays) if np.shares_memory(a, probe)]
    assert sorted(extents.sharing_memory(probe)) == expected
    some = data.draw(st.lists(st.sampled_from(arrays), unique_by=id))
    assert extents.all_apart(some) == all_apart(some)
