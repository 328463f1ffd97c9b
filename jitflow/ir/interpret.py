"""The reference interpreter: evaluate a Graph on NumPy values."""
import numpy as np

from .graph import Lit


def eval_graph(graph, args):
    """Evaluate `graph` on concrete inputs; returns the list of output values.

    Weakly typed values are handed to NumPy as Python scalars, so NumPy applies the same
    NEP 50 promotion the type rules predicted. Floating-point warnings are silenced: the
    compiled code gives the same IEEE results without warnings, and so does this.
    """
    env = {}

    def read(value):
        if isinstance(value, Lit):
            return as_operand(value.value, value.type)
        return env[value]

    for var, arg in zip(graph.inputs, args, strict=True):
        env[var] = as_operand(arg, var.type)
    with np.errstate(all="ignore"):
        for node in graph.nodes:
            outs = node.prim.evaluate(*map(read, node.inputs), subgraphs=node.subgraphs,
                                      **node.params)
            for var, out in zip(node.outputs, outs, strict=True):
                env[var] = as_operand(out, var.type)
    return [read(v) for v in graph.outputs]


def as_operand(value, type):
    """A weak value as the Python scalar NumPy treats weakly, anything else as an array."""
    if type.weak:
        return np.asarray(value).item()
    return np.asarray(value)
