"""fit(distributed=True) against fit in one process: with each rank training on its
shard (rows rank, rank + size, ...) in batches of b, the global step trains on the
same size * b examples as one process's fit with batches of size * b, unshuffled; the
weights and the (averaged) history agree to rounding. Only rank 0 writes the CSV log
and prints progress."""
import os
import sys
import tempfile

import numpy as np

import jitflow
import jitflow.distributed as dist
from jitflow import nn
from jitflow.optim import SGD

jitflow.config.background_compile = False
rank, size = dist.rank(), dist.size()
PER_RANK_BATCH = 4
rng = np.random.default_rng(11)
x = rng.standard_normal((size * 10 + 1, 5))  # float64; one example left out of the shards
y = rng.integers(0, 3, len(x))
kept = slice(0, size * 10)


def model(seed):
    rng = np.random.default_rng(seed)
    net = nn.Sequential([nn.Dense(8, activation="tanh", rng=rng), nn.Dense(3, rng=rng)])
    net.compile(SGD(0.1, momentum=0.5), loss="sparse_categorical_crossentropy",
                metrics=["accuracy"])
    return net


reference = model(seed=0)
expected = reference.fit(x[kept], y[kept], batch_size=size * PER_RANK_BATCH, epochs=3,
                         shuffle=False, verbose=0)

log_folder = sys.argv[1]
log = os.path.join(log_folder, f"log-rank{rank}.csv")
net = model(seed=7 * rank)  # rank 0 starts as the reference; its weights reach all
history = net.fit(x, y, batch_size=PER_RANK_BATCH, epochs=3, shuffle=False,
                  distributed=True, callbacks=[nn.callbacks.CSVLogger(log)], verbose=2)
for got, want in zip(net.weights, reference.weights, strict=True):
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-12)
for name in ("loss", "accuracy"):
    np.testing.assert_allclose(history.history[name], expected.history[name], rtol=1e-9)
assert os.path.exists(log) == (rank == 0), (rank, log)
print(f"rank {rank} done")
