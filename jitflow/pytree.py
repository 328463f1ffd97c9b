"""Pytrees: nested tuples, lists, dicts (and namedtuples, None) with array leaves.

flatten() gives the leaves, a readable path for each ("params['w']", "xs[0]"), and a
hashable structure that unflatten() turns back into the same containers.

A complex value (a Python complex, a NumPy complex array or scalar, a traced complex
value) is a node of two leaves, its real and imaginary parts: compiled code and
derivatives only ever see real arrays. unflatten() puts the parts back together, as a
NumPy complex array or, when the parts are traced, with `complex_from_parts`, which
jitflow/complex_values installs.
"""
import numpy as np

LEAF = "*"


class Complex:
    """The kind of a complex node; its key is the complex dtype (None: a Python complex,
    whose parts are Python floats)."""


def _refuse_traced_parts(real, imag, dtype):
    raise TypeError("complex values are not available in this context")


complex_from_parts = _refuse_traced_parts  # (real, imag, dtype) -> traced complex value


def complex_parts(tree):
    """(real part, imaginary part, complex dtype or None) of a complex leaf, or None."""
    parts = getattr(tree, "_complex_parts", None)
    if parts is not None:
        return parts + (tree.dtype,)
    if isinstance(tree, (np.ndarray, np.complexfloating)):  # (np.complex128 is a complex)
        return (tree.real, tree.imag, tree.dtype) if tree.dtype.kind == "c" else None
    if isinstance(tree, complex):
        return tree.real, tree.imag, None
    return None


def _joined(real, imag, dtype):
    """The complex value of these parts (dtype None: a Python complex's)."""
    if not isinstance(real, (np.ndarray, np.generic, float, int)) or \
            not isinstance(imag, (np.ndarray, np.generic, float, int)):
        return complex_from_parts(real, imag, dtype)
    if dtype is None:
        return complex(real, imag)
    joined = np.empty(np.broadcast_shapes(np.shape(real), np.shape(imag)), dtype)
    joined.real, joined.imag = real, imag
    return joined if joined.ndim or isinstance(real, np.ndarray) else joined[()]


def flatten(tree, path=""):
    leaves, paths = [], []
    structure = _flatten(tree, path, leaves, paths)
    return leaves, paths, structure


def _flatten(tree, path, leaves, paths):
    if tree is None:
        return None
    if isinstance(tree, dict):
        keys = tuple(tree)
        children = tuple(_flatten(tree[k], f"{path}[{k!r}]", leaves, paths) for k in keys)
        return (dict, keys, children)
    if isinstance(tree, (tuple, list)):
        children = tuple(_flatten(v, f"{path}[{i}]", leaves, paths)
                         for i, v in enumerate(tree))
        return (type(tree), None, children)
    parts = complex_parts(tree)
    if parts is not None:
        leaves.extend(parts[:2])
        paths.extend([f"{path}.real", f"{path}.imag"])
        return (Complex, parts[2], (LEAF, LEAF))
    leaves.append(tree)
    paths.append(path)
    return LEAF


def flatten_leaves(tree, leaves):
    """flatten() without the paths (for the call fast path): appends the leaves to
    `leaves` and returns the structure."""
    if isinstance(tree, dict):
        return (dict, tuple(tree), tuple([flatten_leaves(v, leaves) for v in tree.values()]))
    if isinstance(tree, (tuple, list)):
        return (type(tree), None, tuple([flatten_leaves(v, leaves) for v in tree]))
    if tree is None:
        return None
    parts = complex_parts(tree)
    if parts is not None:
        leaves.extend(parts[:2])
        return (Complex, parts[2], (LEAF, LEAF))
    leaves.append(tree)
    return LEAF


def unflatten(structure, leaves, conjugate=False):
    """The pytree of `structure` with these leaves; with `conjugate`, complex nodes are
    made from their parts conjugated (real - imag i): how reverse-mode derivatives of
    real pairs become complex gradients (jitflow/autodiff/api.py)."""
    iterator = iter(leaves)
    result = _unflatten(structure, iterator, conjugate)
    if next(iterator, None) is not None:
        raise ValueError("unflatten: more leaves than the structure holds")
    return result


def _unflatten(structure, leaves, conjugate):
    if structure is None:
        return None
    if structure == LEAF:
        return next(leaves)
    kind, keys, children = structure
    values = [_unflatten(child, leaves, conjugate) for child in children]
    if kind is dict:
        return dict(zip(keys, values))
    if kind is Complex:
        real, imag = values
        return _joined(real, -imag if conjugate else imag, keys)
    if hasattr(kind, "_fields"):  # namedtuple
        return kind(*values)
    return kind(values)


def conjugated(tree):
    """`tree` with each complex leaf conjugated."""
    leaves, _, structure = flatten(tree)
    return unflatten(structure, leaves, conjugate=True)


def has_complex(structure):
    if structure is None or structure == LEAF:
        return False
    return structure[0] is Complex or any(has_complex(c) for c in structure[2])


def leaf_count(structure):
    if structure is None:
        return 0
    if structure == LEAF:
        return 1
    return sum(leaf_count(child) for child in structure[2])
