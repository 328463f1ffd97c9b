"""verify() re-runs every type rule and checks SSA form, in subgraphs too."""
import numpy as np
import pytest

from jitflow import ops
from jitflow.ir.graph import Graph, Lit, Node, Var, VerifyError, verify
from jitflow.ir.passes.fuse import fused_p
from jitflow.ir.types import TensorType

F32 = np.dtype("float32")


def vec(n, dtype=F32):
    return Var(TensorType((n,), dtype))


def test_a_well_formed_graph_verifies():
    x, y = vec(3), vec(3)
    node = Node(ops.exp_p, [x], {}, [y])
    graph = Graph([x], [node], [y])
    assert verify(graph) is graph


def test_verify_rejects_a_wrong_declared_type():
    x, y = vec(3), vec(4)
    with pytest.raises(VerifyError, match=r"exp: type rule gives \(f32\[3\]\)"):
        verify(Graph([x], [Node(ops.exp_p, [x], {}, [y])], [y]))


def test_verify_rejects_use_before_definition_and_double_definition():
    x, y, z = vec(3), vec(3), vec(3)
    uses_z = Node(ops.exp_p, [z], {}, [y])
    with pytest.raises(VerifyError, match="used before it is defined"):
        verify(Graph([x], [uses_z, Node(ops.exp_p, [x], {}, [z])], [y]))
    with pytest.raises(VerifyError, match="defined twice"):
        verify(Graph([x], [Node(ops.exp_p, [x], {}, [x])], [x]))
    with pytest.raises(VerifyError, match="never defined"):
        verify(Graph([x], [], [z]))


def test_verify_reruns_rules_with_params_and_literals():
    x, y = vec(3), vec(3)
    good = Node(ops.add_p, [x, Lit(1.0)], {}, [y])
    verify(Graph([x], [good], [y]))
    wrong_dtype = Var(TensorType((3,), np.dtype("float64")))
    with pytest.raises(VerifyError):
        verify(Graph([x], [Node(ops.add_p, [x, Lit(1.0)], {}, [wrong_dtype])],
                     [wrong_dtype]))


def test_verify_recurses_into_subgraphs():
    x, y, inner_x, inner_y = vec(3), vec(3), vec(3), vec(4)  # inner output mistyped
    body = Graph([inner_x], [Node(ops.exp_p, [inner_x], {}, [inner_y])], [inner_y])
    with pytest.raises(VerifyError, match="exp"):
        verify(Graph([x], [Node(fused_p, [x], {}, [y], [body])], [y]))
