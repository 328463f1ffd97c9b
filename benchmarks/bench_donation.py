"""An SGD-style parameter update w <- w - lr * g on large float32 parameters, three ways:

    python benchmarks/bench_donation.py [megabytes] [calls]

  fresh       w = step(w, g): a fresh output array every call
  donated     w = donating_step(w, g), donate_argnames=("w",): written into w's array
  Variable    v.assign_sub(lr * g) inside the compiled step

Each is timed in a fresh process of its own (the allocator's state is part of what is
measured), `calls` calls after two untimed ones; printed: the median, the range, and
the time the process spent in the kernel per call (page faults of fresh memory).
"""
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout
import jitflow  # noqa: E402

LR = np.float32(0.01)


def sgd(w, g):
    return w - LR * g


def fresh(w, g):
    step = jitflow.function(sgd)

    def call(w=w):
        w = step(w, g)
        return w
    return call


def donated(w, g):
    step = jitflow.function(sgd, donate_argnames=("w",))
    return lambda: step(w, g)


def variable(w, g):
    v = jitflow.Variable(w)

    @jitflow.function
    def step(g):
        v.assign_sub(LR * g)
    return lambda: step(g)


WAYS = {"fresh": fresh, "donated": donated, "Variable": variable}


def run_one(way, megabytes, calls):
    n = megabytes * 2**20 // 4
    rng = np.random.default_rng(0)
    w, g = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    call = WAYS[way](w, g)
    call()
    call()
    times, system = [], resource.getrusage(resource.RUSAGE_SELF).ru_stime
    for _ in range(calls):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    system = (resource.getrusage(resource.RUSAGE_SELF).ru_stime - system) / calls
    print(json.dumps({"median": statistics.median(times), "low": min(times),
                      "high": max(times), "system": system}))


def main(megabytes=64, calls=20):
    print(f"w <- w - lr*g on {megabytes} MiB of float32 parameters, {calls} calls each, "
          f"one fresh process per way\n")
    print(f"{'way':10} {'median ms':>10} {'range ms':>16} {'system ms/call':>15}")
    for way in WAYS:
        out = subprocess.run([sys.executable, __file__, "--run", way, str(megabytes),
                              str(calls)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.splitlines()[-1])
        print(f"{way:10} {r['median'] * 1e3:10.2f} {r['low'] * 1e3:7.2f}-"
              f"{r['high'] * 1e3:<8.2f} {r['system'] * 1e3:15.2f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run"]:
        run_one(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        main(*(int(a) for a in sys.argv[1:3]))
