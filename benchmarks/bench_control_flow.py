"""Loops that stay in the graph, against the libraries users would pick for them, in one
process, timed in interleaved batches (bench.time_interleaved):

- rnn_grad: loss and gradient of a tanh RNN over 50 steps (batch 32, 8 inputs, 64
  hidden units, float32): jitflow.scan under jitflow.value_and_grad, jax.lax.scan under
  jax.value_and_grad (jax.jit), and a PyTorch loop with autograd.
- newton_sqrt: square roots of 10,000 numbers by Newton's method to convergence (a
  data-dependent trip count, float64): jitflow.while_loop, jax.lax.while_loop (jax.jit),
  and the NumPy loop.
- newton_sqrt_grad: its gradient. Reverse mode through jitflow.while_loop; JAX cannot
  differentiate lax.while_loop in reverse, so it is left out; PyTorch's loop with
  autograd.

Every result is checked against the NumPy (or jitflow eager) reference before timing.
Prints each library's median time per call and its ratio to jitflow's (above 1: jitflow
is faster).

    python benchmarks/bench_control_flow.py
"""
import importlib.util

import numpy as np

import jitflow
import jitflow.numpy as jnp
from bench import Ready, time_interleaved

T, BATCH, INPUTS, HIDDEN = 50, 32, 8, 64
COUNT = 10_000


def rnn_data():
    rng = np.random.default_rng(0)
    params = {"wx": rng.standard_normal((INPUTS, HIDDEN)) / np.sqrt(INPUTS),
              "wh": rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN),
              "b": np.zeros(HIDDEN), "wy": rng.standard_normal((HIDDEN, 1)) / 8}
    params = {k: v.astype(np.float32) for k, v in params.items()}
    return params, rng.standard_normal((T, BATCH, INPUTS)).astype(np.float32)


def rnn_loss(params, xs):
    def cell(h, x):
        h = jnp.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
        return h, h @ params["wy"]
    _, ys = jitflow.scan(cell, jnp.zeros((BATCH, HIDDEN), np.float32), xs)
    return jnp.mean(ys ** 2)


def newton(a):
    return jitflow.while_loop(lambda x: jnp.any(jnp.abs(x * x - a) > 1e-13 * a),
                              lambda x: 0.5 * (x + a / x), jnp.maximum(a, 1.0))


def newton_numpy(a):
    x = np.maximum(a, 1.0)
    while np.any(np.abs(x * x - a) > 1e-13 * a):
        x = 0.5 * (x + a / x)
    return x


def jitflow_kernels():
    jitflow.config.background_compile = False  # time native code only
    return {"rnn_grad": jitflow.function(jitflow.value_and_grad(rnn_loss)),
            "newton_sqrt": jitflow.function(newton),
            "newton_sqrt_grad": jitflow.function(jitflow.grad(lambda a: newton(a).sum()))}


def jax_kernels():
    import jax
    import jax.numpy as xnp
    jax.config.update("jax_enable_x64", True)

    def loss(params, xs):
        def cell(h, x):
            h = xnp.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
            return h, h @ params["wy"]
        _, ys = jax.lax.scan(cell, xnp.zeros((BATCH, HIDDEN), xnp.float32), xs)
        return xnp.mean(ys ** 2)

    def root(a):
        return jax.lax.while_loop(lambda x: xnp.any(xnp.abs(x * x - a) > 1e-13 * a),
                                  lambda x: 0.5 * (x + a / x), xnp.maximum(a, 1.0))
    value_and_grad = jax.jit(jax.value_and_grad(loss))
    root = jax.jit(root)

    def block(fn):
        return lambda *args: jax.block_until_ready(fn(*args))
    return {"rnn_grad": block(value_and_grad), "newton_sqrt": block(root)}


def torch_kernels():
    import torch
    torch.set_num_threads(2)

    def rnn_grad(params, xs):
        params = {k: v.detach().requires_grad_() for k, v in params.items()}
        h, ys = torch.zeros(BATCH, HIDDEN), []
        for x in xs:
            h = torch.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
            ys.append(h @ params["wy"])
        loss = torch.mean(torch.stack(ys) ** 2)
        loss.backward()
        return loss.detach(), {k: v.grad for k, v in params.items()}

    def newton_grad(a):
        a = a.detach().requires_grad_()
        x = torch.clamp(a, min=1.0)
        while bool(torch.any(torch.abs(x * x - a) > 1e-13 * a)):
            x = 0.5 * (x + a / x)
        x.sum().backward()
        return a.grad

    def root(a):
        with torch.no_grad():
            x = torch.clamp(a, min=1.0)
            while bool(torch.any(torch.abs(x * x - a) > 1e-13 * a)):
                x = 0.5 * (x + a / x)
            return x
    return {"rnn_grad": rnn_grad, "newton_sqrt": root, "newton_sqrt_grad": newton_grad}


def inputs_for(library, args):
    if library == "torch":
        import torch
        return [({k: torch.from_numpy(v) for k, v in a.items()} if isinstance(a, dict)
                 else torch.from_numpy(a)) for a in args]
    return args


def as_numpy(result):
    if isinstance(result, (tuple, list)):
        return [as_numpy(r) for r in result]
    if isinstance(result, dict):
        return {k: as_numpy(v) for k, v in result.items()}
    return np.asarray(result.detach() if hasattr(result, "detach") else result)


def close(a, b, rtol):
    if isinstance(a, (list, tuple)):
        return all(close(x, y, rtol) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return all(close(a[k], b[k], rtol) for k in a)
    return np.allclose(a, b, rtol=rtol, atol=rtol * np.abs(b).max())


def main():
    params, xs = rnn_data()
    a = np.random.default_rng(1).uniform(1e-3, 1e6, COUNT)
    cases = {"rnn_grad": ([params, xs], 1e-4), "newton_sqrt": ([a], 1e-13),
             "newton_sqrt_grad": ([a], 1e-9)}
    libraries = {"jitflow": jitflow_kernels()}
    for name, make in [("jax", jax_kernels), ("torch", torch_kernels)]:
        if importlib.util.find_spec(name) is not None:
            libraries[name] = make()
    libraries["numpy"] = {"newton_sqrt": newton_numpy}
    print(f"{'workload':18s}" + "".join(f"{name:>22s}" for name in libraries))
    for case, (args, rtol) in cases.items():
        expected = as_numpy(libraries["jitflow"][case](*args))
        if case == "newton_sqrt":
            assert close(expected, np.sqrt(a), 1e-13)
        if case == "newton_sqrt_grad":
            assert close(expected, 0.5 / np.sqrt(a), 1e-9)
        contenders = {}
        for library, kernels in libraries.items():
            if case in kernels:
                ready = Ready(kernels[case], inputs_for(library, args))
                result = as_numpy(ready.kernel(*ready.args))
                assert close(result, expected, rtol), f"{library} {case} differs"
                contenders[library] = ready
        times = time_interleaved(contenders)
        print(f"{case:18s}" + "".join(
            f"{_cell(times, library):>22s}" for library in libraries))


def _cell(times, library):
    if library not in times:
        return "-"
    if library == "jitflow":
        return f"{times[library] * 1e3:.3f} ms"
    return f"{times[library] * 1e3:.3f} ms {times[library] / times['jitflow']:.2f}x"


if __name__ == "__main__":
    main()
