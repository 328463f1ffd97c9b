"""ndarray methods and attributes of traced values against NumPy's: put, fill, view,
item, tolist, itemsize, nbytes, mT, flat (reads and writes), trace, diagonal, cumprod,
searchsorted, round, take, repeat, real, imag, conj, conjugate."""
import numpy as np
import pytest

import jitflow
from jitflow.testing import check_grads
from fidelity import assert_same, error_kinds, numpy_outcome

X = (np.arange(12.0).reshape(3, 4) - 5.5) / 3

# (name, fn(x) on a (3, 4) array)
READS = [
    ("itemsize", lambda x: np.int64(x.itemsize)),
    ("nbytes", lambda x: np.int64(x.nbytes)),
    ("mT", lambda x: x.mT),
    ("mT batched", lambda x: x.reshape(3, 2, 2).mT),
    ("trace", lambda x: x.trace(offset=1)),
    ("diagonal", lambda x: x.diagonal(-1)),
    ("cumprod", lambda x: x.cumprod(axis=1)),
    ("searchsorted", lambda x: x.ravel().searchsorted(np.array([-1.0, 0.5]))),
    ("round", lambda x: x.round(2)),
    ("take", lambda x: x.take([0, -1, 5])),
    ("take axis", lambda x: x.take([2, 0], axis=1)),
    ("take clip", lambda x: x.take([-20, 3, 20], axis=1, mode="clip")),
    ("take wrap", lambda x: x.take(np.array([-20, 3, 20], np.int32), mode="wrap")),
    ("take bad mode", lambda x: x.take([0], mode="bad")),
    ("take from an empty axis", lambda x: x[:, :0].take([1], axis=1, mode="wrap")),
    ("repeat", lambda x: x.repeat(2, axis=0)),
    ("real", lambda x: x.real),
    ("imag", lambda x: x.imag),
    ("conj", lambda x: x.conj()),
    ("conjugate", lambda x: x.conjugate()),
    ("view", lambda x: x.view()),
    ("view ndarray", lambda x: x.view(np.ndarray)),
    ("view same dtype", lambda x: x.view(x.dtype)),
    ("flat int", lambda x: x.flat[5]),
    ("flat slice", lambda x: x.flat[2:9:3]),
    ("flat array", lambda x: x.flat[[[1, -1]]]),
    ("flat ellipsis", lambda x: x.flat[...]),
    ("flat copy", lambda x: x.flat.copy()),
    ("flat out of bounds", lambda x: x.flat[12]),
    ("mT of 1-d", lambda x: x.ravel().mT),
]


@pytest.mark.parametrize("name,fn", READS, ids=[r[0] for r in READS])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_reads_match_numpy(backend, name, fn, dtype):
    x = (X * 3).astype(dtype)
    expected, error = numpy_outcome(fn, x)
    compiled = jitflow.function(fn)
    if error is not None:
        with pytest.raises(error_kinds(error)):
            compiled(x)
        return
    assert_same(compiled(x), np.asarray(expected) if np.ndim(expected) else expected,
                what=name)


# (name, fn(x) writing into x): run on the argument and on a copy made in the function
WRITES = [
    ("put", lambda x: x.put([0, -1, 3], [7.5, 8.5])),
    ("put clip", lambda x: x.put([-20, 30], [7.5, 8.5], mode="clip")),
    ("put out of bounds", lambda x: x.put([12], [1.0])),
    ("fill", lambda x: x.fill(2.5)),
    ("flat int", lambda x: x.flat.__setitem__(5, 9.5)),
    ("flat slice cycles", lambda x: x.flat.__setitem__(slice(1, 8), [1.5, -2.5, 3.0])),
    ("flat list", lambda x: x.flat.__setitem__([0, 11, 0], [4.0, 5.0, 6.0])),
    ("flat mask", lambda x: x.flat.__setitem__(X.ravel() > 0, [1.0, 2.0])),
    ("flat out of bounds", lambda x: x.flat.__setitem__(12, 1.0)),
    ("view write", lambda x: x.view().__setitem__((1, 2), -1.0)),
    ("mT write", lambda x: x.mT.__setitem__((0, 2), -3.0)),
    ("imag write", lambda x: x.imag.__setitem__(0, 1.0)),
]


@pytest.mark.parametrize("name,fn", WRITES, ids=[w[0] for w in WRITES])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_writes_match_numpy(backend, name, fn, dtype):
    def run(x):
        made = x * 1
        fn(made)
        fn(x)
        return made

    x = (X * 3).astype(dtype)
    expected_x = x.copy()
    expected, error = numpy_outcome(run, expected_x)
    actual_x = x.copy()
    compiled = jitflow.function(run)
    if error is not None:
        with pytest.raises(error_kinds(error)):
            compiled(actual_x)
        return
    assert_same(compiled(actual_x), expected, what=name)
    assert_same(actual_x, expected_x, what="the argument written into")


def test_flat_writes_at_traced_positions_match_numpy(backend):
    def fn(x, i, m, v):
        a, b = x * 1, x * 2
        a.flat[i] = v
        b.flat[m] = v
        return a, b, a.flat[i]

    rng = np.random.default_rng(1)
    compiled = jitflow.function(fn)
    for _ in range(3):
        args = (rng.normal(size=(2, 3)), rng.integers(-6, 6, 4), rng.random(6) < 0.5,
                rng.normal(size=2))
        for actual, expected in zip(compiled(*args), fn(*[np.copy(a) for a in args])):
            assert_same(actual, expected)


def test_put_writes_a_closed_over_array(backend):
    state = np.zeros(4)

    @jitflow.function
    def step(v):
        state.put([1, 2], v * 2)
        np.put(state, [3], v[1:])
        return v.sum()

    step(np.array([1.5, 3.0]))
    assert_same(state, np.array([0.0, 3.0, 6.0, 3.0]))


def test_flat_writes_a_closed_over_array(backend):
    state = np.zeros(5)

    @jitflow.function
    def step(v, i):
        state.flat[1:4] = v * 2
        state.flat[i] = v[0]
        return v

    step(np.array([1.5, 3.0]), np.array([4]))
    assert_same(state, np.array([0.0, 3.0, 6.0, 3.0, 1.5]))


def test_fill_writes_a_closed_over_array(backend):
    state = np.zeros(3, np.float32)

    @jitflow.function
    def step(v):
        state.fill(v.sum())
        return v

    step(np.array([1.5, 3.0]))
    assert_same(state, np.full(3, 4.5, np.float32))


def test_take_modes_at_traced_indices_match_numpy(backend):
    def fn(x, i):
        return x.take(i, mode="clip"), np.take(x, i, axis=1, mode="wrap")

    x, i = X.copy(), np.array([[-20, 3], [11, 40]])
    for actual, expected in zip(jitflow.function(fn)(x, i), fn(x, i)):
        assert_same(actual, expected)


def test_item_and_tolist_need_concrete_values():
    for method in ("item", "tolist"):
        with pytest.raises(jitflow.ConcretizationError, match=method):
            jitflow.function(lambda x: getattr(x, method)())(np.ones(2))


def test_item_and_tolist_under_a_tape_give_numpy_values():
    x = np.arange(6.0).reshape(2, 3)
    variable = jitflow.Variable(x)
    with jitflow.GradientTape():
        t = variable * 1
        assert (t * 2).item(4) == (x * 2).item(4)
        assert (t * 2).tolist() == (x * 2).tolist()


def test_view_as_another_dtype_is_refused_clearly():
    with pytest.raises(NotImplementedError, match="reinterpret"):
        jitflow.function(lambda x: x.view(np.int64))(np.ones(2))


def test_gradients_through_put_and_flat_writes():
    def fn(x, v):
        a = x * x
        a.put([0, 2], v)
        a.flat[1:3] = v[::-1] * 3
        return a * np.arange(1.0, 5.0) + a.flat[::2].sum()

    check_grads(fn, (np.array([0.5, -1.5, 2.0, 1.0]), np.array([2.0, -1.0])), order=1)
