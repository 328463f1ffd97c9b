"""bind(prim, *arrays, **params): the single entry of every operation, and what it reads
its arguments as (stateful values, settled tape values, stand-ins)."""
import contextlib

import numpy as np

from ..errors import TracerLeakError, at_user_line
from ..ir.types import type_of_value
from .builders import _ACTIVE_BUILDERS, Settled
from .per_thread import PerThreadStack
from .stateful import Stateful
from .tracer import Tracer

_STAND_INS = PerThreadStack()  # stack of {Var of a Tracer: the value it stands for now}
# What makes a list argument an array: jitflow.numpy.asarray (which stacks traced values)
# once the numpy layer, built on this one, installs it (jitflow/array_methods.py).
_sequence_to_array = np.asarray


def convert_sequences_with(asarray):
    """From now on bind makes its list and tuple arguments arrays with `asarray`."""
    global _sequence_to_array
    _sequence_to_array = asarray


def _plain(arg):
    """A Stateful's value now; a settled Tracer's value; anything else as it is."""
    if isinstance(arg, Stateful):
        return arg.read()
    if isinstance(arg, Tracer) and arg._builder.__class__ is Settled:
        return arg._builder.value
    return arg


@contextlib.contextmanager
def standing_in(pairs):
    """While it lasts, each (Tracer, value) pair's Tracer means `value`. A user's
    derivative rule (custom_vjp's fwd and bwd) runs after the trace whose values it
    closes over has moved on: it sees the values those stand for where it runs."""
    _STAND_INS.append({tracer._var: value for tracer, value in pairs})
    try:
        yield
    finally:
        _STAND_INS.pop()


def _stood_in(arg):
    if isinstance(arg, Tracer):
        for stand_ins in reversed(_STAND_INS):
            if arg._var in stand_ins:
                return stand_ins[arg._var]
    return arg


def bind(prim, *args, subgraphs=(), **params):
    """Apply `prim` to array arguments: eagerly on NumPy values, or traced. A list
    argument is an array made as jitflow.numpy.asarray makes it (it may hold traced
    values)."""
    args = [_sequence_to_array(a) if isinstance(a, (list, tuple)) else _plain(a) for a in args]
    if _STAND_INS:
        args = [_stood_in(a) for a in args]
    builder = _builder_for(args)
    if builder is None:
        outs = prim.evaluate(*args, subgraphs=subgraphs, **params)
    else:
        operands = [builder.operand(a) for a in args]
        outs = builder.add_node(prim, operands, params, subgraphs)
    return tuple(outs) if prim.multiple_results else outs[0]


def _builder_for(args):
    """The active builder: inside a trace everything is recorded, even operations on
    constants (creation functions need that), and folded later by the passes."""
    if _ACTIVE_BUILDERS:
        return _ACTIVE_BUILDERS[-1]
    leaked = next((a for a in args if isinstance(a, Tracer)), None)
    if leaked is not None and leaked._builder.live:
        return leaked._builder  # an eager GradientTape's value
    if leaked is not None:
        raise TracerLeakError(at_user_line(
            f"a traced value {leaked._var.type} from the trace of "
            f"'{leaked._builder.name}' was used after that trace ended; return it from "
            f"the function instead of keeping it in a global or a closure"))
    return None


def constant_type(value):
    """TensorType of a non-Tracer operand (for shape logic shared by both modes)."""
    if isinstance(value, Stateful):
        value = value.read()
    return value._var.type if isinstance(value, Tracer) else type_of_value(value)


