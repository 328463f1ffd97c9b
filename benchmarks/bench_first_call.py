"""The first call of the MLP training step (bench_autodiff.py's: 784-512-512-10, SGD,
batch 256, float32) in a fresh process, until its native code is ready: with the disk
cache empty (a new directory for each process: what a user's first run on a machine
pays) and warm (a directory a run before filled).

Every measurement is one fresh process. Two kinds of process:

- "first": jitflow as a user gets it (config.background_compile on): `import jitflow`,
  then the first call, which returns the interpreter's result while the native code is
  built on a thread, or with a warm cache, waits for the native code linked from it
  ("native built": when that build ended, counted from the first call's start, as
  "wait() returned" is: the first call may end later), and the native code's first call.
- "stages": the same work one part at a time, the first call waiting for the native
  code: the import, the libraries every process builds once (the sgemm kernels, the
  thread pool, the Python entry's shared code: from the disk cache when it holds them,
  waited for when the import started building them), the trace, the optimizer, the
  native build (Python lowering, and LLVM's optimization and code generation on however
  many threads; with a warm cache, the graph's object code found by the graph and
  linked) and the call. Times are wall clock; "cpu" is the process's CPU time over the
  same span (all threads), and "llvm" the CPU time of LLVM's compiles.

The machine may be shared: medians over processes, with the range.

Prints the CPU, and for each part the median over processes with the range.

    python benchmarks/bench_first_call.py [processes]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from peers import cpu_name

HERE = os.path.dirname(os.path.abspath(__file__))


# --- inside one fresh process -------------------------------------------------------------

class Clock:
    """Spans of wall-clock and process CPU time, in milliseconds, by name."""

    def __init__(self):
        self.spans = {}
        self.last = self.now()

    @staticmethod
    def now():
        return time.perf_counter(), time.process_time()

    def mark(self, name, since=None):
        """The span from the last mark (or from `since`) to now."""
        current = self.now()
        start = self.last if since is None else since
        self.spans[name] = [(current[i] - start[i]) * 1e3 for i in (0, 1)]
        self.last = current


def run_first():
    clock = Clock()
    import jitflow
    clock.mark("import")
    built = _note_when_built()
    from bench_autodiff import mlp_inputs, sgd_step
    params, x, labels = mlp_inputs(np.random.default_rng(0))
    step = jitflow.function(sgd_step)
    called = clock.last = clock.now()
    first = step(params, x, labels)
    clock.mark("first result")
    step.wait()
    clock.mark("wait() returned", since=called)
    clock.spans["native built"] = [(built[0] - called[0]) * 1e3, np.nan]
    second = step(params, x, labels)
    clock.mark("native call")
    _check(first, second)
    return clock.spans


def run_stages():
    clock = Clock()
    import jitflow
    clock.mark("import")
    from jitflow.codegen.gemm import sgemm
    from jitflow.codegen.jit import engine, pool
    from jitflow.codegen.runtime import python_call, python_entry
    pool.runtime()
    if python_entry.python_entry_abi():
        python_call.generic_entry()
    sgemm.ensure_loaded()
    clock.mark("libraries")
    llvm = _time_llvm_compiles(engine)
    from bench_autodiff import mlp_inputs, sgd_step
    params, x, labels = mlp_inputs(np.random.default_rng(0))
    jitflow.config.background_compile = False
    function_module = sys.modules["jitflow.function"]
    optimize_graph = function_module.optimize_graph

    def timed_optimize(*args, **kwargs):
        clock.mark("trace")
        graph = optimize_graph(*args, **kwargs)
        clock.mark("optimize")
        return graph
    function_module.optimize_graph = timed_optimize
    step = jitflow.function(sgd_step)
    clock.last = clock.now()
    step.lower(params, x, labels)
    clock.mark("native build")
    clock.spans["native build"].append(llvm[0] * 1e3)
    first = step(params, x, labels)
    clock.mark("call")
    _check(first, step(params, x, labels))
    return clock.spans


def _note_when_built():
    """[perf_counter] once the background build of native code is done (on its
    thread: the first call may still be running on the interpreter then)."""
    executable = sys.modules["jitflow.executable"]
    build, done = executable._native_graph, [None]

    def noted(*args):
        native = build(*args)
        done[0] = time.perf_counter()
        return native
    executable._native_graph = noted
    return done


def _time_llvm_compiles(engine):
    """Add up the CPU time of every module's LLVM compile (on whichever thread)."""
    total = [0.0]
    compile_module = engine._object_code

    def timed(*args):
        started = time.thread_time()
        try:
            return compile_module(*args)
        finally:
            total[0] += time.thread_time() - started
    engine._object_code = timed
    return total


def _check(first, second):
    """The first result (the interpreter's, or native) and the native one agree."""
    (loss, params), (loss_again, params_again) = first, second
    assert np.allclose(loss, loss_again, rtol=1e-4), (loss, loss_again)
    for name in params:
        assert np.allclose(params[name], params_again[name], rtol=1e-4, atol=1e-6), name


RUNS = {"first": run_first, "stages": run_stages}


# --- the parent: fresh processes ----------------------------------------------------------

def fresh(kind, cache_directory):
    environment = dict(os.environ, JITFLOW_CACHE_DIR=cache_directory, JITFLOW_CACHE="1",
                       PYTHONPATH=os.pathsep.join(filter(None, [
                           os.path.dirname(HERE), HERE, os.environ.get("PYTHONPATH")])))
    output = subprocess.run([sys.executable, __file__, "--run", kind], check=True,
                            capture_output=True, text=True, env=environment).stdout
    return json.loads(output.strip().splitlines()[-1])


def measure(kind, cache, processes):
    """`processes` records of `kind`: each with a cache directory of its own, empty
    ("cold"), or filled by a process before ("warm")."""
    records = []
    with tempfile.TemporaryDirectory() as shared:
        if cache == "warm":
            fresh(kind, shared)
        for _ in range(processes):
            if cache == "warm":
                records.append(fresh(kind, shared))
            else:
                with tempfile.TemporaryDirectory() as empty:
                    records.append(fresh(kind, empty))
    return records


def summarize(records):
    """{part: [(median, low, high) per column]} over the records."""
    table = {}
    for part in records[0]:
        columns = np.array([record[part] for record in records], dtype=float)
        table[part] = [(np.median(c), c.min(), c.max()) for c in columns.T
                       if not np.isnan(c).all()]
    return table


def print_table(title, table):
    print(title)
    for part, columns in table.items():
        cells = [f"{median:7.1f} ({low:.0f}-{high:.0f})" for median, low, high in columns]
        print(f"  {part:14} " + "   ".join(f"{label} {cell}" for label, cell in
                                           zip(("wall", "cpu", "llvm"), cells)))


def main(processes):
    import platform

    import jitflow
    from jitflow.codegen.jit.target import describe
    print(f"CPU: {cpu_name()}, {os.cpu_count()} cores ({describe()}); Python "
          f"{platform.python_version()}, NumPy {np.__version__}, jitflow "
          f"{jitflow.__version__}; {processes} fresh processes each; ms, median (range)")
    for cache in ("cold", "warm"):
        for kind in ("first", "stages"):
            table = summarize(measure(kind, cache, processes))
            print_table(f"{kind}, disk cache {cache}:", table)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run"]:
        print(json.dumps(RUNS[sys.argv[2]]()))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
