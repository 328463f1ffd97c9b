"""Golden IR for constant folding, common-subexpression elimination and dead-code
elimination, one pass at a time."""
import numpy as np

import jitflow
import jitflow.numpy as jnp
from jitflow.ir.graph import Lit
from jitflow.ir.passes import constant_fold, cse, dce
from jitflow.ir.passes.fold import FOLD_LIMIT
from tests_support import golden, trace

X = np.ones((2, 3), np.float32)


def test_constant_folding_evaluates_small_constant_nodes():
    graph = trace(lambda x: x * 2.0 + jnp.arange(3), X)
    assert str(constant_fold(graph)) == golden("""
        graph(%0: f32[2,3]) {
          %1: f32[2,3] = mul %0, 2.0:~f64[]
          %2: f64[2,3] = add %1, [0, 1, 2]:i64[3]
          return %2
        }""")


def test_constant_folding_leaves_large_constants_as_nodes():
    n = FOLD_LIMIT + 1
    graph = trace(lambda x: x + jnp.arange(n, dtype=np.float32) * 2,
                  np.ones(n, np.float32))
    folded = constant_fold(graph)
    assert folded.nodes[-1].op == "add" and len(folded.nodes) > 1
    assert not any(isinstance(v, Lit) and v.type.size == n
                   for node in folded.nodes for v in node.inputs)


def test_uniform_constants_fold_at_any_size_into_one_element_broadcast():
    n = 4 * FOLD_LIMIT
    graph = trace(lambda x: x + (jnp.zeros(n, np.float32) * -1.0) * 2,
                  np.ones(n, np.float32))
    folded = constant_fold(graph)
    assert [node.op for node in folded.nodes] == ["add"]
    constant = folded.nodes[0].inputs[1]
    assert constant.value.shape == (n,) and constant.value.strides == (0,)
    assert constant.value.dtype == np.float32 and np.signbit(constant.value).all()


def test_constant_folding_leaves_runtime_errors_to_run_time():
    # Indexing out of bounds with constant indices must still raise when called.
    def f(x):
        return jnp.take(jnp.arange(3), np.array([5])) + x
    graph = trace(f, np.int64(1))
    assert "gather" in [node.op for node in constant_fold(graph).nodes]


def test_cse_merges_equal_nodes_and_equal_constants():
    graph = trace(lambda x: jnp.exp(x) + jnp.exp(x) * (x + 1.0) / (x + 1.0), X)
    assert str(cse(graph)) == golden("""
        graph(%0: f32[2,3]) {
          %1: f32[2,3] = exp %0
          %2: f32[2,3] = add %0, 1.0:~f64[]
          %3: f32[2,3] = mul %1, %2
          %4: f32[2,3] = div %3, %2
          %5: f32[2,3] = add %1, %4
          return %5
        }""")


def test_cse_keeps_nodes_that_differ_in_params_or_constant_type():
    graph = trace(lambda x: (x.sum(axis=0), x.sum(axis=1), x + 1, x + 1.0), X)
    assert cse(graph) is graph


def test_dce_drops_unused_nodes():
    graph = trace(lambda x: (jnp.exp(x), jnp.sin(jnp.cos(x)))[0], X)
    assert str(dce(graph)) == golden("""
        graph(%0: f32[2,3]) {
          %1: f32[2,3] = exp %0
          return %1
        }""")


def test_passes_return_the_same_graph_when_nothing_changes():
    graph = trace(lambda x: jnp.exp(x) * x, X)
    for graph_pass in (constant_fold, cse, dce):
        assert graph_pass(graph) is graph
