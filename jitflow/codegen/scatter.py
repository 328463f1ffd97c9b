"""Lowering of scatter_add, gather's transpose: out = 0, then out[..., idx, ...] += u."""
from .emitter import I64
from .scalar import RULES as SCALAR
from .structural import _check_indices, _normalized_index, _placed
from .views import View


def scatter_add(lo, node, inputs, outputs):
    """Every index is checked before anything is written (a bad one raises IndexError);
    then the updates are added in C order, as NumPy's add.at does, so repeated indices
    accumulate in the same order and give the same floats."""
    updates, indices, (out,) = inputs[0], inputs[1:], outputs
    em, b = lo.em, lo.builder
    axis, count = node.params["axis"], len(indices)
    batch = updates.shape[axis:len(updates.shape) - (len(out.shape) - axis - count)]
    sizes = out.shape[axis:axis + count]
    _check_indices(lo, indices, sizes, batch)
    lo.fill(out, 0)
    if 0 in sizes:  # no position exists: any index was flagged, and none may be written
        return
    # out's own strides on the axes that are not indexed; 0 on the batch axes.
    rest = out.strides[:axis] + (0,) * len(batch) + out.strides[axis + count:]
    target = View(None, out.dtype, updates.shape, rest, out.offset)
    index_views = [_placed(v, updates.shape, axis, batch) for v in indices]
    add = SCALAR["add"]

    def body(offsets):
        position = offsets[0]
        for m, (view, offset) in enumerate(zip(index_views, offsets[1:-1])):
            index, bad = _normalized_index(lo, view, offset, sizes[m])
            index = b.select(bad, I64(0), index)
            position = b.add(position, b.mul(index, I64(out.strides[axis + m])))
        value = em.cast(lo.read(updates, offsets[-1]), updates.dtype, out.dtype)
        total = add(em, em.load(out.base, out.dtype, position), value, dtype=out.dtype)
        em.store(total, out.base, out.dtype, position)
    lo.loop_nest(updates.shape, [target] + index_views + [updates], body)
