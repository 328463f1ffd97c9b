"""One rank dies (or raises) while the other waits for it in a compiled all_reduce:
the job must end, with an error, instead of hanging.

    python dies.py exit|kill|raise
"""
import os
import signal
import sys
import time

import numpy as np

import jitflow
import jitflow.distributed as dist

jitflow.config.background_compile = False
how = sys.argv[1]
step = jitflow.function(lambda x: dist.all_reduce(x * 2.0))
x = np.ones(4, np.float32)
print(f"rank {dist.rank()} first step {step(x)}", flush=True)
if dist.rank() == 1:
    time.sleep(0.2)  # the other rank is waiting in its second step by now
    if how == "exit":
        os._exit(3)
    if how == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    raise RuntimeError("this rank fails mid-training")
step(x)
print(f"rank {dist.rank()} should not get here", flush=True)
