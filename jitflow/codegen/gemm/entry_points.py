"""The entry points of jitflow's sgemm (sgemm_ir.py; sgemm.py tells what they do): each
checks cblas_sgemm's arguments, describes the product as strides, then scales C alone
or computes the product, whole or in shares.

`library` is the module being built (gemm_ir._Gemm): its tile, module and thread count,
and the solve, scale and body functions.
"""
from llvmlite import ir

from ..emitter import F32, I32, I64, entry_alloca
from .cblas import cblas_problem, cblas_type, valid_arguments
from .common import ALIGNMENT, NULL, VOID, new_function
from .problem import SHARES, store_problem
from .shares import plan_shares, solve_on_threads, worth_splitting

SGEMM = "jitflow_sgemm"
SGEMM_THREADS = "jitflow_sgemm_threads"
SGEMM_SHARES = "jitflow_sgemm_shares"


def define_entry_points(library):
    """SGEMM_THREADS, SGEMM_SHARES, and SGEMM (SGEMM_THREADS with the library's thread
    count)."""
    _define_entry_threads(library)
    _define_entry_shares(library)
    _define_entry(library)


def _define_entry_threads(library):
    function, b = new_function(library.module, SGEMM_THREADS, VOID, cblas_type(I32).args,
                               internal=False)
    threads, *cblas = function.args
    _checked_product(library, function, b, cblas,
                     lambda problem, shares: solve_on_threads(library, b, problem, shares,
                                                              b.sext(threads, I64)),
                     scales=ir.Constant(ir.IntType(1), 1))


def _define_entry_shares(library):
    """SGEMM_SHARES: shares first..end-1 of a product cut into `count`, on this
    thread; every share computed once, by whichever thread, gives the product."""
    function, b = new_function(library.module, SGEMM_SHARES, VOID,
                               cblas_type(I64, I64, I64).args, internal=False)
    first, end, count, *cblas = function.args

    def product(problem, shares):
        with b.if_else(worth_splitting(b, problem, count)) as (in_shares, whole):
            with in_shares:
                plan_shares(library, b, problem, shares, count)
                b.call(library.body, [shares, first, end, NULL])
            with whole:  # too small to split: share 0's owner computes it all
                with b.if_then(b.icmp_signed("==", first, I64(0))):
                    b.call(library.solve, [b.gep(shares, [I32(0), I32(0)],
                                                 source_etype=SHARES)])
    _checked_product(library, function, b, cblas, product,
                     scales=b.icmp_signed("==", first, I64(0)))


def _checked_product(library, function, b, cblas, product, scales):
    """Return at once on arguments CBLAS rejects; when alpha or k is 0, only scale C
    (if `scales`, an i1: one caller does it); else product(problem, shares), shares
    holding the problem."""
    order, trans_a, trans_b, m, n, k, alpha, a, lda, b_, ldb, beta, c, ldc = cblas
    ignored = function.append_basic_block("invalid_or_empty")
    valid = valid_arguments(b, order, trans_a, trans_b, m, n, k, lda, ldb, ldc)
    proceed = function.append_basic_block("proceed")
    b.cbranch(valid, proceed, ignored)
    b.position_at_end(ignored)
    b.ret_void()
    b.position_at_end(proceed)
    problem = cblas_problem(b, library.tile, order, trans_a, trans_b, m, n, k, alpha, a,
                            lda, b_, ldb, beta, c, ldc)
    shares = entry_alloca(b, SHARES, ALIGNMENT)
    pointer = b.gep(shares, [I32(0), I32(0)], source_etype=SHARES)
    store_problem(b, problem, pointer)
    only_scaled = b.or_(b.icmp_signed("==", problem["k"], I64(0)),
                        b.fcmp_ordered("==", alpha, ir.Constant(F32, 0.0)))
    with b.if_else(only_scaled) as (scaled, multiplied):
        with scaled:
            with b.if_then(scales):
                b.call(library.scale, [pointer])
        with multiplied:
            product(problem, shares)
    b.ret_void()


def _define_entry(library):
    function, b = new_function(library.module, SGEMM, VOID, cblas_type().args,
                               internal=False)
    entry_threads = library.module.globals[SGEMM_THREADS]
    b.call(entry_threads, [I32(library.threads), *function.args])
    b.ret_void()
