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


def check_graph(graph, types, fusion_bytes, overlap):
    """One all_reduce per fused buffer; overlapped, each split in a start and a wait,
    the first buffer (the last layer's gradients) started before the first layer's
    weight gradient is computed (the last matmul), and waited for after the last
    start."""
    buffers = dist.data_parallel.fusion_groups(types, fusion_bytes)
    # 320 + 64 and 192 + 24 bytes below 400
    assert len(buffers) == (1 if fusion_bytes > 1000 else 2), buffers
    ops = [line.split(" = ")[1].split(" ")[0] for line in graph.splitlines()
           if line.startswith("  %")]  # the graph's own nodes, not fused bodies'
    if not overlap:
        assert ops.count("all_reduce") == len(buffers) and "all_reduce_start" not in ops
        return
    assert ops.count("all_reduce_start") == ops.count("all_reduce_wait") == len(buffers)
    assert "all_reduce" not in ops, graph
    starts = [i for i, op in enumerate(ops) if op == "all_reduce_start"]
    waits = [i for i, op in enumerate(ops) if op == "all_reduce_wait"]
    last_matmul = max(i for i, op in enumerate(ops) if op == "matmul")
    assert max(starts) < min(waits), graph
    if len(buffers) > 1:
        assert starts[0] < last_matmul < starts[1], graph


mine = slice(rank * PER_RANK, (rank + 1) * PER_RANK)
for make_optimizer in (lambda: SGD(0.5, momentum=0.9), lambda: Adam(0.05)):
    reference_net = model(seed=0)
    reference = trained(reference_net, jitflow.function(train_step(reference_net,
                                                                   make_optimizer())),
                        slice(None))
    for compiled, fusion_bytes, overlap in ((True, dist.FUSION_BYTES, True),
                                            (True, 400, True), (True, 400, False),
                                            (False, dist.FUSION_BYTES, True)):
        net = model(seed=rank)  # different starts: broadcast_variables evens them
        net(inputs[0, mine])
        dist.broadcast_variables(net, root=0)
        optimizer = dist.DistributedOptimizer(make_optimizer(), fusion_bytes, overlap)
        step = train_step(net, optimizer)
        step = jitflow.function(step) if compiled else step
        for got, want in zip(trained(net, step, mine), reference, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=(
                f"compiled={compiled} fusion_bytes={fusion_bytes} overlap={overlap}"))
        if compiled and size > 1:
            check_graph(step.lower(inputs[0, mine], labels[0, mine]).graph_ir(),
                        [jitflow.ir.types.type_of_value(w.numpy()) for w in net.weights],
                        fusion_bytes, overlap)
    net = model(seed=rank)
    net(inputs[0, mine])
    dist.broadcast_variables(net, root=0)
    step = jitflow.function(train_step(net, make_optimizer(), dist.DistributedGradientTape))
    for got, want in zip(trained(net, step, mine), reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg="the tape")
print(f"rank {rank} done")
