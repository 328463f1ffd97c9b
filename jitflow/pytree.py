"""Pytrees: nested tuples, lists, dicts (and namedtuples, None) with array leaves.

flatten() gives the leaves, a readable path for each ("params['w']", "xs[0]"), and a
hashable structure that unflatten() turns back into the same containers.
"""
LEAF = "*"


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
    leaves.append(tree)
    return LEAF


def unflatten(structure, leaves):
    iterator = iter(leaves)
    result = _unflatten(structure, iterator)
    if next(iterator, None) is not None:
        raise ValueError("unflatten: more leaves than the structure holds")
    return result


def _unflatten(structure, leaves):
    if structure is None:
        return None
    if structure == LEAF:
        return next(leaves)
    kind, keys, children = structure
    values = [_unflatten(child, leaves) for child in children]
    if kind is dict:
        return dict(zip(keys, values))
    if hasattr(kind, "_fields"):  # namedtuple
        return kind(*values)
    return kind(values)


def leaf_count(structure):
    if structure is None:
        return 0
    if structure == LEAF:
        return 1
    return sum(leaf_count(child) for child in structure[2])
