"""einsum, matmul, dot, tensordot, inner and outer against NumPy, eagerly and traced.

Sizes come from hypothesis (size 0 and size 1 included); results must have NumPy's
dtype, shape and values.
"""
import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from fidelity import given_per_backend
from strategies import arrays

# Traced functions run on the interpreter and on native code (conftest.py).
pytestmark = pytest.mark.usefixtures("backend")

DTYPES = [np.dtype("float32"), np.dtype("float64"), np.dtype("int32")]


def operands_for(draw, dtype, shapes):
    """Small integer values, in any dtype: every product and sum is exact even in float32,
    so results must equal NumPy's whatever order the terms are added in."""
    return [draw(arrays(np.int64, shape, min_value=-8, max_value=8)).astype(dtype)
            for shape in shapes]


def assert_same_as_numpy(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_array_equal(got, expected)


def check_both_ways(fn, reference, operands):
    """fn eagerly on arrays and traced through jitflow.function, against `reference`."""
    expected = reference(*operands)
    assert_same_as_numpy(fn(*operands), expected)
    assert_same_as_numpy(jitflow.function(fn)(*operands), expected)


# --- einsum ---------------------------------------------------------------------------

EINSUM_CASES = [
    "ij,jk->ik",            # matmul
    "bij,bjk->bik",         # batched matmul
    "ij->ji",               # transpose
    "ii->",                 # trace
    "ii->i",                # diagonal
    "ij->",                 # sum of everything
    "ij->j",                # sum over one axis
    "i,j->ij",              # outer
    "i,i->",                # dot
    "i,i->i",               # elementwise product
    "i,ij,j->",             # bilinear form
    "ij,jk,kl->il",         # three operands
    "ij,jk",                # implicit output: letters used once, in order
    "ji,jk",
    "ijk,jil->kl",          # contraction over two letters, out of order
    "iij->ji",              # diagonal inside a larger operand
    "ij,kl->ijkl",
    "ij,ij->",
    "i,j->",                # nothing shared, everything summed
    "Ab,bc->cA",            # upper-case letters are letters too
    "Ab,bc",                # ... also in implicit output (upper case sorts first)
    "ii",                   # implicit trace
    "iij",
]


@st.composite
def einsum_problem(draw, subscripts):
    """Operands for `subscripts`, each letter of a random size (0 and 1 included)."""
    inputs = subscripts.split("->")[0].split(",")
    sizes = {c: draw(st.integers(0, 4)) for c in sorted(set("".join(inputs)))}
    dtype = draw(st.sampled_from(DTYPES))
    return operands_for(draw, dtype, [tuple(sizes[c] for c in s) for s in inputs])


@pytest.mark.parametrize("subscripts", EINSUM_CASES)
@given_per_backend(data=st.data())
def test_einsum_matches_numpy(subscripts, data):
    operands = data.draw(einsum_problem(subscripts))
    check_both_ways(lambda *xs: jnp.einsum(subscripts, *xs),
                    lambda *xs: np.einsum(subscripts, *xs), operands)


ELLIPSIS_CASES = ["...ij,...jk->...ik", "...ij,...jk", "...ij->...ji", "...i,...i->...",
                  "i...,i...->...", "...ij,jk->...ik", "a...b,b...->...a",
                  "...ij,...jk,...kl->...il", "...ii->...i"]


@pytest.mark.parametrize("subscripts", ELLIPSIS_CASES)
@given_per_backend(data=st.data())
def test_einsum_ellipsis_broadcasts_like_numpy(subscripts, data):
    # Batch shapes that broadcast together, size-1 dims included.
    specs = subscripts.split("->")[0].split(",")
    batches = iter(data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=sum("..." in s for s in specs), max_dims=3, max_side=3)).input_shapes)
    sizes = {c: data.draw(st.integers(1, 3)) for c in sorted(set("".join(specs)) - {"."})}
    shapes = []
    for spec in specs:
        before, dots, after = spec.partition("...")
        batch = next(batches) if dots else ()
        shapes.append(tuple(sizes[c] for c in before) + batch
                      + tuple(sizes[c] for c in after))
    dtype = data.draw(st.sampled_from(DTYPES))
    operands = operands_for(data.draw, dtype, shapes)
    check_both_ways(lambda *xs: jnp.einsum(subscripts, *xs),
                    lambda *xs: np.einsum(subscripts, *xs), operands)


@pytest.mark.parametrize("subscripts, shapes", [
    ("ij,jk->ik", [(2, 1), (3, 4)]),         # a letter of size 1 broadcasts
    ("i,i->i", [(1,), (3,)]),
    ("ij,jk->ik", [(2, 0), (0, 4)]),         # an empty contraction gives zeros
    ("...ij,Aj->...iA", [(5, 2, 3), (4, 3)]),  # an upper-case letter next to an ellipsis
    ("...j,Aj->A...", [(5, 3), (4, 3)]),
    ("...,...->...", [(2, 3), (3,)]),
    (",->", [(), ()]),                        # 0-d operands
    ("i,->i", [(3,), ()]),
    ("", [()]),
    ("ij->...ij", [(2, 3)]),
])
def test_einsum_edge_cases(subscripts, shapes):
    operands = [np.arange(np.prod(s), dtype=np.float64).reshape(s) - 1.5 for s in shapes]
    check_both_ways(lambda *xs: jnp.einsum(subscripts, *xs),
                    lambda *xs: np.einsum(subscripts, *xs), operands)


@pytest.mark.parametrize("subscripts, shapes", [
    ("ii->i", [(1, 3)]),        # a repeated letter needs equal sizes, even 1 and n
    ("ii->i", [(2, 3)]),
    ("ij,jk->ik", [(2, 3), (2, 4)]),
    ("ij,j->ik", [(2, 3), (3,)]),
    ("ij->ii", [(2, 2)]),
    ("ij,jk->ik", [(2, 3)]),
])
def test_einsum_errors_like_numpy(subscripts, shapes):
    operands = [np.ones(s) for s in shapes]
    with pytest.raises(ValueError):
        np.einsum(subscripts, *operands)
    with pytest.raises(ValueError):
        jnp.einsum(subscripts, *operands)
    with pytest.raises(ValueError):
        jitflow.function(lambda *xs: jnp.einsum(subscripts, *xs))(*operands)


def test_einsum_through_numpy_with_optimize():
    # np.einsum on a traced value lands in jitflow.numpy.einsum, optimize= and all.
    x, y = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    fn = jitflow.function(lambda x, y: np.einsum("ij,jk->ki", x, y, optimize=True))
    assert_same_as_numpy(fn(x, y), np.einsum("ij,jk->ki", x, y))


def test_einsum_of_python_scalars_is_strongly_typed():
    x = np.arange(3, dtype=np.float32)
    check_both_ways(lambda x: jnp.einsum("i,->i", x, 2.0),
                    lambda x: np.einsum("i,->i", x, 2.0), [x])


# --- matmul, dot, tensordot, inner, outer ---------------------------------------------

dtypes = st.sampled_from(DTYPES)


@given_per_backend(st.data())
def test_matmul_matches_numpy(data):
    # The gufunc signature covers 1-D operands and broadcasting of the batch dims.
    shapes = data.draw(hnp.mutually_broadcastable_shapes(
        signature=np.matmul.signature, max_dims=4, max_side=3)).input_shapes
    operands = operands_for(data.draw, data.draw(dtypes), shapes)
    check_both_ways(jnp.matmul, np.matmul, operands)
    check_both_ways(lambda a, b: a @ b, np.matmul, operands)


@pytest.mark.parametrize("shapes", [[(3,), (3,)], [(2, 3), (3,)], [(3,), (3, 2)]])
def test_matmul_operator_on_vectors(shapes):
    operands = [np.arange(np.prod(s), dtype=np.float64).reshape(s) for s in shapes]
    check_both_ways(lambda a, b: a @ b, np.matmul, operands)


@st.composite
def dot_shapes(draw):
    """Shapes np.dot accepts: scalars, or a's last axis against b's second-to-last (the
    only axis of a 1-D b)."""
    a = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    if not a:
        return a, draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=3))
    b = list(draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3)))
    b[-2 if len(b) > 1 else 0] = a[-1]
    return a, tuple(b)


@given_per_backend(st.data())
def test_dot_matches_numpy(data):
    shapes = data.draw(dot_shapes())
    check_both_ways(jnp.dot, np.dot, operands_for(data.draw, data.draw(dtypes), shapes))


@given_per_backend(st.data())
def test_inner_matches_numpy(data):
    a = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    b = list(data.draw(hnp.array_shapes(min_dims=1 if a else 0, max_dims=3, max_side=3)))
    if a and b:
        b[-1] = a[-1]
    operands = operands_for(data.draw, data.draw(dtypes), [a, tuple(b)])
    check_both_ways(jnp.inner, np.inner, operands)


@given_per_backend(st.data())
def test_outer_matches_numpy(data):
    shapes = [data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
              for _ in range(2)]
    check_both_ways(jnp.outer, np.outer, operands_for(data.draw, data.draw(dtypes), shapes))


@st.composite
def tensordot_problem(draw):
    """Shapes and an `axes` argument: an int, or two lists in any order, negative too."""
    contracted = draw(st.lists(st.integers(0, 3), max_size=3))
    free_a = draw(st.lists(st.integers(0, 3), max_size=2))
    free_b = draw(st.lists(st.integers(0, 3), max_size=2))
    if draw(st.booleans()):
        return tuple(free_a + contracted), tuple(contracted + free_b), len(contracted)
    # Place the contracted axes anywhere in each operand.
    k = len(contracted)
    a_pos = draw(st.permutations(range(len(free_a) + k)))[:k]
    b_pos = draw(st.permutations(range(len(free_b) + k)))[:k]
    a, b = _insert(free_a, a_pos, contracted), _insert(free_b, b_pos, contracted)
    a_axes = [p - len(a) if draw(st.booleans()) else p for p in a_pos]
    b_axes = [p - len(b) if draw(st.booleans()) else p for p in b_pos]
    return a, b, (a_axes, b_axes)


def _insert(free, positions, sizes):
    shape = [None] * (len(free) + len(sizes))
    for p, s in zip(positions, sizes):
        shape[p] = s
    rest = iter(free)
    return tuple(next(rest) if s is None else s for s in shape)


@given_per_backend(st.data())
def test_tensordot_matches_numpy(data):
    a, b, axes = data.draw(tensordot_problem())
    operands = operands_for(data.draw, data.draw(dtypes), [a, b])
    check_both_ways(lambda x, y: jnp.tensordot(x, y, axes=axes),
                    lambda x, y: np.tensordot(x, y, axes=axes), operands)


def test_contractions_of_python_scalars_are_strongly_typed():
    # np.dot and np.inner turn Python numbers into arrays (int64, float64) first.
    x, y = np.array([1, 2], np.int32), np.array([1.5], np.float32)
    check_both_ways(lambda x: jnp.dot(2, x), lambda x: np.dot(2, x), [x])
    check_both_ways(lambda y: jnp.inner(y, 2.0), lambda y: np.inner(y, 2.0), [y])
    check_both_ways(lambda x: jnp.outer(3, x), lambda x: np.outer(3, x), [x])
    check_both_ways(lambda x: jnp.tensordot(x, 2, axes=0),
                    lambda x: np.tensordot(x, 2, axes=0), [x])
    # ... also when the Python number is an argument of the jitflow.function.
    check_both_ways(jnp.dot, np.dot, [x, 2])
    check_both_ways(lambda y, s: jnp.einsum("i,->i", y, s),
                    lambda y, s: np.einsum("i,->i", y, s), [y, 2.0])


@pytest.mark.parametrize("fn, shapes", [
    (lambda a, b: jnp.matmul(a, b), [(), (3,)]),
    (lambda a, b: jnp.matmul(a, b), [(2, 3), (4,)]),
    (lambda a, b: jnp.matmul(a, b), [(2, 2, 3), (3, 3, 2)]),
    (lambda a, b: jnp.dot(a, b), [(3,), (4,)]),
    (lambda a, b: jnp.inner(a, b), [(2,), (3,)]),
    (lambda a, b: jnp.tensordot(a, b, axes=([0], [1])), [(2, 3), (2, 3)]),
    (lambda a, b: jnp.tensordot(a, b, axes=([0, 0], [1, 1])), [(2, 3), (3, 2)]),
])
def test_contraction_shape_errors(fn, shapes):
    operands = [np.ones(s) for s in shapes]
    with pytest.raises(ValueError):
        fn(*operands)
    with pytest.raises(ValueError):
        jitflow.function(fn)(*operands)
