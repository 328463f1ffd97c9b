"""What jitflow.profile() costs: a small function's call and the digits convnet's
training step (examples/digits_convnet.py, batch 64), each outside a profile and inside
one (where every kernel is timed by native code and every call recorded).

Outside a profile, a call tests one empty list more than it would without a profiler;
the first rows show what a call costs then. Batches of calls take turns (off, on, off,
...); it prints the median time per call over the batches and the spread (the 10th to
90th percentile).

    python benchmarks/bench_profiler.py
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "examples"))

import jitflow  # noqa: E402
from digits_convnet import build_model, make_train_step  # noqa: E402
from jitflow.datasets import load_digits  # noqa: E402
from jitflow.optim import Adam  # noqa: E402

ROUNDS = 15


def contenders():
    small = jitflow.function(lambda a: a * 2.0 + 1.0)
    a = np.ones(8, np.float32)
    (images, labels), _ = load_digits()
    step = jitflow.function(make_train_step(build_model(0), Adam(1e-3)))
    x, y = images[:64], labels[:64]
    return {"small function": (lambda: small(a), 2000),
            "digits training step": (lambda: step(x, y), 20)}


def per_call(call, count, profiled):
    if not profiled:
        started = time.perf_counter()
        for _ in range(count):
            call()
        return (time.perf_counter() - started) / count
    with jitflow.profile():
        started = time.perf_counter()
        for _ in range(count):
            call()
        return (time.perf_counter() - started) / count


def main():
    for name, (call, count) in contenders().items():
        for profiled in (False, True):  # compile, and build the profiled variant
            per_call(call, 3, profiled)
        times = {False: [], True: []}
        for _ in range(ROUNDS):
            for profiled in (False, True):
                times[profiled].append(per_call(call, count, profiled))
        for profiled, label in ((False, "outside a profile"), (True, "inside a profile")):
            low, mid, high = np.percentile(times[profiled], [10, 50, 90]) * 1e6
            print(f"{name:<22} {label:<18} {mid:10.1f} us/call  ({low:.1f} - {high:.1f})")


if __name__ == "__main__":
    main()
