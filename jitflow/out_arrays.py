"""`f(..., out=arrays)`: a compiled function's results written into the caller's arrays.

The arrays are checked before anything runs: one for each result (the same pytree as
the results, tuples and lists alike), ndarrays of the result's exact shape and dtype,
writeable, no two sharing memory. Native code then writes each result straight into its
array, so a call streams through memory once, with no fresh output to allocate and
page-fault, and no copy. Where that could give a wrong answer the result is computed
apart (into a buffer kept for the next call) and copied in after the call: an array
that shares memory with an argument (the native code reads its arguments while it
writes its results, and tells LLVM they never overlap), unless it is exactly the buffer
of an argument the code may write over (codegen/runtime/in_place.py: `w - lr * g` into
`w`), or one that is not C-contiguous and aligned. The interpreter always copies.
If the call raises, the arrays may hold part of the results; Variables, donated arrays
(donation.py) and the arguments it writes into are written only after a call
succeeded, as ever.
"""
import numpy as np

from . import pytree
from .memory_extents import Extents, all_apart


def out_targets(out, structure, types, name):
    """The flat list of `out`'s arrays, one for each result of `types`, checked."""
    leaves, paths, given = pytree.flatten(out)
    if _plain(given) != _plain(structure):
        raise TypeError(f"{name}(out=...): out must have the structure of the results "
                        f"({_described(structure)}), got {_described(given)}")
    for array, path, result in zip(leaves, paths, types, strict=True):
        _check_target(array, f"out{path}", result, name)
    _check_apart(leaves, paths, name)
    return leaves


def _check_target(array, where, result, name):
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{name}(out=...): {where} must be a NumPy array, got "
                        f"{type(array).__name__}")
    if array.shape != result.shape or array.dtype != result.dtype:
        raise ValueError(f"{name}(out=...): {where} is {array.dtype}{list(array.shape)}, "
                         f"the result is {result.dtype}{list(result.shape)}")
    if not array.flags.writeable:
        raise ValueError(f"{name}(out=...): {where} is read-only")


def _check_apart(arrays, paths, name):
    if all_apart(arrays):
        return
    for i, first in enumerate(arrays):
        for j in range(i + 1, len(arrays)):
            if np.shares_memory(first, arrays[j]):
                raise ValueError(f"{name}(out=...): out{paths[i]} and out{paths[j]} "
                                 f"share memory; each result needs its own array")


class Destinations:
    """Where native code writes its outputs.

    `into` (one array or None per result of the function's own): a result goes into
    the array itself where it may (C-contiguous, aligned, sharing no memory with any of
    the `inputs`), else into a buffer kept between calls (`kept`: output index -> free
    buffers), copied from after the call. Kept, rather than fresh each call, so that a
    large result does not page-fault its way through fresh memory every call; none is
    ever returned to the caller.

    `adopted`: outputs that Variables take as their new values; each is written into a
    buffer an earlier value of that Variable left behind (recycled_variables.py), when
    there is one."""

    def __init__(self, into, inputs, kept, in_place, adopted=(), extents=None):
        """`extents`: an Extents of `inputs`, if the caller made one."""
        self._kept, self._taken = kept, []
        if extents is None and any(target is not None for target in into):
            extents = Extents(inputs)
        self.into = [None if target is None else
                     target if _direct(target, inputs, extents, in_place.get(index, ()))
                     else self._take(index, target) for index, target in enumerate(into)]
        self._adopted = {index: buffer for index in adopted
                         if (buffer := _free_buffer(kept, index)) is not None}

    def native(self, outputs):
        """NativeGraph.run's `into` for a graph of `outputs` outputs (the state's
        last)."""
        into = self.into + [None] * (outputs - len(self.into))
        for index, buffer in self._adopted.items():
            into[index] = buffer
        return into

    def _take(self, index, target):
        buffer = _free_buffer(self._kept, index)
        if buffer is None:
            buffer = np.empty(target.shape, target.dtype)
        self._taken.append((index, buffer))
        return buffer

    def give_back(self, adopted):
        """After the call: the buffers taken are free for the next (one per output
        kept; those of calls made at the same time go), and so are those the
        Variables were to adopt unless they did (`adopted`: the call succeeded)."""
        for index, buffer in self._taken + ([] if adopted else list(self._adopted.items())):
            keep_buffer(self._kept, index, buffer)


def _free_buffer(kept, index):
    try:
        return kept.setdefault(index, []).pop()  # (atomic: other threads take others)
    except IndexError:
        return None


def keep_buffer(kept, index, buffer):
    """Keep `buffer` for output `index`, unless one is kept already."""
    free = kept.setdefault(index, [])
    if not free:
        free.append(buffer)


def _direct(target, inputs, extents, over):
    """Whether native code may write `target` itself: it shares memory with no input,
    or is exactly the buffer of one of the inputs `over` (NativeGraph's in_place: the
    code may write over it), and shares memory with no other. `extents`: the inputs'."""
    flags = target.flags
    if not (flags.c_contiguous and flags.aligned):
        return False
    return all(i in over and _same_buffer(target, inputs[i])
               for i in extents.sharing_memory(target))


def _same_buffer(target, array):
    if array is target:  # (a donated array: _direct saw that it is C-contiguous)
        return True
    return array.flags.c_contiguous and array.dtype == target.dtype and \
        array.shape == target.shape and array.ctypes.data == target.ctypes.data


def deliver(targets, outputs):
    """Copy each output into its target (if it has one), unless it was written there
    already."""
    for target, value in zip(targets, outputs, strict=True):
        if target is not None and value is not target:
            np.copyto(target, value)


def _plain(structure):
    """The structure with lists as tuples: out=[a, b] for a result (x, y) is fine."""
    if structure is None or structure == pytree.LEAF:
        return structure
    kind, keys, children = structure
    kind = tuple if kind is list else kind
    return (kind, keys, tuple(_plain(c) for c in children))


def _described(structure):
    if structure == pytree.LEAF:
        return "one array"
    if structure is None:
        return "None"
    if structure[0] is pytree.Complex:
        return f"one {structure[1]} array"
    return f"a {structure[0].__name__} of {pytree.leaf_count(structure)} arrays"
