"""The ndarrays a function's own code names: its closure cells, the globals it reads,
and the arrays reached from them (and from a method's instance) by the attribute names,
keys and indices the code uses: `model.w`, `self.params['b']`, `layers[0].w`.

A traced signature reads the array objects the trace saw (their contents at each call,
variable_scope.py). A name rebound to another array (`w = w - lr * g` at module level,
`self.w = new_w`) makes the trace stale, so every call checks first that each path still
leads to the same object, and the function is traced again when one does not.

A named array the trace read through NumPy (`w.sum()`, with no traced value involved)
holds a result NumPy computed with its contents once, while tracing. So the trace keeps a
copy of each such array, every call compares, and a change makes the function trace
again, as a rebound name does. Which arrays NumPy read is seen while tracing
(watched_arrays.py); an array no trace takes as an input is copied in any case, as
NumPy may have read it in ways no view sees.
"""
import types

import numpy as np

from .trace import Tracer
from .watched_arrays import original_of, watched_view

_MISSING = object()
_DEPTH = 3  # steps from a name: `self.layers[0].w` is three
_ITEMS = 64  # the items of a list or tuple looked into
# objects never looked into: their attributes are not the user's arrays
_OPAQUE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType,
           types.MethodType, np.ndarray, np.generic, str, bytes)


class NamedArrays:
    def __init__(self, fn):
        method = fn if getattr(fn, "__self__", None) is not None else None
        fn = getattr(fn, "__func__", fn)  # a bound method: its function
        code = getattr(fn, "__code__", None)
        # (path, how to reach it now, how to put a value there, the array it led to)
        self.found = []
        self._copies = {}  # id(array) -> (path, array, its contents when traced)
        self._inputs = set()  # ids of the arrays some trace takes as inputs
        self._read = set()  # ids of the arrays NumPy read while some trace ran
        self._views = []  # (reach, put, the original, what stands in) while tracing
        # (path, reach, put, method) for methods of NumPy random generators the code
        # names, taken before the trace (`draw = rng.normal`): NumPy's own, which
        # jitflow.random does not trace, so `watch` puts a call of the method by name
        # on the generator in their place
        self.random_methods = []
        if code is None:
            return
        words = _code_words(code)
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            self._walk(name, lambda cell=cell: _contents(cell),
                       lambda value, cell=cell: setattr(cell, "cell_contents", value),
                       words, _DEPTH)
        scope = fn.__globals__
        for name in sorted(_global_names(code)):
            self._walk(name, lambda name=name: scope.get(name, _MISSING),
                       lambda value, name=name: scope.__setitem__(name, value),
                       words, _DEPTH)
        if method is not None:  # (reached through the method: it may hold it weakly)
            first = code.co_varnames[0] if code.co_argcount else "self"
            self._walk(first, lambda: method.__self__, None, words, _DEPTH)


    def _walk(self, path, reach, put, words, depth):
        """Record the arrays found from reach() within `depth` steps."""
        value = original_of(reach())  # (another thread may be tracing)
        if isinstance(value, np.ndarray):
            self.found.append((path, reach, put, value))
        elif _random_owner(value) is not None:
            self.random_methods.append((path, reach, put, value))
        elif depth > 0 and _looked_into(value):
            for step_path, step, put_step in _steps(value, words | _class_words(value)):
                self._walk(path + step_path, lambda step=step: step(reach()),
                           put_step and (lambda v, put_step=put_step:
                                         put_step(reach(), v)),
                           words, depth - 1)

    def __bool__(self):
        return bool(self.found)

    def traced(self, inputs, read):
        """After a trace that takes the arrays `inputs` as inputs, in which NumPy read
        the arrays whose ids are in `read`: copy the writable named arrays whose
        contents the trace may hold."""
        self._inputs.update(id(array) for array in inputs)
        self._read.update(read)
        for path, _, _, array in self.found:
            if id(array) in self._inputs and id(array) not in self._read:
                self._copies.pop(id(array), None)
            elif array.flags.writeable and id(array) not in self._copies:
                self._copies[id(array)] = (path, array, array.copy())

    def changed(self):
        """The path of an array whose contents differ from its copy's, or None."""
        for path, array, copy in self._copies.values():
            if not _same_bytes(array, copy):
                return path
        return None

    def rebound(self):
        """The path of one that leads to another object now, or None."""
        for path, reach, _, array in self.found:
            if original_of(reach()) is not array:
                return path
        return None

    def random_states(self):
        """The state of each generator behind a method in random_methods, to compare
        after the trace with frozen_draws."""
        return [_random_state(_random_owner(method))
                for *_, method in self.random_methods]

    def frozen_draws(self, states):
        """The path of a method in random_methods that drew numbers since `states` were
        taken (traced draws leave NumPy's state alone: jitflow.random), or None."""
        for (path, *_, method), state in zip(self.random_methods, states):
            if _random_state(_random_owner(method)) != state:
                return path
        return None

    def watch(self, read):
        """Before a trace: put a view of each writable array where its name leads, which
        adds the array's id to the set `read` when NumPy reads it (watched_arrays.py)."""
        on_read = lambda array: read.add(id(array))  # noqa: E731
        for _, reach, put, array in self.found:
            if put is not None and type(array) is np.ndarray and array.flags.writeable:
                view = watched_view(array, on_read)
                put(view)
                self._views.append((reach, put, array, view))
        for _, reach, put, method in self.random_methods:
            if put is not None:
                by_name = _called_by_name(method)
                put(by_name)
                self._views.append((reach, put, method, by_name))

    def put_back(self):
        """After a trace: put each array back where the function's code rebound it to
        the traced result of writing into it (`w += x`: numpy_dispatch.py), or where a
        view watched it, and each random method back in place of its call by name."""
        for _, reach, put, array in self.found:
            if put is not None and isinstance(reach(), Tracer):
                put(array)
        for reach, put, original, stand_in in self._views:
            if reach() is stand_in:
                put(original)
        self._views = []


_RANDOM_CLASSES = (np.random.Generator, np.random.RandomState, np.random.BitGenerator)


def _random_owner(value):
    """The NumPy generator whose bound method `value` is, or None."""
    owner = getattr(value, "__self__", None)
    if isinstance(value, (types.BuiltinMethodType, types.MethodType)) and \
            isinstance(owner, _RANDOM_CLASSES):
        return owner
    return None


def _called_by_name(method):
    """A function calling `method` by its name on its generator: while a trace runs,
    the generator's class methods are jitflow.random's, which trace the draw."""
    owner, name = method.__self__, method.__name__
    return lambda *args, **kwargs: getattr(owner, name)(*args, **kwargs)


def _random_state(owner):
    """A comparable snapshot of a NumPy generator's state."""
    bit_generator = owner if isinstance(owner, np.random.BitGenerator) else \
        getattr(owner, "bit_generator", None) or getattr(owner, "_bit_generator")
    return repr(bit_generator.state)


def _looked_into(value):
    """Whether the arrays inside `value` are the user's to watch: not those of a module,
    a class or a function, nor jitflow's own objects (a Variable is read by the trace
    whatever array it holds)."""
    return not (value is _MISSING or isinstance(value, _OPAQUE) or
                type(value).__module__.partition(".")[0] == "jitflow")


def _steps(value, words):
    """(path suffix, step, put) for the parts of `value` the code may reach: a step maps
    the object found there at a later call to the part (or _MISSING), put stores a value
    in its place."""
    if isinstance(value, dict):
        return [(f"[{key!r}]", lambda v, key=key: _item(v, key),
                 lambda v, new, key=key: v.__setitem__(key, new))
                for key in list(value) if isinstance(key, str) and key in words]
    if isinstance(value, (list, tuple)):
        put = (lambda v, new, i: v.__setitem__(i, new)) if isinstance(value, list) \
            else None
        return [(f"[{i}]", lambda v, i=i: _item(v, i),
                 put and (lambda v, new, i=i: put(v, new, i)))
                for i in range(min(len(value), _ITEMS))]
    attributes = getattr(value, "__dict__", None)
    if not isinstance(attributes, dict):
        return []
    return [(f".{name}", lambda v, name=name: _attribute(v, name),
             lambda v, new, name=name: v.__dict__.__setitem__(name, new))
            for name in list(attributes) if name in words]


def _item(container, key):
    try:
        return container[key]
    except (LookupError, TypeError):
        return _MISSING


def _attribute(value, name):
    """The instance's own attribute (a property is not run: reading it could do
    anything)."""
    attributes = getattr(value, "__dict__", None)
    return attributes.get(name, _MISSING) if isinstance(attributes, dict) else _MISSING


def _same_bytes(array, copy):
    """Bit for bit, so that -0.0 for 0.0, or one NaN for another, counts as a change."""
    if array.shape != copy.shape or array.dtype != copy.dtype:
        return False
    if array.size == 0:  # (no bytes, and memoryview refuses a zero in the shape)
        return True
    return _bytes_of(np.ascontiguousarray(array)) == _bytes_of(copy)


def _bytes_of(array):
    """A C-contiguous array's bytes, uncopied (as bytes: a memoryview of the array
    itself refuses dtypes the buffer protocol lacks, such as bfloat16)."""
    return memoryview(array.reshape(-1).view(np.uint8))


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # not yet bound
        return _MISSING


def _global_names(code):
    """The names code and the functions defined in it may read as globals."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _global_names(constant)
    return names


def _code_words(code):
    """The attribute names and string constants code (and the code defined in it) uses:
    the parts of objects it can reach by name."""
    words = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            words |= _code_words(constant)
        elif isinstance(constant, str):
            words.add(constant)
    return words


def _class_words(value):
    """The words of the methods of value's class: a method the function calls reads
    the instance's attributes too (`self.forward(x)` reads `self.w`). Not those of
    __init__, which sets them up."""
    words = set()
    for cls in type(value).__mro__[:-1]:  # not object's
        for name, member in vars(cls).items():
            if name in ("__init__", "__new__"):
                continue
            member = getattr(member, "__func__", getattr(member, "fn", member))
            code = getattr(member, "__code__", None)
            if code is not None:
                words |= _code_words(code)
    return words
