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

A loop whose stores should bypass the caches (jit/caches.py) runs as streaming_vector_loop:
first the few elements before its output's next aligned vector, then the plain loop with
aligned non-temporal stores of that output; a store_fence after the whole nest.

Masked-off lanes compute on zeros: float operations do not trap, integer division makes
its divisor safe first (math/scalar.py), and errors are flagged only from existing lanes.
"""
import numpy as np
from llvmlite import ir

from ..emitter import I1, I64, LaneOffset, module_global
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
        _masked_run(em, em.all_moved(offsets, done, steps), steps, body, lanes, rest)


def streaming_vector_loop(em, count, steps, offsets, body, lanes, name, streamed):
    """vector_loop whose whole-vector stores to one view are non-temporal. streamed:
    (position of that view among the offsets, its base pointer, its dtype); it must
    walk the loop with step 1. x86 stores a vector non-temporally only at an address
    aligned to its size (else it splits it into 8-byte stores), so a masked vector
    first covers the elements before that boundary. An array whose address is not a
    multiple of its itemsize never reaches the boundary: it gets the plain loop."""
    position, base, dtype = streamed
    itemsize, b = np.dtype(dtype).itemsize, em.b
    width = lanes * itemsize  # bytes per vector store: a power of two, at most 64
    count = I64(count) if isinstance(count, int) else count
    address = b.ptrtoint(em.element_pointer(base, dtype, offsets[position]), I64)
    whole_elements = b.icmp_unsigned("==", b.and_(address, I64(itemsize - 1)), I64(0))
    with b.if_else(whole_elements) as (aligned, unaligned):
        with aligned:
            missing = b.and_(b.sub(I64(0), address), I64(width - 1))
            head = _minimum(b, b.udiv(missing, I64(itemsize)), count)
            with em.if_then(b.icmp_signed(">", head, I64(0))):
                _masked_run(em, offsets, steps, body, lanes, head)
            rest = em.all_moved(offsets, head, steps)
            with em.streaming(base, width):
                vector_loop(em, b.sub(count, head), steps, rest, body, lanes, name)
        with unaligned:
            vector_loop(em, count, steps, offsets, body, lanes, name)


def _masked_run(em, offsets, steps, body, lanes, count):
    """body on the first `count` (< lanes, at run time) elements, as one masked vector."""
    lane = ir.Constant(ir.VectorType(I64, lanes), list(range(lanes)))
    with em.vectorized(lanes):
        mask = em.b.icmp_signed("<", lane, em.splat(count))
    with em.vectorized(lanes, mask):
        body([LaneOffset(first, step) for first, step in zip(offsets, steps)])


def _minimum(b, x, y):
    return b.select(b.icmp_unsigned("<", x, y), x, y)


def store_fence(em):
    """llvm.x86.sse.sfence, which the caller emits after a nest of streaming loops:
    non-temporal stores are weakly ordered; the fence makes them visible before this
    thread tells another that its share is done (or returns)."""
    name = "llvm.x86.sse.sfence"
    fence = module_global(em.module, name, lambda: ir.Function(
        em.module, ir.FunctionType(ir.VoidType(), []), name))
    em.b.call(fence, [])
