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
which would need every pointer a body captures to be passed and rebuilt.

Every element, row or output slot is computed by the same code, in the same order,
whoever runs it, so the results are the same bits for any number of threads. A chunk
boundary on the innermost loop falls on a multiple of GRANULE elements, so the
vectorized loop and its scalar remainder cover the same elements as in one thread
(a libmvec vector function and its scalar twin may round differently).

jitflow_entry starts workers 1..count-1, runs worker 0 and joins them. Workers wait
for a go flag: if a thread cannot be created, the others are told to stop, and the
calling thread runs every chunk alone (barrier null). A worker runs chunks worker to
chunks_end: its own (chunks_end = worker + 1), or all of them when alone. Passing that
bound in, rather than deriving it from the barrier, leaves LLVM no condition to unswitch
each nest on, so each is compiled once. Each worker flags errors into
its own status; the lowest worker's error wins.
"""
import os

from llvmlite import ir

from .emitter import I32, I64, PTR, Emitter

THREADS_VARIABLE = "JITFLOW_THREADS"
# Below this many iterations, starting a thread and waiting at barriers costs more than
# the second core saves (measured with benchmarks/bench.py).
MIN_PARALLEL_ELEMENTS = 1 << 17
GRANULE = 64  # elements: a whole number of vector iterations, unrolled, of any dtype
BODY = "jitflow_body"
WORKER = "jitflow_worker"

GO_WAIT, GO_RUN, GO_STOP = 0, 1, 2
BARRIER_BYTES = 128  # pthread_barrier_t is 32 bytes on x86-64 glibc; room to spare
# What a started worker reads: args, barrier, go flag, its index, and its status.
CONTEXT = ir.LiteralStructType([PTR, PTR, PTR, I64, I32])
NULL = ir.Constant(PTR, None)


def thread_count():
    """The number of threads kernels are split between, read when a graph is lowered."""
    configured = os.environ.get(THREADS_VARIABLE, "").strip()
    if configured:
        count = int(configured)
        if count < 1:
            raise ValueError(f"{THREADS_VARIABLE} must be at least 1, not {configured}")
        return count
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # platforms without affinity masks
        return os.cpu_count() or 1


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

    def __init__(self, builder, function, count):
        self.b, self.count = builder, count
        _, self.worker, self.chunks_end, self.barrier = function.args
        self.used = False  # whether any nest was split
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
        if self.close_serial():
            self._wait()  # the serial code before may have written what this reads
        first, last = self._chunks()
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

    def _chunks(self):
        """This worker's chunks: its own, or all of them when it runs alone."""
        return self.worker, self.chunks_end

    def _bound(self, chunk, size, innermost):
        """Where chunk `chunk` starts: chunk * size / count, on the innermost loop
        rounded to GRANULE; a function of the shapes only."""
        granule = GRANULE if innermost else 1
        units = -(-size // granule)
        start = self.b.udiv(self.b.mul(chunk, I64(units)), I64(self.count))
        start = self.b.mul(start, I64(granule))
        return self.b.select(self.b.icmp_unsigned("<", start, I64(size)), start, I64(size))

    def _wait(self):
        wait = _libc(self.b.module, "pthread_barrier_wait", I32, [PTR])
        with self.b.if_then(self.b.icmp_unsigned("!=", self.barrier, NULL)):
            self.b.call(wait, [self.barrier])


def body_type():
    return ir.FunctionType(I32, [PTR, I64, I64, PTR])


def define_entry(module, body, count, used, name):
    """i32 name(ptr args): runs `body` on `count` workers when it split a nest (`used`),
    else on the calling thread alone."""
    entry = ir.Function(module, ir.FunctionType(I32, [PTR]), name)
    b = ir.IRBuilder(entry.append_basic_block("entry"))
    (args,) = entry.args
    if not used:
        body.linkage = "internal"  # inlined: the entry is the body, as in one thread
        b.ret(b.call(body, [args, I64(0), I64(count), NULL]))
        return entry
    # Called from the entry and from every worker, the body would otherwise be inlined
    # into both: its loops optimized and compiled twice over (measured: 142 -> 59 ms to
    # compile one 784x512 elementwise update).
    body.attributes.add("noinline")
    worker = _define_worker(module, body)
    barrier = _alloca(b, ir.ArrayType(ir.IntType(8), BARRIER_BYTES), align=16)
    b.call(_libc(module, "pthread_barrier_init", I32, [PTR, PTR, I32]),
           [barrier, NULL, I32(count)])
    go = _alloca(b, I32)
    b.store(I32(GO_WAIT), go)
    started = [_start(b, module, worker, args, barrier, go, index)
               for index in range(1, count)]
    everyone = ir.Constant(ir.IntType(1), 1)
    for _, _, created in started:
        everyone = b.and_(everyone, created)
    _store_release(b, b.select(everyone, I32(GO_RUN), I32(GO_STOP)), go)
    status = b.call(body, [args, I64(0), b.select(everyone, I64(1), I64(count)),
                           b.select(everyone, barrier, NULL)])
    join = _libc(module, "pthread_join", I32, [I64, PTR])
    for handle, _, created in started:
        with b.if_then(created):
            b.call(join, [b.load(handle, typ=I64), NULL])
    b.call(_libc(module, "pthread_barrier_destroy", I32, [PTR]), [barrier])
    b.ret(_first_error(b, [status] + [b.load(_field(b, context, 4), typ=I32)
                                      for _, context, _ in started]))
    return entry


def _start(b, module, worker, args, barrier, go, index):
    """Start worker `index`: (its pthread_t slot, its context, whether it started)."""
    context = _alloca(b, CONTEXT)
    for field, value in enumerate((args, barrier, go, I64(index), I32(0))):
        b.store(value, _field(b, context, field))
    handle = _alloca(b, I64)
    create = _libc(module, "pthread_create", I32, [PTR, PTR, PTR, PTR])
    result = b.call(create, [handle, NULL, worker, context])
    return handle, context, b.icmp_signed("==", result, I32(0))


def _define_worker(module, body):
    """ptr jitflow_worker(ptr context): wait for the go flag, then run the body."""
    function = ir.Function(module, ir.FunctionType(PTR, [PTR]), WORKER)
    function.linkage = "internal"
    (context,) = function.args
    b = ir.IRBuilder(function.append_basic_block("entry"))
    spin, pause, decided, run = (function.append_basic_block(n) for n in
                                 ("spin", "pause", "decided", "run"))
    go = b.load(_field(b, context, 2), typ=PTR)
    b.branch(spin)
    b.position_at_end(spin)
    flag = b.load_atomic(go, "acquire", 4, typ=I32)
    b.cbranch(b.icmp_signed("==", flag, I32(GO_WAIT)), pause, decided)
    b.position_at_end(pause)  # the caller is still starting the other workers
    b.call(_libc(module, "sched_yield", I32, []), [])
    b.branch(spin)
    b.position_at_end(decided)
    stop = function.append_basic_block("stop")
    b.cbranch(b.icmp_signed("==", flag, I32(GO_RUN)), run, stop)
    b.position_at_end(stop)
    b.ret(NULL)
    b.position_at_end(run)
    args, index, barrier = (b.load(_field(b, context, i), typ=t)
                            for i, t in ((0, PTR), (3, I64), (1, PTR)))
    status = b.call(body, [args, index, b.add(index, I64(1)), barrier])
    b.store(status, _field(b, context, 4))
    b.ret(NULL)
    return function


def _first_error(b, statuses):
    """The status of the lowest worker that flagged an error (0 if none did)."""
    result = I32(0)
    for status in reversed(statuses):
        result = b.select(b.icmp_signed("!=", status, I32(0)), status, result)
    return result


def _store_release(b, value, pointer):
    # IRBuilder.store_atomic insists on a typed pointer; the instruction itself does not.
    b._insert(ir.instructions.StoreAtomicInstr(b.block, value, pointer, "release", 4))


def _alloca(b, type, align=8):
    slot = b.alloca(type)
    slot.align = align
    slot.type = PTR  # an opaque pointer, as Lowering.entry_alloca explains
    return slot


def _field(b, context, index):
    return b.gep(context, [I32(0), I32(index)], source_etype=CONTEXT)


def _libc(module, name, result, params):
    existing = module.globals.get(name)
    return existing or ir.Function(module, ir.FunctionType(result, params), name)

