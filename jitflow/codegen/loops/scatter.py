"""Lowerings of scatter_add, gather's transpose (out = 0, then out[..., idx, ...] += u),
and scatter, item assignment (out = x, then out[..., idx, ...] = u)."""
import numpy as np

from ...ir.graph import Lit
from ..math.scalar import RULES as SCALAR
from .indexed import IndexedAxes


def scatter_add(lo, node, inputs, outputs):
    """Every index is checked before anything is written (a bad one raises IndexError);
    then the updates are added in C order, as NumPy's add.at does, so repeated indices
    accumulate in the same order and give the same floats."""
    updates, indices, (out,) = inputs[0], inputs[1:], outputs
    em, add = lo.em, SCALAR["add"]
    target = IndexedAxes(lo, out, indices, node.params["axis"], updates.shape)
    addressable = target.check()
    lo.fill(out, 0)
    if not addressable:
        return

    def body(offsets):
        position = target.position(offsets[:-1])
        value = em.cast(lo.read(updates, offsets[-1]), updates.dtype, out.dtype)
        total = add(em, em.load(out.base, out.dtype, position), value, dtype=out.dtype)
        em.store(total, out.base, out.dtype, position)
    # target.views[0] walks out's axes that are not indexed: iterations apart along
    # those write apart, so the nest may be split between threads along one of them
    # (each element still adds its updates in order); never along the indexed ones.
    lo.loop_nest(updates.shape, target.views + [updates], body, owner=0)


def scatter(lo, node, inputs, outputs):
    """Every index is checked before anything is written; then the updates are stored in
    C order, so where indices repeat the last one stays, as in NumPy's assignment.
    Constant indices that step evenly along each axis (basic slicing) are a strided
    region of out: the updates are copied there."""
    x, updates, indices, (out,) = inputs[0], inputs[1], inputs[2:], outputs
    region = _strided_region(node, out.shape)
    if region is not None:
        lo.copy(x, out)
        lo.copy(updates, out.slice(*region))
        return
    target = IndexedAxes(lo, out, indices, node.params["axis"], updates.shape)
    addressable = target.check()
    lo.copy(x, out)
    if not addressable:
        return

    def body(offsets):
        lo.em.store(lo.read(updates, offsets[-1]), out.base, out.dtype,
                    target.position(offsets[:-1]))
    # Split between threads only along out's axes that are not indexed (see scatter_add).
    lo.loop_nest(updates.shape, target.views + [updates], body, owner=0)


def _strided_region(node, shape):
    """(starts, steps, sizes) when the indices are constants, one per axis of out, each
    an in-bounds arithmetic progression along its own axis (x[a:b:c, ...] = u), else
    None."""
    indices = node.inputs[2:]
    if node.params["axis"] != 0 or len(indices) != len(shape):
        return None
    starts, steps, sizes = [], [], []
    for axis, (index, dim) in enumerate(zip(indices, shape)):
        if not isinstance(index, Lit):
            return None
        values = index.value
        if values.ndim != len(shape) or any(n != 1 for a, n in enumerate(values.shape)
                                            if a != axis):
            return None
        values = values.reshape(-1).astype(np.int64)
        if values.size == 0 or not ((values >= 0) & (values < dim)).all():
            return None
        step = int(values[1] - values[0]) if values.size > 1 else 1
        if step == 0 or not np.array_equal(values, values[0] + step * np.arange(values.size)):
            return None
        starts.append(int(values[0])), steps.append(step), sizes.append(values.size)
    return starts, steps, sizes
