"""Gradients: jitflow's compiled value_and_grad against hand-written NumPy backward passes
and, when JAX is installed, against jax.jit of the same value_and_grad, measured in the
same process, the libraries taking turns as in bench.py (each batch after a lead-in of
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
    print(blas_kernels())
    print(f"{'workload':42} {'jitflow':>10} {'NumPy':>10} {'ratio':>7} {'1st call':>9} "
          f"{'native':>8} {'JAX':>10} {'ratio':>7}")
    starts = [cold_start(fn, *args) for _, fn, _, args in rows]
    peers, place = jax_versions() or (None, None)
    for i, (name, fn, reference, args) in enumerate(rows):
        contenders = {"jitflow": Ready(jitflow.function(fn), args),
                      "NumPy": Ready(reference, args)}
        if peers is not None:
            contenders["JAX"] = Ready(peers[i], place(args))
        for kernel, kernel_args in contenders.values():
            kernel(*kernel_args)  # compiles: not timed
        contenders["jitflow"].kernel.wait()
        times = time_interleaved(contenders)
        ours = times["jitflow"]
        first, native = starts[i]
        line = (f"{name:42} {ours * 1e3:8.2f}ms {times['NumPy'] * 1e3:8.2f}ms "
                f"{times['NumPy'] / ours:7.2f} {first * 1e3:7.0f}ms {native * 1e3:6.0f}ms")
        if peers is not None:
            line += f" {times['JAX'] * 1e3:8.2f}ms {times['JAX'] / ours:7.2f}"
        print(line)


if __name__ == "__main__":
    main()
