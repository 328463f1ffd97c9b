"""Native code for a size template (ir/size_templates.py): compiled once, it runs the
graph at every size n of the dynamic axis. `at(n, passed)` gives what runs one size:
a NativeGraph in all but its compile, whose shapes are the template's taken at n.

The code takes n as its last input (a 0-d int64 array) and computes every size from it
(lowering/lower.py, _size_value); the workspace is the memory plan's size at n. Calls
go through the checked path: the Python entry's table of shapes is one size's.
"""
import numpy as np

from ...ir.sizes import MAX_N, MIN_N, evaluate, sizes_within
from ..jit.engine import CompiledModule, Compilation, quick_thread_switches
from ..lowering.lower import ENTRY, Lowering
from .native import _ENTRY_TYPE, NativeGraph
from .output_pool import POOLED_BYTES


class DynamicNative:
    """template: a Template whose graph is fused and scheduled already (as
    NativeGraph's own graph is); typical: the size that decisions tuning speed take;
    sizes: (smallest, largest), the n the code serves (ir/sizes.py)."""

    def __init__(self, template, name, typical, sizes=(MIN_N, MAX_N)):
        self.template, self.name, self.sizes = template, name, sizes
        graph = template.graph
        with quick_thread_switches(), sizes_within(*sizes):
            compiled, lowering, self.llvm_irs = self._compile(graph, name, typical)
        self.compiled = compiled
        self.workspace_size = lowering.memory.size
        self._entry = _ENTRY_TYPE(compiled.address(ENTRY))

    @staticmethod
    def _compile(graph, name, typical):
        compilation = Compilation(speed_level=3)
        try:
            lowering = Lowering(graph, name, on_segment=lambda module, level:
                                compilation.add(str(module), speed_level=level),
                                size_input=len(graph.inputs) - 1, typical_size=typical)
            compilation.add(str(lowering.entry_module), in_background=False,
                            speed_level=lowering.speed_levels[-1])
        except BaseException:
            compilation.abandon()
            raise
        if lowering.callees:  # (a control-flow body compiled apart: one size's)
            raise NotImplementedError("control flow in a graph of dynamic sizes")
        return CompiledModule.from_compilation(compilation), lowering, \
            compilation.sources()

    def at(self, n, passed):
        """What runs the graph at size n (within `sizes`); `passed`: the values of the
        constants the template takes as inputs, at that size."""
        if not self.sizes[0] <= n <= self.sizes[1]:
            raise ValueError(f"{self.name}: the code serves n from {self.sizes[0]} to "
                             f"{self.sizes[1]}, not {n}")
        return SizedNative(self, n, passed)


class SizedNative(NativeGraph):
    """DynamicNative's code at one size: NativeGraph's checked path, its arguments
    followed by the constants passed in and n."""

    def __init__(self, dynamic, n, passed):
        graph = dynamic.template.graph
        count = len(graph.inputs) - 1 - dynamic.template.passed
        self.name, self.threads = dynamic.name, None
        self._profile, self._nan_checks, self._backward_step = False, (), None
        self.dynamic = dynamic  # (kept alive: its code is this one's)
        self.compiled, self._entry = dynamic.compiled, dynamic._entry
        self.graph = graph
        self.in_place = {}  # (donation and out= copy their results: in_place.py)
        self._in_types = [_at(v.type, n) for v in graph.inputs[:count]]
        self._out_types = [_at(v.type, n) for v in graph.outputs]
        self._llvm_irs = dynamic.llvm_irs
        self._extra = [np.ascontiguousarray(value) for value in passed] + \
            [np.array(n, np.int64)]
        self._slots = len(graph.inputs) + len(self._out_types) + 1
        self._pooled = [t.size * t.dtype.itemsize >= POOLED_BYTES for t in self._out_types]
        self.workspace_size = evaluate(dynamic.workspace_size, n)
        self.python_entry = self.python_entry_into = None
        self.timed_nodes, self._node_counters, self.callees = [], [], []
        self._spare_workspaces = []

    def extra_arguments(self):
        return self._extra


def _at(type, n):
    return type.with_shape(evaluate(type.shape, n)) if type.shape else type
