"""Run-time sizes in generated code: where a graph's shapes hold Sizes (ir/sizes.py),
the code being lowered computes them from the size n it is called with.

Emitter's I64 turns a Size into that value through the source installed here by the
Lowering at work (lowering/lower.py); with none installed, a Size reaching generated
code is a DynamicDecision, and the compile falls back to code for one size.
"""
import threading
from contextlib import contextmanager

from ..ir.sizes import DynamicDecision

_current = threading.local()


def runtime_size(size, bits=64):
    """The value of `size`, an integer of `bits` bits, in the function being lowered."""
    source = getattr(_current, "source", None)
    if source is None:
        raise DynamicDecision(f"the size {size!r} reached code lowered without run-time "
                              f"sizes")
    return source(size, bits)


@contextmanager
def sizes_from(source):
    """Within the block, runtime_size(size) is source(size) on this thread."""
    saved = getattr(_current, "source", None)
    _current.source = source
    try:
        yield
    finally:
        _current.source = saved


class Blocks:
    """A loop count code generation makes from a run-time size: how many whole blocks of
    `length` indices fit in `size` (`whole`), or the indices left after them. Never an
    array's dimension: it stands only in a loop nest's shape. I64 of it is its value,
    computed once per function as a Size's is; the typical count is `at(n)`; any
    arithmetic on it is a DynamicDecision (so loop nests never merge its axis)."""
    __slots__ = ("size", "length", "whole")

    def __init__(self, size, length, whole=True):
        self.size, self.length, self.whole = size, length, whole

    def rest(self):
        """The indices of `size` after the whole blocks."""
        return Blocks(self.size, self.length, whole=False)

    def at(self, n):
        whole, rest = divmod(self.size.at(n), self.length)
        return whole if self.whole else rest

    def __mul__(self, other):
        raise DynamicDecision(f"{self!r} is a loop count, not a size")

    __rmul__ = __add__ = __radd__ = __sub__ = __rsub__ = __mul__

    def __repr__(self):
        return f"({self.size!r}){'//' if self.whole else '%'}{self.length}"
