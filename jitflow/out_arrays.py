"""`f(..., out=arrays)`: a compiled function's results written into the caller's arrays.

The arrays are checked before anything runs: one for each result (the same pytree as
the results, tuples and lists alike), ndarrays of the result's exact shape and dtype,
writeable, no two sharing memory. Native code then writes each result straight into its
array, so a call streams through memory once, with no fresh output to allocate and
page-fault, and no copy. Where that could give a wrong answer the result is computed
apart and copied in after the call: an array that shares memory with an argument (the
native code reads its arguments while it writes its results, and tells LLVM they never
overlap), or one that is not C-contiguous and aligned. The interpreter always copies.
If the call raises, the arrays may hold part of the results; Variables and the
arguments it writes into are written only after a call succeeded, as ever.
"""
import numpy as np

from . import pytree


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
    for i, first in enumerate(arrays):
        for j in range(i + 1, len(arrays)):
            if np.shares_memory(first, arrays[j]):
                raise ValueError(f"{name}(out=...): out{paths[i]} and out{paths[j]} "
                                 f"share memory; each result needs its own array")


def written_in_place(targets, inputs):
    """For each target, itself where native code may write into it directly (C-
    contiguous, aligned, sharing no memory with any input), else None."""
    arrays = [a for a in inputs if isinstance(a, np.ndarray)]
    return [target if _direct(target, arrays) else None for target in targets]


def _direct(target, inputs):
    flags = target.flags
    return flags.c_contiguous and flags.aligned and target.size > 0 and \
        not any(np.shares_memory(target, a) for a in inputs)


def deliver(targets, outputs):
    """Copy each output into its target, unless it was written there already."""
    for target, value in zip(targets, outputs, strict=True):
        if value is not target:
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
    return f"a {structure[0].__name__} of {pytree.leaf_count(structure)} arrays"
