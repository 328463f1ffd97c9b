"""Rank 1 stalls (sleeps far past the timeout) before a collective that rank 0 waits
in; rank 0 must raise CollectiveTimeout within the timeout, and the job must end.

    python stalls.py eager|compiled|overlapped|caught REPORT_FILE

The timeout is JITFLOW_DISTRIBUTED_TIMEOUT's while the first step compiles (on a busy
machine one rank may compile seconds later than the other), then init(timeout=0.5).
eager, compiled and overlapped (the all_reduce a start and a wait): rank 0's error
escapes, and init's excepthook aborts the job.
caught: rank 0 catches it; its next collective is refused, and the job is aborted as
rank 0 exits (MPI_Finalize would wait for rank 1).
"""
import sys
import time

import numpy as np

import jitflow
import jitflow.distributed as dist

jitflow.config.background_compile = False
how = sys.argv[1]
print(f"rank {dist.rank()} timeout {dist.timeout()}", flush=True)
step = jitflow.function(lambda x: dist.all_reduce(x * 2.0))
overlapped = jitflow.function(lambda x: dist.collectives.all_reduce_overlapped(x) + 1.0)
x = np.ones(4, np.float32)
print(f"rank {dist.rank()} first step {step(x)} {overlapped(x)}", flush=True)
dist.init(timeout=0.5)
if dist.rank() == 1:
    time.sleep(120)  # stalled: the job ends long before this
def report(text):
    """To the test through a file: what a process writes as MPI_Abort ends the job
    may never reach mpiexec's output (seen with the machine busy)."""
    with open(sys.argv[2], "a") as file:
        file.write(text + "\n")


if how == "caught":
    try:
        dist.all_gather(x)
    except dist.CollectiveTimeout as error:
        report(f"caught: {error}")
    try:
        step(x)
    except dist.CollectiveTimeout as error:
        report(f"then: {error}")
    sys.exit(0)  # where jitflow aborts the job: rank 1 would never finish
try:
    if how == "eager":
        dist.all_reduce(x.reshape(2, 2), "max")
    elif how == "compiled":
        step(x)
    else:
        overlapped(x)
except dist.CollectiveTimeout as error:
    report(f"{type(error).__name__}: {error}")
    raise  # to init's excepthook, which aborts the job
print(f"rank {dist.rank()} should not get here", flush=True)
