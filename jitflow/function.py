"""@jitflow.function: trace once per input signature, optimize, cache, call.

A signature is the pytree structure of the dynamic arguments, the TensorType of each leaf
(Python scalars are weakly typed: their value is an input, only int/float/bool matters)
and the values of the static arguments. A new signature traces again, and the reason is
recorded: which argument changed, how, and from which line the call came.
"""
import collections
import functools
import inspect
import threading
import time
import weakref
from dataclasses import dataclass, field

import numpy as np

from . import nan_check, pytree
from .config import config
from .errors import ConcretizationError, at_user_line, user_location, with_user_line
from .codegen import FALLBACK, raise_for
from .executable import PROFILERS, Executable
from .inspection import Lowered
from .pickling import found_by_name
from .ir.passes import optimize as optimize_graph
from .ir.types import SUPPORTED_DTYPES, TensorType, type_of_value
from .bound_methods import bound_method
from .dynamic_axes import DynamicAxes, inferred_axes
from .named_arrays import NamedArrays
from .retraces import differences, warn_retraces
from .writing_calls import WritingCalls
from .trace import Stateful, Tracer, is_tracing
from . import variable_scope
from .variable_scope import VariableArgument, closed_as_constants, trace_with_variables


def function(fn=None, *, static_argnames=(), static_argnums=(), donate_argnames=(),
             donate_argnums=(), dynamic_axes=None):
    """Compile `fn` per input signature. Usable as @function or @function(...).

    donate_argnames / donate_argnums: arguments whose arrays the caller gives up
    (donation.py): each result of the same shape and dtype as one of their arrays is
    written into that array, which is returned as the result, so that
    `params = step(params, ...)` updates the parameters in place.

    dynamic_axes: {argument name: axis} for arguments whose axis may change size
    between calls (0: a batch; the axes named share one size): their sizes share one
    compile where the function's graph allows (dynamic_axes.py); `cache_info().dynamic`
    says how each size ran."""
    if fn is None:
        return functools.partial(function, static_argnames=static_argnames,
                                 static_argnums=static_argnums,
                                 donate_argnames=donate_argnames,
                                 donate_argnums=donate_argnums, dynamic_axes=dynamic_axes)
    return Function(fn, static_argnames, static_argnums, donate_argnames, donate_argnums,
                    dynamic_axes)


@dataclass
class CacheInfo:
    traces: int = 0
    hits: int = 0
    reasons: list = field(default_factory=list)  # one line per trace after the first
    dynamic: list = field(default_factory=list)  # per size of dynamic_axes: how it ran


@dataclass(frozen=True)
class Signature:
    structure: object
    types: tuple
    statics: tuple
    paths: tuple = field(compare=False)
    # config.matmul_precision when traced: the float32 products' rounding depends on it
    matmul_precision: str = "float32"


class Function(WritingCalls):
    def __init__(self, fn, static_argnames=(), static_argnums=(), donate_argnames=(),
                 donate_argnums=(), dynamic_axes=None):
        functools.update_wrapper(self, fn)
        if not hasattr(self, "__qualname__"):  # a callable object
            self.__qualname__ = type(fn).__qualname__
        self.fn = fn
        self.signature = inspect.signature(fn)
        self.static = _parameter_names(self.signature, static_argnames, static_argnums,
                                       "static_argnames")
        self.donated = _parameter_names(self.signature, donate_argnames, donate_argnums,
                                        "donate_argnames")
        if self.donated & self.static:
            raise ValueError(f"{self.__qualname__}: arguments "
                             f"{sorted(self.donated & self.static)} are static; only "
                             f"arrays can be donated")
        self._cache = collections.OrderedDict()  # Signature -> Executable, oldest use first
        # (argument structure, _array_key(leaves)) -> Executable, for calls whose
        # leaves are plain ndarrays
        self._fast = {}
        self._direct = None  # the DirectEntry used last
        self._direct_signature = None  # the signature it runs
        # _direct where a call may go straight to it: no donation, no NamedArrays
        self._plain_direct = None
        self._plain_hits = 0  # calls it ran (counted apart from _info: one add less)
        self._fast_eligible = not self.static and all(
            p.kind == p.POSITIONAL_OR_KEYWORD for p in self.signature.parameters.values())
        self._last = None
        self._info = CacheInfo()
        self.dynamic_axes = dict(dynamic_axes) if dynamic_axes else None
        self._dynamic = DynamicAxes(self.__qualname__, dynamic_axes,
                                    self.signature.parameters) if dynamic_axes else None
        if self._dynamic is not None:
            self._info.dynamic = self._dynamic.report
        self._size_traces = 0  # traces of a new size of the dynamic axes
        _LIVE.add(self)
        self._warned = False
        self._named = None  # NamedArrays the traces read, when the code names any
        self._compiling = threading.RLock()  # held while a signature is traced and built
        # out= names the arrays to write the results into, unless fn takes an `out` of
        # its own (or any keyword argument), which it then gets.
        self._out_is_ours = "out" not in self.signature.parameters and not any(
            p.kind == p.VAR_KEYWORD for p in self.signature.parameters.values())

    def __call__(self, *args, **kwargs):
        # The shortest path, for arrays only, when nothing asks for more than a call
        # (_plain_direct is the native entry of the signature called last, which
        # checks the arrays itself): 0.1 us of the call's 0.55 us on f32[8] went to the
        # native code, most of the rest to the checks of the longer path below.
        direct = self._plain_direct
        if direct is not None and not kwargs and config.plain_calls and not PROFILERS:
            result = direct.call(*args)
            if result.__class__ is not int:
                self._plain_hits += 1
                return result if direct.rebuild is None else direct.rebuild(result)
            if result != FALLBACK:
                raise_for(result, direct.name)
        if "out" in kwargs and self._out_is_ours:
            return self._call_into(args, kwargs)
        if self.donated:
            return self._call_donating(args, kwargs)
        return self._call(args, kwargs)

    def _call(self, args, kwargs):
        if config.run_eagerly:
            with nan_check.raising(nan_check.wanted(config)):  # (as compiled calls do)
                return self.fn(*args, **kwargs)
        if self._named is not None:
            self._check_named_arrays()
        if config.debug_nans or config.debug_infs:
            return self._call_checking_numerics(args, kwargs)
        if PROFILERS:
            return self._call_profiled(args, kwargs)
        direct = self._direct
        # (not again when __call__ just tried it: the arrays are another signature's)
        if direct is not None and not kwargs and direct is not self._plain_direct:
            result = direct.call(*args)
            if result.__class__ is not int:
                self._info.hits += 1
                return result if direct.rebuild is None else direct.rebuild(result)
            if result != FALLBACK:
                raise_for(result, direct.name)
        if self._fast and not kwargs:
            result = self._call_fast(args)
            if result is not _DECLINED:
                return result
        if is_tracing() or variable_scope.current() is not None:
            return self.fn(*args, **kwargs)  # inside a trace or a tape: inline it
        bound = self._bind(args, kwargs)
        leaves, paths, structure, statics = self._split(bound)
        signature, executable = self._executable(bound, leaves, paths, structure,
                                                 statics)
        self._remember_fast_path(args, kwargs, signature, executable)
        return executable(leaves)

    def __get__(self, instance, owner=None):
        """A decorated method: the function bound to this instance, compiled on its
        own (the arrays it reaches through `self` are the instance's)."""
        if instance is None:
            return self
        return bound_method(self, instance)

    def _remember_direct(self, direct, signature, structure):
        """Try `direct` first next time, when every argument is an array (no
        containers): it checks the arrays itself."""
        if all(child == pytree.LEAF for child in structure[2]):
            self._direct, self._direct_signature = direct, signature
            plain = not self.donated and self._named is None
            self._plain_direct = direct if plain else None

    def _call_checking_numerics(self, args, kwargs):
        """A call under config.debug_nans / debug_infs (nan_check.py): the checked path,
        whose results are looked at before anything is written. Arguments of a
        signature seen before find its Executable as the fast path does; only an error
        binds them."""
        kinds = nan_check.wanted(config)
        if is_tracing() or variable_scope.current() is not None:
            return self.fn(*args, **kwargs)
        executable = None
        if self._fast and not kwargs:
            _, executable, leaves, _ = self._fast_executable(args)
        if executable is None:
            bound = self._bind(args, kwargs)
            leaves, paths, structure, statics = self._split(bound)
            signature, executable = self._executable(bound, leaves, paths, structure,
                                                     statics)
            self._remember_fast_path(args, kwargs, signature, executable)

        def located():
            return nan_check.locate(self.fn, self._bind(args, kwargs), leaves,
                                    executable.state, self.__qualname__, kinds)
        native = executable.checked_native(kinds)
        try:
            if native is not None:  # (native code checks its outputs itself)
                return executable(leaves, native=native)
            with nan_check.raising(kinds):  # the interpreter's NumPy calls

                def check(outputs):
                    if nan_check.bad_values(outputs, kinds):
                        raise located()
                return executable(leaves, check=check)
        except FloatingPointError as error:
            if not nan_check.made_inside(error):
                raise
            raise located() from None

    def _call_profiled(self, args, kwargs):
        """A call under jitflow.profile(): the checked path, running native code that
        times its kernels (Executable.profiled_call)."""
        if is_tracing() or variable_scope.current() is not None:
            return self.fn(*args, **kwargs)
        bound = self._bind(args, kwargs)
        leaves, paths, structure, statics = self._split(bound)
        _, executable = self._executable(bound, leaves, paths, structure, statics)
        return executable.profiled_call(leaves)

    def _check_named_arrays(self):
        """Forget every trace once a name the code reads an array by holds another
        one (named_arrays.py): the next call traces again."""
        named = self._named  # (another thread may forget it meanwhile)
        if named is None:
            return
        name = named.rebound()
        if name is not None:
            self._forget_traces(f"'{name}' names another array now")
            return
        name = named.changed()
        if name is not None:
            self._forget_traces(f"array '{name}' changed, and NumPy read it while tracing "
                                f"(what it computed was a constant of the trace)")

    def _forget_traces(self, reason):
        with self._compiling:
            self._forget_traces_now(reason)

    def _forget_traces_now(self, reason):
        self._cache.clear()
        self._drop_shortcuts()
        self._named = self._last = None
        self._info.reasons.append(f"{reason} (call at {user_location()})")

    def _executable(self, bound, leaves, paths, structure, statics):
        signature = Signature(structure, self._leaf_types(leaves, paths), statics,
                              tuple(paths), config.matmul_precision)
        executable = self._cache.get(signature)
        if executable is None:
            with self._compiling:  # threads calling a new signature at once: one trace
                executable = self._cache.get(signature)
                if executable is None:
                    return signature, self._compile(bound, signature, leaves)
        self._info.hits += 1
        self._used(signature)
        return signature, executable

    def lower(self, *args, **kwargs):
        """The compiled form of the signature these arguments have (compiled now if it
        was not): its fused graph, LLVM IR and assembly (inspection.Lowered)."""
        bound = self._bind(args, kwargs)
        leaves, paths, structure, statics = self._split(bound)
        if any(isinstance(leaf, Tracer) for leaf in leaves):
            raise TypeError(at_user_line(f"{self.__qualname__}.lower() needs arrays, not "
                                         f"traced values"))
        return Lowered(self._executable(bound, leaves, paths, structure, statics)[1])

    def _call_fast(self, args):
        """Arguments whose leaves are plain ndarrays of a signature compiled before: the
        leaves straight to its native code (DirectEntry), or to its Executable when it
        reads Variables or its code has no such entry. When every argument is an array,
        that entry is tried first next time (`_direct`: it checks the arrays itself).
        Returns _DECLINED when the checked path must run."""
        signature, executable, leaves, structure = self._fast_executable(args)
        if executable is not None and executable.state is not None and \
                executable.state.slots:
            self._info.hits += 1
            return executable(leaves)  # it reads and writes the Variables it closes over
        if executable is None:
            return _DECLINED
        direct = executable.direct_entry()
        if direct is None:
            if variable_scope.current() is not None:
                return _DECLINED  # a tape records the function's operations
            self._info.hits += 1  # code without a Python entry (dynamic_axes.py's)
            return executable(leaves)
        self._remember_direct(direct, signature, structure)
        result = direct.call(*leaves)
        if result.__class__ is int:
            if result != FALLBACK:
                raise_for(result, direct.name)
            return _DECLINED
        self._info.hits += 1
        return result if direct.rebuild is None else direct.rebuild(result)

    def _fast_executable(self, args):
        """The signature and Executable the fast path keeps for these arguments (None,
        None if none), their leaves and structure."""
        leaves = []
        structure = pytree.flatten_leaves(args, leaves)
        signature, executable = self._fast.get((structure, _array_key(leaves)),
                                               (None, None))
        if executable is not None:
            self._used(signature)
        return signature, executable, leaves, structure

    def _used(self, signature):
        """Mark `signature` the most recently used (the last to be forgotten)."""
        try:
            self._cache.move_to_end(signature)
        except KeyError:  # forgotten by another thread meanwhile
            pass

    def _remember_fast_path(self, args, kwargs, signature, executable):
        """Calls whose every leaf is a plain C-contiguous ndarray can skip binding,
        flattening with paths and checking next time: their key says it all."""
        if not (self._fast_eligible and not kwargs and executable.backend == "native"
                and len(args) == len(self.signature.parameters)):
            return
        leaves = []
        structure = pytree.flatten_leaves(args, leaves)
        if all(type(a) is np.ndarray and a.flags.c_contiguous for a in leaves):
            self._fast[(structure, _array_key(leaves))] = (signature, executable)

    def trace(self, *args, **kwargs):
        """The graph traced for these arguments, before optimization (the arrays it
        closes over as constants: their contents now)."""
        bound = self._bind(args, kwargs)
        leaves, paths, structure, statics = self._split(bound)
        graph, _, state, _ = self._trace(bound, structure, self._leaf_types(leaves, paths),
                                         paths, leaves)
        return closed_as_constants(graph, state)

    def trace_with_input_names(self, *args, **kwargs):
        """trace()'s graph and a name for each of its inputs: the argument's path, or
        the name of the Variable (or other state) read there. For drawings of the
        graph, which label its inputs."""
        bound = self._bind(args, kwargs)
        leaves, paths, structure, _ = self._split(bound)
        types = self._leaf_types(leaves, paths)
        graph, _, state, _ = self._trace(bound, structure, types, paths, leaves)
        names = [path for path, t in zip(paths, types) if not isinstance(t, VariableArgument)]
        for slot in state.slots if state is not None else ():
            held = slot.variable if slot.argument is None else leaves[slot.argument]
            names.append(getattr(held, "name", None) or type(held).__name__)
        graph = closed_as_constants(graph, state)
        return graph, names[:len(graph.inputs)]

    def wait(self):
        """Block until native code for every signature traced so far is built (see
        config.background_compile); raise the error of a build that failed."""
        for executable in list(self._cache.values()):
            executable.wait()

    def cache_info(self):
        return CacheInfo(self._info.traces, self._info.hits + self._plain_hits,
                         list(self._info.reasons), list(self._info.dynamic))

    def __repr__(self):
        return f"<jitflow.function {self.__qualname__}>"

    def __reduce__(self):
        """Pickled and copied as the function and its static argument names: the traces
        and native code are rebuilt on demand. One decorated where it is defined (a
        module's or a class's attribute) is pickled by name, as functions are."""
        if found_by_name(self):
            return self.__qualname__
        return Function, (self.fn, tuple(sorted(self.static)), (),
                          tuple(sorted(self.donated)), (), self.dynamic_axes)

    # --- arguments --------------------------------------------------------------------
    def _bind(self, args, kwargs):
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(at_user_line(f"{self.__qualname__}(): {error}")) from None
        return bound  # arguments left out keep the defaults: constants of the trace

    def _split(self, bound):
        """Leaves, paths, structure and static (name, value) pairs of the arguments
        given: those named static, and strings, are static."""
        static = self.static | {k for k, v in bound.arguments.items() if isinstance(v, str)}
        dynamic = {k: v for k, v in bound.arguments.items() if k not in static}
        statics = tuple((k, bound.arguments[k]) for k in sorted(static)
                        if k in bound.arguments)
        for name, value in statics:
            try:
                hash(value)
            except TypeError:
                raise TypeError(at_user_line(
                    f"{self.__qualname__}(): static argument '{name}' must be hashable, "
                    f"got {type(value).__name__}")) from None
        leaves, paths, structure = pytree.flatten(dynamic)
        paths = [_readable(p) for p in paths]
        return leaves, paths, structure, statics

    def _leaf_types(self, leaves, paths):
        """The signature's type of each leaf (a Variable's names the Variable)."""
        return tuple(VariableArgument(leaf.type, id(leaf), leaf.name)
                     if isinstance(leaf, Stateful) else self._leaf_type(leaf, path)
                     for leaf, path in zip(leaves, paths))

    def _leaf_type(self, leaf, path):
        if isinstance(leaf, Tracer):
            return leaf.type
        if isinstance(leaf, (bool, int, float, np.ndarray, np.generic)):
            if isinstance(leaf, int) and not isinstance(leaf, bool) and \
                    not -2**63 <= leaf < 2**63:
                raise OverflowError(at_user_line(f"{self.__qualname__}(): argument "
                                                 f"'{path}' = {leaf} does not fit in int64"))
            dtype = np.asarray(leaf).dtype
            if dtype in SUPPORTED_DTYPES:
                return type_of_value(leaf)
            raise TypeError(at_user_line(
                f"{self.__qualname__}(): argument '{path}' has dtype {dtype}, which "
                f"jitflow does not support; cast it to one of "
                f"{', '.join(map(str, SUPPORTED_DTYPES))}"))
        raise TypeError(at_user_line(
            f"{self.__qualname__}(): argument '{path}' is a {type(leaf).__name__}; pass "
            f"arrays, Python numbers, or tuples, lists and dicts of them, or mark it static "
            f"(static_argnames)"))

    # --- tracing ----------------------------------------------------------------------
    def _trace(self, bound, structure, types, paths, leaves, locations=None):
        """The graph of the function at these arguments, its output structure and its
        VariableState (variable_scope.py); `locations` (a dict) gets the user's line
        of each value."""
        out = {}

        def flat_fn(arguments):
            dynamic = pytree.unflatten(structure, arguments)
            arguments = dict(bound.arguments, **dynamic)
            call = inspect.BoundArguments(self.signature, arguments)
            try:
                result = self.fn(*call.args, **call.kwargs)
            except (ValueError, TypeError, IndexError) as error:
                if isinstance(error, ValueError) and \
                        isinstance(error.__cause__, ConcretizationError):
                    raise error.__cause__ from None  # (NumPy's `a[i] = x` hides it)
                raise with_user_line(error) from error.__cause__
            leaves, _, out["structure"] = pytree.flatten(result)
            return leaves
        named, read = NamedArrays(self.fn), set()
        named.watch(read)  # which named arrays NumPy reads while tracing
        random_states = named.random_states()
        try:
            graph, state = trace_with_variables(flat_fn, leaves, types, paths,
                                                self.__qualname__, locations)
        finally:
            named.put_back()  # and arrays the code rebound to traced results (`w += x`)
        self._refuse_frozen_draws(named, random_states)
        return graph, out["structure"], state, read

    def _refuse_frozen_draws(self, named, states):
        path = named.frozen_draws(states)
        if path is not None:
            raise TypeError(
                f"'{path}', a method of a NumPy random generator taken before the trace, "
                f"drew numbers while '{self.__qualname__}' was traced: NumPy ran it once, "
                f"so its numbers would be frozen into the compiled code. Call the method "
                f"on the generator inside the function (rng.normal(...): jitflow traces "
                f"that), draw outside and pass the numbers in, or use "
                f"jitflow.random.Generator")

    def _compile(self, bound, signature, leaves):
        if self._last is not None:
            self._record_retrace(self._last, signature)
            if self._dynamic is None and config.auto_dynamic_axes:
                self._infer_dynamic_axes(self._last, signature)
        self._info.traces += 1
        started = time.perf_counter()
        locations = {} if PROFILERS else None  # the profiler names kernels' lines
        graph, out_structure, state, read = self._trace(
            bound, signature.structure, signature.types, signature.paths, leaves, locations)
        if self._named is None:
            self._named = NamedArrays(self.fn) or None
        if self._named is not None:
            self._plain_direct = None  # calls check the named arrays first
            self._named.traced(state.closed if state is not None else (), read)
        traced = time.perf_counter()
        graph = optimize_graph(graph, dump=config.dump_ir, check=config.check_ir)
        optimized = time.perf_counter()
        native = self._dynamic.native(signature, graph) if (
            self._dynamic is not None and config.backend == "native") else None
        executable = Executable(graph, out_structure, config.backend, self.__qualname__,
                                background=config.background_compile, state=state,
                                native=native)
        executable.locations = locations
        for profiler in list(PROFILERS):  # (build_seconds: the native code's)
            profiler.record_compile(executable, started, traced - started,
                                    optimized - traced)
        self._cache[signature] = executable
        self._last = signature
        self._keep_cache_bounded()
        return executable

    def _infer_dynamic_axes(self, old, new):
        """Where `new` differs from the last signature `old` only in one axis's size,
        that axis becomes dynamic (config.auto_dynamic_axes), the last size's graph
        the first of its sizes."""
        axes = inferred_axes(old, new)
        if axes is None:
            return
        self._dynamic = DynamicAxes(self.__qualname__, axes, self.signature.parameters,
                                    inferred=True)
        self._info.dynamic = self._dynamic.report
        previous = self._cache.get(old)
        if previous is not None and previous.backend == "native":
            self._dynamic.seed(old, previous.graph)

    def _keep_cache_bounded(self):
        """Forget the least recently used signatures beyond config.cache_size (a long
        run over ever new shapes keeps a bounded number of compiled ones)."""
        evicted = False
        if self._direct_signature in self._cache:  # the entry called last is in use,
            self._used(self._direct_signature)  # only the new one more recently
            self._used(self._last)
        while len(self._cache) > max(1, config.cache_size):
            self._cache.popitem(last=False)
            evicted = True
        if evicted:  # the shortcuts may lead to an evicted one: rebuilt on demand
            self._drop_shortcuts()

    def _drop_shortcuts(self):
        """Forget the shortcuts to compiled code (`_fast`, `_direct`), which skip the
        signature: the next call looks its signature up again."""
        self._fast.clear()
        self._direct = self._direct_signature = self._plain_direct = None

    def _record_retrace(self, old, new):
        if self._dynamic is not None and not self._dynamic.inferred and \
                self._dynamic.only_size_changed(old, new):
            self._size_traces += 1  # asked for: not a retrace to warn of
            return
        reason = f"{'; '.join(differences(old, new))} (call at {user_location()})"
        self._info.reasons.append(reason)
        traces = self._info.traces + 1 - self._size_traces
        if traces >= config.retrace_warning_after and not self._warned:
            self._warned = True
            warn_retraces(self.__qualname__, traces, self._info.reasons)


_DECLINED = object()  # the fast path could not run: use the checked path

# Every Function alive. A change of config.matmul_precision drops their shortcuts to
# compiled code (which skip the signature), so that each next call looks its signature
# up, precision included, and traces again.
_LIVE = weakref.WeakSet()


def _forget_shortcuts():
    for function in list(_LIVE):
        function._drop_shortcuts()


config.on_matmul_precision_change.append(_forget_shortcuts)




def _array_key(args):
    """The exact identity of plain ndarray arguments (None for anything else)."""
    try:
        return tuple([(type(a), a.shape, a.strides, a.dtype) for a in args])
    except AttributeError:
        return None


def _parameter_names(signature, names, numbers, what):
    names = {names} if isinstance(names, str) else set(names)
    params = list(signature.parameters)
    for number in ([numbers] if isinstance(numbers, int) else numbers):
        if not -len(params) <= number < len(params):
            raise ValueError(f"{what.replace('names', 'nums')} {number} is no parameter "
                             f"of the function (it has {params})")
        names.add(params[number])
    unknown = names - set(params)
    if unknown:
        raise ValueError(f"{what} {sorted(unknown)} are not parameters of the "
                         f"function (it has {params})")
    return frozenset(names)


def _readable(path):
    """"['x']" -> "x" and "['p']['w']" -> "p['w']": arguments by their own names."""
    head, _, rest = path[2:].partition("']")
    return head + rest


__all__ = ["function", "Function", "CacheInfo", "TensorType"]
