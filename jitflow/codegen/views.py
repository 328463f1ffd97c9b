"""View: how lowering sees an array value — a base pointer plus a static strided layout.

Shapes and strides are known at compile time, so reshape (of contiguous data),
transpose, broadcast_to and slice create new Views and emit no code at all; loops read
any View by index arithmetic. A View of a uniform constant has no memory (`constant`).
"""
from dataclasses import dataclass

import numpy as np

from ..ir.sizes import surely

@dataclass(frozen=True)
class View:
    base: object           # llvmlite pointer value (None for a constant)
    dtype: np.dtype
    shape: tuple
    strides: tuple         # in elements
    offset: int = 0        # in elements
    constant: object = None  # the value of every element, when uniform and known

    @staticmethod
    def contiguous(base, dtype, shape):
        return View(base, np.dtype(dtype), tuple(shape), contiguous_strides(shape))

    @property
    def size(self):
        count = 1  # (a Size where the shape holds one: ir/sizes.py)
        for size in self.shape:
            count *= size
        return count

    def is_contiguous(self):
        return self.constant is None and all(
            stride == expected for stride, expected, size in
            zip(self.strides, contiguous_strides(self.shape), self.shape) if size > 1)

    def broadcast_to(self, shape):
        """The strides that read this view broadcast to `shape`: 0 on new or size-1 axes."""
        lead = len(shape) - len(self.shape)
        strides = [0] * lead + [0 if size == 1 and target != 1 else stride for size, stride,
                                target in zip(self.shape, self.strides, shape[lead:])]
        return View(self.base, self.dtype, tuple(shape), tuple(strides), self.offset,
                    self.constant)

    def batch_axes(self):
        """The axes before the last two only: where each of its matrices starts."""
        return View(self.base, self.dtype, self.shape[:-2], self.strides[:-2], self.offset,
                    self.constant)

    def transpose(self, perm):
        return View(self.base, self.dtype, tuple(self.shape[p] for p in perm),
                    tuple(self.strides[p] for p in perm), self.offset, self.constant)

    def slice(self, starts, steps, sizes):
        offset = self.offset + sum(start * stride for start, stride in zip(starts, self.strides))
        strides = tuple(step * stride for step, stride in zip(steps, self.strides))
        return View(self.base, self.dtype, tuple(sizes), strides, offset, self.constant)

    def reshape(self, shape):
        """A view of the same data in a new shape; only valid when contiguous."""
        if self.constant is not None:
            return View(None, self.dtype, tuple(shape), (0,) * len(shape), 0, self.constant)
        return View(self.base, self.dtype, tuple(shape), contiguous_strides(shape),
                    self.offset)


def contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def collapse(shape, *stride_lists):
    """Merge adjacent axes that every operand walks contiguously, and drop size-1 axes,
    so loop nests are as shallow as the layouts allow. Returns (shape, stride_lists)."""
    axes = [i for i, size in enumerate(shape) if size != 1]
    new_shape = [shape[i] for i in axes]
    new_strides = [[strides[i] for i in axes] for strides in stride_lists]
    k = len(new_shape) - 1
    while k > 0:
        if all(surely(lambda: s[k - 1] == s[k] * new_shape[k]) for s in new_strides):
            new_shape[k - 1] *= new_shape[k]
            del new_shape[k]
            for s in new_strides:
                s[k - 1] = s[k]
                del s[k]
        k -= 1
    return tuple(new_shape), [tuple(s) for s in new_strides]
