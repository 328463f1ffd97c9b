"""Regression: the derivative of a branch that ignores an operand, inside a compiled
function. The zero cotangent of the ignored operand was a writable 0-d array, which the
trace took for an array the function closes over: an extra input of the branch's vjp
graph, which the switch then refused ("branch 0 takes 4 inputs, the operands are 3")."""
import numpy as np

import jitflow


def branches_ignoring_an_operand(a, b):
    return jitflow.cond(a > 1, lambda a, b: a * 2.0, lambda a, b: b * 3.0, a, b)


def branches_closing_over(x):
    return jitflow.cond(x > 1, lambda: x ** 2, lambda: x * 10.0)


def test_the_gradient_of_a_branch_that_ignores_an_operand_compiles(backend):
    grad = jitflow.function(jitflow.grad(branches_ignoring_an_operand, argnums=(0, 1)))
    assert grad(np.float64(3.0), np.float64(1.0)) == (2.0, 0.0)
    assert grad(np.float64(0.0), np.float64(1.0)) == (0.0, 3.0)


def test_the_gradient_of_branches_closing_over_a_value_compiles(backend):
    grad = jitflow.function(jitflow.grad(branches_closing_over))
    assert grad(np.float64(3.0)) == 6.0 and grad(np.float64(0.5)) == 10.0
