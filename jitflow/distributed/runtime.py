"""The process's place in the job: init, rank, size, local_rank, barrier.

jitflow talks over a communicator of its own, a duplicate of MPI_COMM_WORLD, so its
collectives never match messages of the user's own MPI calls. init() makes it once;
every other function here calls init() first, so a script may skip it.

In a job of more than one process, an exception that escapes on one rank would leave
the others waiting forever in their next collective: init() installs a sys.excepthook
that prints the traceback and then aborts the whole job (MPI_Abort), as
`python -m mpi4py` does. A rank that dies outright (killed, os._exit) is noticed by
mpiexec, which ends the job's other processes. A rank that stays alive but never
reaches the collective the others wait in makes them raise CollectiveTimeout once the
timeout passes (timeouts.py).
"""
import sys

from .mpi import MPI
from .timeouts import current, run, set_timeout, set_timeout_from_environment

_state = {}  # "world": jitflow's communicator; "local": the ranks of this host
_UNCHANGED = object()


def init(timeout=_UNCHANGED):
    """Join the MPI job (one process of its own without mpiexec); idempotent.

    timeout: how many seconds a collective waits for the other processes before it
    raises CollectiveTimeout (None: forever). Unless given, it is the environment's
    JITFLOW_DISTRIBUTED_TIMEOUT, else 600; a later init(timeout=...) changes it."""
    if "world" not in _state:
        set_timeout_from_environment()
        world = MPI.COMM_WORLD.Dup()
        _state["local"] = world.Split_type(MPI.COMM_TYPE_SHARED)
        _state["world"] = world
        if world.Get_size() > 1:
            _abort_on_uncaught_exceptions()
    if timeout is not _UNCHANGED:
        set_timeout(timeout)


def timeout():
    """How many seconds a collective waits for the other processes (None: forever)."""
    init()
    return current()


def communicator():
    """jitflow's communicator (an mpi4py Comm) over every process of the job."""
    init()
    return _state["world"]


def rank():
    """This process's number in the job, 0 to size() - 1."""
    return communicator().Get_rank()


def size():
    """How many processes the job has."""
    return communicator().Get_size()


def local_rank():
    """This process's number among the job's processes on the same host (to pick a
    device or a share of the cores)."""
    init()
    return _state["local"].Get_rank()


def local_size():
    """How many of the job's processes run on this host."""
    init()
    return _state["local"].Get_size()


def barrier():
    """Wait until every process of the job has reached its barrier() (no longer than
    the timeout)."""
    run(communicator(), "Barrier", (), ("barrier",))


def _abort_on_uncaught_exceptions():
    previous = sys.excepthook

    def abort(kind, value, trace):
        previous(kind, value, trace)
        sys.stderr.write(f"jitflow.distributed: rank {rank()} of {size()} raised "
                         f"{kind.__name__}; aborting the whole job so that the other "
                         f"processes do not wait for it forever\n")
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(1)
    if getattr(previous, "__module__", None) != __name__:
        sys.excepthook = abort


__all__ = ["init", "timeout", "communicator", "rank", "size", "local_rank", "local_size",
           "barrier"]
