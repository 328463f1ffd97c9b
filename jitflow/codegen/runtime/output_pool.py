"""Large outputs in memory that comes back when the caller lets go of it.

A result of 128 MiB freed after use goes back to the kernel (glibc maps allocations
above its mmap threshold, at most 32 MiB, apart and unmaps them when freed), so the next
call's result is fresh pages, zeroed and faulted in one by one: a loop `a = f(b, c)`
spent more time on that than on its arithmetic. Here such an output is an array over
a buffer of the pool, held by a small owner object as the array's base: NumPy keeps the
owner alive as long as the array or any view of it lives, and only when the last is
gone does the owner put its buffer back for the next call. So nothing anyone can still
read is ever written, and a caller who keeps every result simply gets fresh buffers.

The pool keeps a few buffers of each size and at most KEPT_BYTES in all (the rest are
freed as usual), so memory the caller gave up is not held for long.
"""
import threading

import numpy as np

from ..memory import aligned_bytes

POOLED_BYTES = 1 << 22  # outputs from 4 MiB: smaller ones glibc reuses by itself
KEPT_BYTES = 1 << 30
KEPT_PER_SIZE = 4

_free = {}  # bytes -> buffers (aligned uint8 arrays) nothing refers to
_kept = [0]  # bytes in _free
_lock = threading.RLock()  # (an owner freed by the GC while this thread holds it)


def pooled_empty(shape, dtype):
    """An uninitialized C-contiguous, 64-byte aligned array of `shape` and `dtype`
    over a pooled buffer."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    with _lock:
        buffers = _free.get(nbytes)
        buffer = buffers.pop() if buffers else None
        if buffer is not None:
            _kept[0] -= nbytes
    if buffer is None:
        buffer = aligned_bytes(nbytes)
    return np.asarray(_Owner(buffer, tuple(shape), dtype))


def _give_back(buffer):
    with _lock:
        buffers = _free.setdefault(buffer.nbytes, [])
        if len(buffers) < KEPT_PER_SIZE and _kept[0] + buffer.nbytes <= KEPT_BYTES:
            buffers.append(buffer)
            _kept[0] += buffer.nbytes


class _Owner:
    """The base of a pooled output: NumPy reads the array's layout from
    __array_interface__ and keeps this object as long as any array views it."""

    def __init__(self, buffer, shape, dtype):
        self._buffer = buffer
        self.__array_interface__ = {"shape": shape, "typestr": dtype.str, "version": 3,
                                    "data": (buffer.ctypes.data, False)}

    def __del__(self):
        try:
            _give_back(self._buffer)
        except Exception:  # at interpreter exit the module may be gone: nothing to keep
            pass
