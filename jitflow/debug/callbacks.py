"""Python callbacks and prints of runtime values.

    jitflow.debug.print("step {} loss {loss:.4f}", i, loss=loss)
    jitflow.debug.callback(fn, x, {"w": w})

Both run on every call, eagerly, in the interpreter and in native code, inside the
bodies of while_loop, scan and cond (each time the body runs), in the order the program
reaches them. Under grad, vjp and jvp they see the primal values; under vmap they are
called once, on the whole batch (batched values have the batch axis in front).
"""
import builtins

import numpy as np

from ..ops.debug import PythonCallback, debug_callback
from ..pytree import flatten, unflatten
from ..trace import Stateful, Tracer

def callback(fn, *args, **kwargs):
    """Call fn(*args, **kwargs) on the runtime values of the arrays in args and kwargs
    (pytrees of them; other leaves are passed as they are). Its result is ignored."""
    _bind(fn, getattr(fn, "__qualname__", repr(fn)), args, kwargs)


def print(fmt, *args, **kwargs):
    """Print fmt.format(*args, **kwargs) with the runtime values, each time it runs."""
    def show(*values, **named):
        builtins.print(fmt.format(*values, **named))
    _bind(show, f"print {fmt!r}", args, kwargs)


def _bind(fn, name, args, kwargs):
    values, rebuilt = runtime_arguments(args, kwargs)

    def call(*runtime):
        call_args, call_kwargs = rebuilt(runtime)
        fn(*call_args, **call_kwargs)
    debug_callback(PythonCallback(call, name), *values)


def runtime_arguments(args, kwargs):
    """The leaves of (args, kwargs) that travel through the graph, and rebuilt(values):
    (args, kwargs) with those leaves replaced by `values`, the other leaves as they
    were (for a Python function that compiled code calls on runtime values)."""
    leaves, _, structure = flatten((args, kwargs))
    runtime = [i for i, leaf in enumerate(leaves) if _is_runtime_value(leaf)]

    def rebuilt(values):
        filled = list(leaves)
        for i, value in zip(runtime, values):
            filled[i] = value
        return unflatten(structure, filled)
    return [leaves[i] for i in runtime], rebuilt


def _is_runtime_value(leaf):
    """Arrays, traced values, Variables and numbers travel through the graph; anything
    else (a string, a function) is handed to the callback as it is."""
    return isinstance(leaf, (Tracer, Stateful, np.ndarray, np.generic, bool, int, float))
