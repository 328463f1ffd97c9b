"""One pool of worker threads per process, shared by every compiled function that splits
loop nests between threads (lowering/parallel.py). Generated code calls, by name:

    i32 jitflow_pool_run(ptr body, ptr args, i64 count)
        body(args, worker, worker + 1, barrier) on workers 0..count-1, worker 0 being the
        calling thread; returns the status of the lowest worker that flagged an error.
        When the pool is busy or its threads cannot be created: body(args, 0, count,
        null) on the calling thread alone.
    void jitflow_pool_wait(ptr barrier)
        the barrier between the phases of a job.

They live in a small module built here, compiled once per process (and stored in the
disk cache like any other) and made known to the linker with llvm.add_symbol, so that
generated object code holds no addresses.

Threads start on the first call that needs them and live as long as the process. Every
hand-over works the same way (a job to a worker, the last worker done to the caller,
the last thread at a barrier to the others): the waiter spins for SPIN_CYCLES, which
keeps back-to-back calls cheap, then counts itself among the word's sleepers and sleeps
on a futex until the word changes, so an idle pool leaves the cores to others (NumPy's
and OpenBLAS's threads among them). Whoever changes the word makes a system call only
when it sees a sleeper.

One job runs on the pool at a time. A caller that finds it busy (another Python thread
in compiled code: ctypes releases the GIL) runs its chunks alone instead of waiting:
no caller ever waits for another, so none can deadlock. Measured with two Python threads
each making split calls on 2**21 elements, 40 calls each: 87-94 ms that way, 112-114 ms
when the second waited for the pool (on 2**18 elements, 400 calls each: the same,
120-150 ms either way). A forked child starts with an empty pool: its parent's threads
do not exist there.
"""
import ctypes
import functools
import os
import threading

import llvmlite.binding as llvm
from llvmlite import ir

from ..emitter import I8, I32, I64, PTR, Emitter, define_function, entry_alloca
from . import half_conversions  # noqa: F401 (it installs itself into engine.py)
from .engine import CompiledModule, host, link_library_on_demand

RUN, WAIT, FORGET = "jitflow_pool_run", "jitflow_pool_wait", "jitflow_pool_forget"
MAX_THREADS = 1024  # a function split between more runs alone
# How long a waiting thread spins before it sleeps, in time-stamp counter cycles (about
# 230 us at 2.3 GHz): pausing for the first PAUSE_CYCLES, then offering the core to any
# other thread that wants it (sched_yield). Waking a sleeping thread took 25-100 us here
# (a 2-CPU virtual machine), and the Python side of a call takes 6-10 us, so a worker
# that slept after 2**14 or 2**15 cycles made most back-to-back calls pay a wake-up
# (a split call on 4096 elements: 40-80 us). Inside a call, serial work between split
# nodes matters too: an MLP training step's softmax and small products left the workers
# idle for 40-60 us, and after 2**17 cycles (57 us here) its next product often paid a
# wake-up (its 256x10 by 10x512 product took 89 us in the step, 20 alone). 2**19 took
# the step from 3.51-3.54 to 3.43-3.47 ms (Intel Xeon, fresh processes, three each).
SPIN_CYCLES = 1 << 19
PAUSE_CYCLES = 1 << 13
CYCLES_PER_ROUND = 100  # a guess, where there is no cycle counter
FUTEX_WAIT, FUTEX_WAKE = 128, 129  # FUTEX_PRIVATE_FLAG | FUTEX_WAIT, | FUTEX_WAKE
FUTEX_SYSCALL = {"x86_64": 202, "aarch64": 98}  # elsewhere, sleeping is sched_yield

VOID = ir.VoidType()
BODY_TYPE = ir.FunctionType(I32, [PTR, I64, I64, PTR])  # parallel.body_type
# llvmlite calls through a pointer only if it knows the function type; printed as
# `i32 (...)*`, which LLVM reads as `ptr`.
BODY_POINTER = BODY_TYPE.as_pointer()
NULL = ir.Constant(PTR, None)
SLOT_BYTES = 64
# The shared state, each part on cache lines of its own (the globals are 64-aligned),
# so that threads polling one word do not slow down the writers of another.
STATE = {
    "lock": ir.LiteralStructType([I32, I64]),  # taken, threads started
    "job": ir.LiteralStructType([PTR, PTR, I32]),  # body, args, the caller's MXCSR
    "done": ir.LiteralStructType([I32, I32]),  # workers still running, their sleepers
    "barrier": ir.LiteralStructType([I32, I32, I32, I32]),  # arrived, phase, sleepers, total
    # Per worker: its index, its go word (bumped once per job), the go word's
    # sleepers, its status; padded to a cache line.
    "slots": ir.ArrayType(ir.LiteralStructType([I64, I32, I32, I32,
                                                ir.ArrayType(I8, SLOT_BYTES - 20)]),
                          MAX_THREADS),
}
TAKEN, STARTED = 0, 1
BODY, ARGS, FLOAT_MODE = 0, 1, 2
REMAINING, DONE_SLEEPERS = 0, 1
ARRIVED, PHASE, BARRIER_SLEEPERS, TOTAL = 0, 1, 2, 3
INDEX, GO, GO_SLEEPERS, STATUS = 0, 1, 2, 3


def declare_run(module):
    """jitflow_pool_run declared in `module`; the pool is compiled before the first
    module calling it links."""
    return _declare(module, RUN, ir.FunctionType(I32, [PTR, PTR, I64]))


def declare_wait(module):
    return _declare(module, WAIT, ir.FunctionType(VOID, [PTR]))


_COMPILING = threading.Lock()


def runtime():
    with _COMPILING:  # LLVM releases the GIL: two threads could build two pools
        return _runtime()


@functools.cache
def _runtime():
    """Compile the pool, register its entry points for the linker, and reset it in
    forked children. Its code is never freed: the threads run it until the process
    ends, after the interpreter has torn its objects down."""
    # Unoptimized: its code waits or makes system calls, and O0 compiles it in ~5 ms
    # instead of ~40 (measured: the same cost per split call).
    architecture = host()[0].split("-")[0]
    compiled = CompiledModule.library(f"pool {architecture}",
                                      lambda: _Pool(architecture).module, speed_level=0)
    addresses = {name: compiled.address(name) for name in (RUN, WAIT, FORGET)}
    compiled.keep_for_the_process()
    for name in (RUN, WAIT):
        llvm.add_symbol(name, addresses[name])
    _reset_in_forked_children(addresses[FORGET])
    return addresses


link_library_on_demand("jitflow_pool_", runtime)


def _reset_in_forked_children(forget):
    """Call `forget` in the child after every fork, C's or Python's. glibc keeps
    pthread_atfork in a static library (libc_nonshared.a), out of dlsym's reach; the
    function it wraps is exported."""
    register = getattr(ctypes.CDLL(None), "__register_atfork", None)
    if register is not None:
        register.argtypes = [ctypes.c_void_p] * 4
        if register(None, None, forget, None) == 0:
            return
    os.register_at_fork(after_in_child=ctypes.CFUNCTYPE(None)(forget))


class _Pool:
    """The pool's module: its shared state and its functions."""

    def __init__(self, machine):
        self.module = ir.Module("jitflow_pool")
        self.machine = machine
        self.state = {name: _global(self.module, f"pool.{name}", type)
                      for name, type in STATE.items()}
        self.await_change = self._define_await_change()
        self.wake = self._define_wake()
        self.grow = self._define_grow(self._define_worker())
        self._define_run()
        self._define_wait()
        self._define_forget()

    def field(self, b, name, *indices):
        """A pointer into the shared state: state[name][indices...]."""
        return b.gep(self.state[name], [I32(0)] + [i if isinstance(i, ir.Value) else I32(i)
                                                   for i in indices],
                     source_etype=STATE[name])

    def slot(self, b, worker, field):
        return self.field(b, "slots", worker, field)

    # --- waiting and waking -------------------------------------------------------------
    def _define_await_change(self):
        """void await_change(ptr word, i32 old, ptr sleepers): returns once *word != old,
        spinning first, then sleeping on the word."""
        function, b = define_function(self.module, "await_change", VOID, [PTR, I32, PTR])
        word, old, sleepers = function.args
        done = function.append_basic_block("done")
        self._spin(b, word, old, done)
        b.atomic_rmw("add", sleepers, I32(1), "seq_cst")  # before reading the word: see wake
        check, sleep, woke = _blocks(function, "check", "sleep", "woke")
        b.branch(check)
        b.position_at_end(check)
        changed = b.icmp_unsigned("!=", b.load_atomic(word, "seq_cst", 4, typ=I32), old)
        b.cbranch(changed, woke, sleep)
        b.position_at_end(sleep)
        self._futex(b, word, FUTEX_WAIT, old)
        b.branch(check)
        b.position_at_end(woke)
        b.atomic_rmw("sub", sleepers, I32(1), "seq_cst")
        b.branch(done)
        b.position_at_end(done)
        b.ret_void()
        return function

    def _spin(self, b, word, old, changed_block):
        """Poll *word for SPIN_CYCLES: on to `changed_block` if it changes, else on at
        b's position."""
        function, before = b.function, b.block
        start = self._cycles(b)
        poll, wait, give_up = _blocks(function, "poll", "wait", "give_up")
        b.branch(poll)
        b.position_at_end(poll)
        rounds = b.phi(I64)
        rounds.add_incoming(I64(0), before)
        changed = b.icmp_unsigned("!=", b.load_atomic(word, "acquire", 4, typ=I32), old)
        b.cbranch(changed, changed_block, wait)
        b.position_at_end(wait)
        elapsed = self._elapsed(b, start, rounds)
        self._pause_or_yield(b, elapsed)
        rounds.add_incoming(b.add(rounds, I64(1)), b.block)
        b.cbranch(b.icmp_unsigned("<", elapsed, I64(SPIN_CYCLES)), poll, give_up)
        b.position_at_end(give_up)

    def _pause_or_yield(self, b, elapsed):
        """Pause for the first PAUSE_CYCLES; then give the core to any thread that wants
        it, as the thread this one waits for may be waiting for the core."""
        with b.if_else(b.icmp_unsigned("<", elapsed, I64(PAUSE_CYCLES))) as (early, late):
            with early:
                if self.machine == "x86_64":
                    pause = self.module.declare_intrinsic("llvm.x86.sse2.pause",
                                                          fnty=ir.FunctionType(VOID, []))
                    b.call(pause, [])
            with late:
                b.call(_declare(self.module, "sched_yield", ir.FunctionType(I32, [])), [])

    def _define_wake(self):
        """void wake(ptr word, ptr sleepers), after a seq_cst change to *word. A waiter
        counts itself, then reads the word; seq_cst orders the two against the change
        and this read: either the waiter sees the new word, or this sees the waiter."""
        function, b = define_function(self.module, "wake", VOID, [PTR, PTR])
        word, sleepers = function.args
        asleep = b.icmp_unsigned("!=", b.load_atomic(sleepers, "seq_cst", 4, typ=I32), I32(0))
        with b.if_then(asleep):
            self._futex(b, word, FUTEX_WAKE, I32(2 ** 31 - 1))  # all of them
        b.ret_void()
        return function

    def _futex(self, b, word, operation, value):
        number = FUTEX_SYSCALL.get(self.machine)
        if number is None:
            if operation == FUTEX_WAIT:
                b.call(_declare(self.module, "sched_yield", ir.FunctionType(I32, [])), [])
            return
        syscall = _declare(self.module, "syscall", ir.FunctionType(I64, [I64], var_arg=True))
        b.call(syscall, [I64(number), word, I64(operation), b.zext(value, I64), NULL])

    def _cycles(self, b):
        if self.machine != "x86_64":
            return I64(0)  # _elapsed counts rounds instead
        counter = self.module.declare_intrinsic("llvm.readcyclecounter",
                                                fnty=ir.FunctionType(I64, []))
        return b.call(counter, [])

    def _elapsed(self, b, start, rounds):
        """Cycles spent spinning: counted where x86 has a time-stamp counter (other
        machines' cycle counters may trap in user mode), else estimated from rounds."""
        if self.machine != "x86_64":
            return b.mul(rounds, I64(CYCLES_PER_ROUND))
        return b.sub(self._cycles(b), start)

    # --- threads ----------------------------------------------------------------------------
    def _define_worker(self):
        """ptr worker(ptr slot), a thread: waits for its go word to move, runs its
        chunks of the posted job, reports, and waits again."""
        function, b = define_function(self.module, "worker", PTR, [PTR])
        (slot,) = function.args
        before = b.block
        index = b.load(_gep(b, slot, INDEX), typ=I64)
        loop = function.append_basic_block("loop")
        b.branch(loop)
        b.position_at_end(loop)
        seen = b.phi(I32)
        seen.add_incoming(I32(0), before)
        b.call(self.await_change, [_gep(b, slot, GO), seen, _gep(b, slot, GO_SLEEPERS)])
        body = b.load(self.field(b, "job", BODY), typ=BODY_POINTER)
        args = b.load(self.field(b, "job", ARGS), typ=PTR)
        self._float_mode(b, "ldmxcsr")
        status = b.call(body, [args, index, b.add(index, I64(1)), self.state["barrier"]])
        b.store(status, _gep(b, slot, STATUS))
        remaining = self.field(b, "done", REMAINING)
        left = b.atomic_rmw("sub", remaining, I32(1), "seq_cst")
        with b.if_then(b.icmp_unsigned("==", left, I32(1))):
            b.call(self.wake, [remaining, self.field(b, "done", DONE_SLEEPERS)])
        seen.add_incoming(b.add(seen, I32(1)), b.block)  # one job per bump of go
        b.branch(loop)
        return function

    def _define_grow(self, worker):
        """void grow(i64 wanted): start workers until `wanted` run (holding the lock);
        stops at the first that cannot be started."""
        function, b = define_function(self.module, "grow", VOID, [I64])
        (wanted,) = function.args
        handle = entry_alloca(b, I64)
        check, create, created, done = _blocks(function, "check", "create", "created", "done")
        b.branch(check)
        b.position_at_end(check)
        started = b.load(self.field(b, "lock", STARTED), typ=I64)
        b.cbranch(b.icmp_signed(">=", started, wanted), done, create)
        b.position_at_end(create)
        index = b.add(started, I64(1))
        b.store(index, self.slot(b, index, INDEX))
        create_thread = _declare(self.module, "pthread_create",
                                 ir.FunctionType(I32, [PTR, PTR, PTR, PTR]))
        result = b.call(create_thread, [handle, NULL, worker, self.slot(b, index, INDEX)])
        b.cbranch(b.icmp_signed("==", result, I32(0)), created, done)
        b.position_at_end(created)
        b.store(index, self.field(b, "lock", STARTED))
        b.branch(check)
        b.position_at_end(done)
        b.ret_void()
        return function

    # --- the entry points ---------------------------------------------------------------
    def _define_run(self):
        function, b = define_function(self.module, RUN, I32, [BODY_POINTER, PTR, I64],
                                internal=False)
        body, args, count = function.args
        helpers = b.sub(count, I64(1))
        alone = function.append_basic_block("alone")
        with b.if_then(b.icmp_unsigned("<", helpers, I64(MAX_THREADS))):
            taken = b.cmpxchg(self.field(b, "lock", TAKEN), I32(0), I32(1), "acquire",
                              "monotonic")
            with b.if_then(b.extract_value(taken, 1)):
                self._run_on_pool(b, body, args, count, helpers)
        b.branch(alone)
        b.position_at_end(alone)
        b.ret(b.call(body, [args, I64(0), count, NULL]))

    def _run_on_pool(self, b, body, args, count, helpers):
        """Holding the lock: start the missing workers, post the job to each, run chunk
        0, wait for the others, and return their first error (or fall through to
        running alone, the lock released, if the workers could not be started)."""
        started = self.field(b, "lock", STARTED)
        with b.if_then(b.icmp_signed("<", b.load(started, typ=I64), helpers)):
            b.call(self.grow, [helpers])
        ready = b.icmp_signed(">=", b.load(started, typ=I64), helpers)
        with b.if_else(ready) as (pool, fallback):
            with pool:
                b.ret(self._post_and_run(b, body, args, count, helpers))
            with fallback:
                _store_atomic(b, I32(0), self.field(b, "lock", TAKEN), "release")

    def _post_and_run(self, b, body, args, count, helpers):
        b.store(body, self.field(b, "job", BODY))
        b.store(args, self.field(b, "job", ARGS))
        self._float_mode(b, "stmxcsr")
        b.store(b.trunc(helpers, I32), self.field(b, "done", REMAINING))
        b.store(b.trunc(count, I32), self.field(b, "barrier", TOTAL))
        with Emitter(b).for_range(helpers, name="post") as index:
            worker = b.add(index, I64(1))
            go = self.slot(b, worker, GO)
            b.atomic_rmw("add", go, I32(1), "seq_cst")
            b.call(self.wake, [go, self.slot(b, worker, GO_SLEEPERS)])
        status = b.call(body, [args, I64(0), I64(1), self.state["barrier"]])
        self._await_zero(b, self.field(b, "done", REMAINING),
                         self.field(b, "done", DONE_SLEEPERS))
        status = self._first_error(b, status, helpers)
        _store_atomic(b, I32(0), self.field(b, "lock", TAKEN), "release")
        return status

    def _float_mode(self, b, instruction):
        """Save the caller's floating-point mode in the job (stmxcsr), or take it in a
        worker (ldmxcsr): a caller that flushes denormals to zero has every chunk
        flushed, as in one thread, even if it set the mode after the pool started."""
        if self.machine == "x86_64":
            intrinsic = self.module.declare_intrinsic(f"llvm.x86.sse.{instruction}",
                                                      fnty=ir.FunctionType(VOID, [PTR]))
            b.call(intrinsic, [self.field(b, "job", FLOAT_MODE)])

    def _await_zero(self, b, word, sleepers):
        function = b.function
        check, wait, done = _blocks(function, "await", "wait", "done")
        b.branch(check)
        b.position_at_end(check)
        left = b.load_atomic(word, "acquire", 4, typ=I32)
        b.cbranch(b.icmp_unsigned("==", left, I32(0)), done, wait)
        b.position_at_end(wait)
        b.call(self.await_change, [word, left, sleepers])
        b.branch(check)
        b.position_at_end(done)

    def _first_error(self, b, status, helpers):
        """The status of the lowest worker that flagged an error (0 if none did)."""
        result = entry_alloca(b, I32)
        b.store(status, result)
        with Emitter(b).for_range(helpers, name="status") as index:
            worker_status = b.load(self.slot(b, b.add(index, I64(1)), STATUS), typ=I32)
            current = b.load(result, typ=I32)
            flagged = b.icmp_signed("!=", current, I32(0))
            b.store(b.select(flagged, current, worker_status), result)
        return b.load(result, typ=I32)

    def _define_wait(self):
        """The barrier: the last thread to arrive resets it and moves its phase on."""
        function, b = define_function(self.module, WAIT, VOID, [PTR], internal=False)
        (barrier,) = function.args
        arrived, phase, sleepers, total = (
            b.gep(barrier, [I32(0), I32(i)], source_etype=STATE["barrier"])
            for i in (ARRIVED, PHASE, BARRIER_SLEEPERS, TOTAL))
        # Read before arriving: the phase cannot move on before this thread arrives.
        current = b.load_atomic(phase, "acquire", 4, typ=I32)
        before = b.atomic_rmw("add", arrived, I32(1), "acq_rel")
        last = b.icmp_signed("==", b.add(before, I32(1)), b.load(total, typ=I32))
        with b.if_else(last) as (release, wait):
            with release:  # the others arrive again only once they see the new phase
                _store_atomic(b, I32(0), arrived, "monotonic")
                b.atomic_rmw("add", phase, I32(1), "seq_cst")
                b.call(self.wake, [phase, sleepers])
            with wait:
                b.call(self.await_change, [phase, current, sleepers])
        b.ret_void()

    def _define_forget(self):
        """void jitflow_pool_forget(), in a forked child: no thread, no job, no lock."""
        function, b = define_function(self.module, FORGET, VOID, [], internal=False)
        for name, type in STATE.items():
            if name != "slots":
                b.store(ir.Constant(type, None), self.state[name])
        memset = self.module.declare_intrinsic("llvm.memset", [PTR, I64])
        b.call(memset, [self.state["slots"], I8(0), I64(MAX_THREADS * SLOT_BYTES),
                        ir.Constant(ir.IntType(1), 0)])
        b.ret_void()


def _global(module, name, type):
    variable = ir.GlobalVariable(module, type, name)
    variable.initializer = ir.Constant(type, None)
    variable.linkage = "internal"
    variable.align = 64
    variable.type = PTR  # an opaque pointer, as Lowering.entry_alloca explains
    return variable


def _blocks(function, *names):
    return [function.append_basic_block(name) for name in names]


def _gep(b, slot, field):
    return b.gep(slot, [I32(0), I32(field)], source_etype=STATE["slots"].element)


def _declare(module, name, type):
    existing = module.globals.get(name)
    return existing or ir.Function(module, type, name)


def _store_atomic(b, value, pointer, ordering):
    # IRBuilder.store_atomic insists on a typed pointer; the instruction itself does not.
    b._insert(ir.instructions.StoreAtomicInstr(b.block, value, pointer, ordering, 4))
