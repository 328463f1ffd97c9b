"""fit(..., distributed=True): data-parallel training over the processes of an MPI job
(jitflow.distributed), in Horovod's way.

    mpiexec -n 4 python train.py        # each process runs the same fit

Each process trains on its own shard of x and y: rows rank, rank + size, ... (the
shards have one size, so every process runs the same number of steps and of
collectives; the last len(x) % size examples are left out). batch_size is per process:
a step trains on size * batch_size examples. Before training, every process takes rank
0's weights; each step averages the gradients over the processes
(DistributedOptimizer, built into the compiled step), so the processes stay identical.
At each epoch's end the logs (loss, metrics, val_*) are averaged over the processes
before any callback reads them, so EarlyStopping and the like decide alike everywhere.
Only rank 0 prints progress and runs the callbacks that write files (ModelCheckpoint,
CSVLogger); the History each process returns holds the averaged logs.
"""
import numpy as np

from .. import distributed as dist
from .. import pytree
from ..errors import at_user_line
from .callbacks import Callback, CSVLogger, ModelCheckpoint
from .data import is_batch_stream

WRITERS = (ModelCheckpoint, CSVLogger)


class AveragedLogs(Callback):
    """Replaces each epoch's logs by their mean over the processes (first in the list,
    so the callbacks after it see the means)."""

    def on_epoch_end(self, epoch, logs=None):
        for name in sorted(logs or {}):  # one order on every process
            logs[name] = float(dist.all_reduce(np.float64(logs[name]), "mean"))


def distributed_fit(model, x, y, sample_weight, verbose, callbacks, fit_arguments):
    """model.fit on this process's shard, with the settings the module describes."""
    if is_batch_stream(x):
        raise ValueError(at_user_line(
            "fit(distributed=True): give x and y as arrays, which are sharded between "
            "the processes; batches from a generator cannot be"))
    rank, size = dist.rank(), dist.size()
    x, y, sample_weight = (_shard(data, rank, size) for data in (x, y, sample_weight))
    if not model.weights:
        model(_first_rows(x))  # build the weights, so that rank 0's can be sent
    dist.broadcast_variables(model, root=0)
    _distribute_optimizer(model)
    kept = [c for c in callbacks or [] if rank == 0 or not isinstance(c, WRITERS)]
    return model.fit(x, y, sample_weight=sample_weight, callbacks=[AveragedLogs(), *kept],
                     verbose=verbose if rank == 0 else 0, **fit_arguments)


def _shard(data, rank, size):
    if data is None:
        return None
    leaves, _, structure = pytree.flatten(data)
    leaves = [np.asarray(leaf) for leaf in leaves]
    count = len(leaves[0]) // size
    if count == 0:
        raise ValueError(at_user_line(
            f"fit(distributed=True): {len(leaves[0])} examples cannot give each of the "
            f"{size} processes one"))
    rows = np.arange(rank, count * size, size)
    return pytree.unflatten(structure, [leaf[rows] for leaf in leaves])


def _first_rows(x):
    leaves, _, structure = pytree.flatten(x)
    return pytree.unflatten(structure, [leaf[:1] for leaf in leaves])


def _distribute_optimizer(model):
    """The compiled train step averages the gradients: its optimizer becomes a
    DistributedOptimizer (once), and the steps are traced again with it."""
    if getattr(type(model.optimizer), "fusion_bytes", None) is not None:
        return
    model.optimizer = model._config.optimizer = dist.DistributedOptimizer(model.optimizer)
    model._make_step_functions()
