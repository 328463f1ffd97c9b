"""vjp_graph and jvp_graph: whole-graph transforms, compared as golden IR after the pass
pipeline (which keeps only the residuals the backward pass uses)."""
import numpy as np

import jitflow
from jitflow.ir.interpret import eval_graph
from jitflow.ir.types import TensorType, float32, float64, int32
from jitflow.trace import make_graph

VECTOR = TensorType((3,), float32)


def sin_dot(x, y):
    return [np.sum(np.sin(x) * y)]


def test_vjp_graph_golden():
    graph = make_graph(sin_dot, [VECTOR, VECTOR], ["x", "y"])
    assert str(jitflow.optimize(jitflow.vjp_graph(graph))) == """\
graph(%0: f32[3], %1: f32[3], %2: f32[]) {
  %3: f32[3] = sin %0
  %4: f32[3] = mul %3, %1
  %5: f32[] = reduce_sum %4, axes=(0,), keepdims=False
  %6: f32[1] = reshape %2, shape=(1,)
  %7: f32[3] = broadcast_to %6, shape=(3,)
  %8: f32[3] = mul %7, %1
  %9: f32[3] = mul %3, %7
  %10: f32[3] = cos %0
  %11: f32[3] = mul %8, %10
  return %5, %11, %9
}"""


def test_jvp_graph_golden():
    graph = make_graph(sin_dot, [VECTOR, VECTOR], ["x", "y"])
    assert str(jitflow.optimize(jitflow.jvp_graph(graph))) == """\
graph(%0: f32[3], %1: f32[3], %2: f32[3], %3: f32[3]) {
  %4: f32[3] = sin %0
  %5: f32[3] = mul %4, %1
  %6: f32[] = reduce_sum %5, axes=(0,), keepdims=False
  %7: f32[3] = cos %0
  %8: f32[3] = mul %2, %7
  %9: f32[3] = mul %8, %1
  %10: f32[3] = mul %3, %4
  %11: f32[3] = add %9, %10
  %12: f32[] = reduce_sum %11, axes=(0,), keepdims=False
  return %6, %12
}"""


def test_only_used_residuals_survive():
    """exp's derivative is its output, so the backward pass needs no second exp."""
    graph = make_graph(lambda x: [np.sum(np.exp(x))], [VECTOR], ["x"])
    ops = [node.op for node in jitflow.optimize(jitflow.vjp_graph(graph)).nodes]
    assert ops.count("exp") == 1


def test_integer_inputs_take_no_cotangent_input_and_give_none():
    graph = make_graph(lambda x, n: [x * n, n + 1], [VECTOR, TensorType((3,), int32)],
                       ["x", "n"])
    vjp = jitflow.vjp_graph(graph)
    # float32 * int32 is float64 (NumPy 2): the one float output takes a float64 cotangent
    assert [v.type for v in vjp.inputs] == [VECTOR, TensorType((3,), int32),
                                            TensorType((3,), float64)]
    x, n, ct = np.ones(3, np.float32), np.arange(3, dtype=np.int32), np.ones(3)
    out, out_n, ct_x = eval_graph(vjp, [x, n, ct])
    assert ct_x.dtype == np.float32 and len(vjp.outputs) == 3
    np.testing.assert_array_equal(ct_x, n.astype(np.float32))
