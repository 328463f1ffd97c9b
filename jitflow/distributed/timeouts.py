"""How long a process waits in a collective for the others, and what happens after.

MPI's blocking collectives wait forever: a process that stalls (a long loop, a
deadlock, waiting for input) or that leaves without MPI noticing would hold every other
process of the job in its next collective for good. So jitflow starts each collective
nonblocking (MPI_Iallreduce and its kin) and polls it with MPI_Test until it completes
or a deadline passes, eagerly here and in native code alike (native.py emits the same
loop). A collective that completes promptly pays a clock read and an MPI_Test more than
MPI_Wait would, which also polls: nothing measurable.

Past the deadline the waiting process raises CollectiveTimeout, naming the collective,
its operand, the rank, the seconds waited and the user's line. The job cannot go on:
MPI cannot cancel a collective, so it stays pending, holding its buffers, and the
processes' collectives are out of step. From then on jitflow refuses every collective
(raising CollectiveTimeout again, without calling MPI), and ends the job with MPI_Abort
when the exception escapes (init's excepthook) or, if the program catches it, at exit,
where MPI_Finalize would wait for the stalled process.

The timeout is init(timeout=seconds), else the environment's
JITFLOW_DISTRIBUTED_TIMEOUT, else 600 s (as PyTorch's default for NCCL): long enough for
a rank that compiles, evaluates or writes a checkpoint while the others wait. None (or
"none" in the variable) waits forever (MPI_Wait).
"""
import atexit
import ctypes
import math
import os
import sys
import time

from ..errors import at_user_line
from .mpi import MPI

DEFAULT_SECONDS = 600.0
VARIABLE = "JITFLOW_DISTRIBUTED_TIMEOUT"
_POLL_SLEEP = 50e-6  # between tests after the first millisecond: lets other threads run

# Read by native code at every wait (native.py registers their addresses): the timeout
# (inf: forever) and whether a collective has timed out in this process.
SECONDS = ctypes.c_double(math.inf)
STOPPED = ctypes.c_int32(0)
_first = {}  # "what": the collective that timed out; "kept": the buffers MPI still holds


class CollectiveTimeout(TimeoutError):
    """A collective waited past the timeout for the other processes (one of them is
    stalled or gone); or a collective was refused after one did."""


def parse_seconds(value, what):
    """Seconds as a float > 0 (math.inf for None: forever)."""
    if value is None:
        return math.inf
    if isinstance(value, str):
        if value.strip().lower() == "none":
            return math.inf
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"{what}: expected a number of seconds or 'none', got "
                             f"{value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not value > 0 or math.isnan(value):
        raise ValueError(f"{what}: the timeout must be a number of seconds > 0 or None "
                         f"(wait forever), got {value!r}")
    return float(value)


def set_timeout(seconds):
    SECONDS.value = parse_seconds(seconds, "jitflow.distributed.init(timeout=...)")


def set_timeout_from_environment():
    text = os.environ.get(VARIABLE, "").strip()
    SECONDS.value = parse_seconds(text, VARIABLE) if text else DEFAULT_SECONDS


def current():
    """The timeout of collectives, in seconds; None when they wait forever."""
    return None if math.isinf(SECONDS.value) else SECONDS.value


def describe(what, dtype=None, shape=None):
    """'all_reduce(sum) of a float32 array of shape (4,)'; `what` alone without an
    operand."""
    return what if dtype is None else f"{what} of a {dtype} array of shape {tuple(shape)}"


def run(comm, method, args, what, kept=(), **kwargs):
    """comm.`method`(*args, **kwargs), an mpi4py collective ("Allreduce"), waiting no
    longer than the timeout: its nonblocking form ("Iallreduce") polled until done.
    `what` describes it for the error (describe's arguments: a tuple, formatted only
    then); `kept` are the buffers MPI writes or reads, kept alive past a timeout."""
    if STOPPED.value:
        raise refused(describe(*what))
    # Nonblocking even without a timeout: MPI matches no blocking collective with a
    # nonblocking one, and native code, which another process may be running for the
    # same collective, always makes the nonblocking kind.
    request = getattr(comm, "I" + method.lower())(*args, **kwargs)
    if SECONDS.value == math.inf:
        request.Wait()
        return
    started = time.monotonic()
    while not request.Test():
        waited = time.monotonic() - started
        if waited > SECONDS.value:
            raise timed_out(comm, describe(*what), waited, (request,) + tuple(kept))
        if waited > 1e-3:
            time.sleep(_POLL_SLEEP)


def timed_out(comm, what, waited, kept=()):
    """The CollectiveTimeout to raise; from now on the process refuses collectives."""
    if not STOPPED.value:
        STOPPED.value = 1
        _first.update(what=what, kept=kept)
        if comm.Get_size() > 1:
            atexit.register(_abort_job)
    return CollectiveTimeout(at_user_line(
        f"jitflow.distributed: rank {comm.Get_rank()} of {comm.Get_size()} waited "
        f"{waited:.3g} s in {what} for the other processes, past the timeout of "
        f"{SECONDS.value:g} s: one of them is stalled (a long computation, a deadlock, "
        f"waiting for input) or gone without MPI noticing. The job cannot go on (its "
        f"collectives are out of step): this process makes no further collective and "
        f"ends the job as it exits. Set the timeout with "
        f"jitflow.distributed.init(timeout=seconds) or {VARIABLE}."))


def refused(what):
    return CollectiveTimeout(at_user_line(
        f"jitflow.distributed: {what} refused: an earlier collective, {_first['what']}, "
        f"timed out, and the processes' collectives are out of step"))


def _abort_job():
    sys.stderr.write("jitflow.distributed: a collective timed out; aborting the job, "
                     "whose processes cannot finish together\n")
    sys.stderr.flush()
    MPI.COMM_WORLD.Abort(1)


__all__ = ["CollectiveTimeout"]
