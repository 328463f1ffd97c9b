"""jitflow.Variable: an array that persists between calls and changes by assignment.

Eagerly a Variable acts as the array it holds: operators, indexing, methods, NumPy's and
jitflow.numpy's functions all read it. Inside @jitflow.function each Variable the
function reads (closed over or passed as an argument) becomes an input of the traced
graph and each assignment an output (variable_scope.py); the new values are written
back after the compiled code has returned, all together, so a call that raises changes
no Variable.

The array a Variable holds is read-only: a value read from it (`v.value`,
`np.asarray(v)`) is a snapshot that later assignments never change. An assignment
writes into the old buffer only when nothing else refers to it.
"""
import itertools
import operator
import sys

import numpy as np

from . import numpy as jnp
from . import variable_scope
from .errors import at_user_line
from .numpy_dispatch import dispatch_ufunc
from .ir.types import SUPPORTED_DTYPES, TensorType

COMPLEX_DTYPES = (np.dtype(np.complex64), np.dtype(np.complex128))
from .trace import Stateful, Tracer, constant_type, read_stateful

_unnamed = itertools.count()


class Variable(Stateful):
    """Variable(value, name=None, trainable=True, dtype=None): holds a copy of `value`
    (cast to `dtype` if given). Its shape and dtype are fixed: `assign` checks them."""
    __slots__ = ("_array", "name", "trainable", "__weakref__")
    __array_priority__ = 200  # above Tracer's: Variable's operators go first
    __hash__ = None  # == is elementwise, as for arrays

    def __init__(self, value, name=None, trainable=True, dtype=None):
        self.name = str(name) if name is not None else f"variable_{next(_unnamed)}"
        self.trainable = bool(trainable)
        self._array = _initial_array(value, dtype, self.name)

    # --- what it holds ------------------------------------------------------------------
    def read(self):
        """The current value: the array eagerly, a traced value inside a trace."""
        scope = variable_scope.current()
        return self._array if scope is None else scope.read(self)

    value = property(read)

    def held(self):
        """The array held now, whatever scope is active (what scopes start from)."""
        return self._array
    type = property(lambda self: TensorType(self._array.shape, self._array.dtype))
    shape = property(lambda self: self._array.shape)
    dtype = property(lambda self: self._array.dtype)
    ndim = property(lambda self: self._array.ndim)
    size = property(lambda self: self._array.size)

    def numpy(self):
        """A copy of the current value, as a writable NumPy array."""
        value = self.read()
        return value.numpy() if isinstance(value, Tracer) else np.array(value, copy=True)

    # --- assignment ---------------------------------------------------------------------
    def assign(self, value):
        """Hold `value` from now on: same shape and dtype (a Python number fills the
        whole array). Returns the Variable."""
        return self._set(fitted(self, value, "assign"))

    def assign_add(self, delta):
        return self._set(fitted(self, self.read() + read_stateful(delta), "assign_add"),
                         fresh=True)

    def assign_sub(self, delta):
        return self._set(fitted(self, self.read() - read_stateful(delta), "assign_sub"),
                         fresh=True)

    def _set(self, value, fresh=False):
        scope = variable_scope.current()
        if scope is not None:
            scope.assign(self, value)
        elif fresh and isinstance(value, np.ndarray) and value.base is None:
            self.adopt(value)  # computed here: nobody else holds it
        else:
            self.store(value)
        return self

    def store(self, value):
        """Eagerly: copy `value` in, into the old buffer when nothing else refers to it
        (the attribute and getrefcount's own argument are the only references)."""
        if sys.getrefcount(self._array) == 2 and self._array.base is None:
            self._array.flags.writeable = True
            np.copyto(self._array, value)
            self._array.flags.writeable = False
        else:
            self.adopt(np.array(value, dtype=self.dtype, copy=True))

    def adopt(self, array):
        """Hold `array` itself, an array of this Variable's type that nothing else
        refers to (a result just computed; a NumPy scalar becomes a 0-d array)."""
        if not isinstance(array, np.ndarray):
            array = np.array(array)
        array.flags.writeable = False
        self._array = array

    # --- pickling and copying: the array held stays read-only --------------------------
    def __getstate__(self):
        return {"name": self.name, "trainable": self.trainable, "array": self._array}

    def __setstate__(self, state):
        self.name, self.trainable = state["name"], state["trainable"]
        self.adopt(state["array"])

    # --- acting as an array -------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        value = self.read()
        if isinstance(value, Tracer):
            return value.__array__(dtype, copy)  # raises: no value while tracing
        if copy:
            return np.array(value, dtype=dtype, copy=True)
        return value if dtype is None else value.astype(dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if any(isinstance(out, Stateful) for out in kwargs.get("out", ())):
            raise TypeError(at_user_line(
                f"numpy.{ufunc.__name__}(..., out=a Variable): write a Variable with "
                f".assign(...) instead"))
        inputs = read_stateful(inputs)  # (the caller's tuple is let go: see below)
        if any(isinstance(value, Tracer) for value in inputs):
            # straight to the Tracer's dispatch, as a traced operand would have gone:
            # `a += variable` then counts the references to `a` as `a += x` does
            # (array_references.py)
            return dispatch_ufunc(ufunc, method, inputs, kwargs)
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return func(*read_stateful(args),
                    **{key: read_stateful(value) for key, value in kwargs.items()})

    def __getattr__(self, name):
        """Everything else an array has (methods such as sum or reshape, .T) reads the
        value."""
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.read(), name)

    def __getitem__(self, index):
        return self.read()[read_stateful(index)]

    def __setitem__(self, index, value):
        raise TypeError(at_user_line(
            f"Variable {self.name!r} does not support item assignment; assign a whole "
            f"new value with .assign(...) (jitflow.numpy.where builds one from a mask)"))

    def __len__(self):
        return len(self.read())

    def __iter__(self):
        return iter(self.read())

    def __bool__(self):
        return bool(self.read())

    def __float__(self):
        return float(self.read())

    def __int__(self):
        return int(self.read())

    def __index__(self):
        return operator.index(self.read())

    def __repr__(self):
        value = self.read()
        if isinstance(value, Tracer):
            return f"<jitflow.Variable {self.name!r} {self.type} (traced)>"
        return (f"<jitflow.Variable {self.name!r} shape={self.shape} dtype={self.dtype}, "
                f"numpy={value!r}>")


def _binary(function):
    def forward(self, other):
        return function(self.read(), read_stateful(other))

    def reflected(self, other):
        return function(read_stateful(other), self.read())
    return forward, reflected


def _unary(function):
    return lambda self: function(self.read())


for _name, _function in [("add", operator.add), ("sub", operator.sub),
                         ("mul", operator.mul), ("truediv", operator.truediv),
                         ("floordiv", operator.floordiv), ("mod", operator.mod),
                         ("pow", operator.pow), ("matmul", operator.matmul),
                         ("and", operator.and_), ("or", operator.or_),
                         ("xor", operator.xor)]:
    _forward, _reflected = _binary(_function)
    setattr(Variable, f"__{_name}__", _forward)
    setattr(Variable, f"__r{_name}__", _reflected)
for _name, _function in [("lt", operator.lt), ("le", operator.le), ("gt", operator.gt),
                         ("ge", operator.ge), ("eq", operator.eq), ("ne", operator.ne)]:
    setattr(Variable, f"__{_name}__", _binary(_function)[0])
for _name, _function in [("neg", operator.neg), ("pos", operator.pos),
                         ("abs", operator.abs), ("invert", operator.invert)]:
    setattr(Variable, f"__{_name}__", _unary(_function))


def _initial_array(value, dtype, name):
    value = read_stateful(value)
    if isinstance(value, Tracer):
        raise TypeError(at_user_line(
            f"Variable {name!r}: the initial value is a traced value; create Variables "
            f"from NumPy arrays or numbers (inside a traced function too; NumPy's random "
            f"numbers drawn there are traced unless drawn under "
            f"jitflow.random.eager_numpy())"))
    try:
        array = np.array(value, dtype=dtype, copy=True)
    except (TypeError, ValueError) as error:
        raise TypeError(at_user_line(f"Variable {name!r}: cannot make an array of the "
                                     f"initial value ({error})")) from None
    if array.dtype not in SUPPORTED_DTYPES + COMPLEX_DTYPES:
        raise TypeError(at_user_line(
            f"Variable {name!r}: dtype {array.dtype} is not supported; use one of "
            f"{', '.join(map(str, SUPPORTED_DTYPES + COMPLEX_DTYPES))}"))
    array.flags.writeable = False
    return array


def fitted(variable, value, what):
    """`value` as a value of `variable`'s type, or a clear error: the dtype must be the
    Variable's (a Python number may be cast to it), the shape too (a Python number
    fills it)."""
    value = read_stateful(value)
    where = f"Variable {variable.name!r}.{what}"
    try:
        given = value_type(value)
    except (TypeError, ValueError):
        raise TypeError(at_user_line(f"{where}: the value is a {type(value).__name__}, "
                                     f"not an array or a number")) from None
    if given.dtype != variable.dtype and not _casts_weakly(given, variable.dtype):
        raise TypeError(at_user_line(
            f"{where}: the value has dtype {given.dtype}, but the Variable holds "
            f"{variable.dtype}; cast the value first (.astype(numpy.{variable.dtype}))"))
    if given.shape != variable.shape and not given.weak:
        raise ValueError(at_user_line(
            f"{where}: the value has shape {given.shape}, but the Variable has shape "
            f"{variable.shape}"))
    if given.dtype != variable.dtype:
        value = jnp.asarray(value, dtype=variable.dtype)
    if given.shape != variable.shape:
        value = jnp.broadcast_to(value, variable.shape)
    return value


def value_type(value):
    """The TensorType of a value assigned (or a gradient): a complex one's too."""
    if getattr(value, "_complex_parts", None) is not None:
        return TensorType(tuple(value.shape), value.dtype, value.weak)
    if isinstance(value, complex):  # (weak: it fills a complex Variable of any width)
        return TensorType((), np.dtype(np.complex128), True)
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind == "c":
        return TensorType(value.shape, value.dtype)
    return constant_type(value)


def _casts_weakly(given, dtype):
    """A Python int fits any numeric Variable, a Python float any float or complex
    Variable, a Python complex any complex one."""
    allowed = {"f": "fc", "c": "c"}.get(given.dtype.kind, "ifc")
    return given.weak and dtype.kind in allowed


__all__ = ["Variable"]
