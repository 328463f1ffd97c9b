"""The printer's text is stable: numbering by definition order, constants, params,
subgraphs."""
import numpy as np

import jitflow
import jitflow.numpy as jnp
from jitflow.ir.graph import Graph, Lit, Node, Var
from jitflow.ir.types import TensorType
from jitflow import ops
from jitflow.ir.passes.fuse import fused_p
from tests_support import golden, trace


def test_printed_function():
    def f(x, w):
        return jnp.tanh(x @ w).sum(axis=1, keepdims=True) / 2
    x, w = np.ones((4, 3), np.float32), np.ones((3, 2), np.float32)
    assert str(jitflow.function(f).trace(x, w)) == golden("""
        graph(%0: f32[4,3], %1: f32[3,2]) {
          %2: f32[4,2] = matmul %0, %1
          %3: f32[4,2] = tanh %2
          %4: f32[4,1] = reduce_sum %3, axes=(1,), keepdims=True
          %5: f32[4,1] = div %4, 2:~i64[]
          return %5
        }""")


def test_text_is_the_same_for_the_same_structure():
    def f(x):
        return jnp.exp(x) + 1
    one = jitflow.function(f).trace(np.ones(3))
    two = jitflow.function(f).trace(np.ones(3))
    assert str(one) == str(two)


def test_constants_print_inline_when_small_and_by_type_when_large():
    small = Lit(np.array([1.5, -2.0], np.float32))
    large = Lit(np.zeros((10, 10)))
    x, y, z = (Var(TensorType((2,), np.dtype("float32"))), Var(small.type),
               Var(TensorType((10, 10), np.dtype("float64"))))
    graph = Graph([x], [Node(ops.add_p, [x, small], {}, [y]),
                        Node(ops.exp_p, [large], {}, [z])], [y, z, Lit(True)])
    assert str(graph) == golden("""
        graph(%0: f32[2]) {
          %1: f32[2] = add %0, [ 1.5, -2. ]:f32[2]
          %2: f64[10,10] = exp const f64[10,10]
          return %1, %2, True:bool[]
        }""")


def test_subgraphs_print_indented_under_their_node():
    t = TensorType((3,), np.dtype("float64"))
    inner_in, inner_out, x, y = Var(t), Var(t), Var(t), Var(t)
    body = Graph([inner_in], [Node(ops.sin_p, [inner_in], {}, [inner_out])], [inner_out])
    graph = Graph([x], [Node(fused_p, [x], {}, [y], [body])], [y])
    assert str(graph) == golden("""
        graph(%0: f64[3]) {
          %1: f64[3] = fused %0
            subgraph0(%2: f64[3]) {
              %3: f64[3] = sin %2
              return %3
            }
          return %1
        }""")
