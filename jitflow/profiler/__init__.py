"""A profiler of compiled code: per call and per kernel times, bytes and rates.

    with jitflow.profile() as prof:
        for _ in range(10):
            train_step(x, y)
    prof.summary()                          # functions, then the top kernels
    prof.export_chrome_trace("step.json")   # open in ui.perfetto.dev

Inside the block, each compiled signature runs a variant of its native code that reads
the clock around each kernel (fused region, matrix product, control-flow node, other
structural operation): codegen/lowering/node_clock.py. Traces, optimizations and
native builds that happen inside are recorded too; so are the user's lines of the
functions traced inside. A call inside takes the checked path (binding and looking up
its signature: tens of microseconds), which its recorded time leaves out. Outside, a
call tests one empty list more and nothing is timed (benchmarks/bench_profiler.py).
"""
from .kernels import Kernel, describe
from .profile import Profile


def profile():
    """A Profile recording while its `with` block runs."""
    return Profile()


__all__ = ["profile", "Profile", "Kernel", "describe"]
