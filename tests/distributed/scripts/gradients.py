"""The collectives' derivatives against central finite differences of the job's loss,
the sum of every rank's loss: the gradient rank r computes of its own loss is the
derivative of that sum by r's operand (reverse mode eagerly and compiled, forward mode
compiled). Every rank perturbs in turn, each of its elements, while all the others
evaluate their losses with it."""
import numpy as np

import jitflow
import jitflow.distributed as dist

jitflow.config.background_compile = False
rank, size = dist.rank(), dist.size()
rng = np.random.default_rng(7 + rank)
weights = rng.standard_normal(2 * size)  # differs by rank: each loss is its own
x0 = rng.standard_normal(2 * size)

LOSSES = {
    "sum": lambda x: np.sum(np.sin(dist.all_reduce(x * x)) * weights),
    "sum, started and waited for": lambda x: np.sum(np.sin(
        dist.collectives.all_reduce_overlapped(x * x)) * weights),
    "mean": lambda x: np.sum(np.cos(dist.all_reduce(x, "mean")) * weights),
    "max": lambda x: np.sum(dist.all_reduce(np.tanh(x), "max") * weights),
    "min": lambda x: np.sum(dist.all_reduce(x * 3.0, "min") ** 2 * weights),
    "all_gather": lambda x: np.sum(np.sin(dist.all_gather(x))[: 2 * size] * weights)
    + np.sum(dist.all_gather(x[0]) ** 3),
    "reduce_scatter": lambda x: np.sum(np.exp(dist.reduce_scatter(x * weights))),
    "broadcast": lambda x: np.sum(dist.broadcast(x, root=size - 1) * x * weights),
}


def job_loss(loss, x):
    """The sum over the ranks of their losses, each at its own x."""
    return float(dist.all_reduce(np.asarray(loss(x)), "sum"))


def finite_differences(loss, eps=1e-6):
    """d job_loss / d x on this rank, by central differences."""
    mine = np.zeros_like(x0)
    for turn in range(size):
        for i in range(x0.size):
            step = np.zeros_like(x0)
            if rank == turn:
                step[i] = eps
            slope = (job_loss(loss, x0 + step) - job_loss(loss, x0 - step)) / (2 * eps)
            if rank == turn:
                mine[i] = slope
    return mine


for name, loss in LOSSES.items():
    expected = finite_differences(loss)
    eager = jitflow.grad(loss)(x0)
    compiled = jitflow.function(jitflow.grad(loss))(x0)
    for how, gradient in (("eager", eager), ("compiled", compiled)):
        np.testing.assert_allclose(gradient, expected, rtol=1e-5, atol=1e-7,
                                   err_msg=f"{how} gradient of {name}")
    # Forward mode: a tangent on every rank at once moves the job's loss by the sum
    # over the ranks of <gradient, tangent>.
    tangent = np.random.default_rng(50 + rank).standard_normal(x0.size)
    _, moved = jitflow.function(lambda x, t: jitflow.jvp(loss, (x,), (t,)))(x0, tangent)
    np.testing.assert_allclose(float(dist.all_reduce(np.asarray(moved))),
                               float(dist.all_reduce(np.asarray(expected @ tangent))),
                               rtol=1e-5, atol=1e-7, err_msg=f"jvp of {name}")
print(f"rank {rank} done")
