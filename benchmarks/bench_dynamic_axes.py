"""dynamic_axes on the MLP training step (bench_autodiff.py's: 784-512-512-10, SGD,
float32): what a new batch size costs, and what a call costs, against code compiled
for that size.

Each fresh process (the disk cache off) compiles the step with dynamic_axes at batch
sizes 256 and 100 (a full batch, then a last partial one: the code for all sizes is
made at the second), then times:

- "new size": the first call at batch 200 (a trace, the check of its graph, the call),
  against the first call of the step compiled without dynamic_axes at 200 (a trace and
  a compile);
- "per call": calls at batch 200 of the two alternating, the ratio of each pair.

Prints the CPU, then the medians over processes with their range.

    python benchmarks/bench_dynamic_axes.py [processes]
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

from peers import cpu_name

PAIRS = 300


def measure():
    import jitflow
    # Each first call waits for its native code, so that "compile" times the compile
    # (with background compile, a first call runs on the interpreter instead).
    jitflow.config.background_compile = False

    def loss(params, x, y):
        w1, b1, w2, b2, w3, b3 = params
        h = np.maximum(x @ w1 + b1, 0)
        h = np.maximum(h @ w2 + b2, 0)
        logits = h @ w3 + b3
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        return -(log_p * y).sum(axis=1).mean()

    def step(params, x, y):
        value, grads = jitflow.value_and_grad(loss)(params, x, y)
        return value, [p - 0.1 * g for p, g in zip(params, grads)]
    dynamic = jitflow.function(step, dynamic_axes={"x": 0, "y": 0})
    static = jitflow.function(step)
    rng = np.random.default_rng(0)
    params = [rng.standard_normal(shape).astype(np.float32) * 0.05 for shape in
              [(784, 512), (512,), (512, 512), (512,), (512, 10), (10,)]]

    def batch(n):
        return (rng.standard_normal((n, 784)).astype(np.float32),
                np.eye(10, dtype=np.float32)[rng.integers(0, 10, n)])
    for n in (256, 100):
        dynamic(params, *batch(n))
    x, y = batch(200)
    started = time.perf_counter()
    dynamic(params, x, y)
    between = time.perf_counter()
    static(params, x, y)
    ended = time.perf_counter()
    assert dynamic.cache_info().dynamic[-1] == "n=200: runs the code for all sizes", \
        dynamic.cache_info().dynamic
    ratios = []
    for _ in range(PAIRS):
        a = time.perf_counter()
        dynamic(params, x, y)
        b = time.perf_counter()
        static(params, x, y)
        ratios.append((b - a) / (time.perf_counter() - b))
    return {"new size": (between - started) * 1e3, "compile": (ended - between) * 1e3,
            "per call": float(np.median(ratios))}


def main():
    if sys.argv[1:] == ["--child"]:
        print(json.dumps(measure()))
        return
    processes = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    environment = dict(os.environ, JITFLOW_GRAPH_CACHE="0")
    runs = [json.loads(subprocess.run([sys.executable, __file__, "--child"], check=True,
                                      capture_output=True, text=True,
                                      env=environment).stdout) for _ in range(processes)]
    print(f"CPU: {cpu_name()}; {processes} fresh processes, medians [range]")
    for key, unit, what in (("new size", "ms", "first call at a new batch size, dynamic"),
                            ("compile", "ms", "first call compiled for that size"),
                            ("per call", "", "a call's time, dynamic / compiled for it")):
        values = [run[key] for run in runs]
        print(f"{what:45s} {np.median(values):8.3f}{unit} "
              f"[{min(values):.3f}-{max(values):.3f}]")


if __name__ == "__main__":
    main()
