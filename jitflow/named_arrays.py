"""The ndarrays a function's own code names: its closure cells and the globals it reads.

A traced signature reads the array objects the trace saw (their contents at each call,
variable_scope.py). A name rebound to another array (`w = w - lr * g` at module level)
makes the trace stale, so every call checks first that each name still holds the same
object, and the function is traced again when one does not. (Arrays reached otherwise,
as attributes of objects, are read as the objects they were: update those in place.)

A named array the trace read through NumPy alone (`w.sum()`, with no traced value
involved) is not an input: NumPy computed with its contents once, while tracing. So the
trace keeps a copy of each such array, every call compares, and a change makes the
function trace again, as a rebound name does.
"""
import types

import numpy as np


class NamedArrays:
    def __init__(self, fn):
        fn = getattr(fn, "__func__", fn)  # a bound method: its function
        code = getattr(fn, "__code__", None)
        self.cells, self.names = [], []
        if code is None:
            return
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            value = _contents(cell)
            if isinstance(value, np.ndarray):
                self.cells.append((name, cell, value))
        scope = fn.__globals__
        for name in sorted(_global_names(code)):
            if isinstance(scope.get(name), np.ndarray):
                self.names.append((name, scope, scope[name]))

        self._copies = {}  # id(array) -> (name, array, its contents when traced)
        self._inputs = set()  # ids of the arrays some trace takes as inputs

    def __bool__(self):
        return bool(self.cells or self.names)

    def traced(self, inputs):
        """After a trace that takes the arrays `inputs` as inputs: copy the other
        writable named arrays, whose contents the trace may hold."""
        self._inputs.update(id(array) for array in inputs)
        for name, _, array in self.cells + [(n, None, a) for n, _, a in self.names]:
            if id(array) in self._inputs:
                self._copies.pop(id(array), None)
            elif array.flags.writeable and id(array) not in self._copies:
                self._copies[id(array)] = (name, array, array.copy())

    def changed(self):
        """The name of an array whose contents differ from its copy's, or None."""
        for name, array, copy in self._copies.values():
            if not _same_bytes(array, copy):
                return name
        return None

    def rebound(self):
        """The name of one that holds another object now, or None."""
        for name, cell, array in self.cells:
            if _contents(cell) is not array:
                return name
        for name, scope, array in self.names:
            if scope.get(name) is not array:
                return name
        return None


def _same_bytes(array, copy):
    """Bit for bit, so that -0.0 for 0.0, or one NaN for another, counts as a change."""
    if array.shape != copy.shape or array.dtype != copy.dtype:
        return False
    return memoryview(np.ascontiguousarray(array)).cast("B") == memoryview(copy).cast("B")


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # not yet bound
        return None


def _global_names(code):
    """The names code and the functions defined in it may read as globals."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _global_names(constant)
    return names
