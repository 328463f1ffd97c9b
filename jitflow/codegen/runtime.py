"""The call boundary of compiled code: check arguments, allocate, call, raise errors.

Native code trusts its arguments completely, so everything is checked here first, in
Python: each argument's shape and dtype against the compiled signature (non-contiguous
arrays are copied to contiguous ones). Outputs are fresh NumPy arrays.
"""
import ctypes

import numpy as np

from ..ir.passes.fuse import fuse
from .boundary import OBJECT_ENTRY, add_object_entry
from .engine import CompiledModule, Compilation
from .errors import FALLBACK, OK, raise_for
from .lower import ENTRY, Lowering

_ENTRY_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)


class NativeGraph:
    """One graph compiled to native code, callable on a flat list of argument values."""

    def __init__(self, graph, name="function"):
        self.name = name
        self.graph = fuse(graph)  # fusion is a backend decision: printed in its IR
        self._in_types = [v.type for v in graph.inputs]
        self._out_types = [v.type for v in graph.outputs]
        self._slots = len(self._in_types) + len(self._out_types) + 1
        self.compiled = self._compile()
        self._entry = _ENTRY_TYPE(self.compiled.address(ENTRY))
        # Holds the GIL (PYFUNCTYPE): the arrays are read as objects by native code.
        object_entry = ctypes.PYFUNCTYPE(ctypes.c_int32, *[ctypes.py_object] * (self._slots - 1))
        self._object_entry = object_entry(self.compiled.address(OBJECT_ENTRY))
        self._out_specs = [(t.shape, t.dtype) for t in self._out_types]

    def _compile(self):
        """Lower the graph, compiling its later segments while the earlier are lowered;
        the first segment gets the entry points and is added last."""
        compilation = Compilation(speed_level=3)
        try:
            lowering = Lowering(self.graph, self.name,
                                on_segment=lambda module: compilation.add(str(module)))
            self.workspace_size = lowering.memory.size
            first = lowering.modules[0]
            add_object_entry(first, first.get_global(ENTRY),
                             [t.dtype for t in self._in_types + self._out_types],
                             self.workspace_size)
            compilation.add(str(first), in_background=False)
        except BaseException:
            compilation.abandon()
            raise
        compiled = CompiledModule.from_compilation(compilation)
        *later, first_text = compilation.sources()
        self.llvm_irs = [first_text, *later]  # in the order the segments run
        self.llvm_ir = "\n".join(self.llvm_irs)
        return compiled

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

    def call_arrays(self, arrays):
        """The fast path: `arrays` must already match the signature exactly (plain,
        C-contiguous ndarrays of the compiled shapes and dtypes; Function checks that).
        Returns the outputs, or None when native code declined (a misaligned array)."""
        outputs = [np.empty(shape, dtype) for shape, dtype in self._out_specs]
        status = self._object_entry(*arrays, *outputs)
        if status == OK:
            return outputs
        if status == FALLBACK:
            return None
        raise_for(status, self.name)

    def _argument(self, value, type, position):
        array = np.asarray(value)
        if array.shape != type.shape or (array.dtype != type.dtype and not type.weak):
            raise TypeError(f"{self.name}: argument {position} is {array.dtype}"
                            f"{list(array.shape)}, compiled for {type}")
        if array.dtype != type.dtype or not array.flags.c_contiguous or \
                not array.flags.aligned:
            array = np.array(array, dtype=type.dtype, order="C")  # a fresh, aligned copy
        return array
