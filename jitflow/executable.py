"""Executable: runs one optimized graph on flat arguments and rebuilds the outputs.

The graph runs as native code (jitflow.codegen) or, with config.backend set to
"interpreter", on the NumPy reference interpreter; results are the same either way.

Building native code takes a few hundred milliseconds for a training step, most of it
in LLVM. With `background=True` it is built on a thread of its own while the first call
runs on the interpreter, so the first result comes back without waiting for LLVM; the
second call waits for the native code if it is not ready yet. Interpreting more calls
would slow the build (the two compete for the cores) and make which calls ran where
depend on timing; this way it is exactly the first, unless the disk cache holds all
the code: the first call then waits for it (the MLP training step's first result then
came after 22 ms instead of 29). Which calls are interpreted depends on the cache
alone, so a run repeats bit for bit any run before it that found the cache in the
same state.
"""
import threading
import time
import warnings

import numpy as np

from . import codegen, pytree
from .codegen import FALLBACK
from .control_flow.while_grad import backward_step_graph
from .errors import CompileWarning, user_location
from .ir.interpret import eval_graph
from .out_arrays import Destinations, deliver, keep_buffer
from .recycled_variables import assigned_arrays, recycle

BACKENDS = ("native", "interpreter")

# The profilers recording now: jitflow.profiler's Profile adds itself here while its
# `with` block runs, and takes each call (record_call) and each trace and build
# (record_compile). While it is empty, calls go the usual way: nothing is timed.
PROFILERS = []


class DirectEntry:
    """call(*arrays) -> an int status (codegen's FALLBACK for arrays that do not
    match its signature exactly) or the outputs, flat: the one output itself when there
    is one, else a tuple of them. `rebuild` turns that into the function's pytree of
    results; it is None when the function returns one bare array (nothing to rebuild).

    `into(*arrays, *targets)`, for a function without state: the same, writing each
    output into its target (out=; FALLBACK where a target is not exactly an array of
    its output's type, or overlaps another array of the call). `targets(out)` gives the
    flat targets of an out= for that, or None where it is not simply one array for a
    bare result or a tuple or list of arrays for a flat tuple or list of them."""
    __slots__ = ("call", "rebuild", "name", "into", "_flat_results")

    def __init__(self, call, out_structure, name, into=None):
        self.call, self.name, self.into = call, name, into
        self.rebuild = _rebuilder(out_structure)
        self._flat_results = _flat_result_count(out_structure)

    def targets(self, out):
        count = self._flat_results
        if count is None:
            return None
        if count == 0:
            return (out,) if out.__class__ is np.ndarray else None
        if out.__class__ not in (tuple, list) or len(out) != count or \
                any(array.__class__ is not np.ndarray for array in out):
            return None
        return out


def _declining(*arrays):
    return FALLBACK


def _flat_result_count(structure):
    """0 for a bare array result, n for a tuple or list of n arrays, else None."""
    if structure == pytree.LEAF:
        return 0
    if isinstance(structure, tuple) and structure[0] in (tuple, list) and structure[2] \
            and all(child == pytree.LEAF for child in structure[2]):
        return len(structure[2])
    return None


def _rebuilder(structure):
    """How a DirectEntry's flat outputs become the pytree `structure`. A single output
    comes back bare, so within a container (`(x,)`, `[x.sum()]`) it is wrapped first:
    unflatten would otherwise iterate the array itself."""
    if structure == pytree.LEAF:
        return None
    if pytree.leaf_count(structure) == 1:
        return lambda result: pytree.unflatten(structure, (result,))
    return lambda result: pytree.unflatten(structure, result)


class Executable:
    def __init__(self, graph, out_structure, backend="native", name="function",
                 background=False, state=None, native=None):
        """native: the native code to run, made already, or a function making it that
        returns None where the graph is to be compiled for itself (dynamic_axes.py)."""
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose one of {BACKENDS}")
        self.graph = graph
        self.out_structure = out_structure
        self.backend = backend
        self.name = name
        self.state = state  # the Variables it reads and writes (variable_scope.py)
        self.native = None  # the NativeGraph, once built
        self._build = None  # the background build under way
        self._direct = None  # its DirectEntry, once asked for
        self._donations = {}  # donated leaf indices -> how donated_call runs, or None
        self._profiled = None  # the NativeGraph that times its nodes, once profiled
        self._profiled_lock = threading.Lock()
        self._checked = {}  # kinds -> the NativeGraph checking for them (nan_check.py)
        self.build_seconds = None  # how long building the native code took
        self.locations = None  # Var -> the user's (file, line), when traced to profile
        self._kept_outputs = {}  # output index -> arrays kept to compute it into
        if isinstance(native, codegen.NativeGraph):
            self.native, self.build_seconds = native, 0.0
        elif backend == "native":
            make = _maker(graph, name, native)
            try:
                self._build = _NativeBuild(make, name, self, from_cache=native is None) \
                    if background else None
            except RuntimeError:  # no thread to be had: build it now
                background = False
            if not background:
                started = time.perf_counter()
                self.native = make()
                self.build_seconds = time.perf_counter() - started

    def wait(self):
        """Block until the background build (if any) is over; raise its error if it
        failed."""
        build = self._build
        if build is None:
            return
        build.thread.join()
        if build.error is not None:
            raise build.error
        self._adopt_build(build)

    def _native_for_call(self):
        """The native code this call should run, or None to interpret it: the first
        call of a background build, or every call once the build has failed."""
        build = self._build
        if self.native is None and build is not None:
            if not build.first_call_taken:
                build.first_call_taken = True
                if not build.done_from_cache():
                    return None
            build.thread.join()
            self._adopt_build(build)
        return self.native

    def _adopt_build(self, build):
        """Take the finished background `build`'s native code, or warn once that it
        failed (the interpreter then runs every call). Threads waiting on the same
        build may each adopt it: the result is the same."""
        if build.error is None:
            self.native, self._build = build.native, None
        elif not build.warned:
            build.warned = True
            warnings.warn(f"{self.name}: native code could not be built ({build.error}); "
                          f"calls run on the interpreter (call at {user_location()})",
                          CompileWarning, stacklevel=5)

    def direct_entry(self):
        """A DirectEntry running the native code on the argument arrays themselves, or
        None (no native code, or none that takes them so: python_entry.py). Waits for a
        background build unless this is its first call."""
        if self.state is not None and self.state.slots:
            return None  # Variables: held and adopted by the Executable
        native = self._native_for_call()
        if native is None or native.python_entry_into is None:
            return None
        if self._direct is None:
            # (Outputs of 4 MiB and more are allocated by the checked path, from the
            # output pool: no python_entry then, but out= may still go direct.)
            entry = native.python_entry or _declining
            into = native.python_entry_into if self.state is None else None
            if self.state is not None:
                entry = self._stateful_entry(entry)
            self._direct = DirectEntry(entry, self.out_structure, self.name, into)
        return self._direct

    def donated_call(self, leaves, donated):
        """The results for `leaves`, each written over the leaf of its shape and dtype
        that it takes among the `donated` indices (donation.matching_arrays' choice),
        through the native entry: where the code may write every such leaf in place
        (in_place.py) and the entry takes the arrays as they are. Else None, for the
        checked path; a failed call raises (and has written nothing)."""
        plan = self._donations.get(donated, False)
        if plan is False:
            plan = self._donation_plan(donated)
            if plan is not None or self.native is not None:  # (else asked again)
                self._donations[donated] = plan
        if plan is None:
            return None
        into, takes, native = plan
        targets = [leaves[take] if take >= 0 else native.fresh_output(output)
                   for output, take in enumerate(takes)]
        status = into(*leaves, *targets)
        if status.__class__ is int:
            if status != codegen.FALLBACK:
                codegen.raise_for(status, self.name)
            return None
        return pytree.unflatten(self.out_structure, [
            target if take >= 0 else _result(target, var.type)
            for target, take, var in zip(targets, takes, self.graph.outputs)])

    def _donation_plan(self, donated):
        """(the native entry taking outputs, for each output the donated leaf it takes
        or -1 for a fresh array, the NativeGraph) or None where the native entry
        cannot run the donation."""
        direct = self.direct_entry()
        if direct is None or direct.into is None:
            return None
        native = self._native_for_call()
        free, takes = list(donated), []
        for output, var in enumerate(self.graph.outputs):
            if var.type.weak:
                return None  # (the entry makes arrays, not Python scalars)
            take = next((leaf for leaf in free if self.graph.inputs[leaf].type == var.type),
                        -1)
            if take >= 0:
                if take not in native.in_place.get(output, ()):
                    return None  # computed apart and copied: the checked path's work
                free.remove(take)
            takes.append(take)
        return direct.into, takes, native

    def _stateful_entry(self, entry):
        """`entry` for a graph that also reads closed-over arrays (its last inputs)
        and writes arrays (its last outputs, copied into them after it returned)."""
        state, name = self.state, self.name
        closed = state.closed
        if state.reads_only:
            return lambda *leaves: entry(*leaves, *closed)
        count = len(self.graph.outputs) - state.outputs
        several = len(self.graph.outputs) > 1
        arity = len(self.graph.inputs) - len(closed)

        def call(*leaves):
            if len(leaves) != arity or any(leaves[i].__class__ is not np.ndarray
                                           for i in state.written):
                return FALLBACK  # not the arrays it was compiled for: the checked path
            state.check_fixed(name)
            state.check_writable(leaves, name)
            result = entry(*leaves, *closed)
            if result.__class__ is int:
                return result  # a status: nothing ran
            outputs = result if several else (result,)
            state.write_back((), leaves, outputs[count:])
            return outputs[0] if count == 1 else outputs[:count]  # as the entry's own
        return call

    def profiled_call(self, leaves):
        """__call__, running native code that times each of its nodes, the times handed
        with the call's to every profiler in PROFILERS."""
        native = self.profiled_native()
        started = time.perf_counter()
        try:
            return self(leaves, native=native)
        finally:
            seconds = time.perf_counter() - started
            node_times, body_times = ({}, {}) if native is None else \
                (native.take_node_times(), native.take_body_times())
            for profiler in list(PROFILERS):
                profiler.record_call(self, started, seconds, node_times, body_times)

    def profiled_native(self):
        """The NativeGraph of this graph that times its nodes (built on first use), or
        None on the interpreter."""
        if self.backend != "native":
            return None
        with self._profiled_lock:
            if self._profiled is None:
                self._profiled = codegen.NativeGraph(self.graph, self.name, profile=True,
                                                     backward_step=backward_step_graph)
        return self._profiled

    def checked_native(self, kinds):
        """The NativeGraph of this graph that flags a NaN or an infinity (`kinds`)
        where any operation makes one (built on first use), or None on the
        interpreter."""
        if self.backend != "native":
            return None
        with self._profiled_lock:
            if kinds not in self._checked:
                self._checked[kinds] = codegen.NativeGraph(
                    self.graph, self.name, nan_checks=kinds,
                    backward_step=backward_step_graph)
        return self._checked[kinds]

    def __call__(self, leaves, check=None, native=None, into=None, extents=None):
        """The results for the argument leaves; `check(outputs)`, when given, sees
        every output before any Variable or array is written, and may raise. `native`:
        the NativeGraph to run instead of this one's own (profiled_call's). `into`: for
        each of the function's own results, an array of its type to write it into (and
        to return in its place), or None (out_arrays.py: checked by the caller).
        `extents`: the caller's memory_extents.Extents of `leaves`, if it made one."""
        variables, arguments, previous = None, leaves, []
        if self.state is not None:
            self.state.check_fixed(self.name)
            self.state.check_writable(leaves, self.name)
            variables = self.state.variables(leaves)
            leaves = self.state.inputs(leaves, variables)
        if native is None:
            native = self._native_for_call()
        if native is not None and variables is not None:
            previous = assigned_arrays(self.state, len(self.result_types()), variables)
        if leaves is not arguments:  # (the Variables' arrays joined them)
            extents = None
        destinations = None if native is None or (into is None and not previous) else \
            Destinations(into or [], leaves, self._kept_outputs, native.in_place,
                         [index for index, _ in previous], extents)
        adopted = False
        try:
            if native is not None:
                outputs = native.run(leaves, destinations and destinations.native(
                    len(self.graph.outputs)))
            else:
                outputs = [_owned(value, leaves) for value in eval_graph(self.graph, leaves)]
            del leaves  # (the Variables' old arrays are recycled only if nothing holds them)
            if check is not None:
                check(outputs)
            if variables is not None:
                outputs = self._write_back(variables, arguments, outputs)
                adopted = True
            if into is not None:
                deliver(into, outputs)
        finally:
            if destinations is not None:
                destinations.give_back(adopted)
        if adopted:
            recycle(previous, self._keep_output_buffer)
        results = [target if target is not None else _result(value, var.type)
                   for value, var, target in zip(outputs, self.graph.outputs,
                                                 into or [None] * len(outputs))]
        return pytree.unflatten(self.out_structure, results)

    def _keep_output_buffer(self, index, buffer):
        keep_buffer(self._kept_outputs, index, buffer)

    def result_types(self):
        """The TensorTypes of the function's own results (not the state it writes)."""
        count = len(self.graph.outputs) - (self.state.outputs if self.state else 0)
        return [var.type for var in self.graph.outputs[:count]]

    def _write_back(self, variables, arguments, outputs):
        """The function's own outputs; the new values of the Variables and of the
        arguments written into, which follow them, go there (only now that the whole
        graph has run)."""
        count = len(outputs) - self.state.outputs
        self.state.write_back(variables, arguments, outputs[count:])
        return outputs[:count]


class _NativeBuild:
    """A NativeGraph being built on a thread of its own: `native` when it is done, or
    the `error` that stopped it."""

    def __init__(self, make, name, executable, from_cache=True):
        """make(): the NativeGraph. from_cache: whether a first call may wait for code
        found in the disk cache (not for dynamic_axes' code for all sizes: its build may
        wait for another size's, which the first call would then wait for too)."""
        self.native = self.error = None
        self.from_cache = from_cache
        self.first_call_taken = self.warned = self.missed = False
        # Set when the build is done or has `missed`: found code missing from the disk
        # cache, which it compiles. Until then it may be linking cached code, a matter
        # of milliseconds.
        self.decided = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(make, executable),
                                       name=f"jitflow compile {name}")
        self.thread.start()

    def _run(self, make, executable):
        started = time.perf_counter()
        try:
            with codegen.reporting_misses(self._miss):
                self.native = make()
        except Exception as error:  # reported to the caller by Executable
            self.error = error
        finally:
            executable.build_seconds = time.perf_counter() - started
            self.decided.set()

    def _miss(self):
        self.missed = True
        self.decided.set()

    def done_from_cache(self):
        """Whether the build is done without compiling anything (waiting to find out).
        No timeout, and a build that compiled counts as such even if it is done by
        now: which code a call runs must not depend on timing."""
        if not self.from_cache:
            return False
        self.decided.wait()
        return not self.missed


def _maker(graph, name, make_first=None):
    """A function building the native code of `graph`: make_first's, where it gives
    one, else a NativeGraph of its own."""
    def make():
        native = make_first() if make_first is not None else None
        return native if native is not None else _native_graph(graph, name)
    return make


def _native_graph(graph, name):
    return codegen.NativeGraph(graph, name, backward_step=backward_step_graph)


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
