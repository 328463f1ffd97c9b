"""Constant folding: evaluate pure nodes whose inputs are all small constants."""
import numpy as np

from ..graph import Lit
from ..interpret import as_operand
from .rewrite import rewrite

# Larger results stay as nodes: folding them would bloat the graph (and the module).
FOLD_LIMIT = 1024


def constant_fold(graph):
    return rewrite(graph, _fold, constant_fold)


def _fold(node, producers):
    if not node.prim.pure or node.subgraphs:
        return None
    if not all(isinstance(v, Lit) for v in node.inputs):
        return None
    if sum(v.type.size for v in node.outputs) > FOLD_LIMIT:
        return None
    args = [as_operand(v.value, v.type) for v in node.inputs]
    try:
        with np.errstate(all="ignore"):
            outs = node.prim.evaluate(*args, **node.params)
    except (ArithmeticError, ValueError, IndexError):
        return None  # the error belongs to run time (e.g. an index out of bounds)
    return tuple(Lit(out, var.type) for out, var in zip(outs, node.outputs))
