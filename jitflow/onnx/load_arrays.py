"""ONNX's operators that move elements: shapes, transposes, concatenation and
splitting, slices, gathers, padding, and the constants made from shapes. Their static
inputs (shapes, axes, starts) must be known when the model is compiled."""
import numpy as np
from onnx import numpy_helper

from .. import numpy as jnp
from .. import ops
from ..indexing import getitem


def shape(node, x):
    start, end = node.attr("start", 0), node.attr("end", None)
    return np.asarray(x.shape[start:end], np.int64)


def size(node, x):
    return np.asarray(int(np.prod(x.shape, dtype=np.int64)), np.int64)


def reshape(node, x, target):
    target = node.static_ints(target, "shape")
    if not node.attr("allowzero", 0):  # 0 copies the input's size on that axis
        target = [x.shape[i] if d == 0 else d for i, d in enumerate(target)]
    return jnp.reshape(x, target)


def flatten(node, x):
    axis = node.attr("axis", 1)
    axis = axis + x.ndim if axis < 0 else axis
    rows = int(np.prod(x.shape[:axis], dtype=np.int64))
    return jnp.reshape(x, (rows, int(np.prod(x.shape[axis:], dtype=np.int64))))


def _axes(node, axes, what="axes"):
    """axes from the input (opset 13 and later) or the attribute."""
    return node.static_ints(axes, what) if axes is not None else node.attr("axes")


def squeeze(node, x, axes=None):
    axes = _axes(node, axes)
    if axes is None:
        return jnp.squeeze(x)
    return jnp.squeeze(x, axis=tuple(a % x.ndim for a in axes))


def unsqueeze(node, x, axes=None):
    axes = _axes(node, axes)
    rank = x.ndim + len(axes)
    target = list(x.shape)
    for axis in sorted(a % rank for a in axes):
        target.insert(axis, 1)
    return jnp.reshape(x, target)


def transpose(node, x):
    perm = node.attr("perm")
    return jnp.transpose(x, None if perm is None else tuple(perm))


def concat(node, *xs):
    return jnp.concatenate(xs, axis=node.attr("axis"))


def split(node, x, sizes=None):
    axis = node.attr("axis", 0) % x.ndim
    if sizes is None:
        sizes = node.attr("split")
    else:
        sizes = node.static_ints(sizes, "split")
    if sizes is None:
        count = node.attr("num_outputs", len(node.proto.output))
        step = -(-x.shape[axis] // count)  # the last part may be smaller
        sizes = [min(step, x.shape[axis] - i * step) for i in range(count)]
    bounds = np.cumsum(sizes)[:-1].tolist()
    return jnp.split(x, bounds, axis=axis)


def slice_(node, x, starts=None, ends=None, axes=None, steps=None):
    """Python's slicing clamps starts and ends as ONNX's Slice does."""
    if node.opset < 10:
        starts, ends, axes = node.attr("starts"), node.attr("ends"), node.attr("axes")
    else:
        starts, ends = node.static_ints(starts, "starts"), node.static_ints(ends, "ends")
        axes = None if axes is None else node.static_ints(axes, "axes")
        steps = None if steps is None else node.static_ints(steps, "steps")
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * x.ndim
    for axis, start, end, step in zip(axes, starts, ends, steps):
        index[axis % x.ndim] = slice(start, end, step)
    return x[tuple(index)]


def gather(node, x, indices):
    axis = node.attr("axis", 0) % x.ndim
    return getitem(x, (slice(None),) * axis + (indices,))  # (x may be a NumPy constant)


def gather_elements(node, x, indices):
    """out[i][j][k] = x[i][index[i][j][k]][k] (axis 1): the other axes counted."""
    axis = node.attr("axis", 0) % x.ndim
    grids = [np.arange(n).reshape([-1 if a == i else 1 for a in range(indices.ndim)])
             for i, n in enumerate(indices.shape)]
    grids[axis] = indices
    return getitem(x, tuple(grids))


def gather_nd(node, x, indices):
    """x at the index tuples along indices' last axis (no batch dims)."""
    if node.attr("batch_dims", 0):
        raise node.fail("batch_dims other than 0 are not supported")
    return getitem(x, tuple(indices[..., k] for k in range(indices.shape[-1])))


def _normalized(index, size):
    """Indices counted from the end (negative) counted from the start."""
    return jnp.where(index < 0, index + size, index)


def _scattered(node, x, updates, indices):
    """x with updates written (reduction 'none') or added (reduction 'add') at the
    index arrays `indices` of x's leading axes."""
    x = jnp.asarray(x)
    indices = [_normalized(i, n) for i, n in zip(indices, x.shape)]
    reduction = node.attr("reduction", "none")
    if reduction == "none":
        return ops.scatter(x, jnp.astype(updates, x.dtype), *indices, axis=0)
    if reduction == "add":
        return x + ops.scatter_add(updates, *indices, axis=0, shape=x.shape)
    raise node.fail(f"reduction {reduction!r} is not supported (only 'none' and 'add')")


def scatter_nd(node, x, indices, updates):
    return _scattered(node, x, updates,
                      [indices[..., k] for k in range(indices.shape[-1])])


def scatter_elements(node, x, indices, updates):
    axis = node.attr("axis", 0) % x.ndim
    grids = [jnp.broadcast_to(np.arange(n).reshape([-1 if a == i else 1
                                                    for a in range(indices.ndim)]),
                              indices.shape) for i, n in enumerate(indices.shape)]
    grids[axis] = indices
    return _scattered(node, x, updates, grids)


def one_hot(node, indices, depth, values):
    """values[1] where the position along the new axis is the index, values[0]
    elsewhere; negative indices count from depth."""
    depth = int(node.static(depth, "depth"))
    axis = node.attr("axis", -1) % (indices.ndim + 1)
    hot = jnp.expand_dims(_normalized(indices, depth), axis)
    positions = np.arange(depth).reshape([-1 if a == axis else 1
                                          for a in range(indices.ndim + 1)])
    return jnp.where(hot == positions, values[1], values[0])


def trilu(node, x, k=None):
    k = 0 if k is None else int(node.static(k, "k"))
    return jnp.triu(x, k) if node.attr("upper", 1) else jnp.tril(x, k)


def depth_to_space(node, x):
    b, c, h, w = x.shape
    size = node.attr("blocksize")
    if node.attr("mode", "DCR") == "DCR":
        x = jnp.reshape(x, (b, size, size, c // size ** 2, h, w)).transpose(0, 3, 4, 1, 5, 2)
    else:
        x = jnp.reshape(x, (b, c // size ** 2, size, size, h, w)).transpose(0, 1, 4, 2, 5, 3)
    return jnp.reshape(x, (b, c // size ** 2, h * size, w * size))


def space_to_depth(node, x):
    """Each size x size block of pixels to channels: the block's offset varies slowest
    (DCR, the default) or fastest (CRD) in the new channel axis."""
    b, c, h, w = x.shape
    size = node.attr("blocksize")
    x = jnp.reshape(x, (b, c, h // size, size, w // size, size))
    x = x.transpose((0, 3, 5, 1, 2, 4) if node.attr("mode", "DCR") == "DCR" else
                    (0, 1, 3, 5, 2, 4))
    return jnp.reshape(x, (b, c * size ** 2, h // size, w // size))


def expand(node, x, target):
    """Broadcast both ways: the result has the shape of x and target broadcast."""
    target = np.broadcast_shapes(tuple(x.shape), tuple(node.static_ints(target, "shape")))
    return jnp.broadcast_to(x, target)


def tile(node, x, repeats):
    return jnp.tile(x, node.static_ints(repeats, "repeats"))


def pad(node, x, pads=None, value=None, axes=None):
    if node.opset < 11:
        pads, value = node.attr("pads"), node.attr("value", 0.0)
    else:
        pads = node.static_ints(pads, "pads")
    axes = list(range(x.ndim)) if axes is None else \
        [a % x.ndim for a in node.static_ints(axes, "axes")]
    widths = [(0, 0)] * x.ndim
    for k, axis in enumerate(axes):
        widths[axis] = (pads[k], pads[k + len(axes)])
    mode = node.attr("mode", "constant")
    if mode != "constant":
        return _pad_from_inside(node, x, widths, mode)
    value = 0 if value is None else node.static(value, "constant_value").reshape(-1)[0]
    return jnp.pad(x, widths, constant_values=np.asarray(value, x.dtype))


def _pad_from_inside(node, x, widths, mode):
    """Padding made of x's own elements, one axis at a time: its edge repeated, its
    reflection about the edge (the edge once), or its other end (wrap)."""
    for axis, (before, after) in enumerate(widths):
        n = x.shape[axis]
        if not before and not after:
            continue
        if mode == "edge":
            pieces = [_take(x, axis, [0] * before), x, _take(x, axis, [n - 1] * after)]
        elif mode == "reflect":
            pieces = [_take(x, axis, range(before, 0, -1)), x,
                      _take(x, axis, range(n - 2, n - 2 - after, -1))]
        elif mode == "wrap":
            pieces = [_take(x, axis, range(n - before, n)), x, _take(x, axis, range(after))]
        else:
            raise node.fail(f"mode {mode!r} is not supported")
        x = jnp.concatenate(pieces, axis=axis)
    return x


def _take(x, axis, positions):
    return jnp.take(x, np.asarray(list(positions), np.int64), axis=axis)


def constant(node):
    for name in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if name in node.attributes:
            value = node.attributes[name]
            return numpy_helper.to_array(value) if name == "value" else np.asarray(
                value, np.float32 if "float" in name else np.int64)
    raise node.fail(f"holds none of the attributes jitflow reads "
                    f"(it has {sorted(node.attributes)})")


def constant_of_shape(node, target):
    value = node.attributes.get("value")
    fill = numpy_helper.to_array(value).reshape(()) if value is not None else np.float32(0)
    return jnp.full(node.static_ints(target, "shape"), fill, dtype=fill.dtype)


def range_(node, start, limit, delta):
    start, limit, delta = (node.static(v, "bounds") for v in (start, limit, delta))
    return np.arange(start, limit, delta, dtype=start.dtype)


def dropout(node, x, ratio=None, training=None):
    """Inference: the identity (and a mask of all ones)."""
    if training is not None and bool(node.static(training, "training_mode")):
        raise node.fail("training_mode dropout draws random numbers; jitflow runs "
                        "ONNX models for inference only")
    return [x, jnp.ones(x.shape, dtype=bool)]


ARRAY_OPS = {
    "Shape": shape, "Size": size, "Reshape": reshape, "Flatten": flatten,
    "Squeeze": squeeze, "Unsqueeze": unsqueeze, "Transpose": transpose,
    "Concat": concat, "Split": split, "Slice": slice_, "Gather": gather,
    "GatherElements": gather_elements, "GatherND": gather_nd, "ScatterND": scatter_nd,
    "ScatterElements": scatter_elements, "OneHot": one_hot, "Trilu": trilu,
    "DepthToSpace": depth_to_space, "SpaceToDepth": space_to_depth, "Expand": expand,
    "Tile": tile, "Pad": pad,
    "Constant": constant, "ConstantOfShape": constant_of_shape, "Range": range_,
    "Dropout": dropout,
}
