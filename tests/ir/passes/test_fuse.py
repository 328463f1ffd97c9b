"""Fusion: golden IR, convex groups (with reductions too), and fused graphs computing
exactly the same values."""
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


def test_softmax_becomes_one_rowwise_region():
    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    # The innermost axis is reduced: each row is finished before the next, so the
    # elementwise work after each reduction joins the same region.
    assert str(fuse(optimized(softmax, np.ones((4, 3))))) == golden("""
        graph(%0: f64[4,3]) {
          %1: f64[4,3] = fused %0
            subgraph0(%2: f64[4,3]) {
              %3: f64[4,1] = reduce_max %2, axes=(1,), keepdims=True
              %4: f64[4,3] = sub %2, %3
              %5: f64[4,3] = exp %4
              %6: f64[4,1] = reduce_sum %5, axes=(1,), keepdims=True
              %7: f64[4,3] = div %5, %6
              return %7
            }
          return %1
        }""")


def test_row_scalars_join_a_rowwise_region():
    def logsumexp(x):
        peak = x.max(axis=1, keepdims=True)
        return np.log(np.exp(x - peak).sum(axis=1, keepdims=True)) + peak
    assert str(fuse(optimized(logsumexp, np.ones((4, 3))))) == golden("""
        graph(%0: f64[4,3]) {
          %1: f64[4,1] = fused %0
            subgraph0(%2: f64[4,3]) {
              %3: f64[4,1] = reduce_max %2, axes=(1,), keepdims=True
              %4: f64[4,3] = sub %2, %3
              %5: f64[4,3] = exp %4
              %6: f64[4,1] = reduce_sum %5, axes=(1,), keepdims=True
              %7: f64[4,1] = log %6
              %8: f64[4,1] = add %7, %3
              return %8
            }
          return %1
        }""")


def test_elementwise_producers_of_a_full_reduction_with_broadcast_operands():
    def f(x, b):
        return (np.exp(x) * b).sum()
    assert str(fuse(optimized(f, np.ones((4, 3), np.float32), F32[:3]))) == golden("""
        graph(%0: f32[4,3], %1: f32[3]) {
          %2: f32[] = fused %0, %1
            subgraph0(%3: f32[4,3], %4: f32[3]) {
              %5: f32[4,3] = exp %3
              %6: f32[4,3] = mul %5, %4
              %7: f32[] = reduce_sum %6, axes=(0, 1), keepdims=False
              return %7
            }
          return %2
        }""")


def test_a_column_reduction_takes_producers_but_not_consumers():
    def centered(x, y):
        s = (x * y).sum(axis=0)
        return x - s
    # Reducing an outer axis folds the whole domain into the outputs: the sums are
    # final only at the end, so nothing in the region can read them.
    assert str(fuse(optimized(centered, np.ones((4, 3)), np.ones((4, 3))))) == golden("""
        graph(%0: f64[4,3], %1: f64[4,3]) {
          %2: f64[3] = fused %0, %1
            subgraph0(%3: f64[4,3], %4: f64[4,3]) {
              %5: f64[4,3] = mul %3, %4
              %6: f64[3] = reduce_sum %5, axes=(0,), keepdims=False
              return %6
            }
          %7: f64[4,3] = sub %0, %2
          return %7
        }""")


def test_a_row_value_needed_outside_keeps_the_region_convex():
    def f(x):
        m = x.max(axis=1, keepdims=True)
        return x - m + jnp.cumsum(m, axis=0)
    # add reads the region through cumsum: in the region, it would wait for itself. It
    # computes x - m again from x and m (rematerialize.py): the region writes m alone.
    assert str(fuse(optimized(f, np.ones((4, 3))))) == golden("""
        graph(%0: f64[4,3]) {
          %1: f64[4,1] = fused %0
            subgraph0(%2: f64[4,3]) {
              %3: f64[4,1] = reduce_max %2, axes=(1,), keepdims=True
              return %3
            }
          %4: f64[4,1] = cumsum %1, axis=0
          %5: f64[4,3] = fused %0, %1, %4
            subgraph0(%6: f64[4,3], %7: f64[4,1], %8: f64[4,1]) {
              %9: f64[4,3] = sub %6, %7
              %10: f64[4,3] = add %9, %8
              return %10
            }
          return %5
        }""")


def test_a_node_joins_a_later_producer_when_the_earliest_is_upstream_of_it():
    def f(x, w):
        h = np.exp(x)
        mask = h > 1
        g = h @ w  # depends on the first region
        return np.where(mask, g * 0.5, g).sum(axis=0)
    # where reads the first region (mask) and g's group, which depends on it: it cannot
    # join the first region, but joins g's, and the column sum with it.
    x = np.ones((4, 4))
    assert str(fuse(optimized(f, x, x))) == golden("""
        graph(%0: f64[4,4], %1: f64[4,4]) {
          %2: f64[4,4], %3: bool[4,4] = fused %0
            subgraph0(%4: f64[4,4]) {
              %5: f64[4,4] = exp %4
              %6: bool[4,4] = gt %5, 1:~i64[]
              return %5, %6
            }
          %7: f64[4,4] = matmul %2, %1
          %8: f64[4] = fused %7, %3
            subgraph0(%9: f64[4,4], %10: bool[4,4]) {
              %11: f64[4,4] = mul %9, 0.5:~f64[]
              %12: f64[4,4] = where %10, %11, %9
              %13: f64[4] = reduce_sum %12, axes=(0,), keepdims=False
              return %13
            }
          return %8
        }""")


def test_reductions_over_other_axes_stay_apart():
    def f(x):
        return x.sum(axis=1, keepdims=True) + x.sum(axis=0, keepdims=True)
    # The column sums are an operand from outside for the row region.
    assert str(fuse(optimized(f, np.ones((4, 3))))) == golden("""
        graph(%0: f64[4,3]) {
          %1: f64[1,3] = reduce_sum %0, axes=(0,), keepdims=True
          %2: f64[4,3] = fused %0, %1
            subgraph0(%3: f64[4,3], %4: f64[1,3]) {
              %5: f64[4,1] = reduce_sum %3, axes=(1,), keepdims=True
              %6: f64[4,3] = add %5, %4
              return %6
            }
          return %2
        }""")


def test_a_float_product_takes_producers_but_no_other_reduction_or_reader():
    def f(x):
        return x / (x * x).prod(axis=1, keepdims=True) + x.sum(axis=1, keepdims=True)
    # A float product multiplies in memory order, one element after another (NumPy's
    # order, which decides where it overflows): its region is walked that way, so a
    # sum, which must stay pairwise, and the readers of the product stay out.
    assert str(fuse(optimized(f, np.ones((4, 3), np.float32)))) == golden("""
        graph(%0: f32[4,3]) {
          %1: f32[4,1] = fused %0
            subgraph0(%2: f32[4,3]) {
              %3: f32[4,3] = mul %2, %2
              %4: f32[4,1] = reduce_prod %3, axes=(1,), keepdims=True
              return %4
            }
          %5: f32[4,3] = fused %0, %1
            subgraph0(%6: f32[4,3], %7: f32[4,1]) {
              %8: f32[4,3] = div %6, %7
              %9: f32[4,1] = reduce_sum %6, axes=(1,), keepdims=True
              %10: f32[4,3] = add %8, %9
              return %10
            }
          return %5
        }""")


def test_an_expensive_value_shared_with_a_reduction_is_computed_once():
    def f(x):
        t = jnp.tanh(x) * 2
        return t + 1, t.sum()
    assert str(fuse(optimized(f, F32))) == golden("""
        graph(%0: f32[8]) {
          %1: f32[8], %2: f32[] = fused %0
            subgraph0(%3: f32[8]) {
              %4: f32[8] = tanh %3
              %5: f32[8] = mul %4, 2:~i64[]
              %6: f32[8] = add %5, 1:~i64[]
              %7: f32[] = reduce_sum %5, axes=(0,), keepdims=False
              return %6, %7
            }
          return %1, %2
        }""")


def test_values_used_outside_the_group_become_outputs():
    def f(x):
        t = jnp.tanh(x) * 2
        return t + 1, jnp.cumsum(t)
    fused = fuse(optimized(f, F32))
    (node,) = [n for n in fused.nodes if n.op == "fused"]
    assert len(node.outputs) == 2  # t for the cumsum, t + 1 for the result


def test_a_graph_with_nothing_to_fuse_is_returned_as_it_is():
    graph = optimized(lambda x: jnp.cumsum(jnp.exp(x)).sum(), F32)
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
