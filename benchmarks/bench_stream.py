"""The STREAM triad a = b + s*c on 32M float32 (three 128 MiB arrays): how close each
implementation comes to the memory bus's speed.

    python benchmarks/bench_stream.py [passes] [calls]

Each implementation runs in a fresh process of its own (no allocator, page cache or
thread state carried over from another), `passes` times (default 5), each pass timing
`calls` calls (default 10) after two untimed ones. Printed: the median call time over
all passes with its range, the spread between the passes' medians, the bandwidth
(STREAM counts 3 arrays of traffic: two read, one written), and each jitflow variant's
ratio to the best peer (below 1: jitflow is faster). Every result is checked against
NumPy's before timing.

  jitflow out=     f(b, c, s, out=a): the result written straight into `a`
  jitflow fresh    a = f(b, c, s): a fresh output every call
  NumPy in place   np.multiply(c, s, out=a); np.add(a, b, out=a)
  NumPy fresh      a = b + s * c
  torch in place   torch.mul(c, s, out=a); a.add_(b)   (when torch is installed)
  numba in place   a parallel prange loop into a        (when numba is installed)
  JAX donated      jax.jit with a's buffer donated, arrays on the device (when jax is)
"""
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run from a checkout
sys.path.insert(0, str(HERE))
import peers  # noqa: E402

N = 32 * 1024 * 1024
SCALE = np.float32(3.0)


def arrays():
    rng = np.random.default_rng(0)
    b = rng.standard_normal(N, dtype=np.float32)
    c = rng.standard_normal(N, dtype=np.float32)
    return b, c, np.zeros(N, np.float32)


# --- the implementations: each returns a no-argument call writing or returning `a` ------

def jitflow_triad():
    import jitflow

    @jitflow.function
    def triad(b, c, s):
        return b + s * c
    return triad


def jitflow_out(b, c, a):
    triad = jitflow_triad()
    return lambda: triad(b, c, SCALE, out=a)


def jitflow_fresh(b, c, a):
    triad = jitflow_triad()
    return lambda: triad(b, c, SCALE)


def numpy_in_place(b, c, a):
    def call():
        np.multiply(c, SCALE, out=a)
        return np.add(a, b, out=a)
    return call


def numpy_fresh(b, c, a):
    return lambda: b + SCALE * c


def torch_in_place(b, c, a):
    import torch
    torch.set_num_threads(2)
    tb, tc, ta = (torch.from_numpy(x) for x in (b, c, a))

    def call():
        torch.mul(tc, float(SCALE), out=ta)
        return ta.add_(tb).numpy()
    return call


def numba_in_place(b, c, a):
    import numba

    @numba.njit(parallel=True, fastmath=False)
    def triad(a, b, c, s):
        for i in numba.prange(a.size):
            a[i] = b[i] + s * c[i]
    return lambda: (triad(a, b, c, SCALE), a)[1]


def jax_donated(b, c, a):
    import jax

    # JAX's best practice: arrays placed on the device once, the output's buffer donated.
    triad = jax.jit(lambda a, b, c: b + SCALE * c, donate_argnums=0)
    b, c, state = jax.device_put(b), jax.device_put(c), [jax.device_put(a)]

    def call():
        state[0] = triad(state[0], b, c).block_until_ready()
        return state[0]
    return call


IMPLEMENTATIONS = {  # name -> (make, package it needs, jitflow's own)
    "jitflow out=": (jitflow_out, None, True),
    "jitflow fresh": (jitflow_fresh, None, True),
    "NumPy in place": (numpy_in_place, None, False),
    "NumPy fresh": (numpy_fresh, None, False),
    "torch in place": (torch_in_place, "torch", False),
    "numba in place": (numba_in_place, "numba", False),
    "JAX donated": (jax_donated, "jax", False),
}


def run_one(name, passes, calls):
    """In this process: `passes` medians of `calls` timed calls of implementation
    `name`, as JSON on stdout."""
    b, c, a = arrays()
    call = IMPLEMENTATIONS[name][0](b, c, a)
    expected = b + SCALE * c
    # (to rounding: a fused multiply-add rounds once where NumPy rounds twice)
    np.testing.assert_allclose(np.asarray(call()), expected, rtol=1e-6, atol=1e-5)
    call()
    medians, every = [], []
    for _ in range(passes):
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            call()
            times.append(time.perf_counter() - started)
        medians.append(statistics.median(times))
        every += times
    print(json.dumps({"medians": medians, "median": statistics.median(every),
                      "low": min(every), "high": max(every)}))


def measure(name, passes, calls):
    process = subprocess.run([sys.executable, __file__, "--run", name, str(passes),
                              str(calls)], capture_output=True, text=True, check=True)
    return json.loads(process.stdout.splitlines()[-1])


def main(passes=5, calls=10):
    present = {p.package for p in peers.installed()[0]}
    names = [n for n, (_, package, _) in IMPLEMENTATIONS.items()
             if package is None or package in present]
    print(f"STREAM triad a = b + s*c, {N // 2**20}M float32; {_cpu()}; "
          f"NumPy {np.__version__}" + (f", {peers.versions(peers.installed()[0])}"
                                       if present else ""))
    print(f"{passes} passes of {calls} calls, one fresh process per implementation\n")
    results = {name: measure(name, passes, calls) for name in names}
    print(f"{'implementation':16} {'median ms':>10} {'range ms':>16} "
          f"{'pass spread ms':>16} {'GB/s':>6}")
    for name, r in results.items():
        median = r["median"]
        print(f"{name:16} {median * 1e3:10.2f} {r['low'] * 1e3:7.2f}-{r['high'] * 1e3:<8.2f}"
              f" {min(r['medians']) * 1e3:7.2f}-{max(r['medians']) * 1e3:<8.2f}"
              f" {3 * 4 * N / median / 1e9:6.1f}")
    best = min((n for n in names if not IMPLEMENTATIONS[n][2]),
               key=lambda n: results[n]["median"])
    for name in (n for n in names if IMPLEMENTATIONS[n][2]):
        ratio = results[name]["median"] / results[best]["median"]
        print(f"{name} / {best} (best peer): {ratio:.2f}")


def _cpu():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run"]:
        run_one(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        main(*(int(a) for a in sys.argv[1:3]))
