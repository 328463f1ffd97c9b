"""Profile: what `with jitflow.profile() as prof:` records.

While the block runs, every call of a jitflow.function runs native code that times
each of its kernels (Executable.profiled_call; the variant is built once per compiled
signature, its build not counted as the function's), and every trace and build is
recorded with its times. Outside the block nothing is timed and calls cost what they
always do.
"""
import os
import threading
import time
from dataclasses import dataclass, field, replace

from ..executable import PROFILERS
from .chrome_trace import chrome_trace
from .kernels import describe
from .report import summary_text


@dataclass
class CallRecord:
    """One call: which compiled signature, when it began and how long it took, the
    (nanoseconds, runs) of each kernel (node index) in it, and those of the kernels of
    the control-flow bodies it ran ({(callee path, node index): (nanoseconds, runs)},
    summed over the times each body ran: NativeGraph.take_body_times)."""
    executable: object
    started: float
    seconds: float
    node_times: dict
    body_times: dict
    thread: int


@dataclass
class CompileRecord:
    """One trace of a function: when it began, and how long tracing and optimizing
    took (the native build's time is the executable's build_seconds)."""
    executable: object
    started: float
    trace_seconds: float
    optimize_seconds: float


@dataclass
class KernelTotal:
    """One kernel's time summed over the calls recorded."""
    function: str
    kernel: object  # kernels.Kernel
    index: int
    calls: int = 0
    runs: int = 0  # more than calls for a kernel in a loop's body
    seconds: float = 0.0

    @property
    def mean_seconds(self):
        """Per run."""
        return self.seconds / self.runs if self.runs else 0.0


@dataclass
class FunctionTotal:
    name: str
    calls: int = 0
    seconds: float = 0.0
    kernel_seconds: float = 0.0
    traces: int = 0
    trace_seconds: float = 0.0
    optimize_seconds: float = 0.0
    build_seconds: float = 0.0
    executables: list = field(default_factory=list)


class Profile:
    def __init__(self):
        self.calls = []
        self.compiles = []
        self.origin = None  # time.perf_counter() when recording began
        self.origin_wall = None  # time.time() then

    def __enter__(self):
        self.origin, self.origin_wall = time.perf_counter(), time.time()
        PROFILERS.append(self)
        return self

    def __exit__(self, *exc):
        PROFILERS.remove(self)

    # --- recording (called by the executables) ------------------------------------------
    def record_call(self, executable, started, seconds, node_times, body_times):
        self.calls.append(CallRecord(executable, started, seconds, node_times, body_times,
                                     threading.get_ident()))

    def record_compile(self, executable, started, trace_seconds, optimize_seconds):
        self.compiles.append(CompileRecord(executable, started, trace_seconds,
                                           optimize_seconds))

    # --- reading --------------------------------------------------------------------
    def kernel_of(self, executable, index, path=()):
        """The Kernel of node `index` of the graph `executable` runs when profiled, or
        of the control-flow body at `path` (positions in the callees) it calls."""
        native = executable.profiled_native()
        for position in path:
            native = native.callees[position]
        kernel = describe(native.graph.nodes[index], executable.locations)
        if path:
            body = native.name.rpartition(".")[2]  # cond, body, branch0, backward
            kernel = replace(kernel, body=body, name=f"{body}: {kernel.name}")
        return kernel

    def body_owner(self, executable, path):
        """The index of the control-flow node whose body `path` leads to."""
        return executable.profiled_native().callee_nodes[path[0]]

    def kernels(self):
        """Every kernel's KernelTotal, the longest first. Kernels inside control-flow
        bodies (Kernel.body) are also counted in their control-flow node."""
        totals = {}
        for call in self.calls:
            timed = [((), index, counts) for index, counts in call.node_times.items()] + \
                [(path, index, counts) for (path, index), counts in call.body_times.items()]
            for path, index, (nanoseconds, runs) in timed:
                key = (id(call.executable), path, index)
                if key not in totals:
                    totals[key] = KernelTotal(
                        call.executable.name, self.kernel_of(call.executable, index, path),
                        index)
                totals[key].calls += 1
                totals[key].runs += runs
                totals[key].seconds += nanoseconds * 1e-9
        return sorted(totals.values(), key=lambda total: -total.seconds)

    def functions(self):
        """Each function's FunctionTotal, in the order they were first seen."""
        totals = {}
        for call in self.calls:
            name = call.executable.name
            total = totals.setdefault(name, FunctionTotal(name))
            total.calls += 1
            total.seconds += call.seconds
            total.kernel_seconds += sum(ns for ns, _ in call.node_times.values()) * 1e-9
        for record in self.compiles:
            name = record.executable.name
            total = totals.setdefault(name, FunctionTotal(name))
            total.traces += 1
            total.trace_seconds += record.trace_seconds
            total.optimize_seconds += record.optimize_seconds
            record.executable.wait()
            total.build_seconds += record.executable.build_seconds or 0.0
        return list(totals.values())

    def summary(self, top=10, print_fn=print):
        """Print (with print_fn) and return the functions' times and the `top` kernels."""
        text = summary_text(self.functions(), self.kernels()[:top])
        if print_fn is not None:
            print_fn(text)
        return text

    def export_chrome_trace(self, path):
        """Write the calls, their kernels and the traces and builds as Chrome's trace
        event JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing open."""
        chrome_trace(self, path, os.getpid())
        return path

    def __repr__(self):
        return f"<jitflow.profiler.Profile: {len(self.calls)} calls>"
