"""jitflow.config.matmul_precision = "bfloat16" against "float32", and against PyTorch's
own bfloat16 products (torch.autocast on the CPU, which runs oneDNN's AMX kernels where
the CPU has them), when torch is installed.

Two workloads: a 1024^3 float32 product, and bench_autodiff.py's MLP training step
(784-512-512-10, SGD, batch 256). Each implementation runs in a fresh process of its
own, one after another, for several processes; each process times ROUNDS batches of
calls (after a lead-in) and reports its median per call. Prints, per workload, each
implementation's median over processes with the range, and its time over jitflow
float32's.

    python benchmarks/bench_matmul_precision.py [processes]
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

ROUNDS, BATCH_SECONDS, LEAD_IN = 15, 0.05, 0.2
IMPLEMENTATIONS = ["jitflow float32", "jitflow bfloat16", "torch float32",
                   "torch autocast bfloat16"]
WORKLOADS = ["1024^3 product", "MLP SGD step"]


def median_per_call(call):
    end = time.perf_counter() + LEAD_IN
    while time.perf_counter() < end:
        call()
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            call()
        if time.perf_counter() - start >= BATCH_SECONDS:
            break
        calls *= 2
    per_call = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        per_call.append((time.perf_counter() - start) / calls)
    return float(np.median(per_call))


def jitflow_calls(precision):
    import jitflow
    from bench_autodiff import mlp_inputs, sgd_step
    jitflow.config.matmul_precision = precision
    jitflow.config.background_compile = False
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((1024, 1024)).astype(np.float32) for _ in range(2))
    product = jitflow.function(lambda a, b: a @ b)
    params, x, labels = mlp_inputs(rng)
    step = jitflow.function(sgd_step)
    return {"1024^3 product": lambda: product(a, b),
            "MLP SGD step": lambda: step(params, x, labels)}


def torch_calls(autocast):
    import contextlib

    import torch
    from bench_autodiff import mlp_inputs
    torch.set_num_threads(len(os.sched_getaffinity(0)))
    rng = np.random.default_rng(0)
    a, b = (torch.from_numpy(rng.standard_normal((1024, 1024)).astype(np.float32))
            for _ in range(2))
    params, x, labels = mlp_inputs(rng)
    params = {k: torch.from_numpy(v).requires_grad_() for k, v in params.items()}
    x, labels = torch.from_numpy(x), torch.from_numpy(labels)

    def context():
        return torch.autocast("cpu", dtype=torch.bfloat16) if autocast else \
            contextlib.nullcontext()

    def product():
        with context(), torch.no_grad():
            return a @ b

    def step():
        with context():
            h1 = torch.relu(x @ params["w1"] + params["b1"])
            h2 = torch.relu(h1 @ params["w2"] + params["b2"])
            logits = (h2 @ params["w3"] + params["b3"]).float()
        loss = -(torch.log_softmax(logits, dim=1) * labels).sum(1).mean()
        grads = torch.autograd.grad(loss, list(params.values()))
        with torch.no_grad():
            for value, grad in zip(params.values(), grads):
                value -= 0.01 * grad
        return loss
    return {"1024^3 product": product, "MLP SGD step": step}


def one_process(name):
    calls = {"jitflow float32": lambda: jitflow_calls("float32"),
             "jitflow bfloat16": lambda: jitflow_calls("bfloat16"),
             "torch float32": lambda: torch_calls(False),
             "torch autocast bfloat16": lambda: torch_calls(True)}[name]()
    print(json.dumps({workload: median_per_call(call) for workload, call in calls.items()}))


def main(processes):
    from peers import cpu_name
    here = os.path.dirname(os.path.abspath(__file__))
    names = [n for n in IMPLEMENTATIONS if "torch" not in n or _has_torch()]
    times = {name: {w: [] for w in WORKLOADS} for name in names}
    for _ in range(processes):
        for name in names:
            out = subprocess.run([sys.executable, __file__, "--one", name], cwd=here,
                                 capture_output=True, text=True, check=True).stdout
            for workload, seconds in json.loads(out.splitlines()[-1]).items():
                times[name][workload].append(seconds)
    print(f"CPU: {cpu_name()}; {processes} fresh processes each; ms per call, median "
          f"over processes (range); ratio: time / jitflow float32's")
    for workload in WORKLOADS:
        print(workload)
        base = np.median(times["jitflow float32"][workload])
        for name in names:
            ms = np.array(times[name][workload]) * 1e3
            print(f"  {name:24s} {np.median(ms):8.3f} ({ms.min():.3f}-{ms.max():.3f})"
                  f"  ratio {np.median(ms) / 1e3 / base:5.2f}")


def _has_torch():
    import importlib.util
    return importlib.util.find_spec("torch") is not None


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        one_process(sys.argv[2])
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
