"""The call boundary of compiled code: check arguments, allocate, call, raise errors.

Native code trusts its arguments completely, so everything is checked here first, in
Python: each argument's shape and dtype against the compiled signature (non-contiguous
arrays are copied to contiguous ones). Outputs are fresh NumPy arrays.
"""
import ctypes

import numpy as np

from .engine import CompiledModule
from .errors import OK, raise_for
from .lower import ENTRY, Lowering

_ENTRY_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)


class NativeGraph:
    """One graph compiled to native code, callable on a flat list of argument values."""

    def __init__(self, graph, name="function"):
        self.name = name
        lowering = Lowering(graph, name)
        self.llvm_ir = str(lowering.module)
        self.workspace_size = lowering.memory.size
        self.compiled = CompiledModule(self.llvm_ir)
        self._entry = _ENTRY_TYPE(self.compiled.address(ENTRY))
        self._in_types = [v.type for v in graph.inputs]
        self._out_types = [v.type for v in graph.outputs]
        self._slots = len(self._in_types) + len(self._out_types) + 1

    def __call__(self, args):
        inputs = [self._argument(value, t, i) for i, (value, t) in
                  enumerate(zip(args, self._in_types, strict=True))]
        outputs = [np.empty(t.shape, t.dtype) for t in self._out_types]
        workspace = np.empty(max(self.workspace_size, 1), np.uint8)
        pointers = (ctypes.c_void_p * self._slots)(
            *(a.ctypes.data for a in inputs), *(a.ctypes.data for a in outputs),
            workspace.ctypes.data)
        status = self._entry(pointers)
        if status != OK:
            raise_for(status, self.name)
        return outputs

    def _argument(self, value, type, position):
        array = np.asarray(value)
        if array.shape != type.shape or (array.dtype != type.dtype and not type.weak):
            raise TypeError(f"{self.name}: argument {position} is {array.dtype}"
                            f"{list(array.shape)}, compiled for {type}")
        if array.dtype != type.dtype or not array.flags.c_contiguous:
            array = np.ascontiguousarray(array, dtype=type.dtype)
        return array
