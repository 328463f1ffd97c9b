"""Which of many arrays may share memory with one another, without testing every pair.

A call with `out=` or donated arguments checks each result's array against every
argument: a training step's 90 state arrays made 8,000 np.shares_memory tests per call
(2-3 ms). Here each array is reduced to its extent, the bytes from its first element to
past its last (numpy's byte_bounds); arrays whose extents do not overlap share no
memory, and only the few whose extents do are tested exactly.
"""
import bisect

import numpy as np
from numpy.lib.array_utils import byte_bounds


def _extent(array):
    """(first byte, past the last byte), or None for an array of no elements."""
    return byte_bounds(array) if array.size else None


def all_apart(arrays):
    """True when no two of `arrays` reach the same byte (so none share memory); False
    means that some two may."""
    return _apart(map(_extent, arrays))


def _apart(spans):
    """Whether no two of the extents `spans` (None: no bytes) overlap."""
    spans = sorted(span for span in spans if span is not None)
    return all(before[1] <= after[0] for before, after in zip(spans, spans[1:]))


class Extents:
    """The extents of some arrays (entries that are not ndarrays are left out), sorted by
    their first byte, with the furthest end reached so far at each: a query then walks
    back only over extents that can still reach its first byte. Each array's extent is
    computed once (byte_bounds takes ~2 us): a query about one of the arrays itself
    finds it by identity."""

    def __init__(self, arrays):
        self._arrays = arrays
        self._position = {id(array): index for index, array in enumerate(arrays)}
        self._span = {index: span for index, array in enumerate(arrays)
                      if isinstance(array, np.ndarray) and (span := _extent(array)) is not None}
        spans = sorted((*span, index) for index, span in self._span.items())
        self._spans = spans
        self._starts = [start for start, _, _ in spans]
        self._reach, furthest = [], 0
        for _, end, _ in spans:
            furthest = max(furthest, end)
            self._reach.append(furthest)

    def of(self, array):
        """`array`'s extent (None if it has no elements)."""
        index = self._position.get(id(array))
        if index is not None and self._arrays[index] is array:
            return self._span.get(index)
        return _extent(array)

    def all_apart(self, arrays):
        """all_apart(arrays), for arrays among these."""
        return _apart(map(self.of, arrays))

    def overlapping(self, array):
        """The indices (into the arrays given) of those whose extents overlap `array`'s:
        every array that may share memory with it, and maybe a few that do not."""
        span = self.of(array)
        if span is None:
            return []
        first, end = span
        found = []
        i = bisect.bisect_left(self._starts, end) - 1
        while i >= 0 and self._reach[i] > first:
            if self._spans[i][1] > first:
                found.append(self._spans[i][2])
            i -= 1
        return found

    def sharing_memory(self, array):
        """The indices of the arrays that share memory with `array` (exactly)."""
        return [i for i in self.overlapping(array)
                if self._arrays[i] is array or np.shares_memory(array, self._arrays[i])]
