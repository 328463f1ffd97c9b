"""ComplexTracer: a complex array while a function is traced, held as its real and
imaginary parts (each a real Tracer or array of the part dtype: float32 for complex64,
float64 for complex128).

It behaves like a complex ndarray for the operations jitflow computes on complex
numbers (functions.py lists them); any other raises TypeError naming the function,
never computes something else. Compiled code sees only the real parts: the graph, its
passes, native code and derivatives are those of real arrays.
"""
import functools

import numpy as np

from ..errors import at_user_line
from ..trace import NO_VALUE, Tracer
from .parts import part_dtype


class _Functions:
    """functions.call, installed by functions.py (which builds ComplexTracers)."""
    call = None
    operator_power = None
    setitem = None
    inplace = None


functions = _Functions()


class ComplexTracer:
    __slots__ = ("real", "imag", "dtype", "weak", "__weakref__")
    __array_priority__ = 200  # (above the Tracer's: its operators defer to these)
    __hash__ = None

    def __init__(self, real, imag, dtype, weak=False):
        self.real, self.imag = real, imag
        self.dtype, self.weak = np.dtype(dtype), weak
        if np.shape(real) != np.shape(imag) or \
                getattr(real, "dtype", None) != part_dtype(self.dtype) or \
                getattr(imag, "dtype", None) != part_dtype(self.dtype):
            raise ValueError(f"parts of a complex value must share shape and dtype "
                             f"{part_dtype(self.dtype)}: {np.shape(real)}, {np.shape(imag)}")

    _complex_parts = property(lambda self: (self.real, self.imag))
    shape = property(lambda self: tuple(np.shape(self.real)))
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    T = property(lambda self: functions.call("transpose", self))
    mT = property(lambda self: functions.call("matrix_transpose", self))

    def __repr__(self):
        return f"ComplexTracer<{self.dtype}{list(self.shape)}>"

    __len__, __iter__ = Tracer.__len__, Tracer.__iter__  # (shape and [i] are its own)

    def __array__(self, dtype=None, copy=None):
        """The value, where both parts' are known and carry no derivative (eagerly
        computed values inside jitflow.grad, as a real Tracer gives them); else an
        error: a compiled function's values are not known while it is traced."""
        parts = [np.asarray(p) for p in self._known_parts()]
        if parts:
            value = np.empty(np.broadcast_shapes(*(p.shape for p in parts)), self.dtype)
            value.real, value.imag = parts
            return value if dtype is None else value.astype(dtype)
        raise TypeError(at_user_line(
            f"a traced complex value {self.dtype}{list(self.shape)} cannot become a NumPy "
            f"array while the function is traced; compute with NumPy's functions (they "
            f"are traced) and return the value to look at it"))

    def _known_parts(self):
        """Both parts' values, where each is known (a constant, or a Tracer whose
        builder knows its value) and carries no derivative; else []."""
        values = []
        for part in self._complex_parts:
            if not isinstance(part, Tracer):
                values.append(part)
                continue
            builder = part._builder
            if builder.carries_derivative(part._var):
                return []
            value = builder.value_of(part._var)
            if value is NO_VALUE:
                return []
            values.append(value)
        return values

    def __bool__(self):
        raise TypeError(at_user_line("the truth value of a traced complex value is not "
                                     "known while the function is traced"))

    def __complex__(self):
        """NumPy's `a[i] = z` into its own array converts z to a Python number."""
        raise TypeError(at_user_line(
            f"a traced complex value {self.dtype}{list(self.shape)} has no Python number "
            f"while the function is traced (storing it into a NumPy array, a[i] = z, "
            f"needs one); make the array a traced one, whose items take traced values: "
            f"out = jitflow.numpy.zeros(n, complex) or jitflow.numpy.zeros_like(z)"))

    __float__ = __int__ = __complex__

    # --- operators: NumPy's ufuncs -------------------------------------------------
    def __add__(self, other): return functions.call("add", self, other)
    def __radd__(self, other): return functions.call("add", other, self)
    def __sub__(self, other): return functions.call("subtract", self, other)
    def __rsub__(self, other): return functions.call("subtract", other, self)
    def __mul__(self, other): return functions.call("multiply", self, other)
    def __rmul__(self, other): return functions.call("multiply", other, self)
    def __truediv__(self, other): return functions.call("divide", self, other)
    def __rtruediv__(self, other): return functions.call("divide", other, self)
    def __matmul__(self, other): return functions.call("matmul", self, other)
    def __rmatmul__(self, other): return functions.call("matmul", other, self)
    def __pow__(self, other): return functions.operator_power(self, other)
    def __rpow__(self, other): return functions.call("power", other, self)
    def __eq__(self, other): return functions.call("equal", self, other)
    def __ne__(self, other): return functions.call("not_equal", self, other)
    def __lt__(self, other): return functions.call("less", self, other)
    def __le__(self, other): return functions.call("less_equal", self, other)
    def __gt__(self, other): return functions.call("greater", self, other)
    def __ge__(self, other): return functions.call("greater_equal", self, other)
    def __neg__(self): return functions.call("negative", self)
    def __pos__(self): return functions.call("positive", self)
    def __abs__(self): return functions.call("absolute", self)

    def __getitem__(self, index):
        return functions.call("getitem", self, index)

    def __setitem__(self, index, value):
        functions.setitem(self, index, value)

    # in-place operators write into the array, as NumPy's do (its views see the write)
    def __iadd__(self, other): return functions.inplace("add", self, other)
    def __isub__(self, other): return functions.inplace("subtract", self, other)
    def __imul__(self, other): return functions.inplace("multiply", self, other)
    def __itruediv__(self, other): return functions.inplace("divide", self, other)

    # --- methods ------------------------------------------------------------------
    def conj(self): return functions.call("conjugate", self)
    conjugate = conj

    def astype(self, dtype, copy=True): return functions.call("astype", self, dtype)
    def reshape(self, *shape, order="C"):
        return functions.call("reshape", self, shape[0] if len(shape) == 1 else shape)
    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return functions.call("transpose", self, tuple(axes) if axes else None)
    def flatten(self): return functions.call("ravel", self)
    def squeeze(self, axis=None): return functions.call("squeeze", self, axis)

    def __getattr__(self, name):
        """ndarray's other methods: the function of that name (which raises TypeError
        when jitflow does not compute it on complex values)."""
        if name.startswith("_") or not hasattr(np.ndarray, name):
            raise AttributeError(f"'ComplexTracer' object has no attribute '{name}'")
        return functools.partial(functions.call, name, self)

    # --- NumPy's protocols --------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__":
            raise TypeError(at_user_line(f"numpy.{ufunc.__name__}.{method} of a traced "
                                         f"complex value is not supported by jitflow"))
        if kwargs.get("out") is not None:
            raise TypeError(at_user_line(f"numpy.{ufunc.__name__}(..., out=...) of a "
                                         f"traced complex value is not supported"))
        kwargs.pop("out", None)
        return functions.call(ufunc.__name__, *inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        module = getattr(func, "__module__", "") or ""
        name = func.__name__
        if module.startswith("numpy.fft"):
            name = f"fft.{name}"
        elif module.startswith("numpy.linalg"):
            name = f"linalg.{name}"
        return functions.call(name, *args, **kwargs)
