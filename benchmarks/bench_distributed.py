"""Data-parallel training over MPI on this machine: the digits convnet's training step
(examples/distributed_training.py's, with DistributedOptimizer) in jobs of 1 and 2
processes, and the all_reduce of float32 buffers from 4 KiB to 64 MiB, compiled
(jitflow.function of dist.all_reduce: native code calling MPI_Iallreduce and polling it
with MPI_Test until it is done or the timeout passes) against mpi4py's own blocking
comm.Allreduce on the same buffers; and eagerly, with the timeout (mpi4py's Iallreduce
polled from Python) and without (its Iallreduce's Wait): the price of the timeout.

Run plainly, it starts the jobs itself with mpiexec and prints the tables:

    python benchmarks/bench_distributed.py

Each process runs jitflow on one thread (JITFLOW_THREADS=1), so that two processes on
two cores do not share them with each other's worker threads. A step's time is the
median over its calls, each started together by a barrier (the all_reduces taken in
turn, call by call, so that the machine's changing load weighs on each alike); the
training step's batch is 64 examples per process (weak scaling: a 2-process step trains
on 128). For the all_reduce, "bus bandwidth" is 2 (N - 1) / N x bytes / time, the bytes
a ring all-reduce moves through each process's link, which docs/DISTRIBUTED.md's cost
model uses; for N = 1 nothing moves and only the time is shown.
"""
import functools
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BATCH = 64
STEPS = 60
SIZES = [2 ** k for k in range(12, 27, 2)]  # bytes: 4 KiB .. 64 MiB
PROCESSES = (1, 2)
TIMEOUT = 600  # jitflow's default: collectives wait for each other no longer
SMALL_BUFFER = 16 * 2 ** 10  # bytes: the convnet's 55 kB of gradients in 5 buffers


# --- inside a job -------------------------------------------------------------------------

def median_time(call, dist, calls):
    return interleaved_medians({"call": call}, dist, calls)["call"]


def interleaved_medians(runs, dist, rounds):
    """The median time of each of `runs` (name -> a function, or (timeout, function):
    run under that timeout), called in turn round after round, each call started
    together by a barrier, so that a change in the machine's load weighs on all alike.
    Every process's medians: the slowest is the job's pace."""
    times = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            timeout, call = run if isinstance(run, tuple) else (dist.timeout(), run)
            dist.init(timeout=timeout)
            dist.barrier()
            started = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - started)
    dist.init(timeout=TIMEOUT)
    return {name: float(dist.all_reduce(np.float64(statistics.median(t)), "max"))
            for name, t in times.items()}


def convnet_steps(dist, jitflow, optimizers):
    """The digits convnet's compiled training step on this rank's share of a batch, one
    model per optimizer in `optimizers` (name -> optimizer); and the gradients' bytes."""
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from digits_convnet import build_model, make_train_step
    from jitflow.datasets import load_digits
    (images, labels), _ = load_digits()
    mine = slice(dist.rank() * BATCH, (dist.rank() + 1) * BATCH)
    steps = {}
    for name, optimizer in optimizers.items():
        model = build_model(0)
        model(images[:1])
        step = jitflow.function(make_train_step(model, optimizer))
        step(images[mine], labels[mine])
        step.wait()
        steps[name] = functools.partial(step, images[mine], labels[mine])
    gradient_bytes = sum(v.numpy().nbytes for v in model.trainable_variables)
    return steps, gradient_bytes


def training_step_time(dist, jitflow):
    from jitflow.optim import Adam
    steps, gradient_bytes = convnet_steps(
        dist, jitflow, {"step": dist.DistributedOptimizer(Adam(3e-3))})
    return median_time(steps["step"], dist, STEPS), gradient_bytes


def overlap_times(dist, jitflow):
    """The training step with its gradients in one buffer, and in buffers of
    SMALL_BUFFER bytes averaged after the backward pass or overlapped with it, taken in
    turn step by step."""
    from jitflow.optim import Adam
    steps, _ = convnet_steps(dist, jitflow, {
        "one buffer": dist.DistributedOptimizer(Adam(3e-3)),
        "small buffers": dist.DistributedOptimizer(Adam(3e-3), SMALL_BUFFER, overlap=False),
        "small buffers, overlapped": dist.DistributedOptimizer(Adam(3e-3), SMALL_BUFFER)})
    return interleaved_medians(steps, dist, 3 * STEPS)


def all_reduce_times(dist, jitflow, MPI):
    """Per size: compiled (native code: MPI_Iallreduce, polled to the timeout), mpi4py's
    blocking Allreduce, and jitflow eagerly with the timeout (mpi4py's Iallreduce,
    polled from Python) and without (its Wait)."""
    compiled = jitflow.function(lambda x: dist.all_reduce(x))
    comm = dist.communicator()
    rows = []
    for nbytes in SIZES:
        x = np.ones(nbytes // 4, np.float32)
        out = np.empty_like(x)
        compiled(x)
        compiled.wait()
        rounds = max(5, min(200, int(2e8 // nbytes)))
        rows.append({"bytes": nbytes, **interleaved_medians({
            "jitflow": lambda: compiled(x),
            "mpi4py": lambda: comm.Allreduce(x, out, op=MPI.SUM),
            "eager": lambda: dist.all_reduce(x),
            "eager, no timeout": (None, lambda: dist.all_reduce(x))}, dist, rounds)})
    return rows


def worker():
    import jitflow
    import jitflow.distributed as dist
    from jitflow.distributed.mpi import MPI
    step, gradient_bytes = training_step_time(dist, jitflow)
    overlap = overlap_times(dist, jitflow) if dist.size() > 1 else None
    rows = all_reduce_times(dist, jitflow, MPI)
    if dist.rank() == 0:
        print(json.dumps({"processes": dist.size(), "step": step, "overlap": overlap,
                          "gradient_bytes": gradient_bytes, "all_reduce": rows}))


# --- the launcher -------------------------------------------------------------------------

def run_job(processes):
    environment = dict(os.environ, JITFLOW_THREADS="1",
                       PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    job = subprocess.run(["mpiexec", "-n", str(processes), sys.executable, __file__,
                          "--worker"], capture_output=True, text=True, env=environment,
                         timeout=900, check=False)
    if job.returncode:
        raise RuntimeError(f"the {processes}-process job failed:\n{job.stderr}")
    return json.loads(job.stdout.strip().splitlines()[-1])


def bus_bandwidth(nbytes, seconds, processes):
    return 2 * (processes - 1) / processes * nbytes / seconds


def main():
    results = {n: run_job(n) for n in PROCESSES}
    print(f"digits convnet training step, batch {BATCH} per process, "
          f"{results[1]['gradient_bytes'] / 1e3:.1f} kB of gradients:")
    for n, result in results.items():
        print(f"  {n} process{'es' if n > 1 else '  '}: {1 / result['step']:7.1f} steps/s, "
              f"{n * BATCH / result['step']:8.0f} examples/s")
    scaling = results[1]["step"] / results[2]["step"]
    print(f"  weak-scaling efficiency at 2 processes: {scaling:.0%} (time of a 1-process "
          f"step / time of a 2-process step)")
    print(f"\n2 processes, the gradients averaged in one buffer or in buffers of "
          f"{SMALL_BUFFER // 1024} KiB, after the backward pass or overlapped with it:")
    for name, seconds in results[2]["overlap"].items():
        print(f"  {name:<26}: {1 / seconds:7.1f} steps/s ({seconds * 1e3:.2f} ms a step)")
    print("\nall_reduce of float32 buffers: median time per call (bus bandwidth, GB/s);"
          " eagerly, with jitflow's timeout\n(nonblocking MPI, polled) and without "
          "(MPI_Wait)")
    print(f"  {'bytes':>10} | {'1 proc jitflow':>14} | {'2 procs jitflow':>24} | "
          f"{'2 procs mpi4py':>24} | {'2 eager timeout':>15} | {'2 eager none':>15}")
    for one, two in zip(results[1]["all_reduce"], results[2]["all_reduce"]):
        nbytes = two["bytes"]
        cells = [f"{_us(one['jitflow']):>14}"] + [
            f"{_us(two[who])} ({bus_bandwidth(nbytes, two[who], 2) / 1e9:5.2f} GB/s)".rjust(24)
            for who in ("jitflow", "mpi4py")] + [
            f"{_us(two[who]):>15}" for who in ("eager", "eager, no timeout")]
        print(f"  {nbytes:>10} | " + " | ".join(cells))


def _us(seconds):
    return f"{seconds * 1e6:9.1f} us"


if __name__ == "__main__":
    worker() if "--worker" in sys.argv else main()
