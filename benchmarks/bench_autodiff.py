"""Gradients: jitflow's compiled value_and_grad against hand-written NumPy backward passes
and, when they are installed, against jax.jit of the same value_and_grad and PyTorch's
autograd as its users write it (eager, and torch.compile'd in its max-autotune mode;
the MLP's step through torch.optim.SGD, updating the parameters in place, which
jitflow's step does by donating them), measured in the same process, the libraries
taking turns as in bench.py (each batch after a lead-in of
the same calls: NumPy's OpenBLAS threads spin for a while after its products and slowed
whatever ran next on these two cores by up to 2x). Prints median times and the ratios
(theirs / jitflow: above 1 means jitflow is faster), and how long after a cold start
(disk cache off) each step's first result and its native code arrive.

    python benchmarks/bench_autodiff.py
"""
import os
import time

import numpy as np

import jitflow
from bench import Ready, blas_kernels, time_interleaved


# --- sum(tanh(tanh(tanh(1.5 x)))) ---------------------------------------------------------

def tanh_chain(x):
    return np.sum(np.tanh(np.tanh(np.tanh(1.5 * x))))


def tanh_chain_numpy(x):
    """The same value and gradient, by hand: keep each tanh for the backward pass."""
    a = np.tanh(1.5 * x)
    b = np.tanh(a)
    c = np.tanh(b)
    grad = (1 - c * c) * (1 - b * b) * (1 - a * a) * 1.5
    return np.sum(c), grad


# --- MLP training step -------------------------------------------------------------------

def mlp_loss(params, x, labels):
    h1 = np.maximum(x @ params["w1"] + params["b1"], 0)
    h2 = np.maximum(h1 @ params["w2"] + params["b2"], 0)
    logits = h2 @ params["w3"] + params["b3"]
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(log_probs * labels, axis=1))


def sgd_step(params, x, labels):
    loss, grads = jitflow.value_and_grad(mlp_loss)(params, x, labels)
    return loss, {k: params[k] - 0.01 * grads[k] for k in params}


def sgd_step_numpy(params, x, labels):
    """Forward, backward and update written out by hand."""
    w1, b1, w2, b2, w3, b3 = (params[k] for k in ("w1", "b1", "w2", "b2", "w3", "b3"))
    z1 = x @ w1 + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ w2 + b2
    h2 = np.maximum(z2, 0)
    logits = h2 @ w3 + b3
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    total = e.sum(axis=1, keepdims=True)
    loss = -np.mean(np.sum((shifted - np.log(total)) * labels, axis=1))
    d_logits = (e / total - labels) / x.shape[0]
    d_h2 = (d_logits @ w3.T) * (z2 > 0)
    d_h1 = (d_h2 @ w2.T) * (z1 > 0)
    grads = {"w3": h2.T @ d_logits, "b3": d_logits.sum(0), "w2": h1.T @ d_h2,
             "b2": d_h2.sum(0), "w1": x.T @ d_h1, "b1": d_h1.sum(0)}
    return loss, {k: params[k] - 0.01 * grads[k] for k in params}


def mlp_inputs(rng):
    sizes = [784, 512, 512, 10]
    params = {}
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:]), 1):
        params[f"w{i}"] = (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)
        params[f"b{i}"] = np.zeros(n_out, np.float32)
    x = rng.standard_normal((256, 784)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 256)]
    return params, x, labels


def jax_versions():
    """The same two workloads in JAX (jit of value_and_grad), if JAX is installed."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None

    def chain(x):
        return jnp.sum(jnp.tanh(jnp.tanh(jnp.tanh(1.5 * x))))

    def loss(params, x, labels):
        h1 = jnp.maximum(x @ params["w1"] + params["b1"], 0)
        h2 = jnp.maximum(h1 @ params["w2"] + params["b2"], 0)
        logits = h2 @ params["w3"] + params["b3"]
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, axis=1))

    def step(params, x, labels):
        value, grads = jax.value_and_grad(loss)(params, x, labels)
        return value, {k: params[k] - 0.01 * grads[k] for k in params}

    def blocking(fn):
        compiled = jax.jit(fn)
        return lambda *args: jax.block_until_ready(compiled(*args))
    # JAX's best practice: the inputs live on its device once, not converted per call.
    return [blocking(jax.value_and_grad(chain)), blocking(step)], jax.device_put


def torch_versions(compiled):
    """The two workloads in PyTorch (tensors that require gradients, backward(), the
    SGD step through torch.optim), eager or compiled, if torch is installed; with the
    function turning NumPy inputs into its tensors once."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None
    torch.set_num_threads(2)  # one per core, as jitflow's threads
    if compiled:
        import torch._inductor.config
        torch._inductor.config.force_disable_caches = True

    def maybe_compiled(fn):
        return torch.compile(fn, mode="max-autotune") if compiled else fn

    # Only the forward pass compiled (AOTAutograd compiles its backward): with
    # backward() inside the compiled function too, the step took 2.5 times as long.
    @maybe_compiled
    def chain(x):
        return torch.tanh(torch.tanh(torch.tanh(1.5 * x))).sum()

    def chain_value_and_grad(x):
        x.grad = None
        value = chain(x)
        value.backward()
        return value.detach(), x.grad

    def mlp_step(params, optimizer):
        @maybe_compiled
        def step(x, labels):
            optimizer.zero_grad(set_to_none=True)
            h1 = torch.relu(x @ params["w1"] + params["b1"])
            h2 = torch.relu(h1 @ params["w2"] + params["b2"])
            logits = h2 @ params["w3"] + params["b3"]
            loss = -(F.log_softmax(logits, dim=1) * labels).sum(dim=1).mean()
            loss.backward()
            optimizer.step()
            return loss.detach()
        return step

    def place(args):
        if len(args) == 1:
            return (torch.tensor(args[0], requires_grad=True),)
        params, x, labels = args
        weights = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
        step = mlp_step(weights, torch.optim.SGD(list(weights.values()), lr=0.01))
        return step, torch.from_numpy(x), torch.from_numpy(labels)

    def run_step(step, x, labels):
        return step(x, labels)
    return [chain_value_and_grad, run_step], place


def check_value(result, expected, library, workload):
    """Stop if the first call's value (the sum, or the loss before the step) is not
    NumPy's."""
    value = float(result[0] if isinstance(result, tuple) else result)
    if not np.isclose(value, expected, rtol=1e-4):
        raise SystemExit(f"{library} computed {value} for {workload}, NumPy {expected}")


def cold_start(fn, *args):
    """Seconds from a cold start (disk cache off) to the first result, and to native
    code being ready. With config.background_compile (the default) the first call runs
    on the interpreter while the native code is built."""
    os.environ["JITFLOW_CACHE"] = "0"
    try:
        compiled = jitflow.function(fn)
        start = time.perf_counter()
        compiled(*args)
        first = time.perf_counter() - start
        compiled.wait()
        return first, time.perf_counter() - start
    finally:
        del os.environ["JITFLOW_CACHE"]


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(4 * 2 ** 20).astype(np.float32)
    params, batch, labels = mlp_inputs(rng)
    rows = [
        ("value_and_grad tanh chain, 4M f32", jitflow.value_and_grad(tanh_chain),
         tanh_chain_numpy, (x,)),
        ("MLP 784-512-512-10 SGD step, batch 256", sgd_step, sgd_step_numpy,
         (params, batch, labels)),
    ]
    # The MLP step updates its parameters in place, as torch.optim does: jitflow's
    # by donating them (on arrays of its own, which each step overwrites).
    donated = [(), ("params",)]
    own_arguments = [rows[0][3], ({k: v.copy() for k, v in params.items()}, batch, labels)]
    print(blas_kernels())
    starts = [cold_start(fn, *args) for _, fn, _, args in rows]
    peers = {"JAX": jax_versions(), "torch": torch_versions(False),
             "torch.compile": torch_versions(True)}
    peers = {name: versions for name, versions in peers.items() if versions is not None}
    for i, (name, fn, reference, args) in enumerate(rows):
        contenders = {"jitflow": Ready(jitflow.function(fn, donate_argnames=donated[i]),
                                       own_arguments[i]),
                      "NumPy": Ready(reference, args)}
        for peer, (kernels, place) in peers.items():
            contenders[peer] = Ready(kernels[i], place(args))
        expected = float(reference(*args)[0])
        for library, (kernel, kernel_args) in contenders.items():
            check_value(kernel(*kernel_args), expected, library, name)  # compiles: not timed
        contenders["jitflow"].kernel.wait()
        if i == 0:
            print(f"{'workload':42} {'jitflow':>10} {'NumPy':>10} {'ratio':>7} "
                  f"{'1st call':>9} {'native':>8}" +
                  "".join(f" {peer:>10} {'ratio':>7}" for peer in peers))
        times = time_interleaved(contenders)
        ours = times["jitflow"]
        first, native = starts[i]
        line = (f"{name:42} {ours * 1e3:8.2f}ms {times['NumPy'] * 1e3:8.2f}ms "
                f"{times['NumPy'] / ours:7.2f} {first * 1e3:7.0f}ms {native * 1e3:6.0f}ms")
        for peer in peers:
            line += f" {times[peer] * 1e3:8.2f}ms {times[peer] / ours:7.2f}"
        print(line)


if __name__ == "__main__":
    main()
