"""Large kernels split between threads: the same bits as one thread, errors still raised,
small kernels untouched; the worker pool shared by every function, reused call after
call, safe for concurrent callers and in forked children."""
import ctypes
import os
import platform
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jitflow
from jitflow.codegen import NativeGraph
from jitflow.codegen.jit.engine import CompiledModule
from jitflow.codegen.jit.pool import RUN
from jitflow.codegen.jit.threads import thread_count
from jitflow.codegen.lowering.parallel import MIN_PARALLEL_ELEMENTS

ROWS, COLUMNS = 300, 517  # more elements than MIN_PARALLEL_ELEMENTS, odd sizes
LENGTH = MIN_PARALLEL_ELEMENTS + 1037


def compiled(fn, args, threads, monkeypatch):
    monkeypatch.setenv("JITFLOW_THREADS", str(threads))
    graph = jitflow.optimize(jitflow.function(fn).trace(*args))
    return NativeGraph(graph, "f")


def split(fn, args, threads, monkeypatch):
    """fn compiled for `threads` threads, checking that it did split."""
    native = compiled(fn, args, threads, monkeypatch)
    assert RUN in native.llvm_ir and "pthread" not in native.llvm_ir
    return native


def same_bits(results, expected):
    return all(a.dtype == b.dtype and a.tobytes() == b.tobytes()
               for a, b in zip(results, expected, strict=True))


def chain(x, y):
    return np.exp(-x * x) * np.sin(y) + 0.5 * np.tanh(x * y)


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def row_sum(x):
    return x.sum(axis=1)


def column_sum(x):
    return x.sum(axis=0)


def full_sum(x):
    return (x * x).sum() + x.sum()


def full_reductions(x):
    """Over everything: split chunk by chunk, each chunk's partial result combined by
    worker 0, with an elementwise result stored on the way and NaN kept by max."""
    y = np.where(x > 2.5, np.nan, x)
    return y.max(), (x * 2).mean(), x * 2, np.abs(x).min()


def cumsum_down(x):
    """Split between threads along the columns, each column summed in order."""
    return np.cumsum(x, axis=0)


def cumsum_across(x):
    return np.cumsum(x, axis=1)


def product(a, b):
    """Integer and bool products run a generated kernel, split along the rows."""
    return a @ b


def arg_extremes(x):
    """Rows walked in vectors (strided rows through each worker's copy) and columns
    folded slot by slot, all split; a NaN wins."""
    y = np.where(x > 2.8, np.nan, x)
    return y.argmax(axis=1), y.argmin(axis=0), np.abs(y).argmax(axis=1), x.T.argmin(axis=1)


def embedding_gradient(table, indices, weights):
    """A scatter_add of 300 rows into 40, repeated indices added in order: split along
    the rows' columns, never along the indices."""
    return jitflow.grad(lambda t: (t[indices] * weights).sum())(table)


rng = np.random.default_rng(0)
INDICES = rng.integers(-40, 40, ROWS)
INTEGERS = rng.integers(-1000, 1000, (ROWS, COLUMNS)).astype(np.int32)
FLAGS = INTEGERS[:, :300] > 0
VECTOR = rng.standard_normal(LENGTH).astype(np.float32)
MATRIX = rng.standard_normal((ROWS, COLUMNS)).astype(np.float32)
CHAIN_ARGS = (VECTOR, VECTOR[::-1].copy())


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("fn, args", [
    (chain, CHAIN_ARGS),
    (softmax, (MATRIX,)),
    (row_sum, (MATRIX,)),
    (column_sum, (MATRIX,)),
    (column_sum, (MATRIX.T.copy(),)),
    (full_sum, (VECTOR,)),
    (full_reductions, (MATRIX,)),
    (cumsum_down, (MATRIX,)),
    (cumsum_across, (MATRIX,)),
    (embedding_gradient, (MATRIX[:40], INDICES, MATRIX)),
    (product, (INTEGERS, INTEGERS.T[:, :40].copy())),
    (product, (FLAGS, FLAGS.T.copy())),
    (arg_extremes, (MATRIX,)),
    (arg_extremes, (MATRIX.T,)),
], ids=["chain", "softmax", "row_sum", "column_sum", "column_sum_wide", "full_sum",
        "full_reductions", "cumsum_down", "cumsum_across", "embedding_gradient",
        "int_matmul", "bool_matmul", "arg_extremes", "arg_extremes_transposed"])
def test_split_kernels_give_the_same_bits_as_one_thread(fn, args, threads, monkeypatch):
    one = compiled(fn, args, 1, monkeypatch)
    assert RUN not in one.llvm_ir
    expected = one(list(args))
    assert same_bits(split(fn, args, threads, monkeypatch)(list(args)), expected)
    reference = fn(*args)
    for got, want in zip(expected, reference if isinstance(reference, tuple) else [reference]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_reduction_over_everything_with_later_phases_keeps_its_bits(monkeypatch):
    # Its chunks stay on worker 0 (the later phases read its row buffer) and any
    # other nest still splits.
    def normalized(x):
        return x / np.abs(x).sum() + np.exp(x - x.max())
    one, two = (compiled(normalized, (VECTOR,), t, monkeypatch) for t in (1, 2))
    assert same_bits(two([VECTOR]), one([VECTOR]))
    np.testing.assert_allclose(one([VECTOR])[0], normalized(VECTOR), rtol=1e-5)


def test_repeated_calls_reuse_the_pool(monkeypatch):
    one, two = (compiled(softmax, (MATRIX,), t, monkeypatch) for t in (1, 2))
    for scale in np.linspace(-4, 4, 200, dtype=np.float32):
        x = MATRIX * scale
        assert same_bits(two([x]), one([x])), scale


def test_concurrent_callers_share_the_pool(monkeypatch):
    """Three Python threads (ctypes releases the GIL), two calling the same function:
    whoever finds the pool busy runs alone, and every result stays exact."""
    functions = [(split(fn, args, 2, monkeypatch), args) for fn, args in
                 [(chain, CHAIN_ARGS), (chain, CHAIN_ARGS), (softmax, (MATRIX,))]]
    expected = [native(list(args)) for native, args in functions]
    start, failures = threading.Barrier(len(functions)), []

    def caller(native, args, reference):
        start.wait()
        for _ in range(100):
            if not same_bits(native(list(args)), reference):
                failures.append(native)

    threads = [threading.Thread(target=caller, args=(*f, e))
               for f, e in zip(functions, expected)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads) and not failures


@pytest.mark.parametrize("threads", [2, 3])
def test_an_error_in_any_workers_chunk_is_raised(threads, monkeypatch):
    base = np.full(LENGTH, 3, np.int64)
    native = split(lambda x, y: x ** y, (base, np.ones(LENGTH, np.int64)), threads,
                   monkeypatch)
    for position in (0, LENGTH // 2, LENGTH - 1):  # worker 0's, a middle one's, the last's
        exponent = np.ones(LENGTH, np.int64)
        exponent[position] = -1
        with pytest.raises(ValueError, match="negative integer powers"):
            native([base, exponent])
        np.testing.assert_array_equal(native([base, np.ones(LENGTH, np.int64)])[0], base)


def test_a_gather_with_a_bad_index_still_raises(monkeypatch):
    table = rng.standard_normal(1000).astype(np.float32)
    indices = rng.integers(0, 1000, LENGTH)
    bad = indices.copy()
    bad[-1] = 1000
    for threads in (1, 2):
        native = compiled(lambda t, i: t[i] * 2.0, (table, indices), threads, monkeypatch)
        np.testing.assert_array_equal(native([table, indices])[0], table[indices] * 2.0)
        with pytest.raises(IndexError):
            native([table, bad])


# A fresh process's split function, `native`: f(x) runs it.
PROLOGUE = (
    "import os, numpy as np, jitflow\n"
    "from jitflow.codegen import NativeGraph\n"
    f"x = np.linspace(-3, 3, {LENGTH}, dtype=np.float32)\n"
    "trace = jitflow.function(lambda x: np.exp(-x * x) * np.sin(x)).trace(x)\n"
    "native = NativeGraph(jitflow.optimize(trace), 'f')\n"
    "assert 'jitflow_pool_run' in native.llvm_ir\n"
    "f = lambda x: native([x])[0]\n")


def run_python(script, **environment):
    """The words `script` prints, run by a new interpreter with `environment` added."""
    environment = {**os.environ, **environment}
    return subprocess.run([sys.executable, "-c", script], env=environment, check=True,
                          capture_output=True, text=True).stdout.split()


def in_forked_child(check):
    """Run check() in a forked child; True if it returned True. A child that hangs is
    killed by an alarm rather than hanging the test."""
    pid = os.fork()
    if pid == 0:
        try:
            signal.alarm(60)
            os._exit(0 if check() else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def task_count():
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs fork and /proc")
def test_a_forked_child_starts_a_pool_of_its_own(monkeypatch):
    native = split(chain, CHAIN_ARGS, 2, monkeypatch)
    expected = native(list(CHAIN_ARGS))
    # Fork while another thread keeps the parent's pool busy: the child must not
    # inherit a taken pool, nor wait for threads it does not have.
    stop = threading.Event()

    def keep_busy():
        while not stop.is_set():
            native(list(CHAIN_ARGS))
    busy = threading.Thread(target=keep_busy)
    busy.start()
    try:
        def check():
            alone = task_count() == 1
            results = [native(list(CHAIN_ARGS)) for _ in range(20)]
            return alone and task_count() == 2 and all(same_bits(r, expected)
                                                       for r in results)
        assert in_forked_child(check)
    finally:
        stop.set()
        busy.join()
    assert same_bits(native(list(CHAIN_ARGS)), expected)


SET_MXCSR = """
define void @set_mxcsr(i32 %keep, i32 %add) {
  %slot = alloca i32
  call void @llvm.x86.sse.stmxcsr(ptr %slot)
  %mode = load i32, ptr %slot
  %kept = and i32 %mode, %keep
  %new = or i32 %kept, %add
  store i32 %new, ptr %slot
  call void @llvm.x86.sse.ldmxcsr(ptr %slot)
  ret void
}
declare void @llvm.x86.sse.stmxcsr(ptr)
declare void @llvm.x86.sse.ldmxcsr(ptr)
"""
FLUSH_TO_ZERO, DENORMALS_ARE_ZERO = 0x8000, 0x40


@pytest.mark.skipif(platform.machine() != "x86_64" or not hasattr(os, "fork"),
                    reason="x86 MXCSR, fork")
def test_workers_take_the_callers_floating_point_mode(monkeypatch):
    """A caller that flushes denormals to zero, or stops, after the pool's threads
    started still gets the same bits as in one thread: the mode goes with each job."""
    tiny = np.full(LENGTH, 1e-20, np.float32)
    native = split(lambda x: x * 1e-20, (tiny,), 2, monkeypatch)
    compiled = CompiledModule(SET_MXCSR)
    set_mxcsr = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int32)(
        compiled.address("set_mxcsr"))
    flush = FLUSH_TO_ZERO | DENORMALS_ARE_ZERO

    def check():  # in a child: the test's process keeps its mode
        set_mxcsr(~flush, 0)
        kept = native([tiny])[0]  # the child's pool starts in this mode
        set_mxcsr(~0, flush)
        flushed = native([tiny])[0]
        set_mxcsr(~flush, 0)  # compared after: NumPy's != 0 would see denormals as 0
        return np.all(kept != 0) and np.all(flushed == 0) and \
            np.all(native([tiny])[0] != 0)
    assert in_forked_child(check)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc")
def test_without_threads_the_caller_runs_every_chunk():
    """In a fresh process (a forked child would reuse its parent's thread stacks) left
    too little address space for a thread's stack, so that pthread_create fails."""
    script = PROLOGUE + (
        "import resource\n"
        "os.environ['JITFLOW_THREADS'] = '1'\n"
        "expected = NativeGraph(jitflow.optimize(trace), 'f')([x])[0]\n"
        "size = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()\n"
        "resource.setrlimit(resource.RLIMIT_AS, (size + (4 << 20),) * 2)\n"
        "tasks = len(os.listdir('/proc/self/task'))\n"
        "assert all(np.array_equal(f(x), expected) for _ in range(3))\n"
        "print(len(os.listdir('/proc/self/task')) - tasks)\n")
    assert run_python(script, JITFLOW_THREADS="2", JITFLOW_CACHE="0") == ["0"]


def test_split_code_loads_from_the_disk_cache_in_a_fresh_process(tmp_path):
    """Cached object code calls the pool by name: a new process links it to its own."""
    script = PROLOGUE + (
        "np.testing.assert_allclose(f(x), np.exp(-x * x) * np.sin(x), rtol=1e-5, atol=1e-6)\n"
        "print(native.compiled.from_cache)\n")
    runs = [run_python(script, JITFLOW_THREADS="2", JITFLOW_CACHE="1",
                       JITFLOW_CACHE_DIR=str(tmp_path))
            for _ in range(2)]
    assert runs == [["False"], ["True"]]


def test_small_kernels_stay_on_the_calling_thread(monkeypatch):
    small = np.ones(1000, np.float32)
    native = compiled(chain, (small, small), 2, monkeypatch)
    assert RUN not in native.llvm_ir


def test_math_functions_count_as_more_work_when_splitting(monkeypatch):
    # A third of MIN_PARALLEL_ELEMENTS: plain arithmetic stays on one thread, a chain of
    # math functions (several times the work per element) is split.
    x = np.ones(MIN_PARALLEL_ELEMENTS // 3 + 64, np.float32)
    assert RUN not in compiled(lambda x: x * 2.0 + 1.0, (x,), 2, monkeypatch).llvm_ir
    def functions(x):
        return np.tanh(np.sin(x)) * 2.0
    x = np.linspace(-3, 3, x.size, dtype=np.float32)
    expected = compiled(functions, (x,), 1, monkeypatch)([x])
    assert same_bits(split(functions, (x,), 2, monkeypatch)([x]), expected)
    np.testing.assert_allclose(expected[0], functions(x), rtol=1e-5)


def test_the_thread_count_changes_the_code_and_so_the_cache_key(monkeypatch):
    one, two = (compiled(chain, (VECTOR, VECTOR), t, monkeypatch) for t in (1, 2))
    three = compiled(chain, (VECTOR, VECTOR), 3, monkeypatch)
    assert len({one.llvm_ir, two.llvm_ir, three.llvm_ir}) == 3


def test_the_thread_count_setting(monkeypatch):
    monkeypatch.setenv("JITFLOW_THREADS", "3")
    assert thread_count() == 3
    monkeypatch.delenv("JITFLOW_THREADS")
    assert thread_count() >= 1
    monkeypatch.setenv("JITFLOW_THREADS", "0")
    with pytest.raises(ValueError):
        thread_count()


FULL_REDUCTIONS = {
    "sum": lambda x: x.sum(), "mean": lambda x: x.mean(), "max": lambda x: x.max(),
    "min": lambda x: x.min(), "sum of squares": lambda x: (x * x).sum(),
    "sum of a transpose": lambda x: np.abs(x.T).sum(),
}


@settings(max_examples=max(1, settings.default.max_examples // 8))
@given(rows=st.integers(1, 700), columns=st.integers(190, 900),
       dtype=st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.bool_]),
       name=st.sampled_from(sorted(FULL_REDUCTIONS)), seed=st.integers(0, 2 ** 16))
def test_reductions_over_everything_give_one_threads_bits(rows, columns, dtype, name,
                                                          seed):
    # Large enough to be split (from MIN_PARALLEL_ELEMENTS) or not, of every dtype,
    # against one thread bit for bit and against NumPy.
    x = np.random.default_rng(seed).normal(0, 50, (rows, columns)).astype(dtype)
    fn = FULL_REDUCTIONS[name]
    with pytest.MonkeyPatch.context() as patch:
        one, two = (compiled(fn, (x,), t, patch) for t in (1, 2))
    got = two([x])[0]
    assert same_bits([got], one([x]))
    expected = np.asarray(fn(x))
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=2e-5 if dtype == np.float32 else 1e-12)
