"""NumPy's random numbers inside @jitflow.function: traced, never frozen.

Why the methods are swapped: a NumPy random call made while tracing has no traced
argument, so NumPy's dispatch (__array_function__) never sees it; left alone it would
run once, at trace time, and its numbers would be baked into the graph as constants.
So while a trace runs, np.random.Generator's and RandomState's methods and np.random's
functions (the global RandomState's bound methods) are replaced by ones that, on the
tracing thread, draw traced numbers (numpy_methods.py) and on any other thread call
NumPy's own. NumPy's classes are immutable types: their methods are swapped in the dict
behind the type's mappingproxy, and PyType_Modified then invalidates CPython's method
caches; this is the only way to reach `rng.normal(...)` on objects NumPy made. The
originals are put back when the last trace ends. A method jitflow cannot trace raises,
naming it and the user's line.

Whose state: the NumPy generator stays the one source of randomness. A compiled call
that draws from it takes one raw 64-bit value from its bit generator (CallSeed, an
implicit input handled as a Variable is), and derives all the call's draws from that
value and their order in the trace (generator.stream_bits). So every call draws fresh
numbers, the same seed gives the same numbers in every process, and re-seeding NumPy
(np.random.seed, a new default_rng(seed)) replays them; they are not NumPy's own stream.
The raw value is kept until the call has succeeded: a call that raises uses it again.
Eager code (no trace) is plain NumPy, untouched.

A method taken from a generator before the trace (`draw = rng.normal` at import,
`draw(...)` inside) is NumPy's own, not swapped. Where the function's code names it (a
global, a closure cell, an attribute: named_arrays.py), a call by name on the generator
stands in for it while tracing, so it is traced too. Reached otherwise (through a helper
function), it runs at trace time; that is caught afterwards for np.random's global
state, for every generator the trace also drew from, and for every method the code
names (their state changed behind jitflow's back, which traced draws never do).
"""
import contextlib
import ctypes
import gc
import sys
import threading

import numpy as np

from .. import variable_scope
from ..errors import LOCATION_MARK, at_user_line, user_location
from ..ir.types import TensorType, int64
from ..trace import MANY_RUNS_CONTEXTS, Stateful, builders_within
from .generator import Draws, mix_seed, stream_bits
from .numpy_methods import GENERATOR_METHODS, RANDOM_STATE_METHODS

# The methods traced, by class; every other public method of these raises while tracing.
_CLASSES = {np.random.Generator: GENERATOR_METHODS,
            np.random.RandomState: RANDOM_STATE_METHODS,
            np.random.BitGenerator: {}}
_GLOBAL = np.random.mtrand._rand  # the RandomState behind np.random.rand & co.
_GET_STATE = np.random.RandomState.get_state  # NumPy's own, whatever is swapped in
_THREAD = threading.local()  # .traces: this thread's stack of NumpyTrace (None: eager)


class CallSeed(Stateful):
    """The raw value a call draws from a NumPy generator's bit generator, as the int64
    input of the compiled call. `adopt` (the write-back after a successful call) marks it
    used; until then each call gets the same value."""
    __slots__ = ("owner", "name", "first_drawn", "_pending")
    type = TensorType((), int64)

    def __init__(self, owner):
        self.owner = owner
        self.name = f"numpy.random.{_numpy_class(owner).__name__} at {id(owner):#x}"
        self.first_drawn = user_location()
        self._pending = None

    def read(self):
        scope = variable_scope.current()
        return self.held() if scope is None else scope.read(self)

    def held(self):
        if self._pending is None:
            raw = _bit_generator(self.owner).random_raw()
            self._pending = np.array(raw, dtype=np.uint64).view(np.int64)
        return self._pending

    def adopt(self, value):
        self._pending = None


class NumpyDraws(Draws):
    """The draws of one NumPy generator in one trace: draw number k of the trace, from
    the call's seed."""

    def __init__(self, scope, seed):
        self.scope, self.seed, self.count = scope, seed, 0

    def bits(self, shape):
        draw = np.int64(self.count)
        self.count += 1
        return stream_bits(mix_seed(self.scope.read(self.seed)), draw, shape)


class NumpyTrace:
    """What one @jitflow.function trace does with NumPy's random calls."""

    def __init__(self, scope):
        self.scope = scope
        self.draws = {}  # id(NumPy generator) -> its NumpyDraws
        self.seeds = []
        self.states = {}  # id(NumPy generator) -> (it, its state when first seen)

    def __enter__(self):
        self.remember_state(_GLOBAL)
        _install()
        _stack().append(self)
        return self

    def __exit__(self, kind, error, traceback):
        _stack().pop()
        _uninstall()
        if kind is None:
            self._check_generators()

    def call(self, owner, name, args, kwargs):
        methods = _CLASSES[_numpy_class(owner)]
        what = f"numpy.random.{_numpy_class(owner).__name__}.{name}"
        if name not in methods:
            traced = f"only {', '.join(sorted(methods))} are" if methods else "none is"
            raise TypeError(at_user_line(
                f"{what} cannot be traced (of its class's methods, {traced} traced in "
                f"compiled code). Draw the numbers outside the compiled function and pass "
                f"them in, or use jitflow.random.Generator"))
        if not all(builder.runs_once for builder in builders_within(self.scope.builder)):
            raise TypeError(at_user_line(
                f"{what} inside a loop body, a branch or vmap of a compiled function "
                f"is not traced (a loop body would draw the same numbers at every step); "
                f"draw them in the function itself and pass them in"))
        return methods[name](self._draws_for(owner), *args, **kwargs)

    def _draws_for(self, owner):
        draws = self.draws.get(id(owner))
        if draws is None:
            seed = CallSeed(owner)
            self.remember_state(owner)
            self.scope.carry(seed)
            self.seeds.append(seed)
            draws = self.draws[id(owner)] = NumpyDraws(self.scope, seed)
        return draws

    def remember_state(self, owner):
        """Traced draws leave NumPy's state alone, so a generator whose state changes
        during the trace was drawn from by a call jitflow did not see."""
        self.states[id(owner)] = (owner, _state(owner))

    def _check_generators(self):
        """After a trace: a generator drawn from behind jitflow's back would give frozen
        numbers; one that only the trace still refers to was made inside the function,
        and NumPy would make it afresh at every call, which a compiled call cannot
        follow."""
        self._check_states()
        self.states.clear()  # its references to the generators go before they are counted
        for seed in self.seeds:
            if sys.getrefcount(seed.owner) <= 2:  # seed.owner and this call's argument
                raise TypeError(
                    f"{_describe(seed.owner)} made inside the compiled function "
                    f"'{self.scope.builder.name}' was drawn from; NumPy would start it "
                    f"afresh at every call, which compiled code does not follow. Make it "
                    f"outside the function (its draws then go on from call to call), or use "
                    f"jitflow.random.Generator{LOCATION_MARK}{seed.first_drawn}")

    def _check_states(self):
        for owner, state in self.states.values():
            if not _same(state, _state(owner)):
                raise TypeError(at_user_line(
                    f"{_describe(owner)} was drawn from while '{self.scope.builder.name}' "
                    f"was traced, by a call jitflow did not see (a function imported with "
                    f"`from numpy.random import ...`, or a method taken before the trace); "
                    f"its numbers would be frozen into the compiled code. Call the method "
                    f"on the generator (or np.random.name(...)) inside the function, draw "
                    f"outside and pass the numbers in, or use jitflow.random.Generator"))


variable_scope.TRACE_CONTEXTS.append(NumpyTrace)


class _RefusedDraws:
    """Stands in for a NumpyTrace while a function is traced for many runs at once
    outside compiled code (an eager vmap): one draw would serve every run."""

    def __init__(self, what):
        self.what = what

    def call(self, owner, name, args, kwargs):
        raise TypeError(at_user_line(
            f"numpy.random.{_numpy_class(owner).__name__}.{name} inside {self.what} would "
            f"give every element the same numbers; draw them outside (one row per "
            f"element) and pass them in, or use jitflow.random.Generator"))


@contextlib.contextmanager
def _refuse_draws(what):
    if _stack():  # a compiled function's trace (or eager_numpy) decides already
        yield
        return
    _install()
    _stack().append(_RefusedDraws(what))
    try:
        yield
    finally:
        _stack().pop()
        _uninstall()


MANY_RUNS_CONTEXTS.append(_refuse_draws)


@contextlib.contextmanager
def eager_numpy():
    """Inside it, NumPy's random calls made while tracing run as NumPy does: their numbers
    are constants of the trace. For numbers meant to be fixed, such as the initial values
    of weights a layer makes while it is first traced."""
    stack = _stack()
    stack.append(None)
    try:
        yield
    finally:
        stack.pop()
        for trace in filter(None, stack):
            for owner, _ in list(trace.states.values()):
                trace.remember_state(owner)  # drawn from on purpose


def _stack():
    stack = getattr(_THREAD, "traces", None)
    if stack is None:
        stack = _THREAD.traces = []
    return stack


def _current():
    stack = getattr(_THREAD, "traces", None)
    return stack[-1] if stack else None


# --- swapping NumPy's methods -----------------------------------------------------------
_LOCK = threading.Lock()
_ACTIVE = [0]  # traces under way, on all threads
_ORIGINALS = {}  # (namespace dict, name) -> NumPy's own


def _install():
    with _LOCK:
        _ACTIVE[0] += 1
        if _ACTIVE[0] == 1:
            for cls in _CLASSES:
                _swap(cls, {name: _method(name, value)
                            for name, value in _public(vars(cls)) if callable(value)})
            _swap(np.random, {name: _function(name, value)
                              for name, value in _public(vars(np.random))
                              if getattr(value, "__self__", None) is _GLOBAL})


def _uninstall():
    with _LOCK:
        _ACTIVE[0] -= 1
        if _ACTIVE[0] == 0:
            for (target, name), original in _ORIGINALS.items():
                _namespace(target)[name] = original
            for cls in _CLASSES:
                ctypes.pythonapi.PyType_Modified(ctypes.py_object(cls))
            _ORIGINALS.clear()


def _swap(target, replacements):
    namespace = _namespace(target)
    for name, replacement in replacements.items():
        _ORIGINALS[(target, name)] = namespace[name]
        namespace[name] = replacement
    if isinstance(target, type):
        ctypes.pythonapi.PyType_Modified(ctypes.py_object(target))


def _namespace(target):
    """The dict a module's or a type's attributes live in (a type's own, writable dict,
    behind the read-only mappingproxy)."""
    if isinstance(target, type):
        return gc.get_referents(target.__dict__)[0]
    return vars(target)


def _public(namespace):
    return [(name, value) for name, value in list(namespace.items())
            if not name.startswith("_")]


def _method(name, original):
    def method(self, *args, **kwargs):
        trace = _current()
        if trace is None:
            return original(self, *args, **kwargs)
        return trace.call(self, name, args, kwargs)
    method.__name__, method.__doc__ = name, original.__doc__
    return method


def _function(name, original):
    def function(*args, **kwargs):
        trace = _current()
        if trace is None:
            return original(*args, **kwargs)
        return trace.call(original.__self__, name, args, kwargs)
    function.__name__, function.__doc__ = name, original.__doc__
    return function


# --- NumPy's generators -----------------------------------------------------------------
def _numpy_class(owner):
    return next(cls for cls in _CLASSES if isinstance(owner, cls))


def _bit_generator(owner):
    if isinstance(owner, np.random.Generator):
        return owner.bit_generator
    return owner._bit_generator


def _state(owner):
    """A generator's whole state (a RandomState's includes its cached Gaussian)."""
    if isinstance(owner, np.random.RandomState):
        return _GET_STATE(owner, legacy=False)
    return _bit_generator(owner).state


def _same(a, b):
    """Equality of states: dicts of ints, strings and arrays."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and \
            all(_same(a[key], b[key]) for key in a)
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and np.array_equal(a, b)
    return a == b


def _describe(owner):
    if owner is _GLOBAL:
        return "NumPy's global random state"
    return f"a numpy.random.{_numpy_class(owner).__name__}"
