"""ravel_multi_index and unravel_index (jitflow/numpy/flat_indices.py), indices, ix_,
mask_indices, fromfunction (index_grids.py) and broadcast_shapes against NumPy: values,
dtypes, shapes and errors, eagerly and traced; an index out of range raises NumPy's
ValueError when the traced function runs; vmap and derivatives through them."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same, error_kinds, numpy_outcome, run_traced
from jitflow.errors import ConcretizationError
from jitflow.testing import check_grads

pytestmark = pytest.mark.usefixtures("backend")
# a third of the profile's examples on each backend: every one traces and compiles
DRAWN = settings(max_examples=max(5, settings.default.max_examples // 3))
INDEX_DTYPES = [np.dtype(d) for d in ("bool", "int8", "uint8", "int32", "int64",
                                      "uint64")]


def as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


def check_like_numpy(name, call, *arrays, traced=True):
    """call(np, *arrays) eagerly and traced gives NumPy's result or its kind of error."""
    expected, error = numpy_outcome(call, np, *arrays)
    # NumPy's message eagerly; traced, the same kind (an index NumPy names may be one
    # known only at run time)
    runs = [(lambda: call(jnp, *arrays), str(error)[:20])]
    if traced:
        runs.append((lambda: run_traced(lambda *a: call(jnp, *a), *arrays), None))
    for run, message in runs:
        if error is not None:
            with pytest.raises(error_kinds(error), match=message):
                run()
            continue
        got = as_tuple(run())
        assert len(got) == len(as_tuple(expected))
        for g, e in zip(got, as_tuple(expected)):
            assert_same(g, e, what=name)


@st.composite
def index_arrays(draw, count, low, high):
    dtype = draw(st.sampled_from(INDEX_DTYPES), label="dtype")
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=count, max_dims=2,
                                                    max_side=3)).input_shapes
    if dtype.kind == "u":
        low = max(low, 0)
    if dtype == np.bool_:
        low, high = 0, 1
    return [draw(hnp.arrays(dtype, shape, elements=st.integers(low, high)),
                 label=f"index {i}") for i, shape in enumerate(shapes)]


@DRAWN
@given(data=st.data())
def test_ravel_multi_index_as_numpy(data):
    dims = data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=3), label="dims")
    indices = data.draw(index_arrays(len(dims), -2, 5), label="indices")
    mode = data.draw(st.sampled_from(["raise", "wrap", "clip", "tuple"]), label="mode")
    if mode == "tuple":
        mode = tuple(data.draw(st.sampled_from(["raise", "wrap", "clip"])) for _ in dims)
    order = data.draw(st.sampled_from("CF"), label="order")
    check_like_numpy("ravel_multi_index",
                     lambda xp, *i: xp.ravel_multi_index(i, dims, mode, order), *indices)


@DRAWN
@given(data=st.data())
def test_unravel_index_as_numpy(data):
    dims = data.draw(st.lists(st.integers(0, 4), max_size=3), label="dims")
    (flat,) = data.draw(index_arrays(1, -2, 30), label="indices")
    order = data.draw(st.sampled_from("CF"), label="order")
    check_like_numpy("unravel_index", lambda xp, i: xp.unravel_index(i, dims, order), flat,
                     traced=bool(dims))  # shape (): below


def test_out_of_range_raises_when_the_traced_function_runs():
    ravel = jitflow.function(lambda i, j: np.ravel_multi_index((i, j), (3, 4)))
    unravel = jitflow.function(lambda i: np.unravel_index(i, (3, 4), order="F"))
    assert_same(ravel(np.array([2, 0]), np.array([3, 1])), np.array([11, 1]))
    assert_same(unravel(np.array(11))[1], np.int64(3))
    with pytest.raises(ValueError, match="invalid entry in coordinates array"):
        ravel(np.array([2, 0]), np.array([3, 4]))
    with pytest.raises(ValueError, match="index -1 is out of bounds for array with size 12"):
        unravel(np.array([3, -1, 12]))
    assert_same(ravel(np.array([1]), np.array([1])), np.array([5]))  # and runs again
    with pytest.raises(NotImplementedError, match="cannot carry the check"):
        jitflow.function(lambda i: np.unravel_index(i, ()))(np.array(0))


def test_argument_errors_as_numpy():
    i = np.array([1, 2])
    calls = [lambda xp: xp.ravel_multi_index((i,), (3, 4)),
             lambda xp: xp.ravel_multi_index((i, i * 1.5), (3, 4)),
             lambda xp: xp.ravel_multi_index((i, i), (3, 4), mode="nearest"),
             lambda xp: xp.ravel_multi_index((i, i), (3, 4), mode=("clip",)),
             lambda xp: xp.ravel_multi_index((i, i), (3, 4), order="A"),
             lambda xp: xp.ravel_multi_index((i, i), (2**40, 2**40)),
             lambda xp: xp.ravel_multi_index((i, i), (3, 4.0)),
             lambda xp: xp.unravel_index(i * 1.0, (3, 4)),
             lambda xp: xp.unravel_index(i, (3, 4), order="K"),
             lambda xp: xp.unravel_index(0, (2**40, 2**40)),
             lambda xp: xp.indices((2, -1)),
             lambda xp: xp.ix_(np.eye(2)),
             lambda xp: xp.broadcast_shapes((2, 1), (3, 4))]
    for call in calls:
        _, error = numpy_outcome(call, np)
        assert error is not None
        with pytest.raises(error_kinds(error)):
            call(jnp)


@pytest.mark.parametrize("dims", [(), (0,), (3,), (2, 3), (2, 0, 3), (1, 2, 3)])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float32, np.bool_])
def test_indices_as_numpy(dims, dtype):
    for sparse in (False, True):
        expected, error = numpy_outcome(np.indices, dims, dtype, sparse)
        if error is not None:  # arange of bools longer than 2
            with pytest.raises(type(error), match="booleans"):
                jnp.indices(dims, dtype, sparse)
            continue
        expected = as_tuple(expected)
        for got in (jnp.indices(dims, dtype, sparse),
                    run_traced(lambda: jnp.indices(dims, dtype, sparse))):
            for g, e in zip(as_tuple(got), expected, strict=True):
                assert_same(g, e)


def test_fromfunction_traces_the_function_with_index_grids():
    x = np.array([0.5, -1.0, 2.0])

    def grid(xp, x):
        return xp.fromfunction(lambda i, j, scale: xp.sin(i) * x[j.astype(int)] + scale * j, (2, 3),
                               scale=2.0)
    assert_same(jnp.fromfunction(lambda i, j: i + j, (3, 2), dtype=int),
                np.fromfunction(lambda i, j: i + j, (3, 2), dtype=int))
    assert_same(run_traced(lambda x: grid(jnp, x), x), grid(np, x), ulps=8)
    check_grads(lambda x: jnp.sum(grid(jnp, x) ** 2), (x,), order=1)


@pytest.mark.parametrize("args", [([1, 2], [True, False, True]), ([],), (),
                                  (np.array([2, 0], np.uint8), [0.5, 1.5], [3])])
def test_ix_as_numpy(args):
    expected = np.ix_(*args)
    # traced: the index arrays as arguments, the masks as constants (a mask known while
    # tracing; a traced one: below)
    traced = [np.asarray(a) for a in args if np.asarray(a).dtype != np.bool_]

    def mesh(*arrays):
        given = iter(arrays)
        return jnp.ix_(*[a if np.asarray(a).dtype == np.bool_ else next(given)
                         for a in args])
    as_arrays = np.ix_(*[a if np.asarray(a).dtype == np.bool_ else np.asarray(a)
                         for a in args])  # an empty array keeps its dtype
    for got, want in ((jnp.ix_(*args), expected), (run_traced(mesh, *traced), as_arrays)):
        for g, e in zip(got, want, strict=True):
            assert_same(g, e)
    x = np.arange(24.0).reshape(4, 6)
    mask = x[0] > 2  # a constant of the traced function
    assert_same(run_traced(lambda x: x[np.ix_([0, 3], mask)], x), x[np.ix_([0, 3], mask)])


def test_ix_of_a_traced_mask_asks_for_positions():
    with pytest.raises(ConcretizationError, match="(?s)jitflow.numpy.ix_.*nonzero"):
        jitflow.function(lambda x: x[np.ix_(x[:, 0] > 0, [0])])(np.ones((2, 2)))


@pytest.mark.parametrize("k", [-1, 0, 2])
def test_mask_indices_and_broadcast_shapes_as_numpy(k):
    for function in (np.triu, np.tril):
        for g, e in zip(jnp.mask_indices(4, function, k), np.mask_indices(4, function, k),
                        strict=True):
            assert_same(g, e)
    for shapes in [((2, 1), (3,)), (3, (2, 1)), ((0, 1), (1, 4)), ()]:
        assert jnp.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)


def test_vmap_of_index_arithmetic():
    flat = np.array([[1, 7, 11], [0, 3, 5]])
    rows, cols = jitflow.function(jitflow.vmap(lambda f: jnp.unravel_index(f, (3, 4))))(flat)
    assert_same(rows, np.unravel_index(flat, (3, 4))[0])
    back = jitflow.function(jitflow.vmap(
        lambda r, c: jnp.ravel_multi_index((r, c), (3, 4), mode="wrap")))(rows, cols + 4)
    assert_same(back, flat)
