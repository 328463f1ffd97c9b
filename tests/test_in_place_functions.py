"""NumPy's functions that write into their first argument (in_place.py) against NumPy:
copyto, put, putmask, place, fill_diagonal, put_along_axis, on traced arrays made in
the function, on arguments (the caller sees the write) and on closed-over arrays; their
exceptions; their derivatives."""
import numpy as np
import pytest
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from jitflow.testing import check_grads
from fidelity import assert_same, error_kinds, given_per_backend, numpy_outcome
from strategies import DTYPES, arrays, shapes

M = np.array([True, False, True, False, True, True])
F = np.arange(6.0) - 2.5
I = np.arange(6, dtype=np.int64) - 3

# (name, fn(a, *args) writing into a, args[, a's shape]): each runs on the argument a
# itself and on a traced array made from it (a * 1), returning the latter.
CASES = [
    ("copyto", lambda a, s: np.copyto(a, s), (F[::-1].copy(),)),
    ("copyto int into float32", lambda a, s: np.copyto(a, s), (I,)),
    ("copyto broadcast where", lambda a, s, m: np.copyto(a, s, where=m),
     (np.float64(7.5), M)),
    ("copyto unsafe", lambda a, s: np.copyto(a, s, casting="unsafe"), (F,)),
    ("put", lambda a, i, v: np.put(a, i, v), (np.array([0, -1, 2]), F[:3].copy())),
    ("put cycles values", lambda a, i, v: np.put(a, i, v),
     (np.array([[0, 1], [4, 5]]), F[:3].copy())),
    ("put repeated index keeps the last", lambda a, i, v: np.put(a, i, v),
     (np.array([1, 1, 1]), F[:3].copy())),
    ("put wrap", lambda a, i, v: np.put(a, i, v, mode="wrap"),
     (np.array([-8, 9, 13]), F[:3].copy())),
    ("put clip", lambda a, i, v: np.put(a, i, v, mode="clip"),
     (np.array([-8, 2, 13]), F[:2].copy())),
    ("put out of bounds", lambda a, i, v: np.put(a, i, v), (np.array([0, 6]), F[:2].copy())),
    ("put negative out of bounds", lambda a, i, v: np.put(a, i, v),
     (np.array([-7]), F[:1].copy())),
    ("putmask", lambda a, m, v: np.putmask(a, m, v), (M, F[:4].copy())),
    ("putmask int mask", lambda a, m, v: np.putmask(a, m, v), (M.astype(np.int64), F)),
    ("putmask wrong size", lambda a, m, v: np.putmask(a, m, v), (M[:4].copy(), F)),
    ("putmask unsafe array", lambda a, m, v: np.putmask(a, m, v), (M, F.astype(np.float64))),
    ("place", lambda a, m, v: np.place(a, m, v), (M, F[:3].copy())),
    ("place wrong size", lambda a, m, v: np.place(a, m, v), (M[:5].copy(), F)),
    ("put_along_axis", lambda a, i, v: np.put_along_axis(a, i, v, 1),
     (np.array([[2], [0]]), F[:2].reshape(2, 1).copy()), (2, 3)),
    ("put_along_axis flat", lambda a, i, v: np.put_along_axis(a, i, v, None),
     (np.array([5, 0]), F[:2].copy())),
    ("put_along_axis ndim", lambda a, i, v: np.put_along_axis(a, i, v, 1),
     (np.array([2, 0]), F[:2].copy()), (2, 3)),
    ("put_along_axis axis", lambda a, i, v: np.put_along_axis(a, i, v, -1),
     (np.array([[2], [0]]), F[:2].reshape(2, 1).copy()), (2, 3)),
    ("put_along_axis bad axis", lambda a, i, v: np.put_along_axis(a, i, v, 2),
     (np.array([[2], [0]]), F[:2].reshape(2, 1).copy()), (2, 3)),
]


def writing(fn):
    """fn applied to the argument and to a traced array made from it."""
    def run(a, *args):
        made = a * 1
        fn(a, *args)
        fn(made, *args)
        return made
    return run


@pytest.mark.parametrize("name,fn,args,shape", [c + ((6,),) * (len(c) == 3)
                                                for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_matches_numpy(backend, name, fn, args, shape, dtype):
    a = np.linspace(-3, 3, 6).astype(dtype).reshape(shape)
    expected_a = a.copy()
    expected, error = numpy_outcome(writing(fn), expected_a, *args)
    actual_a = a.copy()
    compiled = jitflow.function(writing(fn))
    if error is not None:
        with pytest.raises(error_kinds(error)):
            compiled(actual_a, *args)
        return
    assert_same(compiled(actual_a, *args), expected, what=name)
    assert_same(actual_a, expected_a, what="the argument written into")


def test_fill_diagonal_matches_numpy(backend):
    cases = [((3, 3), [1.5, 2.5], False), ((5, 2), [1, 2, 3], True),
             ((5, 2), [1, 2, 3], False), ((2, 5), 7, True), ((2, 2, 2), [4, 5], False),
             ((3, 3), np.array([[1, 2], [3, 4]]), False)]
    for shape, val, wrap in cases:
        def fn(x, v):
            a = np.zeros(shape, x.dtype) + x
            np.fill_diagonal(a, v, wrap=wrap)
            return a
        x = np.float64(0.5)
        assert_same(jitflow.function(fn)(x, np.asarray(val, np.float64)),
                    fn(x, np.asarray(val, np.float64)), what=f"{shape} {wrap}")


@pytest.mark.parametrize("fn", [
    lambda a, v: np.fill_diagonal(a.reshape(2, 3, 1), v),
    lambda a, v: np.fill_diagonal(a, v),
    lambda a, v: np.copyto(a.astype(np.int32), v),
    lambda a, v: np.copyto(a, v, casting="bad"),
    lambda a, v: np.put(a, [0], v, mode="bad"),
    lambda a, v: np.place(a.astype(np.int64), a > 0, v),
    lambda a, v: np.putmask(a.astype(np.int64), a > 0, v),
], ids=["unequal dims", "1-d", "same_kind", "casting name", "mode name", "place safe",
        "putmask safe"])
def test_numpy_exceptions(fn):
    a, v = np.arange(6.0), np.float64(1.5) * np.ones(6)
    _, error = numpy_outcome(fn, a.copy(), v)
    assert error is not None
    with pytest.raises(error_kinds(error)):
        jitflow.function(lambda a, v: (fn(a * 1, v), a)[1])(a, v)


def test_traced_indices_out_of_bounds_raise_at_run_time(backend):
    def fn(a, i, v):
        np.put(a, i, v)
        return a

    compiled = jitflow.function(fn)
    assert_same(compiled(np.zeros(4), np.array([1, -1]), np.ones(2)),
                fn(np.zeros(4), np.array([1, -1]), np.ones(2)))
    with pytest.raises(IndexError):
        compiled(np.zeros(4), np.array([1, 4]), np.ones(2))


def test_traced_mask_and_indices_match_numpy(backend):
    def fn(a, m, i, v):
        b, c, d = a * 1, a * 2, a * 3
        np.place(b, m, v)
        np.putmask(c, m, v)
        np.put(d, i, v, mode="wrap")
        return b, c, d

    rng = np.random.default_rng(0)
    compiled = jitflow.function(fn)
    for _ in range(3):
        args = (rng.normal(size=(2, 4)), rng.random((2, 4)) < 0.5,
                rng.integers(-20, 20, 5), rng.normal(size=3))
        for actual, expected in zip(compiled(*args), fn(*[np.copy(x) for x in args])):
            assert_same(actual, expected)


def test_place_with_no_values_and_a_traced_mask_is_refused():
    def fn(a, m):
        np.place(a, m, [])
        return a

    with pytest.raises(ValueError, match="traced mask"):
        jitflow.function(fn)(np.zeros(3), np.zeros(3, bool))


def test_writes_reach_a_closed_over_array(backend):
    state = np.zeros(5)

    @jitflow.function
    def step(v):
        np.copyto(state, state + v, where=v > 0)
        np.put(state, [0], v[1:2] * 10)
        return state + v  # a traced read sees the writes

    v = np.array([1.0, -2.0, 3.0, 0.0, 5.0])
    expected_state = np.zeros(5)
    for _ in range(2):
        np.copyto(expected_state, expected_state + v, where=v > 0)
        np.put(expected_state, [0], v[1:2] * 10)
        assert_same(step(v), expected_state + v)
        assert_same(state, expected_state, what="the closed-over array")


def test_numpy_reading_a_closed_over_array_after_a_write_raises():
    state = np.zeros(3)

    @jitflow.function
    def step(v):
        np.copyto(state, v)
        return state * 1  # NumPy's own read: its contents are known only at run time

    with pytest.raises(TypeError, match="written into"):
        step(np.ones(3))


def test_a_numpy_array_made_in_the_function_is_refused():
    def fn(v):
        a = np.zeros(3)
        np.copyto(a, v)
        return a

    with pytest.raises(TypeError, match="make it a traced array"):
        jitflow.function(fn)(np.ones(3))


def test_they_return_none_and_write_through_views(backend):
    def fn(x):
        a = x * 1
        row = a[1]
        assert np.copyto(row, 5.0) is None
        assert np.fill_diagonal(a, -1.0) is None
        return a, row

    x = np.arange(9.0).reshape(3, 3)
    for actual, expected in zip(jitflow.function(fn)(x), fn(x)):
        assert_same(actual, expected)


def test_eager_calls_on_numpy_arrays_are_numpy():
    a, b = np.zeros(4), np.zeros(4)
    jnp.put(a, [1, 2], [5.0, 6.0])
    np.put(b, [1, 2], [5.0, 6.0])
    assert_same(a, b)
    assert set(jnp.__all__) >= {"copyto", "put", "putmask", "place", "fill_diagonal",
                                "put_along_axis"}


@pytest.mark.parametrize("write", [
    lambda a, v: np.copyto(a, v[:2], where=np.array([True, False])),
    lambda a, v: np.put(a, [1, 0, 1], v),
    lambda a, v: np.putmask(a, np.array([True, False]), v),
    lambda a, v: np.place(a, np.array([False, True]), v),
    lambda a, v: np.put_along_axis(a, np.array([1]), v[:1], 0),
    lambda a, v: np.fill_diagonal(jnp.reshape(a, (1, 2)), v),
], ids=["copyto", "put", "putmask", "place", "put_along_axis", "fill_diagonal"])
def test_gradients_flow_from_written_values_only(write):
    def fn(x, v):
        a = x * x
        write(a, v)
        return a * jnp.arange(1.0, 3.0)

    check_grads(fn, (np.array([0.5, -1.5]), np.array([2.0, 3.0, -1.0])), order=1)


def test_writes_under_a_gradient_tape():
    v = jitflow.Variable(np.array([1.0, 2.0, 3.0]))
    with jitflow.GradientTape() as tape:
        t = v * 1
        np.put(t, [0], v[1:2] * 5)
        np.copyto(t, 7.0, where=np.array([False, False, True]))
        loss = (t * np.array([1.0, 10.0, 100.0])).sum()
    assert_same(np.asarray(t), np.array([10.0, 2.0, 7.0]))
    assert_same(tape.gradient(loss, v), np.array([0.0, 15.0, 0.0]))


def test_vmap_of_writes(backend):
    def fn(x):
        a = x * 1
        np.put(a, [0, 2], x[1:] * 2)
        np.putmask(a, x > 3, -x)
        return a

    x = np.arange(6.0).reshape(2, 3)
    assert_same(jitflow.vmap(fn)(x), np.stack([fn(row) for row in x]))


@st.composite
def writes_into_arrays(draw):
    """A target, flat indices (some out of range), a mask and values of any dtypes."""
    dtype = draw(st.sampled_from(DTYPES))
    a = draw(arrays(dtype, shapes(max_dims=3, max_side=3)))
    size = max(a.size, 1)
    indices = np.array(draw(st.lists(st.integers(-size - 1, size), max_size=5)),
                       np.int64)
    mask = draw(arrays(np.dtype(bool), a.shape))
    values = draw(arrays(draw(st.sampled_from(DTYPES)), shapes(max_dims=2, max_side=3),
                         special=False, min_value=-100, max_value=100))
    mode = draw(st.sampled_from(["raise", "wrap", "clip"]))
    return a, indices, mask, values, mode


@given_per_backend(writes_into_arrays())
def test_writes_at_traced_positions_match_numpy(backend, case):
    a, indices, mask, values, mode = case
    # one function each: a trace-time error of one would come before a run-time one
    # of another, where NumPy raises the first it meets
    writes = [lambda b, i, m, v: np.put(b, i, v, mode=mode),
              lambda b, i, m, v: np.putmask(b, m, v)]
    if values.size:  # (with none, refused for a traced mask: a test above)
        writes.append(lambda b, i, m, v: np.place(b, m, v))
    for write in writes:
        def fn(a, indices, mask, values):
            b = a.copy()
            write(b, indices, mask, values)
            return b

        expected, error = numpy_outcome(fn, a, indices, mask, values)
        compiled = jitflow.function(fn)
        if error is not None:
            with pytest.raises(error_kinds(error)):
                compiled(a, indices, mask, values)
            continue
        assert_same(compiled(a, indices, mask, values), expected)


PYTHON_INT_WRITES = {
    "put": lambda a, v: np.put(a, [0], v),
    "putmask": lambda a, v: np.putmask(a, a >= 0, v),
    "place": lambda a, v: np.place(a, a >= 0, v),
    "fill_diagonal": lambda a, v: np.fill_diagonal(a.reshape(2, 2), v),
    "put_along_axis": lambda a, v: np.put_along_axis(a, np.array([0]), v, axis=0),
    "copyto": lambda a, v: np.copyto(a, v),
    "copyto_where": lambda a, v: np.copyto(a, v, where=a > 0),
}


@pytest.mark.parametrize("name", sorted(PYTHON_INT_WRITES))
def test_a_python_int_passed_in_that_does_not_fit_raises_as_numpy_does(name):
    # it was cast, wrapping 2**31 to -2**31 (found by the program fuzzer)
    write = PYTHON_INT_WRITES[name]

    def fn(x, value):
        a = jnp.zeros(4, np.int32) + x
        write(a, value)
        return a
    compiled = jitflow.function(fn)
    for _ in range(2):  # the first call and native code
        for value in (2 ** 31, -2 ** 31 - 1):
            with pytest.raises(OverflowError, match="int32"):
                compiled(np.int32(0), value)
        expected = np.zeros(4, np.int32)
        write(expected, 5)
        assert_same(compiled(np.int32(0), 5), expected)
        compiled.wait()


@pytest.mark.parametrize("target, value", [
    (np.array(0, np.uint8), 3), (np.array([0, 5], np.uint8), 200),
    (np.array(0, np.uint8), 2147483648), (np.array([0, 5], np.uint8), -1),
    (np.array(0, np.uint8), 2.5), (np.array([1.5], np.float32), 2.5),
    (np.array([1], np.int32), True)], ids=str)
def test_a_python_number_argument_is_cast_by_its_kind_as_numpy_does(backend, target, value):
    """A Python int passed to the function stays weakly typed: copyto of 3 into a uint8
    array is allowed (NEP 50), of 2**31 an OverflowError, of 2.5 a TypeError (the
    check once took the int for an int64 array and refused it; found by the fuzzer)."""
    def copy_where(xp, x, y):
        out = xp.array(x, copy=True)
        np.copyto(out, y, where=xp.asarray(x) >= 0)
        return out
    expected, numpy_error = numpy_outcome(copy_where, np, target, value)
    traced = jitflow.function(lambda x, y: copy_where(jnp, x, y))
    if numpy_error is not None:
        with pytest.raises(error_kinds(numpy_error)):
            traced(target, value)
        return
    assert_same(np.asarray(traced(target, value)), np.asarray(expected))
