"""The Tracer's operators and ndarray methods, given to it once, at import.

The Tracer (jitflow/trace) knows what a traced value is; what `x + y`, `x[i] = v`,
`x.sum()` or `np.sin(x)` do on one belongs to the layers built on it: ops, jitflow.numpy,
indexing, writes and numpy_dispatch. This module installs those on the Tracer, as NumPy's
ndarray has them, so the trace layer imports none of them (jitflow/__init__ imports this
module). It also gives bind jitflow.numpy.asarray for its list arguments.
"""
from types import FunctionType

import numpy as np

from . import complex_values  # (before jnp's functions are taken: they route complex calls)
from . import numpy as jnp
from . import in_place, masked_selection, ops, writes
from .errors import at_user_line
from .indexing import basic_only, getitem
from .ir.types import as_dtype, normalize_axis
from .numpy_dispatch import dispatch_function, dispatch_ufunc
from .trace import Tracer, read_stateful
from .trace.binding import convert_sequences_with


def _binary(name, reflected=False):
    fn = getattr(ops, name)
    ufunc = {"divide": "true_divide"}.get(name, name)

    def method(self, other):
        other = read_stateful(other)  # (a complex Variable's value is complex)
        if complex_values.is_complex(other):
            operands = (other, self) if reflected else (self, other)
            return complex_values.call(ufunc, *operands)
        return fn(other, self) if reflected else fn(self, other)
    method.__name__ = name
    return method


_power = _binary("power")


def _inplace(name):
    ufunc = {"divide": "true_divide"}.get(name, name)
    operation = getattr(ops, name)

    def method(self, other):
        return writes.inplace(self, operation, read_stateful(other), ufunc)
    method.__name__ = name
    return method


def _method(name):
    fn = getattr(jnp, name)

    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = name
    return method


class ArrayMethods:
    """What the Tracer does as an ndarray; every function and property here becomes the
    Tracer's (install)."""

    T = property(lambda self: jnp.transpose(self))
    # --- operators ----------------------------------------------------------------
    __add__, __radd__ = _binary("add"), _binary("add", True)
    __sub__, __rsub__ = _binary("subtract"), _binary("subtract", True)
    __mul__, __rmul__ = _binary("multiply"), _binary("multiply", True)
    __truediv__, __rtruediv__ = _binary("divide"), _binary("divide", True)
    __floordiv__, __rfloordiv__ = _binary("floor_divide"), _binary("floor_divide", True)
    __mod__, __rmod__ = _binary("remainder"), _binary("remainder", True)
    __rpow__ = _binary("power", True)

    def __pow__(self, exponent):
        """ndarray's ** takes np.square for a Python int 2: of a bool array, int8 (where
        np.power gives int64). A Python int passed in is traced, its value unknown, so
        for a bool array the result's dtype is not known either: refused."""
        if self.dtype == np.bool_:
            if type(exponent) is int and exponent == 2:
                return jnp.square(self)
            if isinstance(exponent, Tracer) and exponent._var.type.weak and \
                    exponent.dtype.kind == "i":
                raise TypeError(at_user_line(
                    "a bool array ** a Python int passed in as an argument: NumPy squares "
                    "for 2 (int8) and takes the power otherwise (int64), so the dtype "
                    "depends on the value; use np.power (int64) or np.square, or make "
                    "the exponent static (static_argnames)"))
        return _power(self, exponent)
    __matmul__ = _method("matmul")  # NumPy's matmul: 1-D operands are promoted

    def __rmatmul__(self, other):
        return jnp.matmul(other, self)

    __and__, __rand__ = _binary("bitwise_and"), _binary("bitwise_and", True)
    __or__, __ror__ = _binary("bitwise_or"), _binary("bitwise_or", True)
    __xor__, __rxor__ = _binary("bitwise_xor"), _binary("bitwise_xor", True)
    __lshift__, __rlshift__ = _binary("left_shift"), _binary("left_shift", True)
    __rshift__, __rrshift__ = _binary("right_shift"), _binary("right_shift", True)
    __lt__, __le__ = _binary("less"), _binary("less_equal")
    __gt__, __ge__ = _binary("greater"), _binary("greater_equal")
    __eq__, __ne__ = _binary("equal"), _binary("not_equal")

    def __neg__(self):
        return ops.negative(self)

    def __pos__(self):
        # NumPy 2: a new array (writes into it leave self alone); a TypeError for bool
        return writes.copy(jnp.positive(self))

    def __abs__(self):
        return ops.absolute(self)

    def __invert__(self):
        return ops.invert(self)

    def __getitem__(self, index):
        if basic_only(index):
            return writes.view(self, index)
        if masked_selection.is_traced_mask(index):  # x[mask] += v and the like
            return masked_selection.select(self, read_stateful(index))
        return getitem(self, index)

    def __setitem__(self, index, value):
        writes.setitem(self, index, read_stateful(value))

    # --- in-place operators: NumPy's, functionalized (writes.py) ---------------------
    __iadd__, __isub__ = _inplace("add"), _inplace("subtract")
    __imul__, __itruediv__ = _inplace("multiply"), _inplace("divide")
    __ifloordiv__, __imod__ = _inplace("floor_divide"), _inplace("remainder")
    __ipow__, __iand__ = _inplace("power"), _inplace("bitwise_and")
    __ior__, __ixor__ = _inplace("bitwise_or"), _inplace("bitwise_xor")
    __ilshift__, __irshift__ = _inplace("left_shift"), _inplace("right_shift")

    def __imatmul__(self, other):
        return writes.inplace(self, jnp.matmul, read_stateful(other), "matmul")

    def copy(self, order="C"):
        """A new array of the same value: later writes into either leave the other. In C
        order, as NumPy's method makes it (np.copy keeps the order: order "K"), so its
        reshapes are views."""
        if order not in ("C", "K"):
            raise NotImplementedError(at_user_line(
                f"copy(order={order!r}): jitflow makes copies in C or K order"))
        copied = writes.copy(self)
        if order == "C" and self.ndim > 0:
            writes.alias_of(copied).contiguous = True
        return copied

    def fill(self, value):
        """ndarray.fill: every element set to `value` (cast as assignment casts)."""
        self[...] = value

    def put(self, indices, values, mode="raise"):
        """ndarray.put: np.put into this array (in_place.py)."""
        in_place.put(self, indices, values, mode=mode)

    flat = property(lambda self: FlatIterator(self))

    def view(self, dtype=None, type=None):
        """ndarray.view: the same memory as another array object, whose writes reach
        this one. Reading the bits as another dtype is not supported."""
        if _is_ndarray_type(dtype):
            dtype, type = None, dtype
        if type is not None and not _is_ndarray_type(type):
            raise TypeError(at_user_line(f"view(type={type!r}): jitflow's traced values "
                                         f"are ndarrays"))
        if dtype is not None and as_dtype(dtype, what="view") != self.dtype:
            raise NotImplementedError(at_user_line(
                f"view({as_dtype(dtype, what='view')}) of a traced {self.dtype} array: "
                f"jitflow does not reinterpret an array's bits as another dtype; use "
                f"astype to convert the values"))
        return writes.derived_view(self, self, lambda base: base,
                                   lambda base, value: value)

    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)

    @property
    def flags(self):
        """A traced value has no memory layout of its own (native code reads arguments
        in C order): an AttributeError, as for a missing attribute, that says why
        (np.isfortran reads it)."""
        raise AttributeError(at_user_line(
            f"a traced value {self.dtype}{list(self.shape)} has no flags: its memory "
            f"layout is the argument's NumPy layout, which a compiled function does not "
            f"keep; ask outside the traced function"))

    @property
    def mT(self):
        if self.ndim < 2:
            raise ValueError(at_user_line("matrix transpose with ndim < 2 is undefined"))
        return jnp.matrix_transpose(self)

    @property
    def real(self):
        """For real dtypes the array itself, as NumPy gives."""
        return self if self.dtype.kind != "c" else jnp.real(self)

    @property
    def imag(self):
        """For real dtypes read-only zeros, as NumPy gives."""
        if self.dtype.kind == "c":
            return jnp.imag(self)
        return writes.mark_readonly(writes.mark_array(jnp.imag(self)),
                                    "the imaginary part of a real array")

    # --- methods ------------------------------------------------------------------
    reshape = _method("reshape")

    def transpose(self, *axes):
        """ndarray.transpose: the axes as one sequence, or one by one (x.transpose(1, 0))."""
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return jnp.transpose(self, tuple(axes) if axes else None)

    sum, mean, prod = _method("sum"), _method("mean"), _method("prod")
    max, min = _method("max"), _method("min")
    argmax, argmin = _method("argmax"), _method("argmin")
    std, var = _method("std"), _method("var")
    dot, ravel, squeeze = _method("dot"), _method("ravel"), _method("squeeze")
    clip, cumsum, swapaxes = _method("clip"), _method("cumsum"), _method("swapaxes")
    repeat, diagonal, trace = _method("repeat"), _method("diagonal"), _method("trace")
    all, any = _method("all"), _method("any")
    searchsorted, cumprod = _method("searchsorted"), _method("cumprod")
    nonzero = _method("nonzero")
    round, take = _method("round"), _method("take")

    def conj(self):
        """ndarray.conj of a real array: the array itself (np.conj would make bool int8)."""
        return self
    conjugate = conj

    def compress(self, condition, axis=None, out=None, **sized):
        """ndarray.compress: the condition first, as jitflow.numpy.compress takes it."""
        return jnp.compress(condition, self, axis, out, **sized)
    argsort, argpartition = _method("argsort"), _method("argpartition")

    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        """ndarray.sort: sorted in place (stable; see jitflow.numpy.sort)."""
        writes.assign(self, jnp.sort(self, normalize_axis(axis, self.ndim), kind, order,
                                     stable=stable))

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        """ndarray.partition: partitioned in place (by a full sort)."""
        writes.assign(self, jnp.partition(self, kth, normalize_axis(axis, self.ndim), kind,
                                          order))

    def flatten(self):
        """A copy, flat (ravel gives a view where it can)."""
        return writes.copy(jnp.ravel(self))

    def astype(self, dtype):
        if np.dtype(dtype).kind == "c":
            return complex_values.call("astype", self, dtype)
        return ops.cast(self, as_dtype(dtype, what="astype"))

    # --- NumPy's protocols ---------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return dispatch_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return dispatch_function(func, args, kwargs)


class FlatIterator:
    """x.flat of a traced x: indexing x as if it were flat, reads (copies) and writes
    (np.put's rules: values repeated cyclically)."""

    def __init__(self, base):
        self.base = base

    def __getitem__(self, index):
        return writes.copy(getitem(jnp.ravel(self.base), read_stateful(index)))

    def __setitem__(self, index, value):
        in_place.flat_write(self.base, index, value)

    def __len__(self):
        return self.base.size

    def __iter__(self):
        flat = jnp.ravel(self.base)
        return (flat[i] for i in range(self.base.size))

    def copy(self):
        return writes.copy(jnp.ravel(self.base))


def _is_ndarray_type(value):
    return isinstance(value, type) and issubclass(value, np.ndarray)


def install():
    """Give the Tracer every method and property of ArrayMethods, and bind jitflow.numpy's
    asarray."""
    for name, value in vars(ArrayMethods).items():
        if isinstance(value, (FunctionType, property)):
            setattr(Tracer, name, value)
    convert_sequences_with(jnp.asarray)


install()
