"""The contract of data-parallel training: with every rank taking its share of each
global batch, the weights after K steps are those of one process training on the
global batches (to float rounding), for compiled and eager steps, for SGD with momentum
and Adam, whatever the fusion of the gradients into buffers, averaged by the optimizer
or by the tape."""
import numpy as np

import jitflow
import jitflow.distributed as dist
from jitflow import nn
from jitflow.optim import SGD, Adam

jitflow.config.background_compile = False
rank, size = dist.rank(), dist.size()
STEPS, PER_RANK = 4, 6
GLOBAL = PER_RANK * size
data_rng = np.random.default_rng(3)
inputs = data_rng.standard_normal((STEPS, GLOBAL, 5))  # float64: rounding stays far below
# what a wrong average would change, even through Adam, which divides by |g|
labels = data_rng.integers(0, 3, (STEPS, GLOBAL))


def model(seed):
    rng = np.random.default_rng(seed)
    return nn.Sequential([nn.Dense(8, activation="tanh", rng=rng), nn.Dense(3, rng=rng)])


def train_step(net, optimizer, tape_kind=jitflow.GradientTape):
    def step(x, y):
        with tape_kind() as tape:
            loss = nn.losses.sparse_softmax_cross_entropy_from_logits(y, net(x, training=True))
        grads = tape.gradient(loss, net.trainable_variables)
        optimizer.apply_gradients(zip(grads, net.trainable_variables))
        return loss
    return step


def trained(net, step, rows):
    net(inputs[0, rows])  # builds the layers
    for k in range(STEPS):
        step(inputs[k, rows], labels[k, rows])
    return [np.array(w.numpy()) for w in net.weights]


mine = slice(rank * PER_RANK, (rank + 1) * PER_RANK)
for make_optimizer in (lambda: SGD(0.5, momentum=0.9), lambda: Adam(0.05)):
    reference_net = model(seed=0)
    reference = trained(reference_net, jitflow.function(train_step(reference_net,
                                                                   make_optimizer())),
                        slice(None))
    for compiled, fusion_bytes in ((True, dist.FUSION_BYTES), (True, 400),
                                   (False, dist.FUSION_BYTES)):
        net = model(seed=rank)  # different starts: broadcast_variables evens them
        net(inputs[0, mine])
        dist.broadcast_variables(net, root=0)
        optimizer = dist.DistributedOptimizer(make_optimizer(), fusion_bytes)
        step = train_step(net, optimizer)
        step = jitflow.function(step) if compiled else step
        for got, want in zip(trained(net, step, mine), reference, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=(
                f"compiled={compiled} fusion_bytes={fusion_bytes}"))
        if compiled and size > 1:  # one all_reduce per fused buffer
            graph = step.lower(inputs[0, mine], labels[0, mine]).graph_ir()
            buffers = dist.data_parallel.fusion_groups(
                [jitflow.ir.types.type_of_value(w.numpy()) for w in net.weights],
                fusion_bytes)
            assert graph.count("all_reduce") == len(buffers), (graph, buffers)
            # 320 + 64 and 192 + 24 bytes below 400
            assert len(buffers) == (1 if fusion_bytes > 1000 else 2), buffers
    net = model(seed=rank)
    net(inputs[0, mine])
    dist.broadcast_variables(net, root=0)
    step = jitflow.function(train_step(net, make_optimizer(), dist.DistributedGradientTape))
    for got, want in zip(trained(net, step, mine), reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg="the tape")
print(f"rank {rank} done")
