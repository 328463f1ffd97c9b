"""Lowerings of complex_solve, complex_slogdet, complex_eigh, complex_svd,
complex_cholesky, complex_qr and complex_eig: the real and imaginary parts of each
matrix are interleaved into a scratch buffer (the layout of LAPACK's complex numbers) in
column-major order, LAPACK's complex routine (gesv, getrf, heevd, gesdd, potrf, geqrf
and ungqr, geev) is called on it once per matrix of the batch, as NumPy calls it, and
complex results are split back into parts in row-major order.
"""
import numpy as np

from ..emitter import I32, I64
from ..errors import (EIGENVALUES_DID_NOT_CONVERGE, NOT_POSITIVE_DEFINITE,
                      SINGULAR_MATRIX, SVD_DID_NOT_CONVERGE)
from ..math import mathlib
from ..math.scalar import RULES as SCALAR
from ..views import View
from .factorizations import (PIVOTS, _check, _empty, _fill_identity, _keep_triangle,
                             _per_matrix, _swapped)
from .lapack import COLUMN_MAJOR, char, routine


def _part_views(interleaved):
    """The real and imaginary parts of a (..., 2) buffer, as views of its shape less
    the last axis."""
    shape, strides = interleaved.shape[:-1], interleaved.strides[:-1]
    return tuple(View(interleaved.base, interleaved.dtype, shape, strides,
                      interleaved.offset + part) for part in (0, 1))


def _copy_pairs(lo, sources, targets):
    """targets[k][...] = sources[k] for the two parts, in one loop nest."""
    def body(offsets):
        for k in range(2):
            value = lo.read(sources[k], offsets[k])
            lo.em.store(value, targets[k].base, targets[k].dtype, offsets[2 + k])
    lo.loop_nest(targets[0].shape, [*sources, *targets], body, owner=2)


def _column_major_copy(lo, real, imag, shape):
    """A scratch copy of complex matrices given by their parts (broadcast to `shape`),
    interleaved, each matrix in column-major order: the buffer's rows are its columns."""
    work = _scratch(lo, shape, real.dtype)
    _copy_pairs(lo, tuple(_swapped(part.broadcast_to(tuple(shape))) for part in (real, imag)),
                _part_views(work))
    return work


def _scratch(lo, shape, dtype):
    """An interleaved scratch buffer for column-major matrices of `shape`."""
    *batch, rows, columns = shape
    return lo.memory.scratch((*batch, columns, rows, 2), dtype, until=lo.node_index)


def _row_major_parts(lo, work, outputs):
    """The matrices of the column-major interleaved buffer `work` into the row-major
    parts `outputs` (the leading rows and columns of each, as many as they hold)."""
    rank = len(work.shape)
    axes = tuple(range(rank - 3)) + (rank - 2, rank - 3, rank - 1)
    shape = (*outputs[0].shape, 2)
    _copy_pairs(lo, _part_views(work.transpose(axes).slice((0,) * rank, (1,) * rank, shape)),
                outputs)


def _call(lo, name, dtype, *arguments):
    function = routine(lo.module, name, dtype, complex_parts=True)
    return lo.builder.call(function, [I32(COLUMN_MAJOR), *arguments])


def _magnitude(em, real, imag, dtype):
    """|real + i imag| scaled by the larger part (no overflow of the squares)."""
    b = em.b
    larger = b.select(b.fcmp_ordered(">", SCALAR["abs"](em, real, dtype=dtype),
                                     SCALAR["abs"](em, imag, dtype=dtype)),
                      SCALAR["abs"](em, real, dtype=dtype), SCALAR["abs"](em, imag, dtype=dtype))
    safe = b.select(b.fcmp_ordered("==", larger, em.const(0, dtype)), em.const(1, dtype), larger)
    r, i = b.fdiv(real, safe), b.fdiv(imag, safe)
    return b.fmul(larger, SCALAR["sqrt"](em, b.fadd(b.fmul(r, r), b.fmul(i, i)), dtype=dtype))


def complex_solve(lo, node, inputs, outputs):
    """x = a^-1 b by gesv (LU with partial pivoting, as NumPy's solve)."""
    a_real, a_imag, b_real, b_imag = inputs
    *batch, n, k = outputs[0].shape
    if _empty(outputs[0]):
        return
    work = _column_major_copy(lo, a_real, a_imag, (*batch, n, n))
    solution = _column_major_copy(lo, b_real, b_imag, (*batch, n, k))
    pivots = lo.memory.scratch((n,), PIVOTS, until=lo.node_index)

    def call(pointers):
        a_at, pivots_at, x_at = pointers
        info = _call(lo, "gesv", a_real.dtype, I32(n), I32(k), a_at, I32(n), pivots_at, x_at,
                     I32(n))
        _check(lo, info, SINGULAR_MATRIX)
    _per_matrix(lo, batch, [(work, 3), (pivots, 1), (solution, 3)], call)
    _row_major_parts(lo, solution, outputs)


def complex_slogdet(lo, node, inputs, outputs):
    """(sign, log|det|) from getrf's LU as NumPy reads it: the sign of the permutation
    times each diagonal element over its magnitude, the logs of the magnitudes summed in
    order; an exactly singular matrix gives (0, -inf)."""
    (real, imag), (sign_r, sign_i, logdet) = inputs, outputs
    batch, n = logdet.shape, real.shape[-1]
    if _empty(logdet):
        return
    if n == 0:
        for view, value in ((sign_r, 1), (sign_i, 0), (logdet, 0)):
            lo.fill(view, value)
        return
    work = _column_major_copy(lo, real, imag, (*batch, n, n))  # (the same diagonal)
    pivots = lo.memory.scratch((n,), PIVOTS, until=lo.node_index)
    em, b, dtype = lo.em, lo.builder, real.dtype
    scalar = em.const(0, dtype).type
    slots = [lo.entry_alloca(scalar) for _ in range(3)]

    def call(pointers):
        a_at, pivots_at, sign_r_at, sign_i_at, log_at = pointers
        info = _call(lo, "getrf", dtype, I32(n), I32(n), a_at, I32(n), pivots_at)
        _check(lo, info)  # a positive info: an exactly singular matrix, det 0
        for slot, value in zip(slots, (1, 0, 0)):
            b.store(em.const(value, dtype), slot)
        with em.for_range(n, name="diagonal") as i:
            at = b.mul(i, I64(2 * (n + 1)))
            element = (em.load(a_at, dtype, at), em.load(a_at, dtype, b.add(at, I64(1))))
            magnitude = _magnitude(em, *element, dtype)
            pivot = b.sext(em.load(pivots_at, PIVOTS, i), I64)
            swapped = b.icmp_signed("!=", pivot, b.add(i, I64(1)))
            unit = [b.fdiv(part, magnitude) for part in element]
            unit = [b.select(swapped, b.fneg(part), part) for part in unit]
            current = [b.load(slot, typ=scalar) for slot in slots[:2]]
            b.store(b.fsub(b.fmul(current[0], unit[0]), b.fmul(current[1], unit[1])), slots[0])
            b.store(b.fadd(b.fmul(current[0], unit[1]), b.fmul(current[1], unit[0])), slots[1])
            b.store(b.fadd(b.load(slots[2], typ=scalar), mathlib.call(b, "log", magnitude)),
                    slots[2])
        singular = b.icmp_signed(">", info, I32(0))
        for slot, at, value in zip(slots, (sign_r_at, sign_i_at, log_at), (0, 0, -np.inf)):
            b.store(b.select(singular, em.const(value, dtype), b.load(slot, typ=scalar)), at)
    _per_matrix(lo, batch, [(work, 3), (pivots, 1), (sign_r, 0), (sign_i, 0), (logdet, 0)],
                call)


def complex_eigh(lo, node, inputs, outputs):
    """Eigenvalues (ascending) and eigenvectors of the lower triangle of Hermitian
    matrices, by heevd."""
    (real, imag), (values, vectors_r, vectors_i) = inputs, outputs
    *batch, n, _ = vectors_r.shape
    if _empty(vectors_r):
        return
    work = _column_major_copy(lo, real, imag, vectors_r.shape)

    def call(pointers):
        work_at, values_at = pointers
        info = _call(lo, "heevd", real.dtype, char("V"), char("L"), I32(n), work_at, I32(n),
                     values_at)
        _check(lo, info, EIGENVALUES_DID_NOT_CONVERGE)
    _per_matrix(lo, batch, [(work, 3), (values, 1)], call)
    _row_major_parts(lo, work, (vectors_r, vectors_i))


def complex_svd(lo, node, inputs, outputs):
    """U, s, Vh by gesdd (divide and conquer, as NumPy's svd); s alone without
    compute_uv (jobz 'N')."""
    (real, imag) = inputs
    vectors = len(outputs) == 5
    values = outputs[2] if vectors else outputs[0]
    m, n = real.shape[-2:]
    batch = values.shape[:-1]
    if m == 0 or n == 0:  # NumPy's factors of an empty matrix: identities, where square
        if vectors:
            for factor_real, factor_imag in (outputs[:2], outputs[3:]):
                if not _empty(factor_real):
                    _fill_identity(lo, factor_real)
                    lo.fill(factor_imag, 0)
        return
    work = _column_major_copy(lo, real, imag, (*batch, m, n))
    if vectors:
        job = "A" if node.params["full_matrices"] else "S"
        vh_rows = outputs[3].shape[-2]
        u = _scratch(lo, outputs[0].shape, real.dtype)
        vh = _scratch(lo, outputs[3].shape, real.dtype)
    else:
        job, u, vh, vh_rows = "N", work, work, 1  # never written for jobz 'N'

    def call(pointers):
        a_at, s_at, u_at, vh_at = pointers
        info = _call(lo, "gesdd", real.dtype, char(job), I32(m), I32(n), a_at, I32(m), s_at,
                     u_at, I32(m), vh_at, I32(vh_rows))
        _check(lo, info, SVD_DID_NOT_CONVERGE, refusal_is_failure=True)
    _per_matrix(lo, batch, [(work, 3), (values, 1), (u, 3), (vh, 3)], call)
    if vectors:
        _row_major_parts(lo, u, outputs[:2])
        _row_major_parts(lo, vh, outputs[3:])


def complex_cholesky(lo, node, inputs, outputs):
    """L with a = L L^H by potrf on the lower triangle; the upper one is zeroed."""
    (real, imag), factor_real = inputs, outputs[0]
    *batch, n, _ = factor_real.shape
    if _empty(factor_real):
        return
    work = _column_major_copy(lo, real, imag, factor_real.shape)

    def call(pointers):
        info = _call(lo, "potrf", real.dtype, char("L"), I32(n), pointers[0], I32(n))
        _check(lo, info, NOT_POSITIVE_DEFINITE)
    _per_matrix(lo, batch, [(work, 3)], call)
    _row_major_parts(lo, work, outputs)
    for part in outputs:
        _keep_triangle(lo, part, lower=True)


def complex_qr(lo, node, inputs, outputs):
    """Q, R by geqrf (Householder reflections, as NumPy's qr) and ungqr (Q from them)."""
    (real, imag), (q_real, q_imag, r_real, r_imag) = inputs, outputs
    *batch, m, n = real.shape
    k = min(m, n)
    if k == 0:
        for part in (r_real, r_imag, q_imag):
            if not _empty(part):
                lo.fill(part, 0)
        if not _empty(q_real):
            _fill_identity(lo, q_real)
        return
    work = _column_major_copy(lo, real, imag, (*batch, m, n))  # column j: work[..., j, :, :]
    scales = lo.memory.scratch((*batch, k, 2), real.dtype, until=lo.node_index)

    def factor(pointers):
        a_at, scales_at = pointers
        _check(lo, _call(lo, "geqrf", real.dtype, I32(m), I32(n), a_at, I32(m), scales_at))
    _per_matrix(lo, batch, [(work, 3), (scales, 2)], factor)
    _row_major_parts(lo, work, (r_real, r_imag))  # r: the leading rows
    for part in (r_real, r_imag):
        _keep_triangle(lo, part, lower=False)
    if not (lo.is_used(node.outputs[0]) or lo.is_used(node.outputs[1])):
        return  # mode "r", or Q unread: no ungqr (as for real matrices)
    columns = q_real.shape[-1]
    q = _scratch(lo, q_real.shape, real.dtype)
    rank = len(real.shape) + 1
    reflectors = (*batch, min(columns, n), m, 2)  # ungqr sets the columns beyond them
    source = work.slice((0,) * rank, (1,) * rank, reflectors)
    target = q.slice((0,) * rank, (1,) * rank, reflectors)
    _copy_pairs(lo, _part_views(source), _part_views(target))

    def expand(pointers):
        q_at, scales_at = pointers
        _check(lo, _call(lo, "ungqr", real.dtype, I32(m), I32(columns), I32(k), q_at,
                         I32(m), scales_at))
    _per_matrix(lo, batch, [(q, 3), (scales, 2)], expand)
    _row_major_parts(lo, q, (q_real, q_imag))


def complex_eig(lo, node, inputs, outputs):
    """Eigenvalues and right eigenvectors of general complex matrices, by geev, in its
    order and normalization (NumPy's)."""
    (real, imag) = inputs
    vectors = len(outputs) == 4
    values_real = outputs[0]
    *batch, n = values_real.shape
    if _empty(values_real):
        return
    work = _column_major_copy(lo, real, imag, (*batch, n, n))
    values = lo.memory.scratch((*batch, n, 2), real.dtype, until=lo.node_index)
    right = _scratch(lo, (*batch, n, n), real.dtype) if vectors else None
    operands = [(work, 3), (values, 2)] + ([(right, 3)] if vectors else [])

    def call(pointers):
        a_at, values_at = pointers[:2]
        right_at = pointers[2] if vectors else a_at  # (never written for jobvr 'N')
        info = _call(lo, "geev", real.dtype, char("N"), char("V" if vectors else "N"),
                     I32(n), a_at, I32(n), values_at, a_at, I32(n), right_at, I32(n))
        _check(lo, info, EIGENVALUES_DID_NOT_CONVERGE)
    _per_matrix(lo, batch, operands, call)
    _copy_pairs(lo, _part_views(values), outputs[:2])
    if vectors:
        _row_major_parts(lo, right, outputs[2:])


LOWERINGS = {"complex_solve": complex_solve, "complex_slogdet": complex_slogdet,
             "complex_eigh": complex_eigh, "complex_svd": complex_svd,
             "complex_cholesky": complex_cholesky, "complex_qr": complex_qr,
             "complex_eig": complex_eig}
