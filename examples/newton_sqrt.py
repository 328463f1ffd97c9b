"""Square roots by Newton's method in a jitflow.while_loop, whose trip count depends on
the data, and their derivatives through the loop in both modes, checked against the
analytic d sqrt(a)/da = 1 / (2 sqrt(a)) and d2/da2 = -1 / (4 a^1.5).

    python examples/newton_sqrt.py
"""
import numpy as np

import jitflow
import jitflow.numpy as jnp


def newton_sqrt(a):
    """x <- (x + a/x) / 2 from max(a, 1), until x*x is within 1e-13 of a (relatively),
    counting the trips."""
    def unfinished(state):
        x, _ = state
        return jnp.any(jnp.abs(x * x - a) > 1e-13 * a)

    def improve(state):
        x, trips = state
        return 0.5 * (x + a / x), trips + 1
    return jitflow.while_loop(unfinished, improve, (jnp.maximum(a, 1.0), 0))


def root(a):
    return newton_sqrt(a)[0]


def check(a):
    """The compiled root, its gradient (reverse mode), its second derivative (forward
    over reverse), and their largest relative errors against the formulas."""
    values, trips = jitflow.function(newton_sqrt)(a)
    slopes = jitflow.function(jitflow.grad(lambda a: root(a).sum()))(a)
    tangent = jitflow.function(lambda a: jitflow.jvp(
        jitflow.grad(lambda a: root(a).sum()), (a,), (np.ones_like(a),))[1])(a)
    errors = {"sqrt": values / np.sqrt(a) - 1,
              "d/da": slopes * 2 * np.sqrt(a) - 1,
              "d2/da2": tangent / (-0.25 * a ** -1.5) - 1}
    return int(trips), {name: float(np.abs(e).max()) for name, e in errors.items()}


def main():
    # Build native code before each function's first call returns (by default the first
    # call runs on the interpreter while it is built), so what is checked is native code.
    jitflow.config.background_compile = False
    a = np.geomspace(1e-4, 1e8, 13)
    eager_values, eager_trips = newton_sqrt(a)  # the same function, run as Python
    trips, errors = check(a)
    print(f"sqrt of {a.size} numbers from 1e-4 to 1e8 in {trips} trips "
          f"(eagerly {eager_trips})")
    for name, error in errors.items():
        print(f"  largest relative error of {name:7s} {error:.1e}")
    assert trips == eager_trips and np.allclose(eager_values, np.sqrt(a), rtol=1e-13)
    assert max(errors.values()) < 1e-9, "a derivative through the loop is off"


if __name__ == "__main__":
    main()
