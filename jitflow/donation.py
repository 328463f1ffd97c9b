"""Donated arguments: `jitflow.function(step, donate_argnames=("params",))`.

The caller gives up the arrays of a donated argument. Each result, in the order the
results flatten, takes the first donated array not yet taken of its exact shape and
dtype (writeable, sharing memory with none taken before): the result is written into
that array, and that array is what the call returns for it. So `params = step(params,
x)` updates the parameters in place, and the caller's name and every other reference
to the arrays see the new values; nothing else of the caller's is written.

A call that raises leaves every donated array as it was (like Variables). Native code
writes a result straight over its donated array where each element of the array is
read before it is written and the code can never fail once it runs
(codegen/runtime/in_place.py: a parameter update `w - lr * g` after the last read of
`w`); else it computes the result into a buffer kept between calls and copies it over
after the call succeeded (out_arrays.Destinations). Either way repeated calls use the
same memory: no fresh output pages are touched per call. Arrays of a donated argument
that no result matches are left as they were.

Where every donated array may be written over in place, a signature's later calls pass
them to the native entry as the outputs they take (Executable.donated_call), which
checks them as it checks out= arrays: a small MLP's SGD step (six parameters) cost
181 us per donated call through Python, 19 us so (a plain call: 25 us).
"""
import numpy as np

from . import pytree
from .memory_extents import all_apart


def donated_arrays(bound, names):
    """The ndarrays of the donated arguments given to this call, in parameter order."""
    arrays = []
    for name in bound.signature.parameters:
        if name in names and name in bound.arguments:
            leaves, _, _ = pytree.flatten(bound.arguments[name])
            arrays += _writeable(leaves)
    return arrays


def donated_leaves(leaves, structure, positions):
    """The donated ndarrays among the leaves of positional arguments whose pytree
    `structure` is that of the arguments' tuple (pytree.flatten_leaves): those of the
    arguments at `positions`, in order."""
    return _writeable([leaves[i] for i in donated_leaf_indices(structure, positions)])


def donated_leaf_indices(structure, positions):
    """The indices of the leaves of the arguments at `positions`, as donated_leaves."""
    indices, start = [], 0
    for position, child in enumerate(structure[2]):
        count = pytree.leaf_count(child)
        if position in positions:
            indices += range(start, start + count)
        start += count
    return tuple(indices)


def _writeable(leaves):
    return [leaf for leaf in leaves if isinstance(leaf, np.ndarray) and leaf.flags.writeable]


def matching_arrays(donated, types, extents=None):
    """For each result type, the donated array it is written into, or None. `extents`:
    an Extents holding the donated arrays, if one was made."""
    free, into = list(donated), []
    # else no two results may take arrays sharing memory
    apart = extents.all_apart(donated) if extents is not None else all_apart(donated)
    for result in types:
        found = None
        if not getattr(result, "weak", False):
            found = next((a for a in free if a.shape == result.shape and
                          a.dtype == result.dtype and
                          (apart or not any(t is not None and np.shares_memory(a, t)
                                            for t in into))), None)
        if found is not None:
            free.remove(found)
        into.append(found)
    return into
