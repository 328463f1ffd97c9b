"""The digits convnet trained data-parallel over the processes of an MPI job, in
Horovod's way: every process holds the whole model and trains on its share of each
global batch; the gradients are averaged over the processes inside the compiled step
(DistributedOptimizer: one fused all_reduce, called from native code), so all the
processes make the same update. Prints each process's throughput.

    python examples/distributed_training.py                  # a job of one process
    mpiexec -n 2 python examples/distributed_training.py     # two processes
    mpiexec -n 8 -hosts node1,node2 python examples/distributed_training.py
    mpiexec -n 64 -f hostfile python examples/distributed_training.py

(pip install 'jitflow[distributed]' brings mpi4py and MPICH's mpiexec.)
"""
import argparse
import time

import numpy as np

import jitflow
import jitflow.distributed as dist
from jitflow.datasets import load_digits
from jitflow.optim import Adam

from digits_convnet import accuracy, batches, build_model, make_train_step

GLOBAL_BATCH, LEARNING_RATE = 64, 3e-3


def train(epochs=8, seed=0, report=print):
    """Train on the digits; returns (test accuracy, examples/s of each process)."""
    rank, size = dist.rank(), dist.size()
    (images, labels), (test_images, test_labels) = load_digits()
    per_process = GLOBAL_BATCH // size
    model = build_model(seed + rank)  # different starts, evened by the broadcast
    model(images[:1])
    dist.broadcast_variables(model, root=0)
    optimizer = dist.DistributedOptimizer(Adam(LEARNING_RATE))
    step = jitflow.function(make_train_step(model, optimizer))
    rng = np.random.default_rng(seed)  # one shuffle for every process
    examples, seconds = 0, 0.0
    for epoch in range(epochs):
        losses = []
        for index in batches(len(labels), GLOBAL_BATCH, rng):
            mine = index[rank * per_process:(rank + 1) * per_process]
            started = time.perf_counter()
            losses.append(float(step(images[mine], labels[mine])))
            if epoch == 0 and len(losses) == 1:
                step.wait()  # the native code; the compile is not counted
                continue
            seconds += time.perf_counter() - started
            examples += len(mine)
        mean_loss = float(dist.all_reduce(np.float64(np.mean(losses)), "mean"))
        if rank == 0:
            report(f"epoch {epoch + 1}/{epochs}: loss {mean_loss:.4f}")
    rates = dist.all_gather(np.float64(examples / max(seconds, 1e-9)))
    predict = jitflow.function(lambda x: model(x))
    return accuracy(predict, test_images, test_labels), rates


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    epochs = parser.parse_args().epochs
    test_accuracy, rates = train(epochs)
    if dist.rank() == 0:
        for rank, rate in enumerate(rates):
            print(f"rank {rank}: {rate:8.0f} examples/s")
        print(f"all {len(rates)} processes: {rates.sum():.0f} examples/s; "
              f"test accuracy {test_accuracy:.4f}")
        if epochs >= 8:
            assert test_accuracy >= 0.9, "the convnet should reach 90% test accuracy"


if __name__ == "__main__":
    main()
