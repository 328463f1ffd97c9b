"""Executable: runs one optimized graph on flat arguments and rebuilds the outputs.

The graph runs as native code (jitflow.codegen) or, with config.backend set to
"interpreter", on the NumPy reference interpreter; results are the same either way.
"""
import numpy as np

from . import pytree
from .ir.interpret import eval_graph

BACKENDS = ("native", "interpreter")
FALLBACK = object()  # call_arrays could not run: use the checked path


class Executable:
    def __init__(self, graph, out_structure, backend="native", name="function"):
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose one of {BACKENDS}")
        self.graph = graph
        self.out_structure = out_structure
        self.backend = backend
        if backend == "native":
            from .codegen.runtime import NativeGraph
            self.native = NativeGraph(graph, name)
            self._run = self.native
        else:
            self._run = lambda leaves: [_owned(value, leaves)
                                        for value in eval_graph(graph, leaves)]

    def call_arrays(self, arrays):
        """Fast path for plain C-contiguous ndarray arguments matching the signature
        exactly (Function checks that): returns the results, or FALLBACK."""
        outputs = self.native.call_arrays(arrays)
        if outputs is None:
            return FALLBACK
        results = [out if out.ndim else out[()] for out in outputs]
        if self.out_structure == pytree.LEAF:
            return results[0]
        return pytree.unflatten(self.out_structure, results)

    def __call__(self, leaves):
        outputs = self._run(leaves)
        results = [_result(value, var.type) for value, var in zip(outputs, self.graph.outputs)]
        return pytree.unflatten(self.out_structure, results)


def _result(value, type):
    """What NumPy would hand back: a Python scalar for weak values, a NumPy scalar for
    0-d results, otherwise the array."""
    if type.weak:
        return np.asarray(value).item()
    array = np.asarray(value)
    return array[()] if array.ndim == 0 else array


def _owned(value, inputs):
    """An interpreter result as a fresh array the caller owns: NumPy may have returned
    an input itself, a view of one, or a read-only broadcast view. (Native outputs are
    always fresh.)"""
    if not isinstance(value, np.ndarray):
        return value
    if value.base is not None or not value.flags.writeable or \
            any(value is leaf for leaf in inputs):
        return value.copy()
    return value
