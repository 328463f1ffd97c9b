"""numpy.linalg's solvers and factorizations compiled by jitflow (LAPACK from
scipy-openblas32, called once per matrix) against NumPy's own (its bundled OpenBLAS),
float64 (complex128 with --complex: LAPACK's complex routines, on the real and
imaginary parts interleaved), on a batch of small matrices and on single larger ones.
Prints each median time and the ratio NumPy / jitflow (above 1: jitflow is faster).
Both are checked to agree before timing; the calls alternate, in rounds, so that drift
hits both alike, and each batch of calls starts after the other library's OpenBLAS
threads have gone to sleep: NumPy's spin for about 0.1 s after a call, on the cores the
next calls need (measured alone, one 512x512 solve took jitflow 4.5 ms; right after
NumPy's, 8.5).

    python benchmarks/bench_linalg.py [--complex]
"""
import sys
import time

import numpy as np

import jitflow
import jitflow.numpy as jnp
from peers import mean_time_per_call

ROUNDS = 7
BATCH_TIME = 0.05  # seconds of calls per timed batch
OPENBLAS_SPIN_SECONDS = 0.25  # NumPy's OpenBLAS threads spin ~0.1 s after a call


def timed(fn, *args):
    return mean_time_per_call(fn, *args, seconds=BATCH_TIME)


CASES = {
    "solve": (lambda xp, a, b: xp.linalg.solve(a, b), "general"),
    "inv": (lambda xp, a, b: xp.linalg.inv(a), "general"),
    "slogdet": (lambda xp, a, b: xp.linalg.slogdet(a)[1], "general"),
    "cholesky": (lambda xp, a, b: xp.linalg.cholesky(a), "spd"),
    "eigh": (lambda xp, a, b: xp.linalg.eigh(a)[0], "spd"),
    "svd": (lambda xp, a, b: xp.linalg.svd(a, compute_uv=False), "general"),
    "qr": (lambda xp, a, b: xp.linalg.qr(a)[1], "general"),
}
SHAPES = [(1000, 4), (100, 16), (1, 128), (1, 512)]  # (batch, n)


def operands(kind, batch, n, rng, complex_values):
    a = rng.standard_normal((batch, n, n))
    b = rng.standard_normal((batch, n, 1))
    if complex_values:
        a, b = a + 1j * rng.standard_normal(a.shape), b + 1j * rng.standard_normal(b.shape)
    if kind == "spd":  # (Hermitian positive definite)
        a = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)
    else:
        a = a + n ** 0.5 * np.eye(n)
    return a, b


def main(complex_values=False):
    rng = np.random.default_rng(0)
    print(f"{'function':10} {'batch x n':>12} {'NumPy':>10} {'jitflow':>10} {'ratio':>6}")
    for name, (program, kind) in CASES.items():
        for batch, n in SHAPES:
            a, b = operands(kind, batch, n, rng, complex_values)
            compiled = jitflow.function(lambda a, b: program(jnp, a, b))
            np.testing.assert_allclose(compiled(a, b), program(np, a, b), rtol=1e-6,
                                       atol=1e-8)
            mine, theirs = [], []
            for _ in range(ROUNDS):
                theirs.append(timed(lambda: program(np, a, b)))
                time.sleep(OPENBLAS_SPIN_SECONDS)
                mine.append(timed(compiled, a, b))
                time.sleep(OPENBLAS_SPIN_SECONDS)
            t_np, t_jf = np.median(theirs), np.median(mine)
            print(f"{name:10} {f'{batch}x{n}':>12} {t_np * 1e6:9.1f}u {t_jf * 1e6:9.1f}u "
                  f"{t_np / t_jf:6.2f}")


if __name__ == "__main__":
    main(complex_values="--complex" in sys.argv[1:])
