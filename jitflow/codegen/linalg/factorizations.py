"""Lowerings of solve, slogdet, cholesky, eigh, eig, svd and qr: each copies its operand
into a scratch buffer in column-major order, calls LAPACK on it once per matrix of the
batch, from a serial loop over the batch axes (LAPACK's own threads work inside each
call), and transposes the factors back: NumPy's own LAPACK calls, so its factors, signs
included. (LAPACKE's row-major routines would make these copies themselves, with an
allocation and a slower transpose each: solve of one 512x512 matrix took twice as long
through them.) A status LAPACK returns becomes
the error numpy.linalg raises for it: a singular matrix in solve, one that is not
positive definite in cholesky, an iteration that did not converge.
"""
import numpy as np

from ..emitter import I32, I64
from ..errors import (EIGENVALUES_DID_NOT_CONVERGE, LAPACK_FAILED, NOT_POSITIVE_DEFINITE,
                      OUT_OF_MEMORY, SINGULAR_MATRIX, SVD_DID_NOT_CONVERGE)
from ..loops.reduced_views import index_view
from ..math import mathlib
from ..math.scalar import RULES as SCALAR
from ..views import View
from .lapack import (COLUMN_MAJOR, WORK_MEMORY_ERROR, WORKSPACES, char, routine,
                     workspace_sizes)

PIVOTS = np.dtype(np.int32)  # lapack_int


# --- shared steps --------------------------------------------------------------------------

def _per_matrix(lo, batch, operands, call):
    """call(pointers) once per index of the `batch` axes; operands are (view, core)
    pairs, the last `core` axes of a view being one matrix (or vector) of the batch. A
    view whose every axis is core is shared by all the calls."""
    views = [View(v.base, v.dtype, v.shape[:len(v.shape) - core],
                  v.strides[:len(v.shape) - core], v.offset).broadcast_to(batch)
             for v, core in operands]

    def body(offsets):
        call([lo.em.element_pointer(v.base, v.dtype, offset)
              for v, offset in zip(views, offsets)])
    lo.loop_nest(tuple(batch), views, body)


def _check(lo, info, failure=None, refusal_is_failure=False):
    """Flag LAPACK's status: `failure` for a positive info (the matrix's fault), unless
    None (a positive info is then an answer, not an error). refusal_is_failure: a
    negative info is `failure` too. gesdd gives one for a matrix holding inf or NaN (an
    inner scaling routine refuses its norm), where NumPy, which reads any nonzero info
    as a failure, raises "SVD did not converge"."""
    b, error = lo.builder, lo.em.error
    if failure is not None:
        error.flag_if(b.icmp_signed(">", info, I32(0)), failure)
    memory = b.or_(b.icmp_signed("==", info, I32(WORK_MEMORY_ERROR)),
                   b.icmp_signed("==", info, I32(WORK_MEMORY_ERROR - 1)))
    error.flag_if(memory, OUT_OF_MEMORY)
    error.flag_if(b.icmp_signed("<", info, I32(0)),
                  failure if refusal_is_failure else LAPACK_FAILED)


def _call(lo, name, dtype, *arguments):
    """LAPACKE's `name`, column-major."""
    return lo.builder.call(routine(lo.module, name, dtype), [I32(COLUMN_MAJOR), *arguments])


def _workspaces(lo, name, dtype, *query):
    """Scratch workspaces for `name`'s _work form, of the lengths LAPACK asks for when
    called with `query` (workspace_sizes), shared by every matrix of the batch: as
    (view, 0) operands of _per_matrix, and the lengths."""
    lengths = workspace_sizes(name, dtype, *query)
    kinds = [space for space in WORKSPACES[name] if space != "g"]
    views = [lo.memory.scratch((length,), dtype if kind == "w" else PIVOTS,
                               until=lo.node_index) for kind, length in zip(kinds, lengths)]
    return [(view, 1) for view in views], lengths


def _call_work(lo, name, dtype, arguments, workspaces):
    """LAPACKE's `name`_work, column-major: `arguments`, then each workspace (pointer,
    length) as WORKSPACES[name] orders them."""
    function = routine(lo.module, name, dtype, work=True)
    return lo.builder.call(function, [I32(COLUMN_MAJOR), *arguments, *workspaces])


def _column_major_copy(lo, view, shape):
    """Each matrix of `view` (broadcast to `shape`) copied into a scratch buffer in
    column-major order, as LAPACK holds it: the buffer's rows are its columns."""
    *batch, rows, columns = shape
    copy = lo.memory.scratch((*batch, columns, rows), view.dtype, until=lo.node_index)
    lo.copy(_swapped(view.broadcast_to(tuple(shape))), copy)
    return copy


def _swapped(view):
    """The view with its last two axes swapped (no copy)."""
    rank = len(view.shape)
    return view.transpose(tuple(range(rank - 2)) + (rank - 1, rank - 2))


def _keep_triangle(lo, view, lower):
    """Zero the elements of each matrix of `view` outside its lower (upper) triangle."""
    shape, em, b = view.shape, lo.em, lo.builder
    rank = len(shape)
    zero = em.const(0, view.dtype)

    def body(offsets):
        at, row, column = offsets
        outside = b.icmp_signed(">" if lower else "<", column, row)
        value = em.load(view.base, view.dtype, at)
        em.store(b.select(outside, zero, value), view.base, view.dtype, at)
    lo.loop_nest(shape, [view, index_view(shape, (rank - 2,)),
                         index_view(shape, (rank - 1,))], body)


def _fill_identity(lo, view):
    shape, em, b = view.shape, lo.em, lo.builder
    rank = len(shape)
    one, zero = em.const(1, view.dtype), em.const(0, view.dtype)

    def body(offsets):
        at, row, column = offsets
        em.store(b.select(b.icmp_signed("==", row, column), one, zero), view.base,
                 view.dtype, at)
    lo.loop_nest(shape, [view, index_view(shape, (rank - 2,)),
                         index_view(shape, (rank - 1,))], body)


def _empty(*views):
    return any(v.size == 0 for v in views)


# --- the primitives ------------------------------------------------------------------------

def solve(lo, node, inputs, outputs):
    """x = a^-1 b by getrf and getrs (gesv's two steps: LU with partial pivoting, as
    NumPy's solve), on column-major copies of a and b that jitflow makes itself."""
    (a, b), (x,) = inputs, outputs
    *batch, n, k = x.shape
    if _empty(x):
        return
    work = _column_major_copy(lo, a, (*batch, n, n))
    rhs = _column_major_copy(lo, b, (*batch, n, k))
    pivots = lo.memory.scratch((n,), PIVOTS, until=lo.node_index)

    def call(pointers):
        a_at, pivots_at, rhs_at = pointers
        info = _call(lo, "getrf", x.dtype, I32(n), I32(n), a_at, I32(n), pivots_at)
        _check(lo, info, SINGULAR_MATRIX)
        with lo.builder.if_then(lo.builder.icmp_signed("==", info, I32(0))):
            info = _call(lo, "getrs", x.dtype, char("N"), I32(n), I32(k), a_at, I32(n),
                         pivots_at, rhs_at, I32(n))
            _check(lo, info)
    _per_matrix(lo, batch, [(work, 2), (pivots, 1), (rhs, 2)], call)
    lo.copy(_swapped(rhs), x)


def slogdet(lo, node, inputs, outputs):
    """(sign, log|det|) from getrf's LU, the way NumPy's slogdet reads it: the sign of
    the permutation and of each diagonal element, the logs of their magnitudes summed in
    order; an exactly singular matrix gives (0, -inf)."""
    (a,), (sign, logdet) = inputs, outputs
    *batch, n, _ = a.shape
    if _empty(sign):
        return
    if n == 0:
        lo.fill(sign, 1)
        lo.fill(logdet, 0)
        return
    work = _column_major_copy(lo, a, (*batch, n, n))  # (its diagonal: the same places)
    pivots = lo.memory.scratch((n,), PIVOTS, until=lo.node_index)
    em, b, dtype = lo.em, lo.builder, a.dtype
    scalar = em.const(0, dtype).type
    accumulators = [lo.entry_alloca(scalar) for _ in range(2)]

    def call(pointers):
        a_at, pivots_at, sign_at, logdet_at = pointers
        info = _call(lo, "getrf", dtype, I32(n), I32(n), a_at, I32(n), pivots_at)
        _check(lo, info)  # a positive info: an exactly singular matrix, det 0
        sign_slot, log_slot = accumulators
        b.store(em.const(1, dtype), sign_slot)
        b.store(em.const(0, dtype), log_slot)
        with em.for_range(n, name="diagonal") as i:
            element = em.load(a_at, dtype, b.mul(i, I64(n + 1)))
            pivot = b.sext(em.load(pivots_at, PIVOTS, i), I64)
            swapped = b.icmp_signed("!=", pivot, b.add(i, I64(1)))
            negative = b.fcmp_ordered("<", element, em.const(0, dtype))
            flip = b.xor(swapped, negative)
            current = b.load(sign_slot, typ=scalar)
            b.store(b.select(flip, b.fneg(current), current), sign_slot)
            magnitude = SCALAR["abs"](em, element, dtype=dtype)
            b.store(b.fadd(b.load(log_slot, typ=scalar), mathlib.call(b, "log", magnitude)), log_slot)
        singular = b.icmp_signed(">", info, I32(0))
        b.store(b.select(singular, em.const(0, dtype), b.load(sign_slot, typ=scalar)), sign_at)
        b.store(b.select(singular, em.const(-np.inf, dtype), b.load(log_slot, typ=scalar)), logdet_at)
    _per_matrix(lo, batch, [(work, 2), (pivots, 1), (sign, 0), (logdet, 0)], call)


def cholesky(lo, node, inputs, outputs):
    """L with a = L L^T by potrf on the lower triangle (of a column-major copy, as
    NumPy's); the upper one is zeroed."""
    (a,), (factor,) = inputs, outputs
    *batch, n, _ = factor.shape
    if _empty(factor):
        return
    work = _column_major_copy(lo, a, (*batch, n, n))

    def call(pointers):
        info = _call(lo, "potrf", factor.dtype, char("L"), I32(n), pointers[0], I32(n))
        _check(lo, info, NOT_POSITIVE_DEFINITE)
    _per_matrix(lo, batch, [(work, 2)], call)
    lo.copy(_swapped(work), factor)
    _keep_triangle(lo, factor, lower=True)


def eigh(lo, node, inputs, outputs):
    """Eigenvalues (ascending) and eigenvectors of the lower triangle, by syevd on a
    column-major copy (NumPy's call: its eigenvectors, signs included), the eigenvectors
    transposed back into row-major order; without vectors (eigvalsh), by jobz 'N'."""
    (a,), values = inputs, outputs[0]
    *batch, n, _ = a.shape
    if _empty(a):
        return
    vectors = node.params.get("vectors", True)
    job = "V" if vectors else "N"
    work = _column_major_copy(lo, a, (*batch, n, n))
    spaces, (length, int_length) = _workspaces(lo, "syevd", a.dtype, job, "L", n, None, n,
                                               None)

    def call(pointers):
        work_at, values_at, space_at, int_space_at = pointers
        info = _call_work(lo, "syevd", a.dtype,
                          [char(job), char("L"), I32(n), work_at, I32(n), values_at],
                          [space_at, I32(length), int_space_at, I32(int_length)])
        _check(lo, info, EIGENVALUES_DID_NOT_CONVERGE)
    _per_matrix(lo, batch, [(work, 2), (values, 1), *spaces], call)
    if vectors:
        lo.copy(_swapped(work), outputs[1])


def eig(lo, node, inputs, outputs):
    """Eigenvalues (real and imaginary parts) and right eigenvectors of a general
    matrix, by geev on a column-major copy, in NumPy's order and normalization (geev's
    own); the eigenvectors transposed back."""
    (a,) = inputs
    real, imag = outputs[:2]
    vectors = outputs[2] if len(outputs) == 3 else None
    *batch, n, _ = a.shape
    if _empty(real):
        return
    work = _column_major_copy(lo, a, (*batch, n, n))
    right = lo.memory.scratch((*batch, n, n), a.dtype, until=lo.node_index) \
        if vectors else work  # (never written for jobvr 'N')
    operands = [(work, 2), (real, 1), (imag, 1), (right, 2)]

    def call(pointers):
        a_at, real_at, imag_at, right_at = pointers
        info = _call(lo, "geev", a.dtype, char("N"), char("V" if vectors else "N"), I32(n),
                     a_at, I32(n), real_at, imag_at, a_at, I32(n), right_at, I32(n))
        _check(lo, info, EIGENVALUES_DID_NOT_CONVERGE)
    _per_matrix(lo, batch, operands, call)
    if vectors:
        lo.copy(_swapped(right), vectors)


def svd(lo, node, inputs, outputs):
    """u, s, vt by gesdd (divide and conquer, as NumPy's svd) on a column-major copy,
    u and vt transposed back; s alone without compute_uv (jobz 'N': LAPACK then
    touches no vectors)."""
    (a,) = inputs
    u, s, vt = outputs if len(outputs) == 3 else (None, outputs[0], None)
    *batch, m, n = a.shape
    if m == 0 or n == 0:  # NumPy's factors of an empty matrix: identities, where square
        for factor in (u, vt):
            if factor is not None and not _empty(factor):
                _fill_identity(lo, factor)
        return
    if _empty(s):
        return
    work = _column_major_copy(lo, a, (*batch, m, n))
    if u is None:
        job, u_work, vt_work, vt_rows = "N", work, work, 1  # never written for jobz 'N'
    else:
        job, vt_rows = "A" if node.params["full_matrices"] else "S", vt.shape[-2]
        u_work = lo.memory.scratch((*batch, u.shape[-1], m), a.dtype, until=lo.node_index)
        vt_work = lo.memory.scratch((*batch, n, vt_rows), a.dtype, until=lo.node_index)

    spaces, (length,) = _workspaces(lo, "gesdd", a.dtype, job, m, n, None, m, None, None,
                                    m, None, vt_rows)
    int_space = lo.memory.scratch((8 * min(m, n),), PIVOTS, until=lo.node_index)

    def call(pointers):
        a_at, s_at, u_at, vt_at, space_at, int_space_at = pointers
        info = _call_work(lo, "gesdd", a.dtype,
                          [char(job), I32(m), I32(n), a_at, I32(m), s_at, u_at, I32(m),
                           vt_at, I32(vt_rows)], [space_at, I32(length), int_space_at])
        _check(lo, info, SVD_DID_NOT_CONVERGE, refusal_is_failure=True)
    _per_matrix(lo, batch, [(work, 2), (s, 1), (u_work, 2), (vt_work, 2), *spaces,
                            (int_space, 1)], call)
    if u is not None:
        lo.copy(_swapped(u_work), u)
        lo.copy(_swapped(vt_work), vt)


def qr(lo, node, inputs, outputs):
    """q, r by geqrf (Householder reflections, as NumPy's qr) and orgqr (q from them),
    on column-major copies, as NumPy calls them; q only when something reads it."""
    (a,), (q, r) = inputs, outputs
    *batch, m, n = a.shape
    k = min(m, n)
    if k == 0:
        if not _empty(r):
            lo.fill(r, 0)
        if not _empty(q):
            _fill_identity(lo, q)
        return
    work = _column_major_copy(lo, a, (*batch, m, n))  # column j: work[..., j, :]
    scales = lo.memory.scratch((*batch, k), a.dtype, until=lo.node_index)

    spaces, (length,) = _workspaces(lo, "geqrf", a.dtype, m, n, None, m, None)

    def factor(pointers):
        a_at, scales_at, space_at = pointers
        _check(lo, _call_work(lo, "geqrf", a.dtype, [I32(m), I32(n), a_at, I32(m), scales_at],
                              [space_at, I32(length)]))
    _per_matrix(lo, batch, [(work, 2), (scales, 1), *spaces], factor)
    origin, steps = (0,) * len(a.shape), (1,) * len(a.shape)
    lo.copy(_swapped(work).slice(origin, steps, (*batch, r.shape[-2], n)), r)
    _keep_triangle(lo, r, lower=False)
    if not lo.is_used(node.outputs[0]):
        # mode "r", or q unread: no orgqr, as NumPy's mode "r" (orgqr cannot fail, so
        # nothing NumPy would raise is lost; eigh and svd keep their vectors, whose
        # computation decides their values and errors)
        return
    columns = q.shape[-1]
    reflectors = (*batch, min(columns, n), m)  # orgqr sets the columns beyond them
    q_work = lo.memory.scratch((*batch, columns, m), a.dtype, until=lo.node_index)
    lo.copy(work.slice(origin, steps, reflectors), q_work.slice(origin, steps, reflectors))

    spaces, (length,) = _workspaces(lo, "orgqr", a.dtype, m, columns, k, None, m, None)

    def expand(pointers):
        q_at, scales_at, space_at = pointers
        _check(lo, _call_work(lo, "orgqr", a.dtype,
                              [I32(m), I32(columns), I32(k), q_at, I32(m), scales_at],
                              [space_at, I32(length)]))
    _per_matrix(lo, batch, [(q_work, 2), (scales, 1), *spaces], expand)
    lo.copy(_swapped(q_work), q)


LOWERINGS = {"solve": solve, "slogdet": slogdet, "cholesky": cholesky, "eigh": eigh,
             "eig": eig,
             "svd": svd, "qr": qr}
