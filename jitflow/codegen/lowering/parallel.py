"""Large loop nests split between threads, by a split that depends only on the shapes.

With more than one thread (JITFLOW_THREADS, default: the CPUs this process may run on),
the graph is lowered into a body function that every worker runs whole:

    i32 jitflow_body(ptr args, i64 worker, i64 chunks_end, ptr barrier)

A large loop nest whose iterations own disjoint output elements (`owner` in
Lowering.loop_nest) is a parallel nest: its outermost loop that the owner walks (so a
kept axis, never a reduced one) is cut into `count` contiguous chunks, chunk c for
worker c. Everything else is serial: only worker 0 runs it, and barriers order the two.
This keeps the lowering code as it is (a kernel emits into one function, reading
values defined before it) instead of outlining each nest into a function of its own,
which would need every pointer a body captures to be passed and rebuilt. Only a region
the graph repeats is outlined (kernels.py): its function takes the same arguments as
the body, splits its own nests, and reads its buffers from a frame of pointers.

Every element, row or output slot is computed by the same code, in the same order,
whoever runs it, so the results are the same bits for any number of threads. A chunk
boundary on the innermost loop falls on a multiple of GRANULE elements, so the
vectorized loop and its scalar remainder cover the same elements as in one thread
(a libmvec vector function and its scalar twin may round differently).

jitflow_entry hands the body to the process's worker pool (jit/pool.py), whose threads
are started once and serve every compiled function: worker 0 is the calling thread.
When the pool is busy (another Python thread is running a split function) or its
threads cannot be created, the calling thread runs every chunk alone (barrier null).
A worker runs chunks worker to chunks_end: its own (chunks_end = worker + 1), or all
of them when alone. Passing that bound in, rather than deriving it from the barrier,
leaves LLVM no condition to unswitch each nest on, so each is compiled once. Each worker
flags errors into its own status; the lowest worker's error wins.
"""
from llvmlite import ir

from ..emitter import I32, I64, PTR, Emitter
from ..jit.pool import BODY_TYPE, declare_run, declare_wait

# Below this many elements, handing chunks to the pool costs more than the second core
# saves. Measured on 2 cores, two threads against one: with calls back to back (the
# pool's workers awake, ~0.5 us a split call), two threads win from 2**14 elements for
# an exp/sin/tanh chain, 2**16 for x*2+1, row softmax and row sums, 2**18 for column
# sums; with calls 0.5 ms apart (workers asleep: 25-100 us to wake on this machine),
# from 2**19 for the chain, beyond 2**21 for x*2+1 and sums. A 784-512-512-10 MLP
# training step, whose elementwise regions have 2**17 elements, in five rounds: two
# threads with 2**17 beat one by 0.1-0.6 ms (4.6 against 4.8 ms at best), and beat
# 2**16 and 2**18 (regions left whole) in four rounds of five.
MIN_PARALLEL_ELEMENTS = 1 << 17
GRANULE = 64  # elements: a whole number of vector iterations, unrolled, of any dtype
BODY = "jitflow_body"
NULL = ir.Constant(PTR, None)


def split_axis(loop_shape, owner_strides, count, work=None):
    """The outermost loop of a collapsed nest that the owner walks (whose iterations
    write different elements), if the nest is worth splitting; else None. work: the
    elements the whole nest handles (default: one per iteration)."""
    if work is None:
        work = 1
        for size in loop_shape:
            work *= size
    if count < 2 or work < MIN_PARALLEL_ELEMENTS:
        return None
    for axis, (size, stride) in enumerate(zip(loop_shape, owner_strides)):
        if stride != 0:
            return axis if size >= count else None
    return None


class Workers:
    """The workers' side of the body function being lowered: serial regions (worker 0
    only), barriers, and the chunks of a parallel nest."""

    def __init__(self, builder, function, count, serial_pending=False):
        """serial_pending: worker 0 ran code alone before this function began (in the
        previous segment, lower.py), which the first parallel nest must wait for."""
        self.b, self.count = builder, count
        _, self.worker, self.chunks_end, self.barrier = function.args[:4]
        self.used = False  # whether any nest was split
        self.serial_pending = serial_pending
        self._serial = None

    def open_serial(self):
        """From here on, code runs on worker 0 only (until close_serial)."""
        serial = self.b.append_basic_block("serial")
        after = self.b.append_basic_block("serial.end")
        self.b.cbranch(self.b.icmp_signed("==", self.worker, I64(0)), serial, after)
        self.b.position_at_end(serial)
        self._serial = (serial, after)

    def close_serial(self):
        """End the serial region; returns whether it emitted any code."""
        serial, after = self._serial
        emitted = self.b.block is not serial or bool(serial.instructions)
        self.b.branch(after)
        self.b.position_at_end(after)
        return emitted

    def split(self, size, innermost, emit_chunk):
        """A parallel nest: emit_chunk(begin, count) emits the nest over `count`
        indices of the split loop from `begin` (both i64 values)."""
        self.used = True
        if self.close_serial() or self.serial_pending:
            self._wait()  # the serial code before may have written what this reads
        self.serial_pending = False
        # This worker's chunks: its own, or all of them when it runs alone.
        first, last = self.worker, self.chunks_end
        with Emitter(self.b).for_range(self.b.sub(last, first), name="chunk") as index:
            chunk = self.b.add(first, index)
            begin = self._bound(chunk, size, innermost)
            end = self._bound(self.b.add(chunk, I64(1)), size, innermost)
            emit_chunk(begin, self.b.sub(end, begin))
        # One chunk per worker, or all of them for a worker alone: unrolled, the nest
        # would be compiled once per chunk.
        Emitter(self.b).keep_rolled(index)
        self._wait()  # what follows may read any chunk
        self.open_serial()

    def _bound(self, chunk, size, innermost):
        """Where chunk `chunk` starts: chunk * size / count, on the innermost loop
        rounded to GRANULE; a function of the shapes only."""
        granule = GRANULE if innermost else 1
        em = Emitter(self.b)
        if isinstance(size, int):
            units = I64(-(-size // granule))
        else:  # a run-time size (ir/sizes.py)
            units = self.b.udiv(self.b.add(I64(size), I64(granule - 1)), I64(granule))
        start = em.mul(self.b.udiv(em.mul(chunk, units), I64(self.count)), I64(granule))
        return self.b.select(self.b.icmp_unsigned("<", start, I64(size)), start, I64(size))

    def _wait(self):
        with self.b.if_then(self.b.icmp_unsigned("!=", self.barrier, NULL)):
            self.b.call(declare_wait(self.b.module), [self.barrier])


def body_type():
    return BODY_TYPE


def define_entry(module, body, count, used, name):
    """i32 name(ptr args): runs `body` on `count` workers of the process's pool
    (jit/pool.py) when it split a nest (`used`), else on the calling thread alone."""
    entry = ir.Function(module, ir.FunctionType(I32, [PTR]), name)
    b = ir.IRBuilder(entry.append_basic_block("entry"))
    (args,) = entry.args
    if not used:  # with `body` internal, inlined: the entry is the body, as in one thread
        b.ret(b.call(body, [args, I64(0), I64(count), NULL]))
    else:
        b.ret(b.call(declare_run(module), [body, args, I64(count)]))
    return entry
