"""Fusion: golden IR, convex groups, and fused graphs computing exactly the same values."""
import numpy as np
from hypothesis import given

import jitflow
import jitflow.numpy as jnp
from jitflow.ir.graph import verify
from jitflow.ir.interpret import eval_graph
from jitflow.ir.passes.fuse import fuse
from test_compositions import programs, run
from tests_support import golden

F32 = np.ones(8, np.float32)


def optimized(fn, *args):
    return jitflow.optimize(jitflow.function(fn).trace(*args))


def test_an_elementwise_chain_becomes_one_fused_node():
    def chain(x, y):
        return np.exp(-x * x) * np.sin(y) + 0.5 * np.tanh(x * y)
    assert str(fuse(optimized(chain, F32, F32))) == golden("""
        graph(%0: f32[8], %1: f32[8]) {
          %2: f32[8] = fused %0, %1
            subgraph0(%3: f32[8], %4: f32[8]) {
              %5: f32[8] = neg %3
              %6: f32[8] = mul %5, %3
              %7: f32[8] = exp %6
              %8: f32[8] = sin %4
              %9: f32[8] = mul %7, %8
              %10: f32[8] = mul %3, %4
              %11: f32[8] = tanh %10
              %12: f32[8] = mul 0.5:~f64[], %11
              %13: f32[8] = add %9, %12
              return %13
            }
          return %2
        }""")


def test_groups_stay_convex_around_reductions():
    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    # div needs the sum of exp: fusing it with exp would put the sum inside a loop.
    assert str(fuse(optimized(softmax, np.ones((4, 3))))) == golden("""
        graph(%0: f64[4,3]) {
          %1: f64[4,1] = reduce_max %0, axes=(1,), keepdims=True
          %2: f64[4,3] = fused %0, %1
            subgraph0(%3: f64[4,3], %4: f64[4,1]) {
              %5: f64[4,3] = sub %3, %4
              %6: f64[4,3] = exp %5
              return %6
            }
          %7: f64[4,1] = reduce_sum %2, axes=(1,), keepdims=True
          %8: f64[4,3] = div %2, %7
          return %8
        }""")


def test_values_used_outside_the_group_become_outputs():
    def f(x):
        t = jnp.tanh(x) * 2
        return t + 1, t.sum()
    fused = fuse(optimized(f, F32))
    (node,) = [n for n in fused.nodes if n.op == "fused"]
    assert len(node.outputs) == 2  # t for the sum, t + 1 for the result


def test_a_graph_with_nothing_to_fuse_is_returned_as_it_is():
    graph = optimized(lambda x: jnp.exp(x).sum(), F32)
    assert fuse(graph) is graph


@given(programs())
def test_fused_graphs_verify_and_compute_the_same_values(program):
    graph = jitflow.optimize(jitflow.function(
        lambda *xs: run(program, jnp, xs)).trace(*program.inputs))
    fused = verify(fuse(graph))
    with np.errstate(all="ignore"):
        expected = eval_graph(graph, list(program.inputs))
        got = eval_graph(fused, list(program.inputs))
    for a, b in zip(got, expected):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()
