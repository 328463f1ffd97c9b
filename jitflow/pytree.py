"""Pytrees: nested tuples, lists, dicts (and namedtuples, None) with array leaves.

flatten() gives the leaves, a readable path for each ("params['w']", "xs[0]"), and a
hashable structure that unflatten() turns back into the same containers.

A complex value (a Python complex, a NumPy complex array or scalar, a traced complex
value) is a node whose leaves are real: compiled code and derivatives only ever see
real arrays. An array of one or more axes is one leaf, the same memory seen as real
numbers with a last axis of 2 (real, imaginary), so compiled code reads and writes it
in place; a scalar is two leaves, its real and imaginary parts. unflatten() makes the
complex value again: a NumPy complex array (a view of the leaf), or, when the leaves
are traced, what `complex_values` installs here makes of them.
"""
import numpy as np

LEAF = "*"
INTERLEAVED = ".view(real)"  # the path's end of a complex array's one real leaf


class Complex:
    """The kind of a complex node; its key is the complex dtype (None: a Python complex,
    whose parts are Python floats)."""


def _refuse(*args):
    raise TypeError("complex values are not available in this context")


# installed by jitflow/complex_values: (real, imag, dtype) -> a traced complex value;
# (interleaved, dtype) -> the same from a traced (..., 2) real array; and a traced
# complex value -> its (..., 2) real array
complex_from_parts = _refuse
complex_from_interleaved = _refuse
interleaved_of = _refuse


def as_interleaved(value):
    """A complex array (NumPy's, a view of it; or traced) as one real array with a last
    axis of 2: real, imaginary. A 0-d value too."""
    if getattr(value, "_complex_parts", None) is not None:
        return interleaved_of(value)
    return np.asarray(value)[..., None].view(np.asarray(value).real.dtype)


def from_interleaved(leaf, dtype):
    """The complex array of `dtype` whose parts `leaf` holds interleaved (a view of a
    NumPy leaf; traced for a traced one): as_interleaved's inverse."""
    return _joined([leaf], dtype, conjugate=False)


def complex_leaves(tree):
    """(leaves, complex dtype or None) of a complex value, or None for anything else."""
    if getattr(tree, "_complex_parts", None) is not None:
        if tree.ndim:
            return [interleaved_of(tree)], tree.dtype
        return list(tree._complex_parts), tree.dtype
    if isinstance(tree, (np.ndarray, np.complexfloating)):  # (np.complex128 is a complex)
        if tree.dtype.kind != "c":
            return None
        if tree.ndim:
            return [as_interleaved(tree)], tree.dtype
        return [tree.real, tree.imag], tree.dtype
    if isinstance(tree, complex):
        return [tree.real, tree.imag], None
    return None


def _concrete(value):
    return isinstance(value, (np.ndarray, np.generic, float, int))


def _joined(values, dtype, conjugate):
    """The complex value of its node's leaves (dtype None: a Python complex's)."""
    if len(values) == 1:
        (interleaved,) = values
        if not _concrete(interleaved):
            joined = complex_from_interleaved(interleaved, dtype)
            return joined.conj() if conjugate else joined
        joined = np.ascontiguousarray(interleaved).view(dtype)[..., 0]
        return np.conj(joined) if conjugate else joined
    real, imag = values
    imag = -imag if conjugate else imag
    if not _concrete(real) or not _concrete(imag):
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
    complex_value = complex_leaves(tree)
    if complex_value is not None:
        parts, dtype = complex_value
        leaves.extend(parts)
        paths.extend([path + INTERLEAVED] if len(parts) == 1 else
                     [f"{path}.real", f"{path}.imag"])
        return (Complex, dtype, (LEAF,) * len(parts))
    leaves.append(tree)
    paths.append(path)
    return LEAF


def paths_of(structure, path=""):
    """The paths flatten() gives the leaves of a tree of `structure`, from the
    structure alone."""
    if structure is None:
        return []
    if structure == LEAF:
        return [path]
    kind, keys, children = structure
    if kind is Complex:
        return [path + INTERLEAVED] if len(children) == 1 else [f"{path}.real",
                                                               f"{path}.imag"]
    labels = [f"[{k!r}]" for k in keys] if kind is dict else \
        [f"[{i}]" for i in range(len(children))]
    return [p for label, child in zip(labels, children) for p in paths_of(child, path + label)]


def flatten_leaves(tree, leaves):
    """flatten() without the paths (for the call fast path): appends the leaves to
    `leaves` and returns the structure."""
    if isinstance(tree, dict):
        return (dict, tuple(tree), tuple([flatten_leaves(v, leaves) for v in tree.values()]))
    if isinstance(tree, (tuple, list)):
        return (type(tree), None, tuple([flatten_leaves(v, leaves) for v in tree]))
    if tree is None:
        return None
    complex_value = complex_leaves(tree)
    if complex_value is not None:
        parts, dtype = complex_value
        leaves.extend(parts)
        return (Complex, dtype, (LEAF,) * len(parts))
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
        return _joined(values, keys, conjugate)
    if hasattr(kind, "_fields"):  # namedtuple
        return kind(*values)
    return kind(values)


def leaf_axis(axis, path):
    """`axis` of the value at `path` as an axis of its leaf: a complex array's leaf has
    one more axis (real, imaginary) last, which counting from the end skips."""
    if axis is not None and axis < 0 and path.endswith(INTERLEAVED):
        return axis - 1
    return axis


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
