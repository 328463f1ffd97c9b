"""jitflow_sgemm against NumPy's `a @ b` (NumPy's own OpenBLAS), in the same process.

    python benchmarks/bench_gemm.py [rounds]

Shapes: 1024^3, and the products of a 784-512-512-10 MLP training step at batch 256:
the forward products x @ W, the weight gradients x.T @ d (op(A) transposed) and the
input gradients d @ W.T (op(B) transposed), NumPy given the same transposed views.
Each round times every product best-of-N for jitflow, then for NumPy, and the table
reports each one's best over the rounds (on a machine busy with other work, run
several rounds and compare the spread). "1 thread" is jitflow's product kept on the
calling thread; "ratio" is NumPy's time over jitflow's (above 1: jitflow is faster).
"""
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout
from jitflow.codegen.gemm import blas  # noqa: E402
from jitflow.codegen.gemm import sgemm as gemm  # noqa: E402  (`sgemm` names the function)
from jitflow.codegen.jit.threads import thread_count  # noqa: E402

# (m, n, k, op(A) transposed, op(B) transposed, what it is)
SHAPES = [
    (1024, 1024, 1024, False, False, "square"),
    (256, 512, 784, False, False, "x @ W1"),
    (256, 512, 512, False, False, "h @ W2"),
    (256, 10, 512, False, False, "h @ W3"),
    (784, 512, 256, True, False, "x.T @ d1"),
    (512, 512, 256, True, False, "h.T @ d2"),
    (512, 10, 256, True, False, "h.T @ d3"),
    (256, 512, 512, False, True, "d2 @ W2.T"),
    (256, 512, 10, False, True, "d3 @ W3.T"),
]
SECONDS_PER_TIMING = 0.15  # per product and round: N calls, the best one counts
# NumPy's OpenBLAS threads spin for about 0.1 s after a call (2**28 cycles, its
# default), on the cores jitflow's workers need: measured right after NumPy, a small
# two-thread product took 2-3 times as long. Each timing after NumPy's waits this long.
OPENBLAS_SPIN_SECONDS = 0.25


def operands(m, n, k, transpose_a, transpose_b, rng):
    """op(A), op(B) as NumPy sees them, and C."""
    a = rng.standard_normal((k, m) if transpose_a else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if transpose_b else (k, n)).astype(np.float32)
    return (a.T if transpose_a else a), (b.T if transpose_b else b), np.empty((m, n), np.float32)


def jitflow_call(function, op_a, op_b, c, *leading):
    """A no-argument callable running jitflow's product C = op(A) @ op(B) (holding the
    arrays: the call itself only has their addresses)."""
    def layout(view):  # BLAS's transpose flag and leading dimension for a view
        if view.strides[1] == 4:
            return gemm.NO_TRANSPOSE, view.strides[0] // 4
        return gemm.TRANSPOSE, view.strides[1] // 4
    (trans_a, lda), (trans_b, ldb) = layout(op_a), layout(op_b)
    (m, k), n = op_a.shape, op_b.shape[1]
    args = (*leading, gemm.ROW_MAJOR, trans_a, trans_b, m, n, k, 1.0, op_a.ctypes.data, lda,
            op_b.ctypes.data, ldb, 0.0, c.ctypes.data, n)
    return lambda arrays=(op_a, op_b, c): function(*args)


def best_time(run, flops):
    run()  # warm: pages touched, threads awake
    count = max(3, min(2000, int(SECONDS_PER_TIMING * 2e11 / flops)))
    best = float("inf")
    for _ in range(count):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def row_heading(case):
    """The product's name, m, n, k and op flags, as a table row starts."""
    m, n, k, transpose_a, transpose_b, name, _ = case
    flags = ("T" if transpose_a else "N") + ("T" if transpose_b else "N")
    return f"{name:>10} {m:5d} {n:5d} {k:5d} {flags}"


def best_over_rounds(cases, rounds, pause=0.0):
    """{(name, label): best seconds}: each round times every run of every case in turn
    (best_time), then waits `pause` seconds; cases are (m, n, k, transpose_a,
    transpose_b, name, {label: run})."""
    best = {}
    for _ in range(rounds):
        for m, n, k, _, _, name, runs in cases:
            for label, run in runs.items():
                key = (name, label)
                best[key] = min(best.get(key, float("inf")), best_time(run, 2 * m * n * k))
            time.sleep(pause)
    return best


def main(rounds):
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, "
          f"jitflow's OpenBLAS core: {blas.core_name()}, threads: {thread_count()}, "
          f"tile: {tuple(gemm.tile_for(gemm.host()[2]))}")
    sgemm, alone = gemm.sgemm_function(), gemm.sgemm_threads_function()
    rng = np.random.default_rng(0)
    cases = []
    for m, n, k, transpose_a, transpose_b, name in SHAPES:
        op_a, op_b, c = operands(m, n, k, transpose_a, transpose_b, rng)
        runs = {"jitflow": jitflow_call(sgemm, op_a, op_b, c),
                "1 thread": jitflow_call(alone, op_a, op_b, c, 1),
                "numpy": lambda op_a=op_a, op_b=op_b: op_a @ op_b}
        cases.append((m, n, k, transpose_a, transpose_b, name, runs))
    best = best_over_rounds(cases, rounds, pause=OPENBLAS_SPIN_SECONDS)
    print(f"{'product':>10} {'m':>5} {'n':>5} {'k':>5} op   "
          f"{'jitflow ms':>10} {'GFLOP/s':>7} {'1 thread':>8} {'numpy ms':>9} {'GFLOP/s':>7}"
          f" {'ratio':>6}")
    for case in cases:
        flops, name = 2 * case[0] * case[1] * case[2], case[5]
        ours, single, theirs = (best[(name, label)] for label in ("jitflow", "1 thread", "numpy"))
        print(f"{row_heading(case)}   {ours * 1e3:10.4f} {flops / ours / 1e9:7.1f} "
              f"{flops / single / 1e9:8.1f} {theirs * 1e3:9.4f} {flops / theirs / 1e9:7.1f} "
              f"{theirs / ours:6.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
