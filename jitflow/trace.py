"""Tracing: Tracer values, the graph builder, and bind().

bind(prim, *arrays, **params) is the single entry of every operation. Outside a trace it
runs the primitive's NumPy impl (eager mode). Inside one it appends a Node to the active
GraphBuilder and returns Tracers standing for the node's outputs.
"""
import contextlib
import operator

import numpy as np

from .errors import ConcretizationError, TracerLeakError, at_user_line, user_location
from .ir.graph import Graph, Lit, Node, Var
from .ir.interpret import as_operand
from .ir.types import ShapeError, TensorType, as_dtype, type_of_value

_ACTIVE_BUILDERS = []
_LIVE_TAPES = []  # TapeBuilders recording (which are never active builders)
_STAND_INS = []  # stack of {Var of a Tracer: the value it stands for now}
NO_VALUE = object()  # what a Tracer of a builder that does not record values holds


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
        self.captured = {}  # outer Tracer's Var -> (outer Tracer, inner input Var)

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

    def value_of(self, var):
        return NO_VALUE

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
        return [Tracer(var, self) for var in outputs]

    def build(self, outputs):
        """The Graph of everything traced, returning `outputs` (Tracers or constants).

        Captured outer values become inputs after the declared ones.
        """
        out_values = [self.operand(v) for v in outputs]
        inputs = self.inputs + [var for _, var in self.captured.values()]
        return Graph(inputs, self.nodes, out_values)

    def outer_values(self):
        """The values the captured inputs stand for, in the enclosing trace (or eager)."""
        return [tracer for tracer, _ in self.captured.values()]


class RecordingBuilder(GraphBuilder):
    """A builder that also computes every value as it records it: the function runs on
    concrete values (print, np.asarray, `if` on values and pdb all work) while its graph
    is recorded for differentiation. Used for eager derivatives."""
    records_values = True

    def __init__(self, name="function"):
        super().__init__(name)
        self.values = {}

    def value_of(self, var):
        return self.values[var]

    def new_input(self, type, source, value=NO_VALUE):
        tracer = super().new_input(type, source)
        self.values[tracer._var] = as_operand(value, type)
        return tracer

    def _capture(self, tracer):
        var = super()._capture(tracer)
        self.values[var] = tracer._builder.value_of(tracer._var)
        return var

    def add_node(self, prim, operands, params, subgraphs=()):
        tracers = super().add_node(prim, operands, params, subgraphs)
        node = self.nodes[-1]
        outs = prim.evaluate(*map(self._read, operands), subgraphs=subgraphs, **params)
        for var, value in zip(node.outputs, outs, strict=True):
            self.values[var] = as_operand(value, var.type)
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


def _plain(arg):
    """A Stateful's value now; a settled Tracer's value; anything else as it is."""
    if isinstance(arg, Stateful):
        return arg.read()
    if isinstance(arg, Tracer) and arg._builder.__class__ is Settled:
        return arg._builder.value
    return arg


@contextlib.contextmanager
def standing_in(pairs):
    """While it lasts, each (Tracer, value) pair's Tracer means `value`. A user's
    derivative rule (custom_vjp's fwd and bwd) runs after the trace whose values it
    closes over has moved on: it sees the values those stand for where it runs."""
    _STAND_INS.append({tracer._var: value for tracer, value in pairs})
    try:
        yield
    finally:
        _STAND_INS.pop()


def _stood_in(arg):
    if isinstance(arg, Tracer):
        for stand_ins in reversed(_STAND_INS):
            if arg._var in stand_ins:
                return stand_ins[arg._var]
    return arg


class Stateful:
    """An object standing for an array whose value changes over time (jitflow.Variable):
    an operation on it reads the value it holds at that moment, `read()`, which inside a
    trace is a Tracer."""
    __slots__ = ()

    def read(self):
        raise NotImplementedError


def read_stateful(value):
    """`value` with every Stateful in it (itself, or inside lists and tuples, as
    np.concatenate takes them) replaced by the value it holds now."""
    if isinstance(value, Stateful):
        return value.read()
    if type(value) in (list, tuple):
        return type(value)(read_stateful(item) for item in value)
    return value


def bind(prim, *args, subgraphs=(), **params):
    """Apply `prim` to array arguments: eagerly on NumPy values, or traced."""
    args = [_plain(a) for a in args]
    if _STAND_INS:
        args = [_stood_in(a) for a in args]
    builder = _builder_for(args)
    if builder is None:
        args = [np.asarray(a) if isinstance(a, (list, tuple)) else a for a in args]
        outs = prim.evaluate(*args, subgraphs=subgraphs, **params)
    else:
        operands = [builder.operand(a) for a in args]
        outs = builder.add_node(prim, operands, params, subgraphs)
    return tuple(outs) if prim.multiple_results else outs[0]


def _builder_for(args):
    """The active builder: inside a trace everything is recorded, even operations on
    constants (creation functions need that), and folded later by the passes."""
    if _ACTIVE_BUILDERS:
        return _ACTIVE_BUILDERS[-1]
    leaked = next((a for a in args if isinstance(a, Tracer)), None)
    if leaked is not None and leaked._builder.live:
        return leaked._builder  # an eager GradientTape's value
    if leaked is not None:
        raise TracerLeakError(at_user_line(
            f"a traced value {leaked._var.type} from the trace of "
            f"'{leaked._builder.name}' was used after that trace ended; return it from "
            f"the function instead of keeping it in a global or a closure"))
    return None


def is_tracing():
    return bool(_ACTIVE_BUILDERS)


def tape_recording():
    """Whether an eager GradientTape is recording."""
    return bool(_LIVE_TAPES)


def innermost_builder():
    return _ACTIVE_BUILDERS[-1] if _ACTIVE_BUILDERS else None


def _ops():
    from . import ops
    return ops


def _jnp():
    from . import numpy as jnp
    return jnp


def _binary(name, reflected=False):
    def method(self, other):
        fn = getattr(_ops(), name)
        return fn(other, self) if reflected else fn(self, other)
    method.__name__ = name
    return method


def _method(name):
    def method(self, *args, **kwargs):
        return getattr(_jnp(), name)(self, *args, **kwargs)
    method.__name__ = name
    return method


class Tracer:
    """Stands for an array while a function is traced: shape and dtype, no values.

    It behaves like an ndarray: operators, indexing, methods, and NumPy's own functions
    (through __array_ufunc__ and __array_function__) all record nodes in the graph.
    """
    __slots__ = ("_var", "_builder")
    __array_priority__ = 100
    __hash__ = None  # like ndarray: == is elementwise

    def __init__(self, var, builder):
        self._var = var
        self._builder = builder

    # --- static facts -------------------------------------------------------------
    type = property(lambda self: self._var.type)
    shape = property(lambda self: self._var.type.shape)
    ndim = property(lambda self: self._var.type.ndim)
    size = property(lambda self: self._var.type.size)
    dtype = property(lambda self: self._var.type.dtype)
    T = property(lambda self: _jnp().transpose(self))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d traced value)")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d traced value")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self):
        value = self._builder.value_of(self._var)
        if value is NO_VALUE:
            return f"Tracer<{self._var.type}>"
        return f"Tracer<{self._var.type}>({np.array2string(np.asarray(value))})"

    # --- operators ----------------------------------------------------------------
    __add__, __radd__ = _binary("add"), _binary("add", True)
    __sub__, __rsub__ = _binary("subtract"), _binary("subtract", True)
    __mul__, __rmul__ = _binary("multiply"), _binary("multiply", True)
    __truediv__, __rtruediv__ = _binary("divide"), _binary("divide", True)
    __floordiv__, __rfloordiv__ = _binary("floor_divide"), _binary("floor_divide", True)
    __mod__, __rmod__ = _binary("remainder"), _binary("remainder", True)
    __pow__, __rpow__ = _binary("power"), _binary("power", True)
    __matmul__ = _method("matmul")  # NumPy's matmul: 1-D operands are promoted

    def __rmatmul__(self, other):
        return _jnp().matmul(other, self)

    __and__, __rand__ = _binary("bitwise_and"), _binary("bitwise_and", True)
    __or__, __ror__ = _binary("bitwise_or"), _binary("bitwise_or", True)
    __xor__, __rxor__ = _binary("bitwise_xor"), _binary("bitwise_xor", True)
    __lt__, __le__ = _binary("less"), _binary("less_equal")
    __gt__, __ge__ = _binary("greater"), _binary("greater_equal")
    __eq__, __ne__ = _binary("equal"), _binary("not_equal")

    def __neg__(self):
        return _ops().negative(self)

    def __pos__(self):
        return _jnp().positive(self)  # NumPy 2's +x: a copy, and a TypeError for bool

    def __abs__(self):
        return _ops().absolute(self)

    def __invert__(self):
        return _ops().invert(self)

    def __getitem__(self, index):
        from .indexing import getitem
        return getitem(self, index)

    def __setitem__(self, index, value):
        raise TypeError(at_user_line(
            "traced values are immutable: item assignment is not supported; build the "
            "new array instead, e.g. with jitflow.numpy.where(mask, new, x)"))

    # --- methods ------------------------------------------------------------------
    reshape = _method("reshape")

    def transpose(self, *axes):
        """ndarray.transpose: the axes as one sequence, or one by one (x.transpose(1, 0))."""
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return _jnp().transpose(self, tuple(axes) if axes else None)

    sum, mean, prod = _method("sum"), _method("mean"), _method("prod")
    max, min = _method("max"), _method("min")
    argmax, argmin = _method("argmax"), _method("argmin")
    std, var = _method("std"), _method("var")
    dot, ravel, squeeze = _method("dot"), _method("ravel"), _method("squeeze")
    clip, cumsum, swapaxes = _method("clip"), _method("cumsum"), _method("swapaxes")
    flatten = _method("ravel")

    def astype(self, dtype):
        return _ops().cast(self, as_dtype(dtype, what="astype"))

    # --- NumPy's protocols ---------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from .numpy_dispatch import dispatch_ufunc
        return dispatch_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from .numpy_dispatch import dispatch_function
        return dispatch_function(func, args, kwargs)

    # --- concrete values: known while recording eagerly, unknown while tracing ---------
    def _value(self, what):
        value = self._builder.value_of(self._var)
        if value is NO_VALUE:
            raise self._concretization_error(what)
        return value

    def _concretization_error(self, what):
        sources = sorted(self._builder.sources.get(self._var, ()))
        origin = (f"derived from argument {', '.join(repr(s) for s in sources)}"
                  if sources else "computed inside the function")
        return ConcretizationError(
            f"{what} needs a concrete value, but this is a traced value "
            f"{self._var.type} {origin} of '{self._builder.name}', whose value is not "
            f"known while it is being traced.\n  at {user_location()}\n"
            f"To fix it: mark the argument static (jitflow.function(fn, "
            f"static_argnames=...)) if its value decides the program's structure; use "
            f"jitflow.numpy.where to choose between values; or use jitflow.cond (or "
            f"jitflow.switch) to branch on a value, and jitflow.while_loop, fori_loop or "
            f"scan to loop on one.")

    def __bool__(self):
        return bool(self._value("bool() (an `if`, `while`, `and`, `or` or `not`)"))

    def __int__(self):
        return int(self._value("int()"))

    def __float__(self):
        return float(self._value("float()"))

    def __complex__(self):
        return complex(self._value("complex()"))

    def __index__(self):
        return operator.index(self._value("using it as a Python index (__index__)"))

    def __array__(self, dtype=None, copy=None):
        value = np.asarray(self._value("converting it to a NumPy array"))
        return value if dtype is None else value.astype(dtype)

    def item(self):
        return np.asarray(self._value(".item()")).item()

    def numpy(self):
        """The value as a NumPy array (known eagerly, as inside a GradientTape)."""
        return np.array(self._value(".numpy()"), copy=True)

    def tolist(self):
        return np.asarray(self._value(".tolist()")).tolist()

    def __str__(self):
        value = self._builder.value_of(self._var)
        return repr(self) if value is NO_VALUE else str(np.asarray(value))


def make_graph(fn, in_types, sources, name="function"):
    """Trace fn on Tracers of `in_types`; fn returns a flat list of outputs."""
    with GraphBuilder(name) as builder:
        tracers = [builder.new_input(t, s) for t, s in zip(in_types, sources, strict=True)]
        outputs = fn(*tracers)
    return builder.build(outputs)


def constant_type(value):
    """TensorType of a non-Tracer operand (for shape logic shared by both modes)."""
    if isinstance(value, Stateful):
        value = value.read()
    return value._var.type if isinstance(value, Tracer) else type_of_value(value)


__all__ = ["Tracer", "GraphBuilder", "bind", "make_graph", "is_tracing", "TensorType"]
