"""The product as jitflow's sgemm functions (sgemm_ir.py) pass it to one another: a
problem described by strides, so that transposes and column-major order are only other
strides, and a problem cut into shares for threads."""
from llvmlite import ir

from ..emitter import F32, I32, I64, PTR

# op(A)[i, p] at a + i * a_rows + p * a_depth, op(B)[p, j] at b + p * b_depth + j * b_cols,
# C[i, j] at c + i * c_rows + j * c_cols (in floats); C is m x n, the sum runs over k.
PROBLEM_FIELDS = ("a", "a_rows", "a_depth", "b", "b_depth", "b_cols", "c", "c_rows",
                  "c_cols", "m", "n", "k", "alpha", "beta")
PROBLEM = ir.LiteralStructType([PTR, I64, I64, PTR, I64, I64, PTR, I64, I64, I64, I64, I64,
                                F32, F32])
# A share of a problem for one worker: the problem, the axis it is split on
# (SPLIT_ROWS or SPLIT_COLS) and the number of shares.
SHARES = ir.LiteralStructType([PROBLEM, I64, I64])
SPLIT_ROWS, SPLIT_COLS = 0, 1


def load_problem(b, pointer):
    return {name: b.load(b.gep(pointer, [I32(0), I32(i)], source_etype=PROBLEM),
                         typ=PROBLEM.elements[i])
            for i, name in enumerate(PROBLEM_FIELDS)}


def store_problem(b, problem, pointer):
    for i, name in enumerate(PROBLEM_FIELDS):
        b.store(problem[name], b.gep(pointer, [I32(0), I32(i)], source_etype=PROBLEM))


def transposed(problem):
    """The same product as C^T = op(B)^T op(A)^T: A and B change places."""
    p = problem
    return dict(p, a=p["b"], a_rows=p["b_cols"], a_depth=p["b_depth"],
                b=p["a"], b_depth=p["a_depth"], b_cols=p["a_rows"],
                c_rows=p["c_cols"], c_cols=p["c_rows"], m=p["n"], n=p["m"])


def select_problem(b, condition, if_true, if_false):
    return {name: b.select(condition, if_true[name], if_false[name]) for name in PROBLEM_FIELDS}
