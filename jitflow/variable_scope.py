"""Variables inside @jitflow.function: their reads become graph inputs, their
assignments graph outputs.

While a function is traced a TraceScope is active. The first read of a Variable adds an
input to the graph, standing for the Variable's value when the function is called; an
assignment changes what later reads see; the last value assigned to each Variable is an
output. The traced signature keeps a VariableState: at each call it finds the Variables
(closed over, or passed as arguments), hands their arrays to the graph, and writes the
new values back once the graph has returned.
"""
import contextlib
from dataclasses import dataclass, field

from .errors import at_user_line
from .ir.types import TensorType
from .trace import GraphBuilder, Stateful, innermost_builder

_SCOPES = []
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
            self._values[key] = self.builder.new_input(variable.type,
                                                       f"Variable {variable.name!r}")
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
        return [self._values[id(self._variables[slot])] for slot in self._assigned]

    def state(self):
        """What calls need (None when the function touches no Variable)."""
        return VariableState(self.slots, self._assigned) if self.slots else None


def trace_with_variables(fn, leaves, types, paths, name):
    """Trace fn(leaves) -> output leaves, where `leaves` are the arguments' leaves and
    `types` their signature types: a graph taking the array leaves, then each Variable
    read, and giving fn's outputs, then each Variable's new value. Returns the graph and
    its VariableState."""
    with GraphBuilder(name) as builder, TraceScope(builder, leaves) as scope, \
            contextlib.ExitStack() as contexts:
        for context in TRACE_CONTEXTS:
            contexts.enter_context(context(scope))
        tracers = iter([builder.new_input(t, p) for t, p in zip(types, paths)
                        if not isinstance(t, VariableArgument)])
        arguments = [leaf if isinstance(t, VariableArgument) else next(tracers)
                     for leaf, t in zip(leaves, types)]
        outputs = [scope.read(out) if isinstance(out, Stateful) else out
                   for out in fn(arguments)]
        graph = builder.build(outputs + scope.assigned_values())
    return graph, scope.state()


class VariableState:
    """The Variables a traced signature reads (`slots`, its last inputs) and assigns
    (`assigned`, indices into slots, its last outputs)."""

    def __init__(self, slots, assigned):
        self.slots = tuple(slots)
        self.assigned = tuple(assigned)

    def variables(self, leaves):
        """The Variable of each slot for this call's argument leaves (the signature
        holds the same Variables the trace saw)."""
        return [slot.variable if slot.argument is None else leaves[slot.argument]
                for slot in self.slots]

    def inputs(self, leaves, variables):
        return [leaf for leaf in leaves if not isinstance(leaf, Stateful)] + \
            [variable.held() for variable in variables]

    def write_back(self, variables, values):
        """Hold the new values (fresh arrays nothing else refers to)."""
        for slot, value in zip(self.assigned, values, strict=True):
            variables[slot].adopt(value)
