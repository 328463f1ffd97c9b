"""Native code for a size template (ir/size_templates.py): compiled once, it runs the
graph at every size n of the dynamic axis. `at(n, passed)` gives what runs one size:
a NativeGraph in all but its compile, whose shapes are the template's taken at n.

The code takes n as its last input (a 0-d int64 array) and computes every size from it
(lowering/lower.py, _size_value); the workspace is the memory plan's size at n.

Python calls each size's code directly (python_entry.py) through a small module of its
own, made at the size's first call: its table holds that size's shapes, and its entry
adds the constants passed in and n to the arguments before it calls the code for all
sizes. That module's text is the same in every process (the code's address and the
added arrays' are written into its globals once it is compiled), so the disk cache
keeps it.
"""
import ctypes
import threading
import weakref

import numpy as np
from llvmlite import ir

from ...ir.sizes import MAX_N, MIN_N, DynamicDecision, evaluate, sizes_within
from ..emitter import I32, I64, PTR
from ..jit.engine import SHORT_PIPELINE, CompiledModule, Compilation, quick_thread_switches
from ..jit.threads import thread_count
from ..lowering.lower import ENTRY, Lowering
from . import graph_cache
from .in_place import in_place_outputs
from .native import _ENTRY_TYPE, NativeGraph
from .output_pool import POOLED_BYTES
from .python_call import ENTRY_POINTER
from .python_entry import (PYTHON_ENTRY, PYTHON_ENTRY_INTO, SPARE_WORKSPACE,
                           add_python_entry, free_spare_workspace, make_callable,
                           python_entry_abi)


class DynamicNative:
    """template: a Template whose graph is fused and scheduled already (as
    NativeGraph's own graph is); typical: the size that decisions tuning speed take;
    n: a size the code must serve. `sizes`: (smallest, largest), the n it serves:
    MIN_N to MAX_N, or a narrower range holding n where a decision differs at the ends
    (`x[1:]`'s n - 1 == 1 at n = 2; a 32-bit product of 3 * n rows): ir/sizes.py."""

    def __init__(self, template, name, typical, n):
        self.template, self.name = template, name
        self._typical, self._llvm_irs = typical, None
        with quick_thread_switches():
            self.compiled = self._compile(n)
        self.entry_address = self.compiled.address(ENTRY)
        self._entry = _ENTRY_TYPE(self.entry_address)
        with sizes_within(*self.sizes):
            self.in_place = _arguments_in_place(template)

    def _compile(self, n):
        """The code: from the graph cache (graph_cache.py), where the code kept there
        serves n, or lowered and compiled."""
        key = graph_cache.key(self.template.graph, {
            "name": self.name, "threads": thread_count(), "typical": self._typical})
        cached = graph_cache.load(key)
        if cached is not None and cached.extra["sizes"][0] <= n <= cached.extra["sizes"][1]:
            self.sizes, self.workspace_size = tuple(cached.extra["sizes"]), \
                cached.workspace_size
            return CompiledModule.from_object_code(cached.objects, lambda: self.llvm_irs,
                                                   cached.speed_levels)
        compiled, compilation, lowering = self._compile_around(n)
        graph_cache.store(key, compilation.objects, lowering.modules,
                          compilation.speed_levels, self.workspace_size, (),
                          extra={"sizes": list(self.sizes)})
        return compiled

    def _compile_around(self, n):
        """(CompiledModule, Compilation, Lowering) of the code for the widest range of
        sizes holding n whose decisions are the same throughout (a few tries)."""
        smallest, largest = MIN_N, MAX_N
        for _ in range(4):
            try:
                with sizes_within(smallest, largest):
                    self.sizes = (smallest, largest)
                    return self._compile_for_sizes()
            except DynamicDecision as error:
                if error.sides is None:
                    raise
                below, above = error.sides
                if n >= above > smallest:
                    smallest = above
                elif n <= below < largest:
                    largest = below
                else:
                    raise
        raise DynamicDecision(f"no decision holds from n = {smallest} to {largest}")

    def _compile_for_sizes(self):
        compilation = Compilation(speed_level=3)
        try:
            lowering = self._lower(lambda module, level: compilation.add(
                str(module), speed_level=level))
            compilation.add(str(lowering.entry_module), in_background=False,
                            speed_level=lowering.speed_levels[-1])
        except BaseException:
            compilation.abandon()
            raise
        if lowering.callees:  # (a control-flow body compiled apart: one size's)
            raise NotImplementedError("control flow in a graph of dynamic sizes")
        compiled = CompiledModule.from_compilation(compilation)
        self._llvm_irs = compilation.sources()
        return compiled, compilation, lowering

    def _lower(self, on_segment):
        graph = self.template.graph
        lowering = Lowering(graph, self.name, on_segment=on_segment,
                            size_input=len(graph.inputs) - 1, typical_size=self._typical)
        self.workspace_size = lowering.memory.size
        return lowering

    @property
    def llvm_irs(self):
        """Each module's LLVM IR, as NativeGraph.llvm_irs (lowered again, without a
        compile, for code from the graph cache)."""
        if self._llvm_irs is None:
            texts = []
            with sizes_within(*self.sizes):
                lowering = self._lower(lambda module, level: texts.append(str(module)))
            self._llvm_irs = texts + [str(lowering.entry_module)]
        return self._llvm_irs

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
        self.in_place = dynamic.in_place
        self._in_types = [_at(v.type, n) for v in graph.inputs[:count]]
        self._out_types = [_at(v.type, n) for v in graph.outputs]
        self._extra = [np.ascontiguousarray(value) for value in passed] + \
            [np.array(n, np.int64)]
        self._slots = len(graph.inputs) + len(self._out_types) + 1
        self._pooled = [t.size * t.dtype.itemsize >= POOLED_BYTES for t in self._out_types]
        self.workspace_size = evaluate(dynamic.workspace_size, n)
        self.timed_nodes, self._node_counters, self.callees = [], [], []
        self._spare_workspaces = []
        self._entries = None  # (python_entry, python_entry_into), once made
        self._checked_calls = 0
        self._direct = python_entry_abi() and not any(
            t.weak for t in self._in_types + self._out_types)

    @property
    def llvm_irs(self):
        return self.dynamic.llvm_irs

    def extra_arguments(self):
        return self._extra

    def __call__(self, args, into=None):
        self._checked_calls += 1
        return super().__call__(args, into)

    @property
    def python_entry(self):
        return self._python_entries()[0]

    @property
    def python_entry_into(self):
        return self._python_entries()[1]

    def _python_entries(self):
        """(python_entry, python_entry_into): made once the size was called (a size
        called once never pays for them), else None."""
        if self._entries is None:
            if not (self._direct and self._checked_calls):
                return None, None
            with _MAKING:  # (one module: the entries made keep only it alive)
                if self._entries is None:
                    self._entries = self._add_python_entries()
        return self._entries

    def _add_python_entries(self):
        """python_entry and python_entry_into for this size (see the module's doc)."""
        count = len(self._in_types)
        module = _sized_entry_module(count, len(self._extra), len(self._out_types))
        add_python_entry(module, module.get_global(SIZED_ENTRY), self._in_types,
                         self._out_types, self.workspace_size, self.in_place)
        compilation = Compilation(speed_level=SHORT_PIPELINE)
        compilation.add(str(module), in_background=False)
        self.entry_code = entry_code = CompiledModule.from_compilation(compilation)
        _write_pointers(entry_code.global_address(CODE), [self.dynamic.entry_address])
        _write_pointers(entry_code.global_address(ADDED),
                        [array.ctypes.data for array in self._extra])
        weakref.finalize(self, free_spare_workspace, entry_code,
                         entry_code.global_address(SPARE_WORKSPACE))
        into = make_callable(entry_code.address(PYTHON_ENTRY_INTO), self, self.name)
        if any(self._pooled):  # (pooled outputs are the checked path's to allocate)
            return None, into
        return make_callable(entry_code.address(PYTHON_ENTRY), self, self.name), into


_MAKING = threading.Lock()
SIZED_ENTRY = "jitflow_sized_entry"
CODE = "jitflow_code_for_all_sizes"  # the address of its entry (written once compiled)
ADDED = "jitflow_added_arrays"  # the arrays added after the arguments (the same)


def _sized_entry_module(inputs, added, outputs):
    """i32 SIZED_ENTRY(ptr slots): the code for all sizes run on the slots (inputs,
    outputs, workspace) with the pointers in ADDED put after the inputs."""
    module = ir.Module("sized entry")
    code = ir.GlobalVariable(module, PTR, CODE)
    code.initializer = ir.Constant(PTR, None)
    table = ir.GlobalVariable(module, ir.ArrayType(PTR, added), ADDED)
    table.initializer = ir.Constant(table.value_type, None)
    function = ir.Function(module, ir.FunctionType(I32, [PTR]), SIZED_ENTRY)
    b = ir.IRBuilder(function.append_basic_block("entry"))
    (slots,) = function.args
    total = inputs + added + outputs + 1
    moved = b.alloca(ir.ArrayType(PTR, total))
    sources = [(slots, i) for i in range(inputs)] + [(table, i) for i in range(added)] + \
        [(slots, inputs + i) for i in range(outputs + 1)]
    for position, (source, index) in enumerate(sources):
        pointer = b.load(b.gep(source, [I64(index)], source_etype=PTR), typ=PTR)
        b.store(pointer, b.gep(moved, [I64(0), I64(position)]))
    b.ret(b.call(b.load(code, typ=ENTRY_POINTER), [moved]))
    return module


def _arguments_in_place(template):
    """{output: argument indices} the code may write over (in_place.py), among the
    function's own arguments only: the constants passed in and n are the code's.
    None where a question about the sizes has no one answer over the sizes served:
    the results are then computed apart and copied."""
    arguments = len(template.graph.inputs) - 1 - template.passed
    try:
        pairs = {output: frozenset(i for i in inputs if i < arguments)
                 for output, inputs in in_place_outputs(template.graph).items()}
    except DynamicDecision:
        return {}
    return {output: inputs for output, inputs in pairs.items() if inputs}


def _write_pointers(address, values):
    for index, value in enumerate(values):
        ctypes.c_void_p.from_address(address + 8 * index).value = value


def _at(type, n):
    return type.with_shape(evaluate(type.shape, n)) if type.shape else type
