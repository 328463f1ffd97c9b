"""A second entry point that takes NumPy arrays themselves, for the fast call path.

    i32 jitflow_call_objects(ptr array0, ..., ptr arrayN)

Each argument is a PyArrayObject* (inputs, then outputs). The data pointer is read at
the offset where NumPy keeps it (found at run time, not assumed), the workspace comes
from aligned_alloc, and the main entry runs. Python has already matched every array's
type, shape, strides and dtype against the compiled signature; alignment is checked
here, and a misaligned array returns FALLBACK so that the caller takes the slow path.
"""
import ctypes
import functools

import numpy as np
from llvmlite import ir

from .emitter import I32, I64, PTR
from .errors import FALLBACK, OUT_OF_MEMORY
from .memory import ALIGNMENT

OBJECT_ENTRY = "jitflow_call_objects"


@functools.cache
def data_offset():
    """Byte offset of the data pointer inside a PyArrayObject, found by looking."""
    probe = np.arange(4, dtype=np.int64)
    header = ctypes.string_at(id(probe), 128)
    offset = header.find(probe.ctypes.data.to_bytes(8, "little"))
    if offset <= 0:
        raise RuntimeError("cannot locate the data pointer in NumPy's array objects")
    return offset


def add_object_entry(module, entry, dtypes, workspace_size):
    """Define OBJECT_ENTRY in `module`, calling `entry` (the args-array entry)."""
    function = ir.Function(module, ir.FunctionType(I32, [PTR] * len(dtypes)), OBJECT_ENTRY)
    b = ir.IRBuilder(function.append_basic_block("entry"))
    fallback = function.append_basic_block("fallback")
    slots = b.alloca(PTR, size=len(dtypes) + 1)
    misaligned = ir.Constant(ir.IntType(1), 0)
    for i, (array, dtype) in enumerate(zip(function.args, dtypes)):
        field = b.gep(array, [I64(data_offset())], source_etype=ir.IntType(8))
        data = b.load(field, typ=PTR)
        low_bits = b.and_(b.ptrtoint(data, I64), I64(dtype.itemsize - 1))
        misaligned = b.or_(misaligned, b.icmp_unsigned("!=", low_bits, I64(0)))
        b.store(data, b.gep(slots, [I64(i)], source_etype=PTR))
    proceed = function.append_basic_block("proceed")
    b.cbranch(misaligned, fallback, proceed)
    b.position_at_end(fallback)
    b.ret(I32(FALLBACK))
    b.position_at_end(proceed)
    _run_with_workspace(module, b, function, entry, slots, len(dtypes), workspace_size)
    return function


def _run_with_workspace(module, b, function, entry, slots, count, workspace_size):
    allocate = _libc(module, "aligned_alloc", PTR, [I64, I64])
    release = _libc(module, "free", ir.VoidType(), [PTR])
    size = (workspace_size + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT or ALIGNMENT
    workspace = b.call(allocate, [I64(ALIGNMENT), I64(size)])
    failed = function.append_basic_block("out_of_memory")
    run = function.append_basic_block("run")
    b.cbranch(b.icmp_unsigned("==", workspace, ir.Constant(PTR, None)), failed, run)
    b.position_at_end(failed)
    b.ret(I32(OUT_OF_MEMORY))
    b.position_at_end(run)
    b.store(workspace, b.gep(slots, [I64(count)], source_etype=PTR))
    status = b.call(entry, [slots])
    b.call(release, [workspace])
    b.ret(status)


def _libc(module, name, result, params):
    existing = module.globals.get(name)
    return existing or ir.Function(module, ir.FunctionType(result, params), name)
