"""Lowerings of scatter_add, gather's transpose (out = 0, then out[..., idx, ...] += u),
and scatter, item assignment (out = x, then out[..., idx, ...] = u)."""
from .indexed import IndexedAxes
from .scalar import RULES as SCALAR


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
    C order, so where indices repeat the last one stays, as in NumPy's assignment."""
    x, updates, indices, (out,) = inputs[0], inputs[1], inputs[2:], outputs
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
