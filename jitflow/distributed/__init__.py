"""jitflow.distributed: data-parallel training over MPI, through mpi4py.

    import jitflow.distributed as dist          # pip install 'jitflow[distributed]'
    dist.init()                                  # optional: every function calls it
    opt = dist.DistributedOptimizer(jitflow.optim.Adam(1e-3))
    dist.broadcast_variables(model.variables, root=0)

and run the script as `mpiexec -n 4 python train.py` (plainly, it is a job of one).

The collectives (all_reduce, all_gather, reduce_scatter, broadcast) run MPI on NumPy
arrays eagerly; inside @jitflow.function they are primitives of the IR whose native
code calls MPI on the buffers themselves, with derivatives and vmap rules.

A collective waits for the other processes no longer than a timeout (init(timeout=...)
or JITFLOW_DISTRIBUTED_TIMEOUT, 600 s by default), then raises CollectiveTimeout.
"""
from .mpi import MPI  # first: without mpi4py the import stops here, having changed nothing
from . import batching, native  # noqa: F401,E402  (they install codegen's and vmap's rules)
from .collectives import all_gather, all_reduce, broadcast, reduce_scatter
from .data_parallel import (FUSION_BYTES, DistributedGradientTape, DistributedOptimizer,
                            average_gradients, broadcast_variables)
from .runtime import (barrier, communicator, init, local_rank, local_size, rank, size,
                      timeout)
from .timeouts import CollectiveTimeout

__all__ = ["init", "rank", "size", "local_rank", "local_size", "barrier", "communicator",
           "all_reduce", "all_gather", "reduce_scatter", "broadcast",
           "DistributedOptimizer", "DistributedGradientTape", "broadcast_variables",
           "average_gradients", "FUSION_BYTES", "CollectiveTimeout", "timeout"]
