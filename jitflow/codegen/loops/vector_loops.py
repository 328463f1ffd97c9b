"""Innermost loops written as vector code, so that no loop vectorizer is needed.

A loop nest whose innermost loop every view walks either contiguously (stride 1) or not
at all (stride 0, a broadcast) runs its body on vectors of `lanes` elements: one vector
iteration per `lanes` elements, then the last count % lanes elements in one vector whose
missing lanes are masked out of every load, store and error check. The body is the
scalar body itself, emitted in Emitter.vectorized mode.

Why not leave it to LLVM: its loop vectorizer and the clean-up passes around it took
most of the optimizer's time on a training step (a scalar loop came back as a vector
loop, a vector epilogue, a scalar remainder and their checks), and rows shorter than
a vector (10 classes) stayed scalar. Written out here, a short row is one masked vector
and a module needs only a short pass pipeline (jit/engine.py).

Masked-off lanes compute on zeros: float operations do not trap, integer division makes
its divisor safe first (math/scalar.py), and errors are flagged only from existing lanes.
"""
import numpy as np
from llvmlite import ir

from ..emitter import I1, I64, LaneOffset
from .accumulate import VECTOR_BYTES  # a whole AVX-512 register; AVX2 splits it in two


def vector_lanes(shape, views, stride_lists):
    """The lanes of the vector loop of a nest over `shape` (collapsed), or None when it
    has no loop or no element, or when some view walks the innermost axis with a stride
    other than 0 or 1 (a transpose or a step: a scalar loop then)."""
    if not shape or 0 in shape:
        return None
    widest = 1
    for view, strides in zip(views, stride_lists):
        if view.constant is not None:
            continue
        if strides[-1] not in (0, 1):
            return None
        widest = max(widest, np.dtype(view.dtype).itemsize)
    return VECTOR_BYTES // widest


def vector_loop(em, count, steps, offsets, body, lanes, name):
    """for the `count` elements of the innermost axis (an int, or an i64 at run time),
    `lanes` at a time: body(LaneOffset per view) in vectorized mode. offsets: each view's
    element offset at the loop's start; steps: each view's stride along the loop, 0 or 1."""
    b = em.b

    def run(start, mask=None):
        firsts = em.all_moved(offsets, start, steps)
        with em.vectorized(lanes, mask):
            body([LaneOffset(first, step) for first, step in zip(firsts, steps)])

    if isinstance(count, int):
        blocks, rest = divmod(count, lanes)
        if blocks:
            with em.for_range(blocks, name=name) as block:
                run(em.mul(block, I64(lanes)))
        if rest:
            mask = ir.Constant(ir.VectorType(I1, lanes), [1] * rest + [0] * (lanes - rest))
            run(I64(blocks * lanes), mask)
        return
    blocks = b.udiv(count, I64(lanes))
    with em.for_range(blocks, name=name) as block:
        run(em.mul(block, I64(lanes)))
    done = b.mul(blocks, I64(lanes))
    rest = b.sub(count, done)
    with em.if_then(b.icmp_signed(">", rest, I64(0))):
        lane = ir.Constant(ir.VectorType(I64, lanes), list(range(lanes)))
        with em.vectorized(lanes):
            mask = b.icmp_signed("<", lane, em.splat(rest))
        run(done, mask)
