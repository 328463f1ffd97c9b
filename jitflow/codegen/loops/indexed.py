"""Addressing an array at integer-array indices, shared by gather (which reads there) and
scatter_add (which adds there): the bounds check and the element positions."""
import numpy as np

from ..emitter import I64
from ..errors import INDEX_OUT_OF_BOUNDS
from ..views import View


class IndexedAxes:
    """`array`[:, ..., idx0, idx1, ..., :] seen from a loop over `shape`, the indexed
    result's shape: the index arrays broadcast together on consecutive axes from `axis`.

    A loop nest over `shape` takes `views` (the array's other axes, then each index) and
    gives their offsets to position(), which returns the element's offset in `array`.
    """

    def __init__(self, lo, array, indices, axis, shape):
        self.lo, self.array, self.indices, self.axis = lo, array, indices, axis
        count = len(indices)
        self.batch = shape[axis:len(shape) - (len(array.shape) - axis - count)]
        self.sizes = array.shape[axis:axis + count]
        # The array's own strides on the axes that are not indexed; 0 on the batch axes.
        rest = array.strides[:axis] + (0,) * len(self.batch) + array.strides[axis + count:]
        base = View(None, array.dtype, shape, rest, array.offset)
        self.views = [base] + [_placed(v, shape, axis, self.batch) for v in indices]

    def check(self):
        """Flag an IndexError if any index is outside -size <= index < size, in a loop
        of its own (NumPy raises even when nothing is selected). False when no element
        can be addressed at all (an indexed axis of length 0): then nothing may be read
        or written."""
        lo = self.lo

        def body(offsets):
            for view, offset, size in zip(self.indices, offsets, self.sizes):
                _, bad = _normalized_index(lo, view, offset, size)
                lo.em.error.flag_if(bad, INDEX_OUT_OF_BOUNDS)
        lo.loop_nest(self.batch, list(self.indices), body)
        return 0 not in self.sizes

    def position(self, offsets):
        """The element's offset in the array from the offsets of `views`. A bad index
        (already flagged) addresses element 0, so memory is never touched out of bounds."""
        b = self.lo.builder
        position = offsets[0]
        for m, (view, offset) in enumerate(zip(self.views[1:], offsets[1:])):
            index, bad = _normalized_index(self.lo, view, offset, self.sizes[m])
            index = b.select(bad, I64(0), index)
            position = b.add(position, b.mul(index, I64(self.array.strides[self.axis + m])))
        return position


def _normalized_index(lo, view, offset, size):
    """(index, bad): the index read at `offset`, negative ones counted from the end, and
    whether it is out of bounds."""
    b = lo.builder
    index = lo.em.cast(lo.read(view, offset), view.dtype, np.dtype(np.int64))
    index = b.select(b.icmp_signed("<", index, I64(0)), b.add(index, I64(size)), index)
    bad = b.or_(b.icmp_signed("<", index, I64(0)), b.icmp_signed(">=", index, I64(size)))
    return index, bad


def _placed(index, shape, axis, batch):
    """An index array read at the positions of `shape`: its broadcast batch axes sit at
    `axis`, every other axis has stride 0."""
    strides = index.broadcast_to(batch).strides
    full = (0,) * axis + strides + (0,) * (len(shape) - axis - len(batch))
    return View(index.base, index.dtype, tuple(shape), full, index.offset, index.constant)
