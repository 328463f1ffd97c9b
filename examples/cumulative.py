"""Cumulative operations written as one jitflow.scan each, compiled, and checked against
NumPy's: running sums and maxima, an exponential moving average, and the running mean
and variance of Welford's method (the numerically careful one), all along time.

    python examples/cumulative.py
"""
import numpy as np

import jitflow
import jitflow.numpy as jnp


def running_statistics(xs, decay=0.9):
    """Along xs' leading axis: cumulative sum and max, exponential moving average, and
    Welford's running mean and variance."""
    def step(state, x):
        total, largest, average, (count, mean, squares) = state
        count = count + 1
        delta = x - mean
        mean = mean + delta / count
        squares = squares + delta * (x - mean)
        state = (total + x, jnp.maximum(largest, x), decay * average + (1 - decay) * x,
                 (count, mean, squares))
        return state, {"sum": state[0], "max": state[1], "ema": state[2],
                       "mean": mean, "variance": squares / count}
    zeros = jnp.zeros_like(xs[0])
    start = (zeros, jnp.full_like(xs[0], -np.inf), xs[0], (0.0, zeros, zeros))
    return jitflow.scan(step, start, xs)[1]


def numpy_statistics(xs, decay=0.9):
    count = np.arange(1, len(xs) + 1).reshape((-1,) + (1,) * (xs.ndim - 1))
    ema, averages = xs[0], []
    for x in xs:
        ema = decay * ema + (1 - decay) * x
        averages.append(ema)
    mean = np.cumsum(xs, axis=0) / count
    return {"sum": np.cumsum(xs, axis=0), "max": np.maximum.accumulate(xs, axis=0),
            "ema": np.array(averages), "mean": mean,
            "variance": np.cumsum(xs ** 2, axis=0) / count - mean ** 2}


def compare(xs, run=jitflow.function(running_statistics)):
    """The largest difference from NumPy's of each statistic, relative to its scale."""
    ours, reference = run(xs), numpy_statistics(xs)
    return {name: float(np.abs(ours[name] - reference[name]).max() /
                        max(1.0, np.abs(reference[name]).max())) for name in reference}


def main():
    # Build native code before each function's first call returns (by default the first
    # call runs on the interpreter while it is built), so what is checked is native code.
    jitflow.config.background_compile = False
    xs = np.random.default_rng(0).standard_normal((1000, 3)) * 5 + 2
    for way, run in [("compiled", jitflow.function(running_statistics)),
                     ("eager", running_statistics)]:
        differences = compare(xs, run)
        print(f"{way}: largest relative difference from NumPy's " + ", ".join(
            f"{name} {difference:.1e}" for name, difference in differences.items()))
        assert max(differences.values()) < 1e-10, "a running statistic differs from NumPy's"


if __name__ == "__main__":
    main()
