"""Rematerialization: a fused group writes fewer arrays, its readers recompute the cheap
rest, and every value stays the same, bit for bit, compiled or interpreted."""
import numpy as np
import pytest

import jitflow
from jitflow.ir.graph import verify
from jitflow.ir.interpret import eval_graph
from jitflow.ir.passes import rematerialize as remat
from jitflow.ir.passes.fuse import fuse
from jitflow.pytree import flatten


def gelu(v):
    return 0.5 * v * (1.0 + np.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3)))


def mlp_gradient(x, w, b, w2):
    """A GELU layer's forward and backward passes in separate loops: the backward one
    comes after the next layer's product."""
    return jitflow.value_and_grad(
        lambda p: ((gelu(x @ p[0] + p[1]) @ p[2]) ** 2).sum())((w, b, w2))


def mlp_arguments(dtype=np.float32):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((4, 8, 16)).astype(dtype),
            (rng.standard_normal((16, 32)) * 0.3).astype(dtype),
            rng.standard_normal(32).astype(dtype),
            (rng.standard_normal((32, 16)) * 0.3).astype(dtype))


@pytest.fixture
def without_rematerialization(monkeypatch):
    def switch_off():
        monkeypatch.setattr(remat, "ENABLED", False)
    return switch_off


def leaves(tree):
    return flatten(tree)[0]


def fused(fn, *args):
    return fuse(jitflow.optimize(jitflow.function(fn).trace(*args)))


def fused_nodes(graph):
    return [n for n in graph.nodes if n.op == "fused"]


def test_gelu_forward_writes_its_result_and_tanh_only():
    graph = fused(mlp_gradient, *mlp_arguments())
    verify(graph)
    forward = next(n for n in fused_nodes(graph) if any(m.op == "tanh" for m in
                                                          n.subgraphs[0].nodes))
    (body,) = forward.subgraphs
    assert len(forward.outputs) == 2
    made_by = {v: n.op for n in body.nodes for v in n.outputs}
    assert sorted(made_by[v] for v in body.outputs) == ["mul", "tanh"]
    # The backward loop reads the product and the bias, as the forward one does.
    backward = next(n for n in fused_nodes(graph) if n is not forward and
                    set(forward.inputs) <= set(n.inputs))
    assert forward.outputs[0] in backward.inputs or forward.outputs[1] in backward.inputs


def test_without_it_the_forward_loop_writes_every_value_the_backward_one_reads(
        without_rematerialization):
    without_rematerialization()
    graph = fused(mlp_gradient, *mlp_arguments())
    forward = next(n for n in fused_nodes(graph) if any(m.op == "tanh" for m in
                                                          n.subgraphs[0].nodes))
    assert len(forward.outputs) == 5


def test_compiled_values_are_the_same_bits(without_rematerialization):
    args = mlp_arguments()
    with_it = jitflow.function(mlp_gradient)(*args)
    without_rematerialization()
    without_it = jitflow.function(mlp_gradient)(*args)
    for got, want in zip(leaves(with_it), leaves(without_it)):
        np.testing.assert_array_equal(np.asarray(got).view(np.uint32),
                                      np.asarray(want).view(np.uint32))


def test_interpreted_fused_graph_computes_the_unfused_values():
    args = mlp_arguments(np.float64)
    graph = jitflow.optimize(jitflow.function(mlp_gradient).trace(*args))
    arrays = leaves(args)
    for got, want in zip(eval_graph(fuse(graph), arrays), eval_graph(graph, arrays)):
        np.testing.assert_array_equal(got, want)


def test_values_of_expensive_operands_stay_written():
    """exp(x) * sin(x): recomputing it would need both exp and sin written, two
    arrays instead of one."""
    def f(x, w):
        y = np.exp(x) * np.sin(x)
        return (y @ w) + y
    x = np.ones((8, 8), np.float32)
    graph = fused(f, x, x)
    (first, *_) = fused_nodes(graph)
    assert len(first.outputs) == 1
    assert first.subgraphs[0].nodes[-1].op == "mul"


def test_values_a_product_reads_and_graph_outputs_stay_written():
    def f(x, w):
        h = x * 2.0 + 1.0
        return h, np.tanh(h @ w) + h * 3.0
    x = np.ones((8, 8), np.float32)
    graph = fused(f, x, x)
    first = fused_nodes(graph)[0]
    assert graph.outputs[0] in first.outputs  # h: returned, and read by the product


def test_integer_arithmetic_is_not_copied():
    def f(x, w):
        k = x * 3 + 1  # int64
        return (k.astype(np.float64) @ w).sum() + (k * 2).sum()
    x = np.arange(16).reshape(4, 4)
    graph = fused(f, x, np.ones((4, 4)))
    counts = [sum(m.op == "add" and m.outputs[0].type.dtype.kind == "i"
                  for m in n.subgraphs[0].nodes) for n in fused_nodes(graph)]
    assert sum(counts) == 1  # x * 3 + 1 computed once
