"""Lowerings of the primitives that are not elementwise: arg reductions, scans, gathers,
concatenation, padding and iota (matmul and reductions have files of their own). Each
writes its contiguous output buffers.

Index arithmetic goes through Lowering.loop_nest, which hands the body one element
offset per view. An `index_view` has no memory: its offset *is* an index (a position
along some axes), which is how bodies learn where they are.
"""
import numpy as np

from .arg_reductions import arg_reduce
from .emitter import I64
from .errors import INDEX_OUT_OF_BOUNDS
from .matmul import matmul
from .reduced_views import index_view
from .reductions import reduce
from .scalar import RULES as SCALAR
from .views import View, contiguous_strides


def cumsum(lo, node, inputs, outputs):
    """out[..., k, ...] = out[..., k-1, ...] + x[..., k, ...], sequentially like NumPy."""
    (x,), (out,) = inputs, outputs
    em, b = lo.em, lo.builder
    axis = node.params["axis"]
    step = contiguous_strides(out.shape)[axis]

    def body(offsets):
        first = b.icmp_signed("==", offsets[2], I64(0))
        previous_at = b.select(first, offsets[1], b.sub(offsets[1], I64(step)))
        previous = em.load(out.base, out.dtype, previous_at)
        value = em.cast(lo.read(x, offsets[0]), x.dtype, out.dtype)
        total = SCALAR["add"](em, previous, value, dtype=out.dtype)
        # the first element is taken as it is: NumPy's cumsum of [-0.0] is [-0.0]
        em.store(b.select(first, value, total), out.base, out.dtype, offsets[1])
    lo.loop_nest(x.shape, [x, out, index_view(x.shape, (axis,))], body)


def gather(lo, node, inputs, outputs):
    """out[..., i, ...] = x[..., idx[i], ...]. Every index is checked first, in a loop of
    its own: NumPy raises IndexError for a bad index even when the result is empty (x's
    other axes may have size 0). The gather then reads element 0 for a bad index, so
    memory is never touched out of bounds."""
    x, indices, (out,) = inputs[0], inputs[1:], outputs
    em, b = lo.em, lo.builder
    axis, count = node.params["axis"], len(indices)
    batch = out.shape[axis:len(out.shape) - (len(x.shape) - axis - count)]
    sizes = x.shape[axis:axis + count]
    _check_indices(lo, indices, sizes, batch)
    if 0 in sizes:  # no element exists to read: any index was flagged, none may be read
        lo.fill(out, 0)
        return
    # x's own strides on the axes that are not indexed; 0 on the batch axes.
    rest = x.strides[:axis] + (0,) * len(batch) + x.strides[axis + count:]
    base = View(None, x.dtype, out.shape, rest, x.offset)
    index_views = [_placed(v, out.shape, axis, batch) for v in indices]

    def body(offsets):
        position = offsets[0]
        for m, (view, offset) in enumerate(zip(index_views, offsets[1:-1])):
            index, bad = _normalized_index(lo, view, offset, sizes[m])
            index = b.select(bad, I64(0), index)
            position = b.add(position, b.mul(index, I64(x.strides[axis + m])))
        em.store(lo.read(x, position), out.base, out.dtype, offsets[-1])
    lo.loop_nest(out.shape, [base] + index_views + [out], body, owner=len(index_views) + 1)


def _check_indices(lo, indices, sizes, batch):
    """Flag an IndexError if any index is outside -size <= index < size."""
    def body(offsets):
        for view, offset, size in zip(indices, offsets, sizes):
            _, bad = _normalized_index(lo, view, offset, size)
            lo.em.error.flag_if(bad, INDEX_OUT_OF_BOUNDS)
    lo.loop_nest(batch, list(indices), body)


def _normalized_index(lo, view, offset, size):
    """(index, bad): the index read at `offset`, negative ones counted from the end, and
    whether it is out of bounds."""
    b = lo.builder
    index = lo.em.cast(lo.read(view, offset), view.dtype, np.dtype(np.int64))
    index = b.select(b.icmp_signed("<", index, I64(0)), b.add(index, I64(size)), index)
    bad = b.or_(b.icmp_signed("<", index, I64(0)), b.icmp_signed(">=", index, I64(size)))
    return index, bad


def _placed(index, out_shape, axis, batch):
    """An index array read at the output's positions: its broadcast batch axes sit at
    `axis`, every other output axis has stride 0."""
    strides = index.broadcast_to(batch).strides
    full = (0,) * axis + strides + (0,) * (len(out_shape) - axis - len(batch))
    return View(index.base, index.dtype, tuple(out_shape), full, index.offset, index.constant)


def concatenate(lo, node, inputs, outputs):
    (out,), axis = outputs, node.params["axis"]
    start = 0
    for x in inputs:
        starts = [start if i == axis else 0 for i in range(len(out.shape))]
        lo.copy(x, out.slice(starts, [1] * len(out.shape), x.shape))
        start += x.shape[axis]


def pad(lo, node, inputs, outputs):
    """x with `value` around it. NumPy converts the value by assignment to the array's
    dtype (2.5 pads an int array with 2; inf raises OverflowError), even when every width
    is 0, but never for a 0-d array, which np.pad cannot pad: the same here, at compile
    time, since the value is static."""
    (x,), (out,) = inputs, outputs
    widths = node.params["widths"]
    if x.shape:
        value = np.empty((), out.dtype)
        value[()] = node.params["value"]
        if any(any(pair) for pair in widths):
            lo.fill(out, value.item())
    starts = [lo_width for lo_width, _ in widths]
    lo.copy(x, out.slice(starts, [1] * len(out.shape), x.shape))


def iota(lo, node, inputs, outputs):
    (out,) = outputs
    em = lo.em

    def body(offsets):
        em.store(em.cast(offsets[0], np.dtype(np.int64), out.dtype), out.base, out.dtype,
                 offsets[1])
    lo.loop_nest(out.shape, [index_view(out.shape, (node.params["axis"],)), out], body,
                 owner=1)


from .scatter import scatter_add  # noqa: E402  it uses the index helpers above

STRUCTURAL = {
    "reduce_sum": reduce, "reduce_prod": reduce, "reduce_max": reduce, "reduce_min": reduce,
    "argmax": arg_reduce, "argmin": arg_reduce, "cumsum": cumsum, "gather": gather,
    "concatenate": concatenate, "pad": pad, "matmul": matmul, "iota": iota,
    "scatter_add": scatter_add,
}
