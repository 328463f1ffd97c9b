"""The call boundary of compiled code: check arguments, allocate, call, raise errors.

Native code trusts its arguments completely, so everything is checked here first, in
Python: each argument's shape and dtype against the compiled signature (non-contiguous
arrays are copied to contiguous ones). Outputs are fresh NumPy arrays (large ones over
buffers that come back when the caller lets go of them: output_pool.py), or arrays the
caller gave (`into`).
"""
import ctypes
import weakref

import numpy as np

from ...ir.passes.fuse import fuse
from ...ir.passes.schedule import schedule
from ..errors import FALLBACK, OK, raise_for
from ..jit.engine import CompiledModule, Compilation, quick_thread_switches
from ..jit.threads import thread_count
from ..lowering.lower import ENTRY, Lowering
from ..lowering.node_clock import counter_name
from ..memory import aligned_bytes
from . import graph_cache
from .in_place import in_place_outputs
from .output_pool import POOLED_BYTES, pooled_empty
from .python_entry import (PYTHON_ENTRY, PYTHON_ENTRY_INTO, SPARE_WORKSPACE,
                           add_python_entry, free_spare_workspace, make_callable,
                           python_entry_abi)

_ENTRY_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)


class NativeGraph:
    """One graph compiled to native code, callable on a flat list of argument values."""

    def __init__(self, graph, name="function", threads=None, python_entry=True,
                 backward_step=None, profile=False, nan_checks=()):
        """threads: how many threads its kernels split between (default: the
        machine's); python_entry: whether Python calls it directly (python_entry.py);
        backward_step(body): a while_grad body's backward step graph, built by the layer
        that differentiates graphs (needed only when the graph has a while_grad);
        profile: time each node's code (take_node_times reads the times); nan_checks:
        "NaN" and/or "inf", flagged where any elementwise operation makes one
        (Lowering)."""
        self.name = name
        self.threads = threads
        self._backward_step = backward_step
        self._profile = profile
        self._nan_checks = tuple(nan_checks)
        # Fusion, and the order around nonblocking work, are the backend's decisions:
        # printed in its IR.
        self.graph = schedule(fuse(graph))
        # {output: inputs} the code may write over (in_place.py): out= and donation
        self.in_place = in_place_outputs(self.graph)
        self._in_types = [v.type for v in graph.inputs]
        self._out_types = [v.type for v in graph.outputs]
        self._slots = len(self._in_types) + len(self._out_types) + 1
        # Outputs made over the pool's buffers (output_pool.py): those large enough
        # that faulting in fresh pages would cost more than the checked path's call.
        self._pooled = [t.size * t.dtype.itemsize >= POOLED_BYTES for t in self._out_types]
        # Arrays only: a weakly typed input or output (a Python scalar) is left to the
        # checked path, which keeps Python scalars apart from 0-d arrays; and the
        # checked path allocates the pooled outputs.
        # Outputs the caller gives (out=) need no allocation: pooled ones too.
        direct_into = python_entry and python_entry_abi() and not any(
            t.weak for t in self._in_types + self._out_types)
        direct = direct_into and not any(self._pooled)
        self.compiled = self._compile(direct_into)
        self._node_counters = [
            (index, self._counter(index, "time"), self._counter(index, "runs"))
            for index in self.timed_nodes]
        self._entry = _ENTRY_TYPE(self.compiled.address(ENTRY))
        # python_entry(*arrays): the results, or an int: FALLBACK (the arrays do not
        # match the signature exactly) or an error status (see python_entry.py).
        self.python_entry = make_callable(self.compiled.address(PYTHON_ENTRY), self,
                                          name) if direct else None
        # python_entry_into(*arrays, *outputs): the same, writing into the outputs.
        self.python_entry_into = make_callable(self.compiled.address(PYTHON_ENTRY_INTO),
                                               self, name) if direct_into else None
        if direct_into:
            weakref.finalize(self, free_spare_workspace, self.compiled,
                             self.compiled.global_address(SPARE_WORKSPACE))
        # The checked path's workspace kept between calls, as the Python entry keeps its
        # own (python_call.py): a list, whose pop and append are atomic under the GIL.
        self._spare_workspaces = []

    def _compile(self, direct):
        """The graph's code: from the graph cache (graph_cache.py), or lowered, each
        segment's module compiled while the next is lowered; the module with the entry
        points (PYTHON_ENTRY and PYTHON_ENTRY_INTO if `direct`) comes last."""
        self._direct = direct
        key = graph_cache.key(self.graph, {
            "name": self.name, "threads": self.threads or thread_count(),
            "direct": bool(direct), "profile": bool(self._profile),
            "nan_checks": sorted(self._nan_checks)})
        cached = graph_cache.load(key)
        if cached is not None:
            return self._from_graph_cache(cached)
        with quick_thread_switches():
            compiled, compilation, lowering = self._lower_and_compile(direct)
        if not self.callees:  # their code is this process's: see graph_cache.py
            graph_cache.store(key, compilation.objects, lowering.modules,
                              compilation.speed_levels, self.workspace_size,
                              self.timed_nodes)
        return compiled

    def _lower_and_compile(self, direct):
        compilation = Compilation(speed_level=3)
        try:
            lowering = self._lower(lambda module, level: compilation.add(
                str(module), speed_level=level), direct)
            compilation.add(str(lowering.entry_module), in_background=False,
                            speed_level=lowering.speed_levels[-1])
        except BaseException:
            compilation.abandon()
            raise
        compiled = CompiledModule.from_compilation(compilation)
        self._llvm_irs = compilation.sources()  # the segments in the order they run
        return compiled, compilation, lowering

    def _lower(self, on_segment, direct):
        """The graph lowered, each segment's module handed to on_segment(module, speed
        level) but the last (entry_module), which gets the Python entry if `direct`."""
        lowering = Lowering(self.graph, self.name, on_segment=on_segment,
                            threads=self.threads, compile_graph=self._compile_callee,
                            backward_step=self._backward_step, profile=self._profile,
                            nan_checks=self._nan_checks)
        self.workspace_size = lowering.memory.size
        self.timed_nodes = lowering.timed_nodes
        self.callees = lowering.callees  # kept alive: this code calls theirs
        self.callee_nodes = lowering.callee_nodes  # the node calling each
        if direct:
            add_python_entry(lowering.entry_module, lowering.entry_function(),
                             self._in_types, self._out_types, self.workspace_size,
                             self.in_place)
        return lowering

    def _from_graph_cache(self, entry):
        self.workspace_size, self.timed_nodes = entry.workspace_size, entry.timed_nodes
        self.callees, self.callee_nodes = [], []
        self._llvm_irs = None  # lowered again if asked for
        return CompiledModule.from_object_code(entry.objects, lambda: self.llvm_irs,
                                               entry.speed_levels)

    @property
    def llvm_irs(self):
        """Each module's LLVM IR as jitflow wrote it, in the order the segments run
        (code from the graph cache is lowered again for it, without compiling)."""
        if self._llvm_irs is None:
            texts = []
            lowering = self._lower(lambda module, level: texts.append(str(module)),
                                   self._direct)
            self._llvm_irs = texts + [str(lowering.entry_module)]
        return self._llvm_irs

    @property
    def llvm_ir(self):
        return "\n".join(self.llvm_irs)

    def _compile_callee(self, graph, name, **options):
        """A subgraph the generated code calls (control/callees.py), compiled alike."""
        return NativeGraph(graph, name, backward_step=self._backward_step,
                           profile=self._profile, nan_checks=self._nan_checks, **options)

    def _counter(self, index, kind):
        return ctypes.c_int64.from_address(self.compiled.global_address(
            counter_name(index, kind)))

    def take_node_times(self):
        """{node index: (nanoseconds its code ran, times it ran)} since the last time
        this was asked, for code compiled with profile=True (empty otherwise); the
        counters restart from 0. Calls that run at the same time add to the same
        counters."""
        times = {}
        for index, time, runs in self._node_counters:
            times[index] = (time.value, runs.value)
            time.value = runs.value = 0
        return times

    def take_body_times(self):
        """take_node_times of the graphs this one calls (control-flow bodies, compiled
        apart), summed over every time they ran: {(path, node index): (nanoseconds,
        runs)},
        path the positions in `callees` leading to the graph, outermost first. Their
        time is also their control-flow node's."""
        times = {}
        for position, callee in enumerate(self.callees):
            for index, counts in callee.take_node_times().items():
                times[((position,), index)] = counts
            for (path, index), counts in callee.take_body_times().items():
                times[((position,) + path, index)] = counts
        return times

    @property
    def profiled(self):
        return self._profile

    def entry_address(self):
        """Where the entry point is: i32 entry(ptr slots), slots the inputs', outputs'
        and workspace's pointers."""
        return self.compiled.address(ENTRY)

    def run(self, args, into=None):
        """The outputs for `args`, through the Python entry when it takes them as they
        are (it reads the arrays' pointers itself), else through the checked path.
        `into`: for each output, a C-contiguous, aligned array of its type to write it
        into, or None for a fresh one; no such array may share memory with an argument
        (the code is compiled on the promise that outputs and inputs never overlap)."""
        if into is not None and any(target is not None for target in into):
            if self.python_entry_into is not None and all(t is not None for t in into):
                result = self.python_entry_into(*args, *into)
                if result.__class__ is not int:
                    return list(into)
                if result != FALLBACK:
                    raise_for(result, self.name)
            return self(args, into)
        if self.python_entry is not None and self._out_types:
            result = self.python_entry(*args)
            if result.__class__ is not int:
                return [result] if len(self._out_types) == 1 else list(result)
            if result != FALLBACK:
                raise_for(result, self.name)
        return self(args)

    def __call__(self, args, into=None):
        """The checked path: each argument converted to its compiled type and layout;
        `into` as run's."""
        inputs = [self._argument(value, t, i) for i, (value, t) in
                  enumerate(zip(args, self._in_types, strict=True))]
        inputs += self.extra_arguments()
        outputs = [self.fresh_output(i) if target is None else self._target(target, t, i)
                   for i, (t, target) in enumerate(zip(
                       self._out_types, into or [None] * len(self._out_types),
                       strict=True))]
        workspace = self._take_workspace()
        pointers = (ctypes.c_void_p * self._slots)(
            *(a.ctypes.data for a in inputs), *(a.ctypes.data for a in outputs),
            workspace.ctypes.data)
        status = self._entry(pointers)
        if not self._spare_workspaces:
            self._spare_workspaces.append(workspace)
        if status != OK:
            raise_for(status, self.name)
        return outputs

    def extra_arguments(self):
        """Arrays the code takes after the arguments (dynamic_native.py)."""
        return []

    def fresh_output(self, position):
        """A new array for output `position` (from the output pool when it is large)."""
        type = self._out_types[position]
        if self._pooled[position]:
            return pooled_empty(type.shape, type.dtype)
        return np.empty(type.shape, type.dtype)

    def _target(self, array, type, position):
        """An array given for output `position`, which the code writes as it is."""
        flags = array.flags
        if array.shape != type.shape or array.dtype != type.dtype or not (
                flags.c_contiguous and flags.aligned and flags.writeable):
            raise ValueError(f"{self.name}: output {position} cannot be written into a "
                             f"{array.dtype}{list(array.shape)} array (contiguous: "
                             f"{flags.c_contiguous}, writeable: {flags.writeable}); "
                             f"compiled for {type}")
        return array

    def _take_workspace(self):
        try:
            return self._spare_workspaces.pop()
        except IndexError:
            return aligned_bytes(self.workspace_size)

    def _argument(self, value, type, position):
        array = np.asarray(value)
        if array.shape != type.shape or (array.dtype != type.dtype and not type.weak):
            raise TypeError(f"{self.name}: argument {position} is {array.dtype}"
                            f"{list(array.shape)}, compiled for {type}")
        if array.dtype != type.dtype or not array.flags.c_contiguous or \
                not array.flags.aligned:
            array = np.array(array, dtype=type.dtype, order="C")  # a fresh, aligned copy
        return array

