"""The Tracer: what stands for an array while a function is traced.

It knows its type, the builder that made it and, while recording eagerly, its value. Its
operators and ndarray methods (`x + y`, `x[i]`, `x.sum()`, NumPy's protocols) are the
business of the layers built on this one, which install them at import
(jitflow/array_methods.py).
"""
import dis
import operator
import sys

import numpy as np

from ..errors import ConcretizationError, at_user_line

NO_VALUE = object()  # what a Tracer of a builder that does not record values holds


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
        by np.asarray, and a traced value has no number to give. The caller's frame
        tells them apart: it is storing an item."""
        caller = sys._getframe(2)
        if caller.f_code.co_code[caller.f_lasti] != _STORE_SUBSCR:
            return
        if self._builder.carries_derivative(self._var):
            raise self._derivative_lost_error("into an item of a NumPy array (a[i] = x)")
        if self._builder.value_of(self._var) is NO_VALUE:
            raise self._concretization_error(
                "storing it into an item of a NumPy array (a[i] = x)", _STORE_ADVICE)

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

    def item(self, *args):
        return np.asarray(self._value(".item()")).item(*args)

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
_STORE_ADVICE = (
    "make the array a traced one, whose items take traced values: build it from a traced "
    "value (out = jitflow.numpy.zeros_like(x)) or with jitflow.numpy.zeros / "
    "jitflow.numpy.array, or collect the values in a list and stack them "
    "(jitflow.numpy.stack).")
_BRANCH_ADVICE = (
    "mark the argument static (jitflow.function(fn, static_argnames=...)) if its value "
    "decides the program's structure; use jitflow.numpy.where to choose between values; or "
    "use jitflow.cond (or jitflow.switch) to branch on a value, and jitflow.while_loop, "
    "fori_loop or scan to loop on one.")
_ARRAY_ADVICE = (
    "build arrays with jitflow.numpy.asarray or jitflow.numpy.array (they take lists of "
    "traced values too) and keep computing with NumPy's functions, which are traced; "
    "return the value from the function to look at it after the call.")


