"""Timing each node of a graph in its native code, for the profiler.

A graph lowered with `profile=True` reads the monotonic clock (clock_gettime, a vDSO
call of ~20 ns) before and after the code of each node, adds the difference to the
node's time counter and 1 to its run counter: global i64s named by counter_name(node
index, kind), which Python reads and resets after each call (runtime/native.py). (A
loop body's nodes run many times in one call.) Between nodes the lowering is always in
serial code (worker 0 alone, lowering/parallel.py), so only worker 0 reads the clock;
a nest split between workers ends at a barrier, so worker 0's time for it is the
node's wall time. (A clock read in serial code makes the next split nest wait at a
barrier it could otherwise skip: the profiled code is slower by that, not by more.)

Code lowered without `profile` has none of this: profiling costs nothing when off.
"""
from llvmlite import ir

from ..emitter import I32, I64, PTR

CLOCK_MONOTONIC = 1  # Linux's clockid_t for the monotonic clock
NANOSECONDS = 10 ** 9


def counter_name(index, kind):
    """The global counting `kind` ("time" in nanoseconds, or "runs") of node `index`."""
    return f"jitflow_profile_{kind}_{index}"


class NodeClock:
    """start() before a node's code, stop(index, started) after it."""

    def __init__(self, lowering):
        self.lo = lowering

    def start(self):
        """Read the clock into a stack slot (the node's code may end in another block
        than it began); returns the slot."""
        slot = self.lo.entry_alloca(I64, align=8)
        self.lo.builder.store(self._now(), slot)
        return slot

    def stop(self, index, started):
        b = self.lo.builder
        elapsed = b.sub(self._now(), b.load(started, typ=I64))
        for kind, amount in (("time", elapsed), ("runs", I64(1))):
            counter = self._counter(index, kind)
            b.store(b.add(b.load(counter, typ=I64), amount), counter)

    def _now(self):
        b = self.lo.builder
        timespec_type = ir.ArrayType(I64, 2)  # struct timespec: seconds, nanoseconds
        timespec = self.lo.entry_alloca(timespec_type, align=8)
        b.call(self._clock_gettime(), [I32(CLOCK_MONOTONIC), timespec])
        seconds, nanos = (b.load(b.gep(timespec, [I32(0), I32(field)],
                                       source_etype=timespec_type), typ=I64)
                          for field in (0, 1))
        return b.add(b.mul(seconds, I64(NANOSECONDS)), nanos)

    def _clock_gettime(self):
        module = self.lo.module
        existing = module.globals.get("clock_gettime")
        return existing or ir.Function(module, ir.FunctionType(I32, [I32, PTR]),
                                       "clock_gettime")

    def _counter(self, index, kind):
        """The node's counter, defined in the module its code is in (each node's code
        is in one segment's module)."""
        module, name = self.lo.module, counter_name(index, kind)
        counter = module.globals.get(name)
        if counter is None:
            counter = ir.GlobalVariable(module, I64, name)
            counter.initializer = I64(0)
            counter.align = 8
        return counter
