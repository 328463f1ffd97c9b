"""What jitflow.config.debug_nans costs on the digits convnet's training step
(examples/digits_convnet.py, batch 64): off, and on (native code built with a check of
every elementwise result, and the results checked).

Batches of 20 steps take turns (off, on, off, ...) in one process; it prints the median
time per step over the batches, the spread (10th to 90th percentile) and the ratio.

    python benchmarks/bench_debug_nans.py
    JITFLOW_THREADS=1 python benchmarks/bench_debug_nans.py --cpu-time

With --cpu-time it times the CPU time of the one thread that runs the steps
(time.thread_time), which other work sharing the cores disturbs much less than the
clock; run it with JITFLOW_THREADS=1 so that all the work is on that thread.
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

ROUNDS, STEPS = 21, 20
CPU_TIME = "--cpu-time" in sys.argv
clock = time.thread_time if CPU_TIME else time.perf_counter


def per_step(step, x, y, checking):
    jitflow.config.debug_nans = checking
    try:
        started = clock()
        for _ in range(STEPS):
            step(x, y)
        return (clock() - started) / STEPS
    finally:
        jitflow.config.debug_nans = False


def main():
    threads = os.environ.get("JITFLOW_THREADS", "all cores")
    if CPU_TIME and threads != "1":
        sys.exit("--cpu-time needs JITFLOW_THREADS=1: other threads' work is not counted")
    print(f"{'CPU time of one thread' if CPU_TIME else 'wall clock'}, threads: {threads}")
    (images, labels), _ = load_digits()
    step = jitflow.function(make_train_step(build_model(0), Adam(1e-3)))
    x, y = images[:64], labels[:64]
    for checking in (False, True):  # compile both builds
        per_step(step, x, y, checking)
    step.wait()
    times = {False: [], True: []}
    for _ in range(ROUNDS):
        for checking in (False, True):
            times[checking].append(per_step(step, x, y, checking))
    medians = {}
    for checking, label in ((False, "debug_nans off"), (True, "debug_nans on")):
        ms = np.array(times[checking]) * 1e3
        medians[checking] = np.median(ms)
        print(f"{label:15s} {medians[checking]:7.3f} ms per step "
              f"({np.percentile(ms, 10):.3f}-{np.percentile(ms, 90):.3f})")
    print(f"cost of debug_nans: {medians[True] / medians[False]:.2f}x")


if __name__ == "__main__":
    main()
