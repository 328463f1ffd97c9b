"""The memory plan: intermediates share one workspace, reused by liveness.

A buffer lives until the last use of every value that views it; then its bytes go back
to a free list and later buffers of the same size or smaller reuse them (first fit).
"""
import numpy as np

from ..ir.graph import Var
from ..ir.sizes import Size, surely
from .views import View

ALIGNMENT = 64  # bytes: a full cache line, and the widest vector load


class MemoryPlan:
    def __init__(self, graph, pointer_at, copies=1):
        # (byte offset, bytes per copy) -> llvmlite pointer into the workspace
        self.pointer_at = pointer_at
        self.copies = copies  # of per-worker scratch: one per thread (lowering/parallel.py)
        self.last_use = {}
        for index, node in enumerate(graph.nodes):
            for value in node.inputs:
                if isinstance(value, Var):
                    self.last_use[value] = index
        for value in graph.outputs:
            if isinstance(value, Var):
                self.last_use[value] = len(graph.nodes)
        self.size = 0
        self._free = []   # (offset, nbytes)
        self._live = {}   # id(pointer) -> [offset, nbytes, last index needed]
        self._first = {}  # id(a pointer made again) -> id(the buffer's first pointer)

    def allocate(self, var, shape=None, dtype=None):
        shape = var.type.shape if shape is None else shape
        dtype = var.type.dtype if dtype is None else dtype
        nbytes = _aligned(max(1, _count(shape) * dtype.itemsize))
        offset = self._take(nbytes)
        pointer = self.pointer_at(offset)
        until = self.last_use.get(var, -1) if var is not None else -1
        self._live[id(pointer)] = [offset, nbytes, until]
        return View.contiguous(pointer, dtype, shape)

    def scratch(self, shape, dtype, until, per_worker=False):
        """A buffer for a kernel's own use, alive until node `until` is done.
        per_worker: each worker gets a copy of its own (a kernel that may be split
        between threads keeps row buffers and partial results there)."""
        if not per_worker or self.copies == 1:
            view = self.allocate(None, shape, dtype)
            self._live[id(view.base)][2] = until
            return view
        copy_bytes = _aligned(max(1, _count(shape) * dtype.itemsize))
        offset = self._take(copy_bytes * self.copies)
        pointer = self.pointer_at(offset, copy_bytes)
        self._live[id(pointer)] = [offset, copy_bytes * self.copies, until]
        return View.contiguous(pointer, dtype, shape)

    def keep_until(self, view, index):
        """Keep `view`'s buffer at least until node `index` is done."""
        entry = self._live.get(self._first.get(id(view.base), id(view.base)))
        if entry is not None:
            entry[2] = max(entry[2], index)

    def keep_alive(self, view, var):
        """`var` views `view.base`'s buffer: keep the buffer until var's last use."""
        entry = self._live.get(self._first.get(id(view.base), id(view.base)))
        if entry is not None:
            entry[2] = max(entry[2], self.last_use.get(var, -1))

    def same_buffer(self, pointer, made_before):
        """`pointer` points where `made_before` does (made again in a later function,
        lowering/lower.py)."""
        self._first[id(pointer)] = self._first.get(id(made_before), id(made_before))

    def release_after(self, index):
        for key, (offset, nbytes, until) in list(self._live.items()):
            if until <= index:
                del self._live[key]
                self._free.append((offset, nbytes))

    def _take(self, nbytes):
        for i, (offset, size) in enumerate(self._free):
            # (Sizes, ir/sizes.py: a slot is reused only where it fits at every size.)
            if surely(lambda: size >= nbytes):
                if not surely(lambda: size == nbytes):
                    self._free[i] = (offset + nbytes, size - nbytes)
                else:
                    del self._free[i]
                return offset
        offset = self.size
        self.size += nbytes
        return offset


def _aligned(nbytes):
    if isinstance(nbytes, Size):  # each term rounded up: aligned, and enough, for every n
        return Size.of(_aligned(nbytes.per), _aligned(nbytes.const))
    return (nbytes + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def _count(shape):
    count = 1
    for size in shape:
        count *= size
    return count


def aligned_bytes(size):
    """A NumPy buffer of `size` bytes (at least 1) starting at a multiple of ALIGNMENT, as
    generated code assumes of the workspace and of constants (their vector loads may be
    aligned ones); NumPy aligns its own buffers to 16 bytes only."""
    raw = np.empty(size + ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    return raw[start:start + max(size, 1)]
