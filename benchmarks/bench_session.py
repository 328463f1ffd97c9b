"""What a jitflow.v1 Session.run costs on top of the compiled code: a small graph (a
dense layer, tanh(x @ w + b) on a 4x3 batch, w a Variable) run with Session.run, against
a @jitflow.function call computing the same thing and NumPy computing it eagerly.

It runs in a fresh Python process of its own. Batches of calls take turns (each after a
lead-in of the same calls); it prints the median time per call over the batches and the
spread (the 10th to 90th percentile of the batches' per-call times).

    python benchmarks/bench_session.py
"""
import os
import subprocess
import sys
import time

import numpy as np

ROUNDS, CALLS, LEAD_IN = 31, 2000, 200


def contenders():
    import jitflow
    import jitflow.v1 as tf

    rng = np.random.default_rng(0)
    x_value = rng.standard_normal((4, 3))
    w_value, b_value = rng.standard_normal((3, 2)), rng.standard_normal(2)

    x = tf.placeholder(tf.float64, (None, 3), name="x")
    w = tf.Variable(w_value, name="w")
    y = tf.tanh(tf.matmul(x, w) + b_value)
    sess = tf.Session()
    sess.run(w.initializer)
    feed = {x: x_value}

    @jitflow.function
    def dense(x, w):
        return np.tanh(x @ w + b_value)
    expected = np.tanh(x_value @ w_value + b_value)
    assert np.allclose(sess.run(y, feed), expected)
    assert np.allclose(dense(x_value, w_value), expected)
    return {"Session.run": lambda: sess.run(y, feed),
            "@jitflow.function": lambda: dense(x_value, w_value),
            "NumPy": lambda: np.tanh(x_value @ w_value + b_value)}


def measure():
    calls = contenders()
    per_call = {name: [] for name in calls}
    names = list(calls)
    for round_ in range(ROUNDS):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            call = calls[name]
            for _ in range(LEAD_IN):
                call()
            start = time.perf_counter()
            for _ in range(CALLS):
                call()
            per_call[name].append((time.perf_counter() - start) / CALLS * 1e6)
    for name, times in per_call.items():
        low, median, high = np.percentile(times, [10, 50, 90])
        print(f"{name:>18}: {median:6.2f} us a call (10th-90th percentile "
              f"{low:.2f}-{high:.2f})")
    session, function = (np.median(per_call[n]) for n in ("Session.run", "@jitflow.function"))
    print(f"Session.run costs {session - function:.2f} us more than the function's call")


if __name__ == "__main__":
    if "--measure" in sys.argv:
        measure()
    else:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [root] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        subprocess.run([sys.executable, os.path.abspath(__file__), "--measure"], env=env,
                       check=True)
