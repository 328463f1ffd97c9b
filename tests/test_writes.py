"""Writes into traced values (writes.py) against NumPy: item assignment, in-place
operators, ufuncs with out=, views, and the write-back into the caller's arrays."""
import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from jitflow.testing import check_grads
from fidelity import (assert_same, error_kinds, given_per_backend, native_tolerance,
                      numpy_outcome)
from strategies import CORE_DTYPES, DTYPES, arrays, shapes


def same_as_numpy(fn, *args, transcendental=False):
    """fn run by NumPy and by jitflow.function on copies of args: the same result (or
    error), and the same arrays afterwards (writes into arguments reach the caller)."""
    expected_args = [np.copy(a) for a in args]
    expected, error = numpy_outcome(fn, *expected_args)
    actual_args = [np.copy(a) for a in args]
    if error is not None:
        with pytest.raises(error_kinds(error)):
            jitflow.function(fn)(*actual_args)
        for before, after in zip(args, actual_args):
            assert_same(after, before, what="an argument after a raising call")
        return
    actual = jitflow.function(fn)(*actual_args)
    tolerance = native_tolerance({}, transcendental)
    for a, e in zip(actual if isinstance(actual, tuple) else (actual,),
                    expected if isinstance(expected, tuple) else (expected,)):
        assert_same(a, e, what="result", **tolerance)
    for a, e in zip(actual_args, expected_args):
        assert_same(a, e, what="argument written into", **tolerance)


# --- item assignment ----------------------------------------------------------------

@st.composite
def basic_assignments(draw):
    dtype = draw(st.sampled_from(DTYPES))
    x = draw(arrays(dtype, shapes(max_dims=3)))
    index = draw(hnp.basic_indices(x.shape, allow_newaxis=True, allow_ellipsis=True))
    region = np.broadcast_to(x, x.shape)[index].shape
    value_dtype = draw(st.sampled_from(DTYPES))
    value_shape = draw(hnp.broadcastable_shapes(region, min_side=0,
                                                max_dims=len(region)))
    value = draw(arrays(value_dtype, value_shape, special=False, min_value=-100,
                        max_value=100))
    return x, index, value


@given_per_backend(basic_assignments())
def test_basic_item_assignment_matches_numpy(backend, case):
    x, index, value = case

    def assign(x, value):
        y = x.copy()
        y[index] = value
        x[index] = value
        return y
    same_as_numpy(assign, x, value)


@given_per_backend(basic_assignments())
def test_augmented_item_assignment_matches_numpy(backend, case):
    x, index, value = case

    def add(x, value):
        x[index] += value
        return x * 1
    element = np.broadcast_to(x, x.shape)[index]  # a scalar, or a view
    with np.errstate(all="ignore"):
        total = element + value
    if isinstance(element, np.generic) and x.dtype.kind in "iu" and \
            total.dtype.kind == "f" and not np.can_cast(total.dtype, x.dtype, casting="safe"):
        # NumPy checks at run time that a float scalar fits: jitflow refuses it (an
        # integer one it checks as NumPy does)
        with pytest.raises(TypeError, match="fits"):
            jitflow.function(add)(x.copy(), value)
        return
    same_as_numpy(add, x, value)


ADVANCED = [
    np.array([0, 2, -1]),
    np.array([1, 1, 3]),  # repeated: the last write stays
    (slice(None), np.array([[0], [1]])),
    (np.array([0, 1]), slice(1, None), np.array([2, 0])),
    (np.array([0, 1]), 0, np.array([2, 0])),  # separated arrays: axes in front
    np.array([True, False, True, False]),
    (Ellipsis, np.array([True, False, True])),
    np.array([[True, False, True], [False] * 3, [True] * 3, [False] * 3]),
    [3, 0],
    (np.array([4]), 0),  # out of bounds: IndexError
]


@pytest.mark.parametrize("index", ADVANCED, ids=str)
@pytest.mark.parametrize("value", [np.float64(-1.5), np.arange(1.0) + 10, 7])
def test_advanced_item_assignment_matches_numpy(backend, index, value):
    x = np.arange(24.0).reshape(4, 3, 2)[:, :, 0].copy()

    def assign(x):
        x[index] = value
        x[index] += value
        return x.sum()
    same_as_numpy(assign, x)


def test_traced_index_assignment_matches_numpy(backend):
    def assign(x, i, v):
        x[i] = v
        return x[i] * 2
    x = np.zeros(5)
    same_as_numpy(assign, x, np.array([3, -1, 3]), np.array([1.0, 2.0, 3.0]))
    same_as_numpy(assign, x, np.array([5]), np.array([1.0]))  # out of bounds at run time
    f = jitflow.function(assign)
    y = np.zeros(5)
    with pytest.raises(IndexError):
        f(y, np.array([0, 7]), np.array([1.0, 2.0]))
    np.testing.assert_array_equal(y, np.zeros(5))  # a raising call writes nothing


@st.composite
def traced_index_assignments(draw):
    x = draw(arrays(np.dtype(np.float64), shapes(min_dims=1, min_side=1)))
    axis = draw(st.integers(0, x.ndim - 1))
    count = draw(st.integers(1, x.ndim - axis))
    index_shape = draw(shapes(max_dims=2, min_side=1, max_side=3))
    indices = [draw(hnp.arrays(np.int64, index_shape, elements=st.integers(
        -length, length - 1))) for length in x.shape[axis:axis + count]]
    region = x.shape[:axis] + index_shape + x.shape[axis + count:]
    value = draw(arrays(np.dtype(np.float64), draw(hnp.broadcastable_shapes(
        region, min_side=0, max_dims=len(region)))))
    return x, axis, indices, value


@given_per_backend(traced_index_assignments())
def test_traced_integer_array_assignment_matches_numpy(backend, case):
    x, axis, indices, value = case

    def assign(x, value, *indices):
        x[(slice(None),) * axis + indices] = value  # repeated indices: the last stays
        return x * 2
    same_as_numpy(assign, x, value, *indices)


@pytest.mark.parametrize("first", [2, 2 ** 31 - 1, -2 ** 31, 2 ** 31, -2 ** 31 - 1, 2 ** 40])
def test_a_traced_int_scalar_into_a_narrower_array_is_checked_at_run_time(backend, first):
    def f(x, y):
        x[0] = y.sum()  # an int64 scalar into int32: NumPy checks it fits at run time
        x[1] += y[0]  # an array's element: cast, wrapping
        return x
    same_as_numpy(f, np.zeros(2, np.int32), np.array([first, 0, 0]))


def test_a_traced_float_scalar_into_an_int_array_is_refused(backend):
    def f(x, y):
        x[0] = y.sum()  # NaN, inf or too large raise in NumPy: not compiled
        return x
    with pytest.raises(TypeError, match="NaN or infinite"):
        jitflow.function(f)(np.zeros(2, np.int32), np.ones(3))

    def cast_first(x, y):
        x[0] = y.sum().astype(np.int32)
        return x

    def as_array(x, y):
        x[0] = jnp.asarray(y.sum())  # a 0-d array is cast, as NumPy casts it
        return x
    same_as_numpy(cast_first, np.zeros(2, np.int32), np.arange(3))
    same_as_numpy(as_array, np.zeros(2, np.int32), np.array([2 ** 40]))


@pytest.mark.parametrize("value", [1.9, -1.9, np.array([2.7, -0.5]), np.inf, np.nan,
                                   2 ** 40, np.float32(3.5), True])
def test_assignment_casts_as_numpy_does(backend, value):
    def assign(x):
        x[1:3] = value
        x[0] = value if np.ndim(value) == 0 else value[0]
        return x
    same_as_numpy(assign, np.arange(4, dtype=np.int32))


def test_assigned_value_broadcasts_as_numpy_does(backend):
    x = np.zeros((2, 3))
    for value in [np.ones((1, 1, 3)), np.arange(2.0)[:, None], np.ones(2), np.ones((2, 2))]:
        def assign(x, value=value):
            x[:, :] = value
            return x
        same_as_numpy(assign, x)


def test_traced_value_is_cast_to_the_target_dtype(backend):
    def assign(x, v):
        x[:2] = v * 1.5
        return x
    same_as_numpy(assign, np.arange(4), np.array([1.0, -1.0]))


# --- in-place operators and out= ------------------------------------------------------

INPLACE = {
    "+=": lambda x, y: x.__iadd__(y), "-=": lambda x, y: x.__isub__(y),
    "*=": lambda x, y: x.__imul__(y), "/=": lambda x, y: x.__itruediv__(y),
    "//=": lambda x, y: x.__ifloordiv__(y), "%=": lambda x, y: x.__imod__(y),
    "**=": lambda x, y: x.__ipow__(y), "&=": lambda x, y: x.__iand__(y),
    "|=": lambda x, y: x.__ior__(y), "^=": lambda x, y: x.__ixor__(y),
}
OPERANDS = [np.float64(1.5), 2, 1.5, True, np.int32(3), np.array([2.0, 3.0, 4.0]),
            np.array([1, 2, 3], np.int32), np.array([[1.0], [2.0]])]


@pytest.mark.parametrize("dtype", CORE_DTYPES, ids=str)
@pytest.mark.parametrize("op", INPLACE)
@pytest.mark.parametrize("other", OPERANDS, ids=repr)
def test_inplace_operator_keeps_the_dtype_or_raises(backend, op, dtype, other):
    def update(x):
        z = x[...]  # a view: the write reaches x
        z = INPLACE[op](z, other)
        return z

    x = (np.arange(3) + 1).astype(dtype)
    same_as_numpy(update, x, transcendental=op == "**=")


def test_float32_stays_float32_after_adding_a_float64_scalar(backend):
    def f(a):
        z = a * 1
        z += np.float64(1.5)
        return z
    assert f(np.ones(2, np.float32)).dtype == np.float32
    assert jitflow.function(f)(np.ones(2, np.float32)).dtype == np.float32


def test_int_array_plus_equals_float_raises(backend):
    def f(i):
        i += 1.5
        return i
    with pytest.raises(TypeError, match="same_kind"):
        jitflow.function(f)(np.arange(3))


def test_scalars_rebind_instead_of_writing(backend):
    def f(x):
        s = x.sum()  # a NumPy scalar: += makes a new value, with NumPy's promotion
        s += 1.5
        t = x[0]
        t += 1
        return s, t, x
    same_as_numpy(f, np.arange(3))


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.subtract, np.maximum,
                                   np.true_divide])
def test_ufunc_out_writes_the_target(backend, ufunc):
    def f(x, y):
        ufunc(x, y, out=x)
        r = ufunc(y, 2, out=y[1:])
        return r
    same_as_numpy(f, np.arange(3.0), np.arange(3.0))
    same_as_numpy(f, np.arange(3), np.arange(3))


def test_matmul_in_place(backend):
    def f(a, b):
        a @= b
        return a
    same_as_numpy(f, np.arange(4.0).reshape(2, 2), np.ones((2, 2)))
    same_as_numpy(f, np.arange(4.0).reshape(2, 2), np.ones((2, 3)))  # shape: raises


# --- views ----------------------------------------------------------------------------

def test_writes_through_views_reach_the_base_and_other_views(backend):
    def f(x):
        y = x * 1
        v = y[1:]
        w = y[::-1]
        u = v[:, None][1:]  # a view of a view
        v += 1
        u *= 10
        w[0] = -1.0
        snapshot = y.copy()
        y[...] = 0
        return y, v, w, u, snapshot
    same_as_numpy(f, np.arange(5.0))


VIEWS_MADE_BEFORE_A_WRITE = {
    "diagonal": lambda y: np.diagonal(y),
    "diagonal-method": lambda y: y.diagonal(1),
    "broadcast_to": lambda y: np.broadcast_to(y, (3, 2, 2)),
    "broadcast_arrays": lambda y: np.broadcast_arrays(y, np.ones((3, 1, 1)))[0],
    "flip": np.flip, "rot90": np.rot90, "fliplr": np.fliplr, "ravel": np.ravel,
    "swapaxes": lambda y: y.swapaxes(0, 1), "moveaxis": lambda y: np.moveaxis(y, 0, 1),
    "atleast_3d": np.atleast_3d, "newaxis": lambda y: y[None, :, None],
    "split": lambda y: np.split(y, 2)[1], "hsplit": lambda y: np.hsplit(y, 2)[0],
    "unstack": lambda y: np.unstack(y)[1], "matrix_transpose": np.matrix_transpose,
    "squeeze": lambda y: np.squeeze(y[None]), "expand_dims": lambda y: np.expand_dims(y, 0),
}


@pytest.mark.parametrize("make_view", VIEWS_MADE_BEFORE_A_WRITE.values(),
                         ids=VIEWS_MADE_BEFORE_A_WRITE.keys())
def test_views_made_before_a_write_see_it(backend, make_view):
    def f(x):
        y = x.copy()  # C-ordered, as NumPy's copy is: its reshapes are views
        view = make_view(y)
        y[1, 0] = 7.0
        y += 1
        return view + 0
    same_as_numpy(f, np.arange(4.0).reshape(2, 2))


def test_a_write_after_a_reshape_of_unknown_layout_raises(backend):
    # x * 1 keeps x's memory order, the caller's choice: NumPy's ravel of it is a view
    # for a C-ordered x and a copy for a transposed one, so whether it sees the write
    # is not known when tracing.
    def f(x):
        y = x * 1
        flat = y.ravel()
        y[1, 0] = 7.0
        return flat + 0
    with pytest.raises(ValueError, match="view or a copy depending on its memory layout"):
        jitflow.function(f)(np.ones((2, 2)))

    def g(x):
        y = x * 1
        total = y.ravel().sum()  # the reshape is gone before the write: no question
        y[1, 0] = 7.0
        return total + y
    same_as_numpy(g, np.ones((2, 2)))


@pytest.mark.parametrize("make_view", [lambda y: np.diagonal(y),
                                       lambda y: np.broadcast_to(y, (2, 2, 2))],
                         ids=["diagonal", "broadcast_to"])
def test_read_only_views_refuse_writes(backend, make_view):
    def f(x):
        view = make_view(x * 1)
        view[0] = 1.0
        return view
    with pytest.raises(ValueError, match="read-only"):
        jitflow.function(f)(np.ones((2, 2)))


def test_writes_through_views_of_arguments_reach_the_caller(backend):
    def f(x):
        row = x[1]
        row += 1
        col = x[:, ::-2]
        col[...] = col * 2
        return row.sum()
    same_as_numpy(f, np.arange(12.0).reshape(3, 4))


def test_integer_index_gives_a_scalar_copy(backend):
    def f(x):
        s = x[1, 0]
        s += 5
        e = x[1, ...]  # 0-d... here 1-d view
        e += 1
        return s, x
    same_as_numpy(f, np.arange(6).reshape(2, 3))


# --- write-back -----------------------------------------------------------------------

def test_writes_reach_the_caller_at_every_call(backend):
    @jitflow.function
    def step(x, y):
        x += 1
        y[0] = x.sum()
        return x.mean()
    x, y = np.zeros(3), np.zeros(2)
    for call in range(1, 4):
        assert step(x, y) == call
        np.testing.assert_array_equal(x, [call] * 3)
        np.testing.assert_array_equal(y, [3 * call, 0])


def test_a_raising_call_writes_nothing(backend):
    @jitflow.function
    def f(x, i):
        x[:] = 7.0
        return x[i]
    x = np.zeros(3)
    with pytest.raises(IndexError):
        f(x, np.array(5))
    np.testing.assert_array_equal(x, np.zeros(3))
    f(x, np.array(1))
    np.testing.assert_array_equal(x, [7.0] * 3)


def test_written_argument_sharing_memory_with_another_raises(backend):
    @jitflow.function
    def f(x, y):
        x += y
        return x
    x = np.zeros(4)
    with pytest.raises(ValueError, match="shares memory"):
        f(x, x)
    with pytest.raises(ValueError, match="shares memory"):
        f(x[:3], x[1:])
    np.testing.assert_array_equal(x, np.zeros(4))


def test_written_read_only_argument_raises(backend):
    @jitflow.function
    def f(x):
        x[0] = 1.0
        return x
    x = np.zeros(2)
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        f(x)


def test_variable_values_are_read_only_in_a_trace(backend):
    v = jitflow.Variable(np.zeros(3))

    @jitflow.function
    def f():
        value = v.value
        value[0] = 1.0
        return value
    with pytest.raises(ValueError, match="assign"):
        f()


def test_writing_an_outer_value_inside_a_branch_raises():
    @jitflow.function
    def f(x):
        def branch(y):
            x[0] = 1.0  # x is captured from the enclosing trace
            return y
        return jitflow.cond(x.sum() > 0, branch, lambda y: y, x * 2)
    with pytest.raises(TypeError, match="writing into a traced value"):
        f(np.ones(2))


# --- derivatives and batching ----------------------------------------------------------

def _assigned(x, v):
    y = x * 1.0
    y[1:3] = v * 2
    y[np.array([0, 0, 3])] = jnp.sin(v[np.array([0, 1, 0])])  # repeats: last stays
    y[::-1] *= y[0]
    return y


def test_gradients_through_item_assignment():
    check_grads(_assigned, (np.array([0.3, -1.2, 0.7, 2.0]), np.array([0.4, -0.9])))
    check_grads(jitflow.function(_assigned),
                (np.array([0.3, -1.2, 0.7, 2.0]), np.array([0.4, -0.9])))


def test_gradient_of_repeated_index_assignment_keeps_only_the_last_write():
    def f(v):
        y = jnp.zeros(2)
        y[np.array([0, 0])] = v
        return y.sum()
    np.testing.assert_array_equal(jitflow.grad(f)(np.array([1.0, 2.0])), [0.0, 1.0])


def test_vmap_of_item_assignment(backend):
    xs, vs = np.arange(12.0).reshape(3, 4), np.arange(6.0).reshape(3, 2)
    batched = jitflow.function(jitflow.vmap(_assigned))(xs, vs)
    expected = np.stack([_assigned(x, v) for x, v in zip(xs, vs)])
    np.testing.assert_allclose(batched, expected, rtol=1e-15)


def test_writes_through_transposes_and_squeezes_reach_the_base(backend):
    def f(x):
        y = x * 1
        t = y.T
        t[0] = -1.0
        s = np.swapaxes(y[None], 0, 2)
        s[1] += 10
        e = np.expand_dims(y, 0)
        e *= 2
        q = np.squeeze(e[:, :1])
        q -= 100
        m = np.moveaxis(y, 0, 1)
        return y, t, s, e, q, m
    same_as_numpy(f, np.arange(6.0).reshape(2, 3))


def test_writes_through_a_reshape_of_a_computed_array_reach_it(backend):
    def f(x):
        y = x + 1
        r = y.reshape(3, 2)
        r[0] = 0.0
        flat = r.ravel()
        flat[-1] = 9.0
        copied = y.flatten()
        copied[:] = 5.0
        return y, r, flat, copied
    same_as_numpy(f, np.arange(6.0))


# each step gives a 2-d array whose memory order, in NumPy, follows its operand's
# (ufuncs, casts, reductions, concatenate, *_like), reverses it (.T), or is C (matmul)
_LAYOUT_STEPS = {
    "transpose": lambda y: y.T,
    "exp": np.exp,
    "scale": lambda y: y * 2.0,
    "cast": lambda y: y.astype(np.float32),
    "zeros_like": np.zeros_like,
    "sum_keepdims": lambda y: y.sum(axis=0, keepdims=True) + y,
    "concatenate": lambda y: np.concatenate([y, y]),
    "matmul": lambda y: y @ y.T,
    "constant": lambda y: np.arange(float(y.size)).reshape(y.shape) + y,
}


@given_per_backend(steps=st.lists(st.sampled_from(sorted(_LAYOUT_STEPS)), max_size=4),
                   fortran=st.booleans())
def test_writes_through_a_reshape_follow_numpy_memory_order_or_raise(backend, steps,
                                                                       fortran):
    # NumPy's reshape writes through only when the array is C-ordered; a trace cannot
    # know the order of the arrays it is called with, so it either agrees or refuses
    def f(x):
        y = x
        for step in steps:
            y = _LAYOUT_STEPS[step](y)
        y = y * 1  # the argument itself is never written
        flat = y.reshape(-1)
        flat[0] = 100.0
        return y
    x = np.arange(6.0).reshape(2, 3)
    x = np.asfortranarray(x) if fortran else x
    with np.errstate(all="ignore"):  # exp of exp... may overflow, in both alike
        expected = f(x.copy(order="K"))
    try:
        actual = jitflow.function(f)(x)
    except ValueError as error:
        assert "reshape" in str(error)
        return
    assert_same(actual, expected, what="result", **native_tolerance({}, True))


@pytest.mark.parametrize("make", [
    lambda x: x @ x.T,
    lambda x: np.exp(x @ x.T) * 2,
    lambda x: np.arange(6.0).reshape(2, 3) * x[0],
    lambda x: np.ones((2, 3)) + 1,
], ids=["matmul", "ufunc-of-matmul", "constant-times-row", "constant"])
def test_writes_through_a_reshape_of_a_c_ordered_result_reach_it(backend, make):
    def f(x):
        y = make(x)
        flat = y.reshape(-1)
        flat[0] = 100.0
        return y
    same_as_numpy(f, np.arange(6.0).reshape(2, 3), transcendental=True)


def test_writing_a_reshape_of_an_argument_raises(backend):
    @jitflow.function
    def f(x):
        r = x.reshape(2, 3)
        r[0] = 0.0
        return r
    with pytest.raises(ValueError, match="reshape"):
        f(np.arange(6.0))
    np.testing.assert_array_equal(f.__wrapped__(np.arange(6.0).copy()), [[0, 0, 0],
                                                                         [3, 4, 5]])


def test_broadcast_to_is_read_only_as_in_numpy(backend):
    def f(x):
        b = np.broadcast_to(x, (2, 3))
        b[0] = 1.0
        return b
    same_as_numpy(f, np.arange(3.0))


def test_copies_are_not_views(backend):
    def f(x):
        y = x * 1
        for copied in (+y, jnp.array(y), y.copy(), y.flatten(), y[[0, 1, 2]]):
            copied[0] = -5.0
        return y
    same_as_numpy(f, np.arange(3.0))


def test_zero_dimensional_arrays_made_by_creation_functions_take_writes(backend):
    def f(x):
        z = jnp.zeros(())  # an array, not a NumPy scalar
        alias = z
        z[...] = x
        z += 1
        return alias, jnp.asarray(x.sum())
    same_as_numpy(f, np.float64(2.5))


def test_empty_index_of_a_zero_dimensional_array_gives_a_scalar(backend):
    def f(x, y):
        z = jnp.zeros(())
        s = z[()]
        s += y  # a scalar: a new value, of y's shape; z keeps its value
        return z, s
    same_as_numpy(f, np.zeros(()), np.zeros(0))


@pytest.mark.parametrize("transform", [jitflow.grad, jitflow.vmap])
def test_writing_an_argument_of_a_transformed_function_raises(transform):
    def f(x):
        x[0] = 1.0  # NumPy would write the caller's array; grad and vmap cannot
        return x.sum()
    with pytest.raises(ValueError, match="copy"):
        transform(f)(np.ones((2, 3)))
    with pytest.raises(ValueError, match="copy"):
        jitflow.function(transform(f))(np.ones((2, 3)))
    copied = transform(lambda x: f(x.copy()))(np.ones((2, 3)))
    assert np.shape(copied) in ((2, 3), (2,))


def test_assignment_at_a_traced_mask(backend):
    def f(x):
        x[x > 1] = 0.0
        y = x * 1
        y[y[:, 0] < 0] = np.array([7.5])
        return y
    same_as_numpy(f, np.array([[0.5, 2.0, -1.0], [-3.0, 1.5, 1.0]]))
    same_as_numpy(f, np.arange(6).reshape(2, 3))  # 7.5 into ints: 7


def test_assignment_at_a_traced_mask_of_many_values_raises():
    def f(x):
        x[x > 1] = np.array([1.0, 2.0])
        return x
    with pytest.raises(ValueError, match="known only at run time"):
        jitflow.function(f)(np.arange(3.0))


def test_fill(backend):
    def f(x):
        y = x[1:]
        y.fill(-2.5)
        return x
    same_as_numpy(f, np.arange(4))


def test_variable_values_are_read_only_under_a_gradient_tape():
    v = jitflow.Variable(np.ones(3))
    with jitflow.GradientTape() as tape:
        value = v.value
        with pytest.raises(ValueError, match="assign"):
            value[0] = 2.0
        loss = (value * 2).sum()
    np.testing.assert_array_equal(tape.gradient(loss, [v])[0], [2.0] * 3)


def test_writes_under_a_gradient_tape():
    v = jitflow.Variable(np.array([1.0, 2.0, 3.0]))
    with jitflow.GradientTape() as tape:
        y = v * 1
        y[...] = 2.0  # a constant for the whole array
        y[0] = v[1] * 5
        y[1:] += v[:2]
        loss = (y * y).sum()
    np.testing.assert_allclose(loss, 100 + 9 + 16)
    # d/dv: y0 = 5 v1, y1 = 2 + v0, y2 = 2 + v1
    np.testing.assert_allclose(tape.gradient(loss, [v])[0], [6.0, 100.0 + 8.0, 0.0])


def test_a_list_of_traced_values_is_assigned_as_an_array(backend):
    def f(x):
        y = x * 1
        y[:2] = [x[1], x[0] * 2]
        return y
    same_as_numpy(f, np.arange(3.0))


def test_other_arguments_after_the_fast_path_take_the_checked_path(backend):
    @jitflow.function
    def f(x):
        x += 1
        return x * 2
    x = np.zeros(2)
    f(x), f(x)  # the second call takes the direct entry, natively
    assert f(1.5) == 5.0  # a Python number: another signature, and nothing written
    np.testing.assert_array_equal(f(x), [6.0, 6.0])
    np.testing.assert_array_equal(x, [3.0, 3.0])
    y = np.zeros(2, np.float32)  # another dtype: the checked path, another signature
    np.testing.assert_array_equal(f(y), np.array([2.0, 2.0], np.float32))
    np.testing.assert_array_equal(y, [1.0, 1.0])


# --- ufunc.at: unbuffered accumulation ----------------------------------------------------

@st.composite
def accumulations(draw):
    """(x, index, values) for np.add.at: integer-array indices on the first axis, with
    repeats and negatives, and values that broadcast to what they name."""
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int64, np.int32]))
    x = draw(arrays(dtype, shapes(min_dims=1, max_dims=2, min_side=1)))
    rows = x.shape[0]
    index = draw(hnp.arrays(np.int64, st.integers(0, 6),
                            elements=st.integers(-rows, rows - 1)))
    named = (len(index),) + x.shape[1:]
    values = draw(arrays(dtype, st.sampled_from([named, named[1:], ()])))
    return x, index, values


@given_per_backend(accumulations(), st.sampled_from([np.add, np.subtract]))
def test_ufunc_at_accumulates_every_value_as_numpy_does(backend, case, ufunc):
    x, index, values = case

    def accumulate(x, index, values):
        y = x * 1
        ufunc.at(y, index, values)
        return y
    with np.errstate(all="ignore"):
        expected = accumulate(x, index, values)
        actual = jitflow.function(accumulate)(x, index, values)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if x.dtype.kind != "f":
        np.testing.assert_array_equal(actual, expected)  # wrapping sums agree exactly
        return
    # NumPy adds the values into x one by one, jitflow sums them first: each order
    # rounds up to once per value
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(actual[~finite], expected[~finite])
    def largest(a):
        return np.abs(a[np.isfinite(a)]).astype(np.float64).max(initial=0)
    magnitude = largest(x) + largest(values) * len(index)
    bound = (len(index) + 1) * np.finfo(x.dtype).eps * magnitude
    np.testing.assert_allclose(actual[finite], expected[finite], rtol=0, atol=bound)


def test_ufunc_at_takes_any_index_and_differentiates(backend):
    def f(x, v):
        y = x * 2
        np.add.at(y, (np.array([0, 0, -1]), slice(1, None)), v)
        np.subtract.at(y, 1, 1.0)
        return y
    x, v = np.arange(12.0).reshape(4, 3), np.array([[1.0, 2.0]] * 3)
    same_as_numpy(f, x, v)
    check_grads(lambda x, v: f(x, v).sum(), (x, v), order=1)


@pytest.mark.parametrize("fn, match", [
    (lambda x: np.multiply.at(x * 1, [0], 2.0), "multiply.at is not supported"),
    (lambda x: np.add.at((x * 1).astype(np.int32), [0, 0], x[:2]), "truncates"),
    (lambda x: np.add.at(np.zeros(3), [0], x[0]), "NumPy array with traced values")])
def test_ufunc_at_that_cannot_follow_numpy_raises(backend, fn, match):
    with pytest.raises(TypeError, match=match):
        jitflow.function(fn)(np.ones(3))
