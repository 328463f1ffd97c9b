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
