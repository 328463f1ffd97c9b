"""What saving and loading a model costs: an MLP (784-256-256-10, float32, its weights
Variables) saved with jitflow.save and loaded with jitflow.load in a fresh Python
process, which does not have the source.

It prints the file's size, the time to save, the time to load (read and verify the
graph), the first call (the trace replayed and compiled to native code, or taken from
jitflow's disk cache of native code), and the median time of a call of the loaded function
against the original's (the same native code: they should agree).

    python benchmarks/bench_saving.py
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

SIZES, BATCH, CALLS = (784, 256, 256, 10), 64, 2000


def model():
    import jitflow
    rng = np.random.default_rng(0)
    weights = [jitflow.Variable(rng.standard_normal((a, b)).astype(np.float32) * 0.05,
                                name=f"w{i}")
               for i, (a, b) in enumerate(zip(SIZES, SIZES[1:]))]

    @jitflow.function
    def predict(x):
        for w in weights[:-1]:
            x = np.maximum(x @ w, 0)
        logits = x @ weights[-1]
        return np.exp(logits - logits.max(axis=1, keepdims=True)).argmax(axis=1)
    return predict


def median_call(fn, x):
    fn(x)
    times = []
    for _ in range(CALLS):
        start = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


LOADER = """
import json, sys, time
import numpy as np
start = time.perf_counter()
import jitflow
imported = time.perf_counter()
loaded = jitflow.load(sys.argv[1])
read = time.perf_counter()
x = np.load(sys.argv[2])
result = loaded(x)
called = time.perf_counter()
sys.path.insert(0, sys.argv[3])
from bench_saving import median_call
print(json.dumps({"import": imported - start, "load": read - imported,
                  "first_call": called - read, "call": median_call(loaded, x),
                  "result": result.tolist()}))
"""


def main():
    import jitflow
    jitflow.config.background_compile = False
    predict = model()
    x = np.random.default_rng(1).standard_normal((BATCH, SIZES[0])).astype(np.float32)
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "mlp.jitflow")
        start = time.perf_counter()
        jitflow.save(predict, path, x)
        saved = time.perf_counter() - start
        np.save(os.path.join(directory, "x.npy"), x)
        run = subprocess.run([sys.executable, "-c", LOADER, path,
                              os.path.join(directory, "x.npy"), os.path.dirname(__file__)],
                             capture_output=True, text=True, check=True,
                             env=dict(os.environ, JITFLOW_CACHE_DIR=directory))
        loaded = json.loads(run.stdout)
        size = os.path.getsize(path)
    assert loaded["result"] == predict(x).tolist()
    print(f"MLP {'-'.join(map(str, SIZES))}, float32, batch {BATCH}")
    print(f"  file            {size / 1e6:8.2f} MB")
    print(f"  save            {saved * 1e3:8.1f} ms")
    print(f"  import jitflow  {loaded['import'] * 1e3:8.1f} ms  (fresh process)")
    print(f"  load            {loaded['load'] * 1e3:8.1f} ms")
    print(f"  first call      {loaded['first_call'] * 1e3:8.1f} ms  (trace and compile)")
    print(f"  call, loaded    {loaded['call'] * 1e6:8.1f} us  (median of {CALLS})")
    print(f"  call, original  {median_call(predict, x) * 1e6:8.1f} us")


if __name__ == "__main__":
    main()
