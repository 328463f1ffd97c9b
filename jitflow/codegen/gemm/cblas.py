"""cblas_sgemm's arguments, as jitflow's sgemm (sgemm_ir.py) takes them: their type, the
values CBLAS accepts, and the problem they describe, as strides. When C's rows are not
contiguous (column-major), or when the product pads far fewer elements that way (n = 10
fills a third of a 32-wide tile, m = 10 five-sixths of a 12-high one), the problem is
the transposed product C^T = op(B)^T op(A)^T."""
from llvmlite import ir

from ..emitter import F32, I32, I64, PTR
from .common import VOID, round_up
from .problem import select_problem, transposed

ROW_MAJOR, COLUMN_MAJOR = 101, 102
NO_TRANSPOSE, TRANSPOSE, CONJUGATE_TRANSPOSE = 111, 112, 113


def cblas_type(*leading):
    return ir.FunctionType(VOID, [*leading, I32, I32, I32, I32, I32, I32,
                                  F32, PTR, I32, PTR, I32, F32, PTR, I32])


def valid_arguments(b, order, trans_a, trans_b, m, n, k, lda, ldb, ldc):
    """What CBLAS accepts (flags it knows, sizes at least 0, each leading dimension at
    least the length of the stored rows, or columns, it steps over), and a non-empty C."""
    def among(value, *choices):
        result = ir.Constant(ir.IntType(1), 0)
        for choice in choices:
            result = b.or_(result, b.icmp_signed("==", value, I32(choice)))
        return result

    def covers(ld, plain, if_plain, otherwise):
        """ld >= max(1, length): the length is `if_plain` for a matrix that lies in rows
        (untransposed and row-major, or transposed and column-major)."""
        lies_in_rows = b.icmp_unsigned("==", plain, row_major)
        length = b.select(lies_in_rows, if_plain, otherwise)
        length = b.select(b.icmp_signed(">", length, I32(1)), length, I32(1))
        return b.icmp_signed(">=", ld, length)

    row_major = b.icmp_signed("==", order, I32(ROW_MAJOR))
    transposes = (NO_TRANSPOSE, TRANSPOSE, CONJUGATE_TRANSPOSE)
    flags = b.and_(among(order, ROW_MAJOR, COLUMN_MAJOR),
                   b.and_(among(trans_a, *transposes), among(trans_b, *transposes)))
    sizes = b.and_(b.icmp_signed(">", m, I32(0)),
                   b.and_(b.icmp_signed(">", n, I32(0)), b.icmp_signed(">=", k, I32(0))))
    true = ir.Constant(ir.IntType(1), 1)
    leading = b.and_(
        covers(lda, b.icmp_signed("==", trans_a, I32(NO_TRANSPOSE)), k, m),
        b.and_(covers(ldb, b.icmp_signed("==", trans_b, I32(NO_TRANSPOSE)), n, k),
               covers(ldc, true, n, m)))
    return b.and_(flags, b.and_(sizes, leading))


def cblas_problem(b, tile, order, trans_a, trans_b, m, n, k, alpha, a, lda, b_, ldb, beta,
                  c, ldc):
    """The arguments as strides, C's rows contiguous unless the transposed product
    pads far more (see the module's docstring)."""
    row_major = b.icmp_signed("==", order, I32(ROW_MAJOR))
    lda, ldb, ldc = (b.sext(ld, I64) for ld in (lda, ldb, ldc))
    one = I64(1)
    # Row-major op(A) untransposed: A[i, p] at i * lda + p; each transpose (of op or
    # of the order) swaps the two strides.
    a_plain = b.icmp_signed("==", trans_a, I32(NO_TRANSPOSE))
    b_plain = b.icmp_signed("==", trans_b, I32(NO_TRANSPOSE))
    a_rows_lda = b.icmp_unsigned("==", a_plain, row_major)
    b_depth_ldb = b.icmp_unsigned("==", b_plain, row_major)
    given = {
        "a": a, "a_rows": b.select(a_rows_lda, lda, one),
        "a_depth": b.select(a_rows_lda, one, lda),
        "b": b_, "b_depth": b.select(b_depth_ldb, ldb, one),
        "b_cols": b.select(b_depth_ldb, one, ldb),
        "c": c, "c_rows": b.select(row_major, ldc, one),
        "c_cols": b.select(row_major, one, ldc),
        "m": b.sext(m, I64), "n": b.sext(n, I64), "k": b.sext(k, I64),
        "alpha": alpha, "beta": beta}
    swapped = transposed(given)
    natural = select_problem(b, row_major, given, swapped)
    other = select_problem(b, row_major, swapped, given)
    # Far fewer padded elements: at most two thirds as many.
    fewer = b.icmp_unsigned("<", b.mul(_padded_area(b, tile, other), I64(3)),
                            b.mul(_padded_area(b, tile, natural), I64(2)))
    return select_problem(b, fewer, other, natural)


def _padded_area(b, tile, problem):
    return b.mul(round_up(b, problem["m"], tile.rows),
                 round_up(b, problem["n"], tile.cols))
