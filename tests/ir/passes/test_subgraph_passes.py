"""The pipeline inside the subgraphs of control flow (golden IR): folding, CSE and DCE in
loop bodies and branches, loop-invariant work hoisted out of loops (never out of
branches, never work that can raise), and the operands passed through tidied."""
import numpy as np

import jitflow
import jitflow.numpy as jnp
from tests_support import golden, trace


def optimized(fn, *args):
    return str(jitflow.optimize(trace(fn, *args)))


def test_invariant_work_leaves_the_loop_and_unused_operands_go():
    def rnn(w, xs):
        def cell(h, x):
            unused = jnp.sin(h)  # dead
            return jnp.tanh(h @ jnp.exp(w) + x * (2.0 * 3.0)), (h + h).sum() + (h + h).sum()
        return jitflow.scan(cell, np.zeros(2), xs)
    assert optimized(rnn, np.ones((2, 2)), np.ones((4, 2))) == golden("""
        graph(%0: f64[2,2], %1: f64[4,2]) {
          %2: f64[2,2] = exp %0
          %3: f64[2], %4: f64[4] = scan [0., 0.]:f64[2], %1, %2, carries=1, length=4, reverse=False, xs=1
            subgraph0(%5: f64[2], %6: f64[2], %7: f64[2,2]) {
              %8: f64[1,2] = reshape %5, shape=(1, 2)
              %9: f64[1,2] = matmul %8, %7
              %10: f64[2] = reshape %9, shape=(2,)
              %11: f64[2] = mul %6, 6.0:~f64[]
              %12: f64[2] = add %10, %11
              %13: f64[2] = tanh %12
              %14: f64[2] = add %5, %5
              %15: f64[] = reduce_sum %14, axes=(0,), keepdims=False
              %16: f64[] = add %15, %15
              return %13, %16
            }
          return %3, %4
        }""")


def test_the_condition_and_body_share_what_was_hoisted():
    def loop(a, n):
        return jitflow.while_loop(lambda c: c[1] < n * 2,
                                  lambda c: (c[0] * jnp.exp(a), c[1] + 1), (a, 0))[0]
    assert optimized(loop, np.ones(3), 5) == golden("""
        graph(%0: f64[3], %1: ~i64[]) {
          %2: ~i64[] = mul %1, 2:~i64[]
          %3: f64[3] = exp %0
          %4: f64[3], %5: i64[] = while %0, 0:i64[], %2, %3, checkpoint_every=1
            subgraph0(%6: f64[3], %7: i64[], %8: ~i64[], %9: f64[3]) {
              %10: bool[] = lt %7, %8
              return %10
            }
            subgraph1(%11: f64[3], %12: i64[], %13: ~i64[], %14: f64[3]) {
              %15: f64[3] = mul %11, %14
              %16: i64[] = add %12, 1:~i64[]
              return %15, %16
            }
          return %4
        }""")


def test_work_that_can_raise_and_branches_stay_put():
    table = np.arange(4.0)

    def f(i, x):
        looked_up = jitflow.fori_loop(0, 2, lambda k, c: c + jnp.take(table, i), x)
        return jitflow.cond(x.sum() > 0, lambda y: jnp.exp(i * 1.0) + y, lambda y: y,
                            looked_up)
    text = optimized(f, np.int64(1), np.ones(2))
    body = text[text.index("scan"):text.index("switch")]
    assert "gather" in body  # a take stays inside the loop: with no trips it must not run
    branch = text[text.index("switch"):]
    assert "exp" in branch   # and work stays inside its branch


def test_reverse_mode_runs_a_scan_forward_once():
    def loss(w, xs):
        _, ys = jitflow.scan(lambda h, x: (jnp.tanh(h @ w + x),) * 2, np.zeros(2), xs)
        return jnp.sum(ys ** 2)
    graph = trace(jitflow.value_and_grad(loss), np.ones((2, 2)), np.ones((3, 2)))
    scans = [node for node in jitflow.optimize(graph).nodes if node.op == "scan"]
    assert [node.params["reverse"] for node in scans] == [False, True]
    forward = scans[0]  # the value, the ys and each step's carry for the backward scan
    assert [str(v.type) for v in forward.outputs] == ["f64[2]", "f64[3,2]", "f64[3,2]"]
