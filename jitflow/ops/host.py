"""pure_callback: a Python function of runtime values that gives arrays of declared
shapes and dtypes, for what jitflow does not compile (SciPy's special functions, say).

Unlike debug_callback the node is pure: the function must depend on its operands alone,
so passes may drop it when its results are unused, merge two identical calls, or call
it at compile time on constant operands. Its results are checked against the declared
types, eagerly, in the interpreter and in native code (which calls back into Python:
codegen/control/python_callbacks.py). It has no derivative of its own: give it one
with jitflow.custom_vjp around the call.
"""
import numpy as np

from ..ir.primitive import Primitive, register
from ..ir.types import TensorType
from ..trace import bind


class ResultChecking:
    """The function a pure_callback node calls: its results come back as a tuple of
    arrays of the declared (shape, dtype)s, or it raises naming the difference. Equal
    only to itself, as a parameter compares."""
    __slots__ = ("fn", "name", "results")

    def __init__(self, fn, results, name=None):
        self.fn, self.results = fn, results
        self.name = name or getattr(fn, "__qualname__", None) or repr(fn)

    def __call__(self, *values):
        got = self.fn(*values)
        got = tuple(got) if isinstance(got, (tuple, list)) else (got,)
        if len(got) != len(self.results):
            raise ValueError(f"pure_callback: {self.name} returned {len(got)} result(s), "
                             f"{len(self.results)} declared")
        return tuple(self._checked(np.asarray(value), shape, dtype, i)
                     for i, (value, (shape, dtype)) in enumerate(zip(got, self.results)))

    def _checked(self, value, shape, dtype, index):
        if value.shape != shape or value.dtype != dtype:
            raise TypeError(f"pure_callback: result {index} of {self.name} is "
                            f"{value.dtype}{list(value.shape)}, declared "
                            f"{np.dtype(dtype)}{list(shape)}")
        return value

    def __repr__(self):
        return self.name


def _pure_callback_type(*types, callback):
    return tuple(TensorType(shape, np.dtype(dtype)) for shape, dtype in callback.results)


def _pure_callback_impl(*values, callback):
    return callback(*values)


def _no_derivative(*args, callback, **kwargs):
    raise NotImplementedError(
        f"pure_callback: jitflow cannot differentiate the Python function {callback.name}; "
        f"wrap the call in jitflow.custom_vjp (or custom_jvp) to give it a derivative")


pure_callback_p = register(Primitive(
    "pure_callback", _pure_callback_type, _pure_callback_impl, multiple_results=True,
    vjp=_no_derivative, jvp=_no_derivative))


def pure_callback(callback, *values):
    """callback (a ResultChecking) on the runtime values of `values`: its results."""
    return bind(pure_callback_p, *values, callback=callback)


__all__ = ["ResultChecking", "pure_callback"]
