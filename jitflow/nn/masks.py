"""Masks as Keras carries them between layers: a boolean array per value, (batch, time)
for a sequence, true on the steps that hold data and false on the padding.

A layer that makes a mask (Embedding(mask_zero=True), Masking) says so in
compute_mask; a layer that reads one takes `mask` in its call (the recurrent layers,
attention, GlobalAveragePooling1D); a layer with supports_masking passes its input's
mask on (Dense, Dropout, ...). Sequential and functional models hand each layer the
masks of its inputs and keep the masks it gives for its outputs. Masks follow the
structure of the values they belong to: a list of values has a list of masks, with None
for a value that has none.
"""
import warnings

import numpy as np

from .. import numpy as jnp
from .. import pytree
from ..errors import at_user_line


def has_mask(masks):
    """Whether a pytree of masks (None where there is none) holds any mask."""
    return masks is not None and bool(pytree.flatten(masks)[0])


def mask_leaves(structure, masks, what="compute_mask"):
    """The masks aligned one for one with the leaves of values of `structure` (a
    pytree structure): None for a value without a mask."""
    if masks is None or structure is None:
        return [None] * pytree.leaf_count(structure)
    if structure == pytree.LEAF:
        return [masks]
    kind, keys, children = structure
    if kind is dict and isinstance(masks, dict):
        parts = [masks.get(key) for key in keys]
    elif kind is not dict and isinstance(masks, (list, tuple)) and \
            len(masks) == len(children):
        parts = list(masks)
    else:
        raise TypeError(at_user_line(
            f"{what}: masks must have the structure of the values they belong to "
            f"({len(children)} of them in a {kind.__name__}), got a "
            f"{type(masks).__name__}"))
    return [leaf for child, part in zip(children, parts)
            for leaf in mask_leaves(child, part, what)]


def masks_tree(structure, leaves):
    """The masks (aligned with the leaves of values of `structure`) in the values'
    structure; None when there is no mask at all."""
    if all(leaf is None for leaf in leaves):
        return None
    return pytree.unflatten(structure, list(leaves))


def boolean(mask):
    """A mask as booleans (a mask of numbers is true where it is not zero)."""
    mask = jnp.asarray(mask)
    return mask if mask.dtype == np.bool_ else mask != 0


def all_of(masks):
    """The elementwise and of the masks given (None for none), or None."""
    present = [boolean(mask) for mask in masks if mask is not None]
    if not present:
        return None
    result = present[0]
    for mask in present[1:]:
        result = jnp.logical_and(result, mask)
    return result


def sequence_mask(layer, mask, x):
    """The (batch, time) boolean mask of the sequence x (the first of a list of masks,
    as when initial states follow x), or None; a clear error for another shape."""
    if isinstance(mask, (list, tuple)):
        mask = mask[0] if mask else None
    if mask is None:
        return None
    mask = boolean(mask)
    if tuple(mask.shape) != tuple(x.shape[:2]):
        raise ValueError(at_user_line(
            f"{layer.name} ({type(layer).__name__}): the mask of a sequence of shape "
            f"{tuple(x.shape)} must have shape (batch, time) = {tuple(x.shape[:2])}, got "
            f"{tuple(mask.shape)}"))
    return mask


def warn_dropped(layer):
    """Keras' warning for a mask given to a layer that cannot use or pass it on."""
    warnings.warn(
        f"{layer.name} ({type(layer).__name__}) was given a mask but does not support "
        f"masking: its output carries no mask, so later layers see the padding",
        stacklevel=4)


__all__ = ["has_mask", "mask_leaves", "masks_tree", "boolean", "all_of",
           "sequence_mask", "warn_dropped"]
