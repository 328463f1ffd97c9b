"""Lowering of debug_callback and pure_callback nodes: generated code calling a Python
function (pure_callback's results are copied into the node's output buffers).

The node's operands are handed over as contiguous buffers (copies where a view is not
one), through a pointer array in the frame, to a ctypes trampoline:

    i32 trampoline(ptr buffers)

which rebuilds each operand as a fresh NumPy array of its static shape and dtype (a
copy: the buffers are reused once the call returns) and calls the function. ctypes
takes the GIL around it (PyGILState_Ensure/Release), which a native call may have
released. The code runs outside loop nests, so on worker 0 alone, in the calling
thread, in the order of the graph's nodes.

An exception the function raises is kept (errors.record_raised) and the trampoline
returns PYTHON_RAISED, which joins the caller's status: the call boundary raises the
exception. Once one has raised, later callbacks of the same call are skipped.

The trampoline is named by a symbol the linker resolves (no address in the module
text) and kept alive with the graph's callees.
"""
import ctypes
import itertools

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir

from ..emitter import I32, I64, PTR
from ..errors import OK, PYTHON_RAISED, callback_raised, record_raised
from .callees import buffer, contiguous_output

_TRAMPOLINE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)
_ENTRY_TYPE = ir.FunctionType(I32, [PTR])
_symbols = itertools.count()  # one symbol per trampoline made in this process


def python_callback(lo, node, inputs, outputs):
    types = [v.type for v in node.inputs]
    _emit_call(lo, _trampoline(node.params["callback"], types), inputs)


def pure_python_callback(lo, node, inputs, outputs):
    """The results, checked by the node's callback, go to the outputs' buffers, whose
    pointers follow the operands'."""
    types = [v.type for v in node.inputs]
    outs = [contiguous_output(view, "pure_callback") for view in outputs]
    _emit_call(lo, _trampoline(node.params["callback"], types, [o.size for o in outs]),
               inputs + outs)


def _emit_call(lo, call, views):
    trampoline = _TRAMPOLINE(call)
    lo.callees.append(trampoline)  # its code lives as long as the caller's
    name = f"jitflow_python_callback_{next(_symbols)}"
    llvm.add_symbol(name, ctypes.cast(trampoline, ctypes.c_void_p).value)
    b = lo.builder
    pointers = lo.entry_alloca(ir.ArrayType(PTR, max(1, len(views))))
    for i, view in enumerate(views):
        b.store(buffer(lo, view), b.gep(pointers, [I64(i)], source_etype=PTR))
    # Not after an error: the call is failing, and its values may be wrong.
    status_ok = b.icmp_signed("==", lo.em.error.result(), I32(OK))
    with b.if_then(status_ok):
        status = b.call(ir.Function(lo.module, _ENTRY_TYPE, name), [pointers])
        lo.em.error.merge(status)


def _trampoline(callback, types, result_sizes=None):
    """The Python side: the operands as NumPy values, then the call; its results, when
    it has some (result_sizes), written to the buffers after the operands'."""
    count = len(types) + len(result_sizes or ())

    def call(pointers):
        if callback_raised():
            return PYTHON_RAISED
        try:
            addresses = (ctypes.c_void_p * max(1, count)).from_address(pointers)
            results = callback(*(_value_at(address, t)
                                 for address, t in zip(addresses, types)))
            if result_sizes is not None:
                for address, value in zip(addresses[len(types):], results):
                    value = np.ascontiguousarray(value)
                    if value.nbytes:
                        ctypes.memmove(address, value.ctypes.data, value.nbytes)
        except BaseException as error:  # a KeyboardInterrupt too: raised at the call
            record_raised(error)
            return PYTHON_RAISED
        return OK
    return call


def _value_at(address, type):
    """A copy of the `type`d array at `address`; a Python number for a weak value."""
    array = np.empty(type.shape, type.dtype)
    if array.nbytes:
        ctypes.memmove(array.ctypes.data, address, array.nbytes)
    return array.item() if type.weak else array
