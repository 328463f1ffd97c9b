"""Variables inside @jitflow.function: their reads become graph inputs, their
assignments graph outputs. So do the other arrays a call reads and writes besides its
arguments' values: writes into array arguments, and the ndarrays the function closes
over (read at every call, written back after it).

While a function is traced a TraceScope is active. The first read of a Variable adds an
input to the graph, standing for the Variable's value when the function is called; an
assignment changes what later reads see; the last value assigned to each Variable is an
output. The traced signature keeps a VariableState: at each call it finds the Variables
(closed over, or passed as arguments), hands their arrays to the graph, and writes the
new values back once the graph has returned.
"""
import contextlib
import sys
from dataclasses import dataclass, field

import numpy as np

from . import pytree
from .errors import at_user_line
from .trace.per_thread import PerThreadStack
from .ir.graph import Graph, Lit
from .ir.types import TensorType
from .trace import GraphBuilder, Stateful, Tracer, innermost_builder
from .trace.aliases import mark_array, mark_readonly

_SCOPES = PerThreadStack()  # this thread's scopes, innermost last
# Context managers entered around each trace, given its TraceScope: features built on
# the layers above register here (jitflow.random traces NumPy's random calls).
TRACE_CONTEXTS = []


def current():
    """The scope Variables are read and assigned through now: the TraceScope of the
    function being traced, or a GradientTape's (tape.py); None eagerly."""
    return _SCOPES[-1] if _SCOPES else None


def push(scope):
    _SCOPES.append(scope)


def pop(scope):
    _SCOPES.remove(scope)


@dataclass(frozen=True)
class VariableArgument:
    """In a signature: the argument leaf is the Variable `identity` (its id()), of
    `type`. Another Variable is another signature: what the trace did with a Variable
    may have keyed state to it (an optimizer's slots), and equal identities say how
    arguments alias."""
    type: TensorType
    identity: int
    name: str = field(compare=False)

    def __str__(self):
        return f"Variable {self.name!r} ({self.type})"


@dataclass(frozen=True)
class Slot:
    """A Variable the graph reads: the argument leaf that holds it, or the Variable
    itself when the function closes over it."""
    argument: int = None
    variable: Stateful = None


class TraceScope:
    def __init__(self, builder, leaves):
        self.builder = builder
        self._argument_of = {}
        for index, leaf in enumerate(leaves):
            if isinstance(leaf, Stateful):
                self._argument_of.setdefault(id(leaf), index)
        self.slots = []
        self._variables = []  # the Variable of each slot, while tracing
        self._slot_of = {}  # id(Variable) -> its slot
        self._values = {}  # id(Variable) -> what a read gives now
        self._assigned = []  # slots assigned to, in order

    def __enter__(self):
        push(self)
        return self

    def __exit__(self, *exc):
        pop(self)

    def read(self, variable):
        key = id(variable)
        if key not in self._values:
            argument = self._argument_of.get(key)
            self._slot_of[key] = len(self.slots)
            self.slots.append(Slot(argument, variable if argument is None else None))
            self._variables.append(variable)
            self._values[key] = _traced_value(variable, self.builder)
        return self._values[key]

    def assign(self, variable, value):
        if innermost_builder() is not self.builder:
            raise TypeError(at_user_line(
                f"Variable {variable.name!r}: assigned inside a transformation (grad, "
                f"vmap, ...) or a branch or loop body (cond, while_loop, scan, ...) of the "
                f"traced function; assign to Variables in the function itself, from the "
                f"results"))
        self.read(variable)
        self._values[id(variable)] = value
        slot = self._slot_of[id(variable)]
        if slot not in self._assigned:
            self._assigned.append(slot)

    def carry(self, state):
        """Read `state` (a Stateful) and give it back unchanged as an output, wherever
        the trace is: its `adopt` then runs after each call that succeeds."""
        value = self.read(state)
        slot = self._slot_of[id(state)]
        if slot not in self._assigned:
            self._assigned.append(slot)
        return value

    def assigned_values(self):
        """The graph outputs of the Variables assigned (a complex one's: its parts
        interleaved, as its input)."""
        values = []
        for slot in self._assigned:
            variable = self._variables[slot]
            value = self._values[id(variable)]
            values.append(pytree.as_interleaved(value) if _is_complex(variable) else value)
        return values

    def state(self, written=(), paths=(), closed=(), closed_written=(), fixed=()):
        """What calls need (None when the function touches no Variable, writes into no
        argument, and reads no closed-over array)."""
        if not (self.slots or written or closed or fixed):
            return None
        return VariableState(self.slots, self._assigned, written, paths, closed,
                             closed_written, fixed)


def _is_complex(variable):
    """(`variable` is any Stateful: a Variable, a random generator's state...) A
    Variable's dtype is read without building its TensorType: every call asks this of
    every Variable twice, 50 times a step for the digits convnet's Adam step, and it
    took 2.0 us a time that way against 0.5 now."""
    dtype = getattr(variable, "dtype", None)
    return (variable.type.dtype if dtype is None else dtype).kind == "c"


def held_leaf(variable):
    """The array a Variable hands compiled code: a complex one's as a real view with
    a last axis of 2 (real, imaginary), as complex arguments cross."""
    array = variable.held()
    return pytree.as_interleaved(array) if _is_complex(variable) else array


def leaf_type(variable):
    """The graph input type of `variable`'s value (held_leaf's)."""
    if not _is_complex(variable):
        return variable.type
    dtype, shape = variable.type.dtype, variable.type.shape
    part = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
    return TensorType(tuple(shape) + (2,), part)


def _traced_value(variable, builder):
    """A new graph input standing for `variable`'s value, as the trace reads it."""
    tracer = read_only(variable, builder.new_input(leaf_type(variable),
                                                   f"Variable {variable.name!r}"))
    if _is_complex(variable):
        return pytree.from_interleaved(tracer, variable.type.dtype)
    return tracer


def _held_from_leaf(variable, value):
    """What a Variable holds of its graph output: a complex one's real array viewed as
    complex again."""
    if not _is_complex(variable):
        return value
    return pytree.from_interleaved(value, variable.type.dtype)


def read_only(variable, tracer):
    """A Variable's value read in a trace: writing into it would not assign it (and
    eagerly the array a Variable holds is read-only)."""
    return mark_readonly(tracer, f"the value of Variable {variable.name!r}; change a "
                                 f"Variable with .assign(...)")


def trace_with_variables(fn, leaves, types, paths, name, locations=None):
    """Trace fn(leaves) -> output leaves, where `leaves` are the arguments' leaves and
    `types` their signature types: a graph taking the array leaves, then each Variable
    read, and giving fn's outputs, then each Variable's new value, then the new value of
    each array argument written into. Returns the graph and its VariableState.
    `locations`, a dict, gets the user's (file, line) of each Var (GraphBuilder)."""
    with GraphBuilder(name) as builder, TraceScope(builder, leaves) as scope, \
            contextlib.ExitStack() as contexts:
        for context in TRACE_CONTEXTS:
            contexts.enter_context(context(scope))
        builder.closed = {}  # writable ndarrays read: inputs (trace.py)
        builder.locations = locations
        arguments = _arguments(builder, leaves, types, paths)
        given = [a._var if isinstance(a, Tracer) else None for a in arguments]
        outputs = [scope.read(out) if isinstance(out, Stateful) else out
                   for out in fn(arguments)]
        written = [i for i, (a, var) in enumerate(zip(arguments, given))
                   if var is not None and a._var is not var]
        for out in outputs:
            builder.operand(out)  # an array returned as it is is read like any other
        constants = _temporaries(builder)
        fixed = [entry for entry in builder.fixed  # (no name for the array itself:
                 if not _only_the_builders(entry[0])]  # it would count as a reference)
        closed = list(builder.closed.values())
        closed_written = [i for i, (_, tracer, var) in enumerate(closed)
                          if tracer._var is not var]
        graph = builder.build(outputs + scope.assigned_values() +
                              [arguments[i] for i in written] +
                              [closed[i][1] for i in closed_written])
    graph = _with_constants(graph, constants)
    return graph, scope.state(written, paths, [array for array, _, _ in closed],
                              closed_written, fixed)


def _arguments(builder, leaves, types, paths):
    """What the function is called with while traced: a Variable as it is, an array
    or a number as an input Tracer (an ndarray's takes writes, even 0-d)."""
    arguments = []
    for leaf, type, path in zip(leaves, types, paths):
        if isinstance(type, VariableArgument):
            arguments.append(leaf)
            continue
        tracer = builder.new_input(type, path)
        arguments.append(mark_array(tracer) if isinstance(leaf, np.ndarray) else tracer)
    return arguments


def _temporaries(builder):
    """Take out of builder.closed the arrays the function made for itself (nothing
    but the builder refers to them now, so they can never change): constants, as
    {input Var: Lit}."""
    constants = {}
    for key in list(builder.closed):
        if _only_the_builders(builder.closed[key][0]):
            array, _, var = builder.closed.pop(key)
            constants[var] = Lit(array, var.type)
    return constants


def _only_the_builders(array):
    """Whether nothing outside builder.closed refers to `array`, nor to the arrays
    whose memory it views (a view of a user's array is not the function's own)."""
    # each holds 3 references: the builder's entry (or its view's .base), the local
    # name, and getrefcount's argument (callers pass it without naming it)
    while isinstance(array, np.ndarray):
        if sys.getrefcount(array) > 3:
            return False
        array = array.base
    return array is None


def closed_as_constants(graph, state):
    """graph with the closed-over arrays' inputs replaced by their contents now (the
    graph as it computes at this moment, for inspection)."""
    closed = state.closed if state is not None else ()
    if not closed:
        return graph
    inputs = graph.inputs[len(graph.inputs) - len(closed):]
    return _with_constants(graph, {var: Lit(np.array(array), var.type)
                                   for var, array in zip(inputs, closed)})


def _with_constants(graph, constants):
    """graph with the inputs `constants` maps replaced by the Lits it gives."""
    if not constants:
        return graph
    nodes = [node.replace(inputs=[constants.get(v, v) for v in node.inputs])
             for node in graph.nodes]
    return Graph([v for v in graph.inputs if v not in constants], nodes,
                 [constants.get(v, v) for v in graph.outputs])


class VariableState:
    """The state a traced signature reads and writes besides its arguments' values:

    - the Variables it reads (`slots`: inputs after the array arguments) and assigns
      (`assigned`, indices into slots: outputs after the function's own);
    - the array arguments it writes into (`written`, indices of argument leaves: the
      outputs after the Variables');
    - the writable ndarrays it closes over (`closed`: the last inputs, their contents
      at each call) and those it writes into (`closed_written`, indices into closed:
      the last outputs).
    """

    def __init__(self, slots, assigned, written=(), paths=(), closed=(),
                 closed_written=(), fixed=()):
        self.slots = tuple(slots)
        self.assigned = tuple(assigned)
        self.written = tuple(written)
        self.paths = tuple(paths)
        self.closed = tuple(closed)
        self.closed_written = tuple(closed_written)
        self.fixed = tuple(fixed)  # (array, its contents when traced)

    @property
    def reads_only(self):
        """Whether calls only read closed-over arrays (native code can take them
        straight after the arguments)."""
        return not (self.slots or self.written or self.closed_written or self.fixed)

    def check_fixed(self, name):
        """Before a call: the arrays whose contents the trace depends on hold them
        still (else NumPy would take other elements than the traced code does)."""
        for array, then in self.fixed:
            if not np.array_equal(array, then):
                raise ValueError(at_user_line(
                    f"{name}: a {array.dtype} array of shape {array.shape} it closes "
                    f"over, used as a mask, changed since the function was traced, "
                    f"and the traced code takes the elements the mask chose then; "
                    f"make a new jitflow.function after changing it, or select with "
                    f"jitflow.numpy.where(mask, x, y)"))

    @property
    def outputs(self):
        """How many of the graph's outputs are state, after the function's own."""
        return len(self.assigned) + len(self.written) + len(self.closed_written)

    def variables(self, leaves):
        """The Variable of each slot for this call's argument leaves (the signature
        holds the same Variables the trace saw)."""
        return [slot.variable if slot.argument is None else leaves[slot.argument]
                for slot in self.slots]

    def inputs(self, leaves, variables):
        return [leaf for leaf in leaves if not isinstance(leaf, Stateful)] + \
            [held_leaf(variable) for variable in variables] + list(self.closed)

    def check_writable(self, leaves, name):
        """Before a call: every array written into can take the write, and shares
        memory with no other array the function reads (the write would show through
        both in NumPy, while the function computed with each apart)."""
        if not (self.written or self.closed_written):
            return
        if len(leaves) == 1 and not self.closed and leaves[0].flags.writeable:
            return  # one array: nothing it could share memory with
        arrays = [(f"argument '{self.paths[i]}'", leaf) for i, leaf in enumerate(leaves)
                  if isinstance(leaf, np.ndarray)]
        arrays += [(f"a closed-over array {a.dtype}{list(a.shape)}", a)
                   for a in self.closed]
        for position in self._written_positions(leaves):
            what, target = arrays[position]
            if not target.flags.writeable:
                raise ValueError(at_user_line(
                    f"{name}: {what} is written into but it is read-only (assignment "
                    f"destination is read-only)"))
            for index, (other, array) in enumerate(arrays):
                if index != position and _overlap(target, array):
                    raise ValueError(at_user_line(
                        f"{name}: {what} is written into and shares memory with "
                        f"{other}; jitflow cannot honour NumPy's aliasing there: pass "
                        f"a copy of one"))

    def _written_positions(self, leaves):
        """Positions in check_writable's list of arrays of those written into."""
        arrays = [i for i, leaf in enumerate(leaves) if isinstance(leaf, np.ndarray)]
        return [arrays.index(i) for i in self.written] + \
            [len(arrays) + i for i in self.closed_written]

    def write_back(self, variables, leaves, values):
        """Hold the Variables' new values (fresh arrays nothing else refers to); copy
        the written arguments' into the caller's arrays."""
        count, arguments = len(self.assigned), len(self.assigned) + len(self.written)
        for slot, value in zip(self.assigned, values[:count], strict=True):
            variables[slot].adopt(_held_from_leaf(variables[slot], value))
        # (same dtypes and shapes: a plain copy, faster than np.copyto's dispatch)
        for index, value in zip(self.written, values[count:arguments], strict=True):
            leaves[index][...] = value
        for index, value in zip(self.closed_written, values[arguments:], strict=True):
            self.closed[index][...] = value


def _overlap(a, b):
    """Whether arrays a and b have an element in common (the real and imaginary parts
    of one complex array share memory but no element); where telling is too much work,
    assume they do."""
    if not np.may_share_memory(a, b):
        return False
    try:
        return np.shares_memory(a, b, max_work=10_000)
    except np.exceptions.TooHardError:
        return True
