"""One training step of examples/digits_convnet.py's convnet (Conv2D 16 -> MaxPool ->
Conv2D 32 -> MaxPool -> Dense 64 -> Dense 10, Adam, sparse softmax cross-entropy, a batch
of 64 float32 8x8 digits) in jitflow (@jitflow.function of the example's own step),
PyTorch eager and torch.compile (CPU) and JAX (jax.jit of a hand-written step), whichever
of them are installed. All start from jitflow's initial weights and train on the same
batch; their first two losses are checked against jitflow's before anything is timed.
The steps are timed in interleaved batches in one process (bench.time_interleaved),
each library training on while it is timed: after the few thousand steps a run makes,
the loss is about 1e-6, its gradients nowhere near float32's subnormals, so a step's
work does not change.
Prints each library's median time per step, its ratio to jitflow's (above 1: jitflow is
faster), how long its first step took from a fresh start with the compilers' disk
caches off, and when its compiled code was ready (jitflow's first step runs on the
interpreter while the native code is built on a background thread).

    python benchmarks/bench_training.py
"""
import importlib.metadata
import importlib.util
import os
import sys
import time
from collections import namedtuple

import numpy as np

import jitflow
from bench import Ready, blas_kernels, time_interleaved
from jitflow.datasets import load_digits
from jitflow.optim import Adam

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "examples"))
from digits_convnet import build_model, make_train_step  # noqa: E402

BATCH = 64
# The example's Adam: learning rate 3e-3, Keras' defaults for the rest.
LEARNING_RATE, BETA_1, BETA_2, EPSILON = 3e-3, 0.9, 0.999, 1e-7
# Two float32 losses computed in another order agree to about this (the second one also
# with PyTorch's Adam, whose epsilon is added after the bias correction, not before).
LOSS_RTOL = 1e-4
PACKAGES = ("torch", "jax")


def first_batch():
    """The first BATCH training images (N, 8, 8, 1) float32 and their int64 labels."""
    (images, labels), _ = load_digits()
    return images[:BATCH], labels[:BATCH]


def initial_weights(images):
    """The weights build_model(seed=0) starts from, as NumPy arrays in its order: conv
    kernels (kh, kw, in, out), then bias, per layer; Dense kernels (in, out)."""
    model = build_model()
    model(images)  # builds them; the timed model, built with the same seed, gets the same
    return [variable.numpy() for variable in model.trainable_variables]


# --- jitflow: the example's own step -----------------------------------------------------

def jitflow_step():
    model = build_model()
    return jitflow.function(make_train_step(model, Adam(LEARNING_RATE)))


def jitflow_first_step(images, labels):
    """(the step, its first loss, seconds to the first loss, seconds to native code),
    from a fresh model with the disk cache off."""
    os.environ["JITFLOW_CACHE"] = "0"
    try:
        step = jitflow_step()
        start = time.perf_counter()
        loss = float(step(images, labels))
        first = time.perf_counter() - start
        step.wait()
        return step, loss, first, time.perf_counter() - start
    finally:
        del os.environ["JITFLOW_CACHE"]


# --- PyTorch ----------------------------------------------------------------------------

def torch_model(weights):
    """The same network in torch.nn (NCHW), holding jitflow's initial weights."""
    import torch
    from torch import nn

    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    layers = [model[0], model[3], model[7], model[9]]
    with torch.no_grad():
        for layer, kernel, bias in zip(layers, weights[::2], weights[1::2]):
            layer.weight.copy_(torch.from_numpy(torch_kernel(kernel)))
            layer.bias.copy_(torch.from_numpy(bias))
    return model


def torch_kernel(kernel):
    """A jitflow kernel in torch's layout: HWIO -> OIHW for a conv; (in, out) -> (out, in)
    for a Dense, the first one's rows reordered from NHWC's flattening (h, w, c) to
    NCHW's (c, h, w)."""
    if kernel.ndim == 4:
        return np.ascontiguousarray(kernel.transpose(3, 2, 0, 1))
    if kernel.shape[0] == 128:  # after Flatten of (2, 2, 32)
        kernel = kernel.reshape(2, 2, 32, -1).transpose(2, 0, 1, 3).reshape(128, -1)
    return np.ascontiguousarray(kernel.T)


def torch_step(weights, compiled):
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(2)  # one per core of this 2-core machine
    model = torch_model(weights)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE,
                                 betas=(BETA_1, BETA_2), eps=EPSILON)

    def step(images, labels):
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        return loss.detach()
    return torch.compile(step) if compiled else step


def torch_inputs(images, labels):
    import torch

    return (torch.from_numpy(np.ascontiguousarray(images.transpose(0, 3, 1, 2))),
            torch.from_numpy(labels))


def torch_fresh():
    """torch.compile's caches off, so that its first step compiles from scratch."""
    import torch._inductor.config

    torch._inductor.config.force_disable_caches = True


# --- JAX --------------------------------------------------------------------------------

def jax_forward(params, images):
    import jax
    from jax import lax

    def conv(x, kernel, bias):
        y = lax.conv_general_dilated(x, kernel, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jax.nn.relu(y + bias)

    def pool(x):
        return lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    k1, b1, k2, b2, w3, b3, w4, b4 = params
    x = pool(conv(images, k1, b1))
    x = pool(conv(x, k2, b2)).reshape(images.shape[0], -1)  # NHWC order, as jitflow's
    return jax.nn.relu(x @ w3 + b3) @ w4 + b4


def jax_loss(params, images, labels):
    import jax
    import jax.numpy as jnp

    log_probabilities = jax.nn.log_softmax(jax_forward(params, images))
    return -jnp.mean(jnp.take_along_axis(log_probabilities, labels[:, None], axis=1))


def jax_train_step(state, images, labels):
    """Adam with Keras' (and jitflow's) formulas on the list of parameters."""
    import jax
    import jax.numpy as jnp

    params, m, v, t = state
    loss, grads = jax.value_and_grad(jax_loss)(params, images, labels)
    t = t + 1
    alpha = LEARNING_RATE * jnp.sqrt(1 - BETA_2 ** t) / (1 - BETA_1 ** t)
    m = [a + (g - a) * (1 - BETA_1) for a, g in zip(m, grads)]
    v = [a + (g * g - a) * (1 - BETA_2) for a, g in zip(v, grads)]
    params = [p - alpha * a / (jnp.sqrt(b) + EPSILON) for p, a, b in zip(params, m, v)]
    return loss, (params, m, v, t)


def jax_step(weights):
    """A step that keeps the state (donated to the next call) and waits for it."""
    import jax
    import jax.numpy as jnp

    compiled = jax.jit(jax_train_step, donate_argnums=0)
    zeros = [jnp.zeros_like(w) for w in weights]
    state = [[jnp.asarray(w) for w in weights], zeros, [z.copy() for z in zeros],
             jnp.float32(0)]

    def step(images, labels):
        loss, state[:] = compiled(state, images, labels)
        return jax.block_until_ready(loss)  # all of a call's outputs are ready together
    return step


def jax_inputs(images, labels):
    import jax

    return jax.device_put(images), jax.device_put(labels)


# --- checking and timing ----------------------------------------------------------------

# A library's step: make() builds it, convert(images, labels) gives its inputs, compiles
# says whether its first step compiles it, fresh() (if not None) turns its caches off.
Peer = namedtuple("Peer", "make convert compiles fresh")


def installed_peers(weights):
    """{name: Peer} for the installed libraries; the missing ones are reported."""
    found = {}
    if importlib.util.find_spec("torch") is not None:
        found["torch"] = Peer(lambda: torch_step(weights, False), torch_inputs, False, None)
        found["torch.compile"] = Peer(lambda: torch_step(weights, True), torch_inputs,
                                      True, torch_fresh)
    if importlib.util.find_spec("jax") is not None:
        found["JAX"] = Peer(lambda: jax_step(weights), jax_inputs, True, None)
    report_packages()
    return found


def report_packages():
    present = [p for p in PACKAGES if importlib.util.find_spec(p) is not None]
    missing = [p for p in PACKAGES if p not in present]
    print("peers: " + (", ".join(f"{p} {importlib.metadata.version(p)}" for p in present)
                       or "none")
          + "".join(f"; {p} is not installed: skipped" for p in missing))


def first_step(peer, images, labels):
    """(the step, its inputs, its first loss, seconds for the first step)."""
    args = peer.convert(images, labels)  # once: converting inputs is not part of a step
    if peer.fresh is not None:
        peer.fresh()
    step = peer.make()
    start = time.perf_counter()
    loss = float(step(*args))
    return step, args, loss, time.perf_counter() - start


def check_losses(name, losses, expected):
    """The first two losses against jitflow's: the same initial loss, and the same
    loss after one Adam update."""
    errors = [abs(ours - theirs) / abs(theirs) for ours, theirs in zip(losses, expected)]
    print(f"{name:14} losses {losses[0]:.6f} {losses[1]:.6f}: rel. difference to "
          f"jitflow's {errors[0]:.1e}, {errors[1]:.1e}")
    assert max(errors) <= LOSS_RTOL, f"{name} computes another loss than jitflow"


def print_table(times, starts):
    ours = times["jitflow"]
    print(f"one training step, batch {BATCH} float32: median of the interleaved batches; "
          f"ratio: its time / jitflow's (above 1: jitflow is faster)")
    print(f"{'library':14} {'ms/step':>9} {'ratio':>7} {'1st step':>10} {'compiled':>10}")
    for name, seconds in times.items():
        first, ready = starts[name]
        ready_text = "-" if ready is None else f"{ready * 1e3:.0f} ms"
        print(f"{name:14} {seconds * 1e3:9.3f} {seconds / ours:7.2f} "
              f"{first * 1e3:7.0f} ms {ready_text:>10}")


def main():
    images, labels = first_batch()
    weights = initial_weights(images)
    print(f"jitflow {jitflow.__version__}, NumPy {np.__version__}; {blas_kernels()}")
    step, loss, first, native = jitflow_first_step(images, labels)
    expected = [loss, float(step(images, labels))]
    print(f"{'jitflow':14} losses {expected[0]:.6f} {expected[1]:.6f}")
    contenders = {"jitflow": Ready(step, (images, labels))}
    starts = {"jitflow": (first, native)}
    for name, peer in installed_peers(weights).items():
        print(f"building {name}...", file=sys.stderr, flush=True)
        step, args, loss, first = first_step(peer, images, labels)
        check_losses(name, [loss, float(step(*args))], expected)
        contenders[name] = Ready(step, args)
        starts[name] = (first, first if peer.compiles else None)
    print("timing...", file=sys.stderr, flush=True)
    print_table(time_interleaved(contenders), starts)


if __name__ == "__main__":
    main()
