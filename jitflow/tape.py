"""jitflow.GradientTape: TensorFlow's way of asking for gradients, on the same graph
transform as jitflow.grad.

    with jitflow.GradientTape() as tape:
        loss = loss_fn(model(x), y)
    grads = tape.gradient(loss, model.trainable_variables)

While the tape is open it notes the value each watched Variable gave when first read
(trainable Variables are watched when read, others by `tape.watch`). `gradient` runs
the backward pass over the operations recorded since the tape opened, from the target
back to those values.

Inside @jitflow.function the operations are the function's own traced nodes, and the
gradient becomes more nodes of the same graph. Eagerly the tape records the operations
on the watched values as they run (trace.TapeBuilder; everything else stays plain
NumPy); when it closes, the values it recorded act as plain arrays again. A tape opened
inside another shares its recording, so the outer tape can differentiate the inner
tape's gradients.
"""
from . import numpy as jnp
from . import pytree, variable_scope
from .autodiff.linearize import result
from .autodiff.transform import backward_pass, differentiable, zeros
from .errors import at_user_line
from .ir.graph import Graph
from .trace import Stateful, TapeBuilder, Tracer
from .variable_scope import read_only

UNCONNECTED = ("none", "zero")


class GradientTape:
    def __init__(self, persistent=False, watch_accessed_variables=True):
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._scope = None
        self._used = False

    def __enter__(self):
        if self._scope is not None:
            raise RuntimeError(at_user_line("GradientTape: this tape is already recording"))
        self._scope = TapeScope(self, variable_scope.current())
        variable_scope.push(self._scope)
        return self

    def __exit__(self, *exc):
        variable_scope.pop(self._scope)
        self._scope.stop()

    def watch(self, variables):
        """Watch these Variables (one or a pytree of them) when they are read."""
        leaves = pytree.flatten(variables)[0]
        _check_variables(leaves, "GradientTape.watch")
        self._scope.watched.update(map(id, leaves))

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients="none"):
        """The gradient of `target` (summed over its elements, and over its leaves if it
        is a pytree) with respect to each Variable of `sources` (one, or a pytree: the
        result has the same structure). A Variable the target does not depend on gets
        None, or zeros with unconnected_gradients="zero". `output_gradients` seeds the
        backward pass instead of ones."""
        self._start_gradient(unconnected_gradients)
        variables, _, source_structure = pytree.flatten(sources)
        _check_variables(variables, "GradientTape.gradient")
        targets, _, structure = pytree.flatten(target)
        seeds = self._seeds(targets, output_gradients, structure)
        scope = self._scope
        reads = [scope.first_read(v) for v in variables]
        sources = [r._var for r in reads if r is not None]
        # (a complex Variable's interleaved value may be made while the tape records:
        # the node that made it is not part of what is differentiated)
        nodes = [n for n in scope.recorded() if not any(o in sources for o in n.outputs)]
        graph = Graph(sources, nodes, [t._var for t in targets if scope.recorded_value(t)])
        cts = iter(backward_pass(graph, scope.environment(), [
            s for t, s in zip(targets, seeds) if scope.recorded_value(t)]))
        grads = [next(cts) if r is not None else None for r in reads]
        grads = [_complex_gradient(v, _unconnected(v, g, unconnected_gradients))
                 for v, g in zip(variables, grads)]
        if not self.persistent:
            scope.release()
        return pytree.unflatten(source_structure, grads)

    def _start_gradient(self, unconnected_gradients):
        """Refuse a gradient the tape cannot give, and count this one."""
        if unconnected_gradients not in UNCONNECTED:
            raise ValueError(at_user_line(
                f"GradientTape.gradient: unconnected_gradients must be one of {UNCONNECTED}, "
                f"got {unconnected_gradients!r}"))
        if self._scope is None:
            raise RuntimeError(at_user_line(
                "GradientTape.gradient: the tape has recorded nothing; compute the target "
                "inside `with GradientTape() as tape:`"))
        if self._used and not self.persistent:
            raise RuntimeError(at_user_line(
                "GradientTape.gradient: a tape gives gradients once; make it with "
                "GradientTape(persistent=True) to ask again"))
        self._used = True

    def _seeds(self, targets, output_gradients, structure):
        if output_gradients is None:
            return [_ones_like(t) for t in targets]
        seeds, _, seed_structure = pytree.flatten(output_gradients)
        if seed_structure != structure:
            raise ValueError(at_user_line(
                "GradientTape.gradient: output_gradients must have the target's structure"))
        return seeds


class TapeScope:
    """The Variables a tape sees while open (variable_scope's protocol: read, assign).

    Inside a trace it reads through the function's TraceScope (`inner`) and records on
    its builder. Eagerly it gives each watched Variable a recorded value (TapeBuilder),
    shared with an enclosing tape's."""

    def __init__(self, tape, inner):
        self.tape, self.inner = tape, inner
        self.builder = inner.builder if inner is not None else TapeBuilder()
        self.start = len(self.builder.nodes)  # what the tape records begins here
        self.watched = set()  # id() of Variables watched explicitly
        self._reads = {}  # id(Variable) -> its value when first read, while watched
        self._complex = {}  # id(complex Variable) -> what its reads give (_read_complex)
        self._released = False

    def _watches(self, variable):
        return id(variable) in self.watched or (
            self.tape.watch_accessed_variables and variable.trainable)

    def read(self, variable):
        key = id(variable)
        if key in self._reads:
            if self.inner is None:
                return self._complex.get(key, self._reads[key])
            value = self.inner.read(variable)
            seen, derived = self._complex.get(key, (None, None))
            return derived if value is seen else value  # (a new value once assigned)
        if self.inner is not None:
            value = self.inner.read(variable)
        elif self._watches(variable):
            value = read_only(variable, self.builder.new_input(
                variable_scope.leaf_type(variable), f"Variable {variable.name!r}",
                variable_scope.held_leaf(variable)))
        else:
            return variable.held()
        if not self._watches(variable):
            return value
        if variable.type.dtype.kind != "c":
            self._reads[key] = value
            return value
        return self._read_complex(variable, value)

    def _read_complex(self, variable, value):
        """A complex Variable's value is differentiated through one real array, its
        parts interleaved: that is what the tape notes as read (the value the function
        computes with is made of it)."""
        key = id(variable)
        leaf = value if isinstance(value, Tracer) else pytree.as_interleaved(value)
        derived = pytree.from_interleaved(leaf, variable.type.dtype)
        self._reads[key] = leaf
        self._complex[key] = derived if self.inner is None else (value, derived)
        return derived

    def assign(self, variable, value):
        if self.inner is not None:
            self.inner.assign(variable, value)
            return
        self._reads.pop(id(variable), None)  # later reads see a new, unrecorded value
        self._complex.pop(id(variable), None)
        variable.store(value._value("assign") if isinstance(value, Tracer) else value)

    def first_read(self, variable):
        """The recorded value the Variable gave when first read (None if it was not
        read, or not watched)."""
        return self._reads.get(id(variable))

    def stop(self):
        """The tape closes: an eager tape's values act as arrays again."""
        if isinstance(self.builder, TapeBuilder) and self.inner is None:
            self.builder.settle()

    def recorded(self):
        if self._released:
            raise RuntimeError("GradientTape: the tape's recording was released")
        return self.builder.nodes[self.start:]

    def recorded_value(self, value):
        return isinstance(value, Tracer) and self.builder.sources.get(value._var) is not None

    def environment(self):
        """Every recorded value, as the backward pass reads them: concrete eagerly (the
        gradient is computed at once), traced inside a trace or while an enclosing tape
        records (so the gradient is recorded too)."""
        if isinstance(self.builder, TapeBuilder) and not self.builder.live:
            return self.builder.values
        return _Traced(self.builder)

    def release(self):
        self._released = True
        if isinstance(self.builder, TapeBuilder) and not self.builder.live:
            self.builder.values, self.builder.nodes = {}, []


class _Traced(dict):
    """Var -> the Tracer of `builder` standing for it, made on first use."""

    def __init__(self, builder):
        super().__init__()
        self.builder = builder

    def __missing__(self, var):
        tracer = self[var] = Tracer(var, self.builder)
        return tracer


def _check_variables(leaves, what):
    for leaf in leaves:
        if not isinstance(leaf, Stateful):
            raise TypeError(at_user_line(
                f"{what}: expected Variables, got a {type(leaf).__name__}; the tape "
                f"differentiates with respect to jitflow.Variable objects"))


def _complex_gradient(variable, cotangent):
    """A complex Variable's gradient from its interleaved parts' cotangent (dL/dx,
    dL/dy): dL/dx - i dL/dy, jitflow.grad's convention (JAX's and autograd's)."""
    if variable.type.dtype.kind != "c" or cotangent is None:
        return cotangent
    structure = (pytree.Complex, variable.dtype, (pytree.LEAF,))
    return pytree.unflatten(structure, [cotangent], conjugate=True)


def _ones_like(target):
    return jnp.ones_like(target)


def _unconnected(variable, gradient, unconnected_gradients):
    if gradient is None:
        type = variable_scope.leaf_type(variable)  # (a complex one's: its parts)
        if unconnected_gradients == "zero" and differentiable(type):
            return result(zeros(type))
        return None
    return result(gradient)
