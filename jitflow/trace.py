"""Tracing: Tracer values, the graph builder, and bind().

bind(prim, *arrays, **params) is the single entry of every operation. Outside a trace it
runs the primitive's NumPy impl (eager mode). Inside one it appends a Node to the active
GraphBuilder and returns Tracers standing for the node's outputs.
"""
import contextlib
import dis
import operator
import sys

import numpy as np

from .per_thread import PerThreadStack
from .errors import ConcretizationError, TracerLeakError, at_user_line
from .ir.graph import Graph, Lit, Node, Var
from .ir.interpret import as_operand
from .ir.types import ShapeError, TensorType, as_dtype, type_of_value

_ACTIVE_BUILDERS = PerThreadStack()  # this thread's builders, innermost last
_LIVE_TAPES = PerThreadStack()  # TapeBuilders recording (which are never active builders)
_STAND_INS = PerThreadStack()  # stack of {Var of a Tracer: the value it stands for now}
NO_VALUE = object()  # what a Tracer of a builder that does not record values holds
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
        entry = self.closed.get(id(array))
        if entry is None:
            tracer = _writes().mark_array(self.new_input(type_of_value(array), None))
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
        if type.dtype.kind == "f":
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
            self.derived.update(v for v in node.outputs if v.type.dtype.kind == "f")
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
    """Apply `prim` to array arguments: eagerly on NumPy values, or traced. A list
    argument is an array made as jitflow.numpy.asarray makes it (it may hold traced
    values)."""
    args = [_jnp().asarray(a) if isinstance(a, (list, tuple)) else _plain(a) for a in args]
    if _STAND_INS:
        args = [_stood_in(a) for a in args]
    builder = _builder_for(args)
    if builder is None:
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


def builders_within(builder):
    """The active builders nested inside `builder` (innermost last)."""
    return _ACTIVE_BUILDERS[_ACTIVE_BUILDERS.index(builder) + 1:]


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


def _writes():
    from . import writes
    return writes


def _inplace(name):
    ufunc = {"divide": "true_divide"}.get(name, name)

    def method(self, other):
        return _writes().inplace(self, getattr(_ops(), name), read_stateful(other), ufunc)
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
    __slots__ = ("_var", "_builder", "_alias", "__weakref__")
    __array_priority__ = 100
    __hash__ = None  # like ndarray: == is elementwise

    def __init__(self, var, builder):
        self._var = var
        self._builder = builder
        self._alias = None  # views and writes (writes.py), when it has any

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
        # NumPy 2: a new array (writes into it leave self alone); a TypeError for bool
        return _writes().copy(_jnp().positive(self))

    def __abs__(self):
        return _ops().absolute(self)

    def __invert__(self):
        return _ops().invert(self)

    def __getitem__(self, index):
        from .indexing import basic_only, getitem
        if basic_only(index):
            return _writes().view(self, index)
        return getitem(self, index)

    def __setitem__(self, index, value):
        _writes().setitem(self, index, read_stateful(value))

    # --- in-place operators: NumPy's, functionalized (writes.py) ---------------------
    __iadd__, __isub__ = _inplace("add"), _inplace("subtract")
    __imul__, __itruediv__ = _inplace("multiply"), _inplace("divide")
    __ifloordiv__, __imod__ = _inplace("floor_divide"), _inplace("remainder")
    __ipow__, __iand__ = _inplace("power"), _inplace("bitwise_and")
    __ior__, __ixor__ = _inplace("bitwise_or"), _inplace("bitwise_xor")

    def __imatmul__(self, other):
        return _writes().inplace(self, _jnp().matmul, read_stateful(other), "matmul")

    def copy(self):
        """A new array of the same value: later writes into either leave the other."""
        return _writes().copy(self)

    def fill(self, value):
        """ndarray.fill: every element set to `value` (cast as assignment casts)."""
        self[...] = value

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

    def flatten(self):
        """A copy, flat (ravel gives a view where it can)."""
        return _writes().copy(_jnp().ravel(self))

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
    def _value(self, what, advice=None):
        value = self._builder.value_of(self._var)
        if value is NO_VALUE:
            raise self._concretization_error(what, advice or _BRANCH_ADVICE)
        return value

    def _origin(self):
        sources = sorted(self._builder.sources.get(self._var, ()))
        return (f"derived from argument {', '.join(repr(s) for s in sources)}"
                if sources else "computed inside the function")

    def _concretization_error(self, what, advice):
        return ConcretizationError(at_user_line(
            f"{what} needs a concrete value, but this is a traced value "
            f"{self._var.type} {self._origin()} of '{self._builder.name}', whose value is "
            f"not known while it is being traced.\nTo fix it: {advice}"))

    def _derivative_lost_error(self, how="to a NumPy array (np.asarray, np.array)"):
        return TypeError(at_user_line(
            f"converting a value that carries a derivative {how} would silently drop "
            f"that derivative: this is {self._var.type} {self._origin()}, which "
            f"{self._builder.name} is differentiating.\nTo fix it: keep the derivative "
            f"by building the array with jitflow.numpy.asarray or jitflow.numpy.array "
            f"(they take lists of such values too), or drop it on purpose with "
            f"np.asarray(jitflow.stop_gradient(x))."))

    def __bool__(self):
        return bool(self._value("bool() (an `if`, `while`, `and`, `or` or `not`)"))

    def __int__(self):
        self._refuse_a_store_into_an_array()
        return int(self._value("int()"))

    def __float__(self):
        self._refuse_a_store_into_an_array()
        return float(self._value("float()"))

    def __complex__(self):
        self._refuse_a_store_into_an_array()
        return complex(self._value("complex()"))

    def _refuse_a_store_into_an_array(self):
        """NumPy's `a[i] = x` converts x with float() (or int(), complex()), which gives
        a Python number on purpose; there the derivative would be dropped as silently as
        by np.asarray. The caller's frame tells them apart: it is storing an item."""
        if self._builder.carries_derivative(self._var):
            caller = sys._getframe(2)
            if caller.f_code.co_code[caller.f_lasti] == _STORE_SUBSCR:
                raise self._derivative_lost_error("into an item of a NumPy array (a[i] = x)")

    def __index__(self):
        return operator.index(self._value("using it as a Python index (__index__)"))

    def __array__(self, dtype=None, copy=None):
        """NumPy's array protocol. A recorded value is handed out as a copy (or, with
        copy=False, a read-only view): writes to it must not change what the backward
        pass reads."""
        if self._builder.carries_derivative(self._var):
            raise self._derivative_lost_error()
        value = np.asarray(self._value("converting it to a NumPy array", _ARRAY_ADVICE))
        if copy is False:
            view = np.asarray(value, dtype=dtype, copy=False).view()
            view.flags.writeable = False
            return view
        return np.array(value, dtype=dtype, copy=True)

    def item(self):
        return np.asarray(self._value(".item()")).item()

    def numpy(self):
        """The value as a NumPy array (known eagerly, as inside a GradientTape)."""
        return np.array(self._value(".numpy()", _ARRAY_ADVICE), copy=True)

    def tolist(self):
        return np.asarray(self._value(".tolist()", _ARRAY_ADVICE)).tolist()

    def __str__(self):
        value = self._builder.value_of(self._var)
        return repr(self) if value is NO_VALUE else str(np.asarray(value))

    def __format__(self, spec):
        """f-strings: the value's formatting when it is known (as for ndarrays)."""
        if not spec:
            return str(self)
        return format(np.asarray(self._value(f"formatting it with {spec!r}")), spec)


_STORE_SUBSCR = dis.opmap["STORE_SUBSCR"]
_BRANCH_ADVICE = (
    "mark the argument static (jitflow.function(fn, static_argnames=...)) if its value "
    "decides the program's structure; use jitflow.numpy.where to choose between values; or "
    "use jitflow.cond (or jitflow.switch) to branch on a value, and jitflow.while_loop, "
    "fori_loop or scan to loop on one.")
_ARRAY_ADVICE = (
    "build arrays with jitflow.numpy.asarray or jitflow.numpy.array (they take lists of "
    "traced values too) and keep computing with NumPy's functions, which are traced; "
    "return the value from the function to look at it after the call.")


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
