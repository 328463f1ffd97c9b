"""mpi4py's MPI module, imported in one place, with the message that says how to get it.

Importing it initializes MPI (mpi4py's default): under `mpiexec -n N` the process joins
its N-process job; run plainly, MPI starts it as a job of one (a singleton).
"""
try:
    from mpi4py import MPI
except ImportError as error:
    raise ImportError(
        "jitflow.distributed needs mpi4py and an MPI library; install them with "
        "pip install 'jitflow[distributed]' (mpi4py with the MPICH wheel), or "
        f"pip install mpi4py mpich ({error})") from error

__all__ = ["MPI"]
