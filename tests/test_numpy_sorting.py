"""sort, argsort, partition, argpartition and lexsort of jitflow.numpy against NumPy:
values (to the bit: -0.0 and 0.0 keep their order), dtypes, shapes and errors, eagerly
and traced (also through NumPy's own names), on strided and transposed operands, with
derivatives against central differences."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from fidelity import given_per_backend, run_traced
from jitflow.testing import check_grads
from numpy_programs import check_program
from strategies import DTYPES, arrays, shapes

pytestmark = pytest.mark.usefixtures("backend")

# How an operand reaches the sort: as it is, transposed, or through a strided slice.
VIEWS = {"as is": lambda a: a, "transposed": lambda a: a.T,
         "reversed and strided": lambda a: a[::-1, ::2] if a.ndim >= 2 else a[::-2]}


def operand(data, min_dims=1, max_side=5):
    """An array of any dtype, with NaN, infinities and both zeros among its floats, and
    often repeated values (the ties a stable sort keeps in order)."""
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    shape = data.draw(shapes(min_dims=min_dims, max_side=max_side), label="shape")
    if dtype.kind == "f" and data.draw(st.booleans(), label="few values"):
        pool = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.5, -2.0], dtype)
        return pool[data.draw(arrays(np.int64, shape, min_value=0, max_value=6),
                              label="choices")]
    return data.draw(arrays(dtype, shape), label="x")


def axis_of(data, ndim, none=True):
    choices = st.integers(-ndim, ndim - 1) if ndim else st.just(-1)
    return data.draw(st.none() | choices if none else choices, label="axis")


@given_per_backend(data=st.data())
def test_sort_and_argsort(data):
    x = operand(data)
    view = data.draw(st.sampled_from(sorted(VIEWS)), label="view")
    axis = axis_of(data, x.ndim)
    kind = data.draw(st.sampled_from([None, "quicksort", "stable", "heapsort"]), label="kind")

    def program(xp, x):
        a = VIEWS[view](x)
        # NumPy's other kinds order ties differently: its stable sort is the reference
        stable = "stable" if xp is np else kind
        return xp.sort(a, axis, kind=stable), xp.argsort(a, axis, kind=stable)
    check_program(program, x, what=f"sort along {axis} of {view} {x.dtype}{x.shape}")


@given_per_backend(data=st.data())
def test_lexsort(data):
    shape = data.draw(shapes(min_dims=1, max_side=5), label="shape")
    keys = [data.draw(arrays(dtype, shape, min_value=-2, max_value=2)
                      if dtype.kind != "b" else arrays(dtype, shape), label=f"key {i}")
            for i, dtype in enumerate(data.draw(st.lists(st.sampled_from(DTYPES), min_size=1,
                                                         max_size=3), label="dtypes"))]
    axis = axis_of(data, len(shape), none=False)
    check_program(lambda xp, *keys: xp.lexsort(tuple(keys), axis=axis), *keys,
                  what=f"lexsort of {len(keys)} keys of shape {shape} along {axis}")


def _check_partitioned(result, x, kth, axis):
    """NumPy's guarantee: along the axis, the kth elements are where a sort puts them,
    with none sorting after them before them and none before them after."""
    ordered = np.sort(x, axis=axis, kind="stable")
    result, ordered = np.moveaxis(result, axis, -1), np.moveaxis(ordered, axis, -1)
    for k in np.atleast_1d(kth) % x.shape[axis]:
        assert np.array_equal(result[..., k], ordered[..., k], equal_nan=True)
        value = result[..., k:k + 1]
        assert not np.any(_sorts_before(value, result[..., :k]))
        assert not np.any(_sorts_before(result[..., k + 1:], value))


def _sorts_before(a, b):
    """a < b in NumPy's sort order (NaN last)."""
    if a.dtype.kind != "f":
        return a < b
    return (a < b) | (np.isnan(b) & ~np.isnan(a))


@given_per_backend(data=st.data())
def test_partition_and_argpartition(data):
    x = operand(data)
    axis = axis_of(data, x.ndim)
    length = x.size if axis is None else x.shape[axis]
    if length == 0:
        return
    kth = data.draw(st.integers(-length, length - 1) |
                    st.lists(st.integers(-length, length - 1), min_size=1, max_size=3),
                    label="kth")

    def program(xp, x):
        return xp.partition(x, kth, axis), xp.argpartition(x, kth, axis)
    flat = x.ravel() if axis is None else x
    along = 0 if axis is None else axis % x.ndim
    for run in (lambda: program(jnp, x), lambda: run_traced(lambda a: program(jnp, a), x),
                lambda: run_traced(lambda a: program(np, a), x)):
        values, positions = run()
        assert values.dtype == x.dtype and positions.dtype == np.int64
        _check_partitioned(np.asarray(values), flat, kth, along)
        _check_partitioned(np.take_along_axis(flat, np.asarray(positions), along), flat,
                           kth, along)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("shape, kth, axis", [((0, 0), 0, 1), ((2, 0), 7, 0),
                                              ((0, 3), [-9, 5], 1), ((0,), 0, -1)])
def test_an_empty_array_takes_any_integer_kth(shape, kth, axis, dtype):
    """NumPy checks kth against the axis only where there is something to partition."""
    x = np.zeros(shape, dtype)

    def program(xp, a):
        return xp.partition(a, kth, axis), xp.argpartition(a, kth, axis)
    for run in (lambda: program(jnp, x), lambda: run_traced(lambda a: program(jnp, a), x)):
        values, positions = run()
        assert values.shape == positions.shape == shape and values.dtype == dtype
    with pytest.raises(ValueError, match="Booleans unacceptable"):
        jnp.partition(x, True, axis)


def test_methods_sort_in_place(backend):
    x = np.array([[3.0, -0.0, np.nan, 0.0], [1.0, 1.0, -np.inf, 2.0]])

    def program(a):
        b = a * 1.0
        b.sort(axis=0, kind="stable")
        c = a[:, ::-1]  # a view: sorting it in place writes through to its base
        c.sort(kind="stable")
        d = a * 1.0
        d.partition(1)
        return b, a, a.argsort(axis=None, kind="stable"), d
    got = jitflow.function(program)(x.copy())
    expected = program(x.copy())
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    for g, e in zip(got[:3], expected[:3]):  # partition may order -0.0 and 0.0 either way
        assert np.array_equal(np.signbit(g), np.signbit(e))


@pytest.mark.parametrize("call, error", [
    (lambda xp, x: xp.sort(x, axis=2), np.exceptions.AxisError),
    (lambda xp, x: xp.sort(x[0, 0]), np.exceptions.AxisError),
    (lambda xp, x: xp.sort(x, kind="bubble"), ValueError),
    (lambda xp, x: xp.sort(x, kind="stable", stable=True), ValueError),
    (lambda xp, x: xp.argsort(x, order="f"), ValueError),
    (lambda xp, x: xp.partition(x, 4), ValueError),
    (lambda xp, x: xp.partition(x, [0, -5]), ValueError),
    (lambda xp, x: xp.argpartition(x, 1.5), TypeError),
    (lambda xp, x: xp.partition(x, True), ValueError),
    (lambda xp, x: xp.partition(x, 1, kind="quick"), ValueError),
    (lambda xp, x: xp.lexsort(()), TypeError),
    (lambda xp, x: xp.lexsort((x, x[0])), ValueError),
    (lambda xp, x: xp.lexsort((x,), axis=3), np.exceptions.AxisError),
])
def test_errors_are_numpys(call, error):
    x = np.arange(8.0).reshape(2, 4)
    check_program(call, x, what="a bad call")
    with pytest.raises(error):
        call(np, x)


@given(data=st.data())
def test_derivatives(backend, data):
    shape = data.draw(shapes(min_dims=1, max_side=4), label="shape")
    size = int(np.prod(shape))
    x = (np.random.default_rng(size).permutation(size) * 0.5 - size / 4).reshape(shape)
    axis = axis_of(data, len(shape))
    weights = np.linspace(-1.0, 2.0, size).reshape(shape) if axis is not None else \
        np.linspace(-1.0, 2.0, size)

    def fn(a):
        return jnp.sort(a, axis) * weights
    check_grads(fn, (x,), order=2)
    check_grads(jitflow.function(fn), (x,), order=1)


def test_vmap_sorts_each_element(backend):
    x = np.random.default_rng(0).standard_normal((3, 4, 5))
    got = jitflow.function(jitflow.vmap(lambda a: (jnp.sort(a, axis=0), jnp.argsort(a),
                                                   jnp.lexsort((a[0], a[1])))))(x)
    expected = [np.stack(list(map(fn, x))) for fn in (
        lambda a: np.sort(a, axis=0), lambda a: np.argsort(a, kind="stable"),
        lambda a: np.lexsort((a[0], a[1])))]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_long_rows_on_every_thread(backend):
    """Rows long enough for several merge passes, and enough of them to be split between
    threads."""
    x = np.random.default_rng(1).standard_normal((300, 700)).astype(np.float32)
    x[::7, ::5] = np.nan
    x[1::3, ::4] = -0.0
    for axis in (0, 1):
        s, i = jitflow.function(lambda a: (jnp.sort(a, axis), jnp.argsort(a, axis)))(x)
        np.testing.assert_array_equal(s, np.sort(x, axis, kind="stable"))
        np.testing.assert_array_equal(np.signbit(s), np.signbit(np.sort(x, axis, kind="stable")))
        np.testing.assert_array_equal(i, np.argsort(x, axis, kind="stable"))


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
@pytest.mark.parametrize("size", [3, 40])  # insertion sort alone, and runs merged
def test_unsigned_integers_sort_by_their_unsigned_order(backend, dtype, size):
    """Values with the top bit set come last (a signed compare put them first)."""
    top = np.iinfo(dtype).max
    x = np.array([top, 0, 1, top - 1, 2] * size, dtype)[:size]
    np.testing.assert_array_equal(jitflow.function(lambda x: np.sort(x))(x), np.sort(x))
    np.testing.assert_array_equal(jitflow.function(lambda x: np.argsort(x))(x),
                                  np.argsort(x, kind="stable"))
