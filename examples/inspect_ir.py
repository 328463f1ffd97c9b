"""A plain NumPy function, run eagerly and under @jitflow.function.

Prints both results, the IR the trace produced and the IR after optimization, and how
often the function was traced.
"""
import numpy as np

import jitflow


def predict(x, w, b):
    """A softmax classifier's class probabilities, written in plain NumPy."""
    logits = x @ w + b
    logits = logits - logits.max(axis=1, keepdims=True)  # numerically stable softmax
    exps = np.exp(logits)
    return exps / exps.sum(axis=1, keepdims=True)


def redundant(x, y):
    """Code with work the optimizer removes: x*1, a double transpose, a repeated tanh."""
    return np.tanh(x * 1) + np.tanh(x) * y.T.T


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = np.zeros(3, np.float32)

    compiled = jitflow.function(predict)
    eager = predict(x, w, b)
    traced = compiled(x, w, b)
    print("eager result:\n", eager)
    print("traced result:\n", traced)
    print("dtype:", traced.dtype, "| max difference:", float(np.abs(eager - traced).max()))

    graph = jitflow.function(redundant).trace(x, x)
    print("\ntraced IR of redundant():\n" + str(graph))
    print("\noptimized IR of redundant():\n" + str(jitflow.optimize(graph)))

    compiled(2 * x, w, b)  # same shapes and dtypes: no new trace
    print("\ncache:", compiled.cache_info())
    assert np.allclose(eager, traced, rtol=1e-6, atol=1e-7), "traced differs from eager"
    print("OK: traced == eager")


if __name__ == "__main__":
    main()
