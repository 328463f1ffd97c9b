"""The functions whose result's length depends on the data, compiled with a static
size= (nonzero, extract, unique), and the counting functions (bincount, histogram,
isin, interp, gcd), against NumPy's own on float64 / int64 vectors. Prints each median
time and the ratio NumPy / jitflow (above 1: jitflow is faster). Results are checked to
agree before timing (NumPy's cut or filled to the size); calls alternate in rounds.

unique compares every pair (it does not sort), so it is timed on short vectors only;
isin compares every element with every test element, as does searchsorted under
digitize, histogram and interp.

    python benchmarks/bench_value_shapes.py
"""

import numpy as np

import jitflow
import jitflow.numpy as jnp
from peers import mean_time_per_call

ROUNDS = 7
BATCH_TIME = 0.05  # seconds of calls per timed batch


def timed(fn, *args):
    return mean_time_per_call(fn, *args, seconds=BATCH_TIME)



def padded(result, size, fill=0):
    kept = result[:size]
    return np.concatenate([kept, np.full(size - kept.shape[0], fill, kept.dtype)])


def cases(rng, n):
    x = rng.standard_normal(n)
    ints = rng.integers(0, 50, n)
    edges = np.linspace(-3, 3, 33)
    return {
        "nonzero": (lambda x: jnp.nonzero(x > 0.5, size=n)[0],
                    lambda x: padded(np.nonzero(x > 0.5)[0], n), x),
        "extract": (lambda x: jnp.extract(x > 0, x, size=n),
                    lambda x: padded(np.extract(x > 0, x), n), x),
        "bincount": (lambda i: jnp.bincount(i, length=50),
                     lambda i: np.bincount(i, minlength=50), ints),
        "histogram": (lambda x: jnp.histogram(x, edges)[0],
                      lambda x: np.histogram(x, edges)[0], x),
        "isin": (lambda i: jnp.isin(i, np.arange(0, 50, 7)),
                 lambda i: np.isin(i, np.arange(0, 50, 7)), ints),
        "interp": (lambda x: jnp.interp(x, edges, np.sin(edges)),
                   lambda x: np.interp(x, edges, np.sin(edges)), x),
        "gcd": (lambda i: jnp.gcd(i, 36), lambda i: np.gcd(i, 36), ints),
    }


def compare(name, n, mine_fn, numpy_fn, arg):
    compiled = jitflow.function(mine_fn)
    for _ in range(3):  # the first calls may run while native code is being built
        np.testing.assert_allclose(compiled(arg), numpy_fn(arg), rtol=1e-12)
    mine, theirs = [], []
    for _ in range(ROUNDS):
        theirs.append(timed(numpy_fn, arg))
        mine.append(timed(compiled, arg))
    numpy_time, jitflow_time = np.median(theirs), np.median(mine)
    print(f"{name:10} {n:>8} {numpy_time * 1e6:>10.1f} {jitflow_time * 1e6:>10.1f} "
          f"{numpy_time / jitflow_time:>6.2f}")


def main():
    rng = np.random.default_rng(0)
    print(f"{'function':10} {'n':>8} {'NumPy us':>10} {'jitflow us':>10} {'ratio':>6}")
    for n in (1_000, 100_000):
        for name, (mine_fn, numpy_fn, arg) in cases(rng, n).items():
            compare(name, n, mine_fn, numpy_fn, arg)
    for n in (100, 1_000):
        x = rng.integers(0, n // 4, n)
        size = len(np.unique(x))
        compare("unique", n, lambda x: jnp.unique(x, size=size), np.unique, x)


if __name__ == "__main__":
    main()
