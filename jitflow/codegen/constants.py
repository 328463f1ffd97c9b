"""Array constants of compiled code.

Small ones are written into the module, where LLVM can fold them. Large ones (the
weights a function closes over, say) are not: printing, parsing and compiling a
million-element initializer took seconds. Their bytes stay in memory the process
keeps, and the module names them by a symbol made from their contents, which
`llvm.add_symbol` resolves; the module text, and so its disk cache entry, stays the
same from one process to the next.
"""
import hashlib
import threading

import llvmlite.binding as llvm
from llvmlite import ir

from .memory import aligned_bytes

# Constants of more bytes than this are kept outside the module.
INLINE_BYTES = 512

_kept = {}  # symbol -> the array whose bytes it names, never freed (see external)
_lock = threading.Lock()


def global_for(module, data, element):
    """A constant global of `module` holding `data` (C-contiguous, in the element type's
    layout): its initializer, or a symbol naming bytes kept for the process."""
    count = max(data.size, 1)
    type = ir.ArrayType(element, count)
    if data.nbytes <= INLINE_BYTES:
        values = [element(v) for v in data.reshape(-1).tolist()] or [element(0)]
        storage = ir.GlobalVariable(module, type, name=f"const.{len(module.globals)}")
        storage.initializer = ir.Constant(type, values)
        storage.linkage = "internal"
    else:
        name = external(data)
        storage = module.globals.get(name) or ir.GlobalVariable(module, type, name=name)
    storage.global_constant = True
    return storage


def external(data):
    """The symbol naming a copy of `data`'s bytes. The copy is never freed: a symbol
    added to the process stays there, and any module naming it later must find the
    same bytes."""
    digest = hashlib.sha256(data.dtype.str.encode() + data.tobytes()).hexdigest()
    name = f"jitflow_constant_{digest[:40]}"
    with _lock:
        if name not in _kept:
            _kept[name] = copy = _aligned_copy(data)
            llvm.add_symbol(name, copy.ctypes.data)
    return name


def _aligned_copy(data):
    copy = aligned_bytes(data.nbytes)[:data.nbytes].view(data.dtype)
    copy[...] = data.reshape(-1)
    copy.flags.writeable = False
    return copy
