"""The lowering of while_grad: its backward step comes from the layer that differentiates
graphs, handed to NativeGraph (codegen imports no layer above jitflow.ir)."""
import numpy as np
import pytest

import jitflow
from jitflow.codegen import NativeGraph
from jitflow.control_flow.while_grad import backward_step_graph
from jitflow.ir.interpret import eval_graph


def loop_sum(x):
    """A trip count known only when it runs, with checkpoints every 2 trips."""
    return jitflow.while_loop(lambda c: c[1] < 5,
                              lambda c: (c[0] * 1.5 + np.sin(c[0]), c[1] + 1), (x, 0),
                              checkpoint_every=2)[0].sum()


def gradient_graph(x):
    graph = jitflow.optimize(jitflow.function(jitflow.grad(loop_sum)).trace(x))
    assert any(node.op == "while_grad" for node in graph.nodes)
    return graph


def test_the_handed_in_backward_step_gives_the_interpreters_gradient():
    x = np.linspace(-1.0, 1.0, 5)
    graph = gradient_graph(x)
    native = NativeGraph(graph, "f", backward_step=backward_step_graph)
    np.testing.assert_allclose(native([x])[0], eval_graph(graph, [x])[0], rtol=1e-12)


def test_without_a_backward_step_the_lowering_says_what_it_needs():
    graph = gradient_graph(np.linspace(-1.0, 1.0, 5))
    with pytest.raises(NotImplementedError, match="while_grad needs the backward_step"):
        NativeGraph(graph, "f")
