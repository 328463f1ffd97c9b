"""Memoryless and stride-0 views that reductions and scans find their places with."""
import numpy as np

from ..views import View, contiguous_strides


def reduced_view(out, shape, axes):
    """The output of a reduction seen with the input's shape: stride 0 on reduced axes."""
    kept = iter(contiguous_strides([s for i, s in enumerate(shape) if i not in axes]))
    strides = tuple(0 if i in axes else next(kept) for i in range(len(shape)))
    return View(out.base, out.dtype, tuple(shape), strides)


def index_view(shape, axes):
    """A memoryless view whose offset at an index is the C-order position over `axes`."""
    sub = contiguous_strides([shape[a] for a in axes])
    strides = [0] * len(shape)
    for axis, stride in zip(axes, sub):
        strides[axis] = stride
    return View(None, np.dtype(np.int64), tuple(shape), tuple(strides))
