"""Golden IR for the algebraic simplifier, and its IEEE exactness on special values."""
import numpy as np
import pytest

import jitflow
import jitflow.numpy as jnp
from jitflow.ir.interpret import eval_graph
from jitflow.ir.passes import simplify
from tests_support import golden, trace

X = np.ones((2, 3), np.float32)
I = np.ones((2, 3), np.int32)


def test_float_identities_keep_only_exact_rewrites():
    graph = trace(lambda x: (x + (-0.0), x + 0.0, x * 1, x / 1, -(-x), x ** 2, x * -1,
                             x - 0.0), X)
    # x + 0.0 stays: it turns -0.0 into +0.0.
    assert str(simplify(graph)) == golden("""
        graph(%0: f32[2,3]) {
          %1: f32[2,3] = add %0, 0.0:~f64[]
          %2: f32[2,3] = neg %0
          %3: f32[2,3] = mul %0, %0
          %4: f32[2,3] = neg %0
          return %0, %1, %0, %0, %0, %3, %4, %0
        }""")


def test_integer_zero_is_an_identity_but_promotion_is_kept():
    graph = trace(lambda i: (i + 0, 0 + i, i - 0, i * 1.0), I)
    assert str(simplify(graph)) == golden("""
        graph(%0: i32[2,3]) {
          %1: f64[2,3] = mul %0, 1.0:~f64[]
          return %0, %0, %0, %1
        }""")


def test_shape_identities_compose():
    graph = trace(lambda x: (x.T.T, x.reshape(3, 2).reshape(6), jnp.broadcast_to(x, (2, 3)),
                             x.astype(np.float32)), X)
    assert str(simplify(graph)) == golden("""
        graph(%0: f32[2,3]) {
          %1: f32[3,2] = transpose %0, perm=(1, 0)
          %2: f32[3,2] = reshape %0, shape=(3, 2)
          %3: f32[6] = reshape %0, shape=(6,)
          return %0, %3, %0, %0
        }""")


def test_never_rewrites_multiplication_by_zero():
    graph = trace(lambda x: (x * 0, x - x, 0 * x), X)
    assert simplify(graph) is graph


def test_subtracting_a_negation_and_negative_zero_minus():
    graph = trace(lambda x, y: (x - (-y), x + (-y), -0.0 - x), X, X)
    assert str(simplify(graph)) == golden("""
        graph(%0: f32[2,3], %1: f32[2,3]) {
          %2: f32[2,3] = neg %1
          %3: f32[2,3] = add %0, %1
          %4: f32[2,3] = neg %1
          %5: f32[2,3] = sub %0, %1
          %6: f32[2,3] = neg %0
          return %3, %5, %6
        }""")


SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0, 1e-45, 3e38],
                    np.float32)


@pytest.mark.parametrize("fn", [
    lambda x: x + (-0.0), lambda x: x * 1, lambda x: x / 1, lambda x: -(-x),
    lambda x: x ** 2, lambda x: x * -1, lambda x: x / -1, lambda x: x - 0.0,
    lambda x: -0.0 - x, lambda x: jnp.maximum(x, x), lambda x: jnp.where(x > 0, x, x),
    lambda x: x ** 1, lambda x: jnp.abs(jnp.abs(x)),
])
def test_rewrites_give_identical_bits_on_special_values(fn):
    # Identical bits for every number, -0.0 included; NaN stays NaN (IEEE 754 leaves
    # the sign of a NaN produced by arithmetic unspecified, so only NaN-ness is compared).
    graph = trace(fn, SPECIALS)
    simplified = simplify(graph)
    assert simplified is not graph, "the rule under test did not fire"
    expected = np.asarray(eval_graph(graph, [SPECIALS])[0])
    actual = np.asarray(eval_graph(simplified, [SPECIALS])[0])
    assert expected.dtype == actual.dtype
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(actual), nan)
    assert expected[~nan].tobytes() == actual[~nan].tobytes()
