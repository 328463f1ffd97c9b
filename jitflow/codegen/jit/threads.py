"""How many threads jitflow uses: for split loop nests (lowering/parallel.py) and for
compiling a graph's modules (engine.py)."""
import os

THREADS_VARIABLE = "JITFLOW_THREADS"


def thread_count():
    """The number of threads kernels are split between, read when a graph is lowered."""
    configured = os.environ.get(THREADS_VARIABLE, "").strip()
    if configured:
        count = int(configured)
        if count < 1:
            raise ValueError(f"{THREADS_VARIABLE} must be at least 1, not {configured}")
        return count
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # platforms without affinity masks
        return os.cpu_count() or 1
