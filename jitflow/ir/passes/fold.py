"""Constant folding: evaluate pure nodes whose inputs are all small constants.

A result every element of which is the same (an elementwise operation, broadcast or
reshape of such constants: the 1/n a mean's gradient spreads over its rows) is folded
at any size, into one element broadcast, which takes no memory: so the graph is the
same at every size of its arguments (dynamic_axes.py).
"""
import numpy as np

from ..graph import Lit, uniform_element
from ..interpret import as_operand
from .rewrite import rewrite

# Larger results stay as nodes: folding them would bloat the graph (and the module).
FOLD_LIMIT = 1024
SHAPE_ONLY = ("broadcast_to", "reshape")


def constant_fold(graph):
    return rewrite(graph, _fold, constant_fold)


def _fold(node, producers):
    if not node.prim.pure or node.subgraphs:
        return None
    if not all(isinstance(v, Lit) for v in node.inputs):
        return None
    uniform = _uniform(node)
    if uniform is not None:
        return uniform
    if sum(v.type.size for v in node.outputs) > FOLD_LIMIT:
        return None
    args = [as_operand(v.value, v.type) for v in node.inputs]
    try:
        with np.errstate(all="ignore"):
            outs = node.prim.evaluate(*args, **node.params)
    except (ArithmeticError, ValueError, IndexError):
        return None  # the error belongs to run time (e.g. an index out of bounds)
    return tuple(Lit(out, var.type) for out, var in zip(outs, node.outputs))


def _uniform(node):
    """The outputs of an elementwise or shape-only node of uniform constants, as one
    element broadcast to each output's shape; None where that does not apply."""
    if not (node.prim.elementwise or node.op in SHAPE_ONLY) or len(node.outputs) != 1 \
            or node.outputs[0].type.size <= 1:
        return None
    elements = [uniform_element(v.value) for v in node.inputs]
    if any(element is None for element in elements):
        return None
    if node.op in SHAPE_ONLY:
        (element,) = elements
    else:
        args = [as_operand(element, v.type) for element, v in zip(elements, node.inputs)]
        try:
            with np.errstate(all="ignore"):
                (element,) = node.prim.evaluate(*args, **node.params)
        except (ArithmeticError, ValueError, IndexError):
            return None
    out = node.outputs[0].type
    value = np.broadcast_to(np.asarray(element, dtype=out.dtype), out.shape)
    return (Lit(value, out),)
