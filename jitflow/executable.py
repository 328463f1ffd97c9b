"""Executable: runs one optimized graph on flat arguments and rebuilds the outputs.

For now the graph is run by the reference interpreter; the native backend replaces the
run step behind the same interface.
"""
import numpy as np

from . import pytree
from .ir.interpret import eval_graph


class Executable:
    def __init__(self, graph, out_structure):
        self.graph = graph
        self.out_structure = out_structure

    def __call__(self, leaves):
        outputs = eval_graph(self.graph, leaves)
        results = [_result(value, var.type, leaves)
                   for value, var in zip(outputs, self.graph.outputs)]
        return pytree.unflatten(self.out_structure, results)


def _result(value, type, inputs):
    """What NumPy would hand back: a Python scalar for weak values, a NumPy scalar for
    0-d results, otherwise a fresh array the caller owns."""
    if type.weak:
        return np.asarray(value).item()
    array = np.asarray(value)
    if array.ndim == 0:
        return array[()]
    if array.base is not None or not array.flags.writeable or \
            any(array is leaf for leaf in inputs):
        array = array.copy()
    return array
