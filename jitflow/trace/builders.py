"""The tracing context: the builders that collect nodes while a function runs on Tracers,
the stack of active ones, and make_graph."""
import contextlib

import numpy as np

from ..errors import TracerLeakError, at_user_line, user_frame
from ..ir.graph import Graph, Lit, Node, Var
from ..ir.interpret import as_operand
from ..ir.types import ShapeError, is_floating, type_of_value
from .aliases import mark_array
from .per_thread import PerThreadStack
from .tracer import NO_VALUE, Tracer

_ACTIVE_BUILDERS = PerThreadStack()  # this thread's builders, innermost last
_LIVE_TAPES = PerThreadStack()  # TapeBuilders recording (which are never active builders)
# Context managers, each called with a description, entered while a function is traced
# once to stand for many runs of it outside a compiled function (an eager vmap): the
# layers above register what must not happen once for all the runs (random/numpy_rng.py
# refuses NumPy's random draws, which would give every run the same numbers).
MANY_RUNS_CONTEXTS = []


@contextlib.contextmanager
def standing_for_many_runs(what):
    with contextlib.ExitStack() as contexts:
        for context in MANY_RUNS_CONTEXTS:
            contexts.enter_context(context(what))
        yield


class GraphBuilder:
    """Collects nodes while a Python function runs on Tracers.

    `sources` maps each Var to the names of the function arguments it was computed from,
    so errors can say which argument a traced value came from. A builder nested in another
    (the body of a loop, say) captures outer Tracers as extra inputs.
    """

    def __init__(self, name="function"):
        self.name = name
        self.inputs = []
        self.nodes = []
        self.sources = {}
        # Var -> (file, line) of the user's code that made it, when asked for (a dict
        # given by the profiler's traces: finding the line costs a walk of the stack)
        self.locations = None
        self.captured = {}  # outer Tracer's Var -> (outer Tracer, inner input Var)
        # id(ndarray) -> (ndarray, its Tracer, its input Var): the writable arrays the
        # function reads, inputs standing for their contents at each call; None where
        # arrays are constants (a @jitflow.function's trace turns this on:
        # variable_scope.trace_with_variables)
        self.closed = None
        # (ndarray, a copy): writable arrays whose contents the trace depends on (a
        # mask's positions, say), as they were then; checked at each call
        self.fixed = []

    def __enter__(self):
        _ACTIVE_BUILDERS.append(self)
        return self

    def __exit__(self, *exc):
        _ACTIVE_BUILDERS.remove(self)

    def new_input(self, type, source):
        var = Var(type)
        self.inputs.append(var)
        self.sources[var] = frozenset([source])
        return Tracer(var, self)

    def operand(self, value):
        """The Var or Lit a bind argument becomes inside this builder."""
        if isinstance(value, Tracer):
            if value._builder is self:
                return value._var
            return self._capture(value)
        if isinstance(value, np.ndarray) and _may_change(value):
            value = _unwatched(value)
            tracer = self.array_input(value)
            if tracer is not None:
                return self.operand(tracer)
        if isinstance(value, (list, tuple)):
            value = np.asarray(value)
        if isinstance(value, str):
            raise TypeError(at_user_line(f"{value!r} is a string, not an array or a number"))
        if isinstance(value, int) and not -2**63 <= value < 2**63:
            # NumPy converts it for float arrays and comparisons; jitflow keeps Python
            # ints as (weak) int64, so it says so instead of failing inside NumPy.
            raise OverflowError(at_user_line(
                f"the Python integer {value} does not fit in int64, which jitflow keeps "
                f"Python integers in; write it as a float ({float(value)!r}) or an array"))
        return Lit(value, type_of_value(value))

    def array_input(self, array):
        """The Tracer standing for the contents of the ndarray `array` at each call (the
        one builder taking arrays as inputs, around this one, makes it), or None."""
        if self.closed is None:
            outer = _builders_around(self)
            return next((b.array_input(array) for b in outer if b.closed is not None),
                        None)
        array = _unwatched(array)
        entry = self.closed.get(id(array))
        if entry is None:
            tracer = mark_array(self.new_input(type_of_value(array), None))
            self.inputs.pop()  # closed-over arrays come last (build)
            self.sources[tracer._var] = frozenset()  # no argument's
            entry = self.closed[id(array)] = (array, tracer, tracer._var)
        return entry[1]

    def _capture(self, tracer):
        if tracer._builder not in _ACTIVE_BUILDERS and not tracer._builder.live:
            raise TracerLeakError(at_user_line(
                f"a traced value {tracer._var.type} from a finished trace of "
                f"'{tracer._builder.name}' was used; traced values live only while their "
                f"function is being traced (return it from the function instead of "
                f"storing it in a global or a closure)"))
        if tracer._var not in self.captured:
            var = Var(tracer._var.type)
            self.captured[tracer._var] = (tracer, var)
            self.sources[var] = tracer._builder.sources.get(tracer._var, frozenset())
        return self.captured[tracer._var][1]

    records_values = False
    live = False  # whether it records without being active (an eager GradientTape's)
    # whether its graph runs exactly once each time the enclosing one runs (a derivative's
    # forward pass, replayed once; not a loop body, a vmap, or a branch that may not run)
    runs_once = False

    def value_of(self, var):
        return NO_VALUE

    def carries_derivative(self, var):
        """Whether `var` holds a value a derivative is being taken through (only a
        builder that records values can hand one out as an array)."""
        return False

    def add_node(self, prim, operands, params, subgraphs=()):
        in_types = [v.type for v in operands]
        try:
            out_types = prim.infer_types(*in_types, subgraphs=subgraphs, **params)
        except (ShapeError, TypeError, ValueError, IndexError, OverflowError) as error:
            raise type(error)(at_user_line(f"{prim.name}: {error}")) from None
        outputs = [Var(t) for t in out_types]
        self.nodes.append(Node(prim, operands, params, outputs, subgraphs))
        sources = frozenset().union(*(self.sources.get(v, ()) for v in operands
                                      if isinstance(v, Var)))
        for var in outputs:
            self.sources[var] = sources
        if self.locations is not None:
            frame = user_frame()
            if frame is not None:
                for var in outputs:
                    self.locations[var] = (frame.f_code.co_filename, frame.f_lineno)
        return [Tracer(var, self) for var in outputs]

    def build(self, outputs):
        """The Graph of everything traced, returning `outputs` (Tracers or constants).

        Captured outer values become inputs after the declared ones.
        """
        out_values = [self.operand(v) for v in outputs]
        inputs = self.inputs + [var for _, var in self.captured.values()]
        if self.closed:
            inputs += [var for _, _, var in self.closed.values()]
        return Graph(inputs, self.nodes, out_values)

    def outer_values(self):
        """The values the captured inputs stand for, in the enclosing trace (or eager)."""
        return [tracer for tracer, _ in self.captured.values()]


def fixed_while_traced(array):
    """The trace being made depends on the contents `array` has now (a constant mask
    decides which elements are taken): a call finding them changed raises
    (VariableState.check_fixed in variable_scope.py)."""
    builder = innermost_builder()
    if builder is None or not _may_change(array):
        return
    for outer in [builder] + _builders_around(builder):
        if outer.closed is not None:
            outer.fixed.append((array, array.copy()))
            return


def _builders_around(builder):
    """The active builders that enclose `builder`, innermost first."""
    if builder not in _ACTIVE_BUILDERS:
        return []
    return list(reversed(_ACTIVE_BUILDERS[:_ACTIVE_BUILDERS.index(builder)]))


def _unwatched(array):
    """The array itself for a view that watches NumPy's reads of a named array while the
    function is traced (watched_arrays.py): the trace reads its memory at each call."""
    unwatched = getattr(array, "_jitflow_unwatched", None)
    return array if unwatched is None else unwatched()


def _may_change(array):
    """Whether an ndarray's contents may change later: it is writable, or a read-only
    view of a writable array. (Read-only arrays nobody can write are constants.)"""
    while isinstance(array, np.ndarray):
        if array.flags.writeable:
            return True
        array = array.base
    return False


class RecordingBuilder(GraphBuilder):
    """A builder that also computes every value as it records it: the function runs on
    concrete values (print, float(), `if` on values and pdb all work) while its graph
    is recorded for differentiation. Used for eager derivatives. `derived` holds the
    values a derivative goes through, which np.asarray may not turn into plain arrays."""
    records_values = True

    def __init__(self, name="function"):
        super().__init__(name)
        self.values = {}
        self.derived = set()  # float Vars computed from the inputs (not via stop_gradient)

    def value_of(self, var):
        return self.values[var]

    def carries_derivative(self, var):
        return var in self.derived

    def new_input(self, type, source, value=NO_VALUE):
        tracer = super().new_input(type, source)
        if isinstance(value, Tracer):  # an enclosing recording's: its value, not an array
            value = value._builder.value_of(value._var)
        self.values[tracer._var] = as_operand(value, type)
        if is_floating(type.dtype):
            self.derived.add(tracer._var)
        return tracer

    def _capture(self, tracer):
        var = super()._capture(tracer)
        self.values[var] = tracer._builder.value_of(tracer._var)
        if tracer._builder.carries_derivative(tracer._var):
            self.derived.add(var)
        return var

    def add_node(self, prim, operands, params, subgraphs=()):
        tracers = super().add_node(prim, operands, params, subgraphs)
        node = self.nodes[-1]
        outs = prim.evaluate(*map(self._read, operands), subgraphs=subgraphs, **params)
        for var, value in zip(node.outputs, outs, strict=True):
            self.values[var] = as_operand(value, var.type)
        if prim.name != "stop_gradient" and any(v in self.derived for v in operands
                                                 if isinstance(v, Var)):
            self.derived.update(v for v in node.outputs if is_floating(v.type.dtype))
        return tracers

    def _read(self, operand):
        if isinstance(operand, Lit):
            return as_operand(operand.value, operand.type)
        return self.values[operand]


class TapeBuilder(RecordingBuilder):
    """The recording of an eager GradientTape. It is never the active builder: it
    records the operations on its own Tracers only (bind finds it through them), so
    work on plain arrays inside the tape stays plain NumPy. When the tape stops
    recording (`settle`), each Tracer it made keeps only its value, and operations use
    that value as a plain array."""

    def __init__(self, name="GradientTape"):
        super().__init__(name)
        self.live = True
        self._made = []  # every Tracer handed out, to settle
        _LIVE_TAPES.append(self)

    def new_input(self, type, source, value=NO_VALUE):
        tracer = super().new_input(type, source, value)
        self._made.append(tracer)
        return tracer

    def add_node(self, prim, operands, params, subgraphs=()):
        tracers = super().add_node(prim, operands, params, subgraphs)
        self._made.extend(tracers)
        return tracers

    def settle(self):
        for tracer in self._made:
            tracer._builder = Settled(self.values[tracer._var])
        self._made, self.live = [], False
        _LIVE_TAPES.remove(self)


class Settled:
    """What a Tracer of a settled TapeBuilder holds instead of its builder: its value."""
    __slots__ = ("value",)
    records_values = True
    live = False
    name = "a finished GradientTape"
    sources = {}

    def __init__(self, value):
        self.value = value

    def value_of(self, var):
        return self.value

    def carries_derivative(self, var):
        return False

def is_tracing():
    return bool(_ACTIVE_BUILDERS)


def tape_recording():
    """Whether an eager GradientTape is recording."""
    return bool(_LIVE_TAPES)


def builders_within(builder):
    """The active builders nested inside `builder` (innermost last)."""
    return _ACTIVE_BUILDERS[_ACTIVE_BUILDERS.index(builder) + 1:]


def innermost_builder():
    return _ACTIVE_BUILDERS[-1] if _ACTIVE_BUILDERS else None

def make_graph(fn, in_types, sources, name="function"):
    """Trace fn on Tracers of `in_types`; fn returns a flat list of outputs."""
    with GraphBuilder(name) as builder:
        tracers = [builder.new_input(t, s) for t, s in zip(in_types, sources, strict=True)]
        outputs = fn(*tracers)
    return builder.build(outputs)

