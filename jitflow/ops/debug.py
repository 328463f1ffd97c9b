"""debug_callback: a Python function called on runtime values, for its effect alone.

The node has no results and is not pure, so no pass drops, merges, reorders or
evaluates it at compile time: it runs where the program runs it, once each time, in
the order the program binds it (a graph's nodes keep that order through every pass).
The function is a static parameter, hashable by identity, so two callbacks are never
one. Eagerly and in the interpreter it is called on NumPy values (Python scalars for
Python numbers); native code calls back into Python (codegen/control/python_callbacks.py).
"""
from ..errors import LOCATION_MARK, user_location
from ..ir.primitive import Primitive, register
from ..trace import bind


class PythonCallback:
    """The function a debug_callback node calls, named for the printed IR. Equal only
    to itself, as a parameter compares: two prints of the same text stay two."""
    __slots__ = ("fn", "name")

    def __init__(self, fn, name=None):
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", None) or repr(fn)

    def __call__(self, *values):
        self.fn(*values)

    def __repr__(self):
        return self.name


def _debug_callback_impl(*values, callback):
    callback(*values)
    return ()


debug_callback_p = register(Primitive(
    "debug_callback", lambda *types, callback: (), _debug_callback_impl,
    multiple_results=True, pure=False,
    no_gradient="it has no results: no derivative flows through it (it sees the primal "
                "values)"))


def debug_callback(callback, *values):
    """Call `callback` (a PythonCallback) on the runtime values of `values`."""
    bind(debug_callback_p, *values, callback=callback)


def raise_at_run_time(fails, message, name, *values):
    """NumPy's ValueError(message) at the user's line of this call, raised at every run
    where fails(*values) (NumPy values) is true: a check of what is known only then."""
    location = user_location()

    def check(*arrays):
        if fails(*arrays):
            raise ValueError(f"{message}{LOCATION_MARK}{location}" if location else message)
    debug_callback(PythonCallback(check, name), *values)


__all__ = ["PythonCallback", "debug_callback", "raise_at_run_time"]
