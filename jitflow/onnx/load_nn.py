"""ONNX's neural-network operators: softmax, normalizations, convolution and pooling.

Convolution and pooling work on NCHW-style arrays with any number of spatial axes: one
strided slice of the padded input per offset in the window (nothing loops over pixels),
combined by a maximum, a sum, or one batched matrix product with the kernel (groups
are the batch), as jitflow.nn's NHWC layers do.
"""
import functools
import itertools

import numpy as np

from .. import numpy as jnp


# --- softmax and normalizations ------------------------------------------------------------

def softmax_like(fn):
    """Softmax and LogSoftmax; before opset 13 they work on the input seen as a matrix
    whose rows start at `axis` (default 1)."""
    def rule(node, x):
        if node.opset >= 13:
            return fn(x, axis=node.attr("axis", -1))
        axis = node.attr("axis", 1) % max(x.ndim, 1)
        rows = int(np.prod(x.shape[:axis], dtype=np.int64))
        matrix = jnp.reshape(x, (rows, -1))
        return jnp.reshape(fn(matrix, axis=1), x.shape)
    return rule


def _per_channel(value, ndim):
    """A (C,) parameter shaped to broadcast over (N, C, *spatial)."""
    return jnp.reshape(value, (-1,) + (1,) * (ndim - 2))


def batch_normalization(node, x, scale, bias, mean, var):
    if node.attr("training_mode", 0):
        raise node.fail("training_mode updates running statistics; jitflow runs ONNX "
                        "models for inference only")
    epsilon = np.asarray(node.attr("epsilon", 1e-5), x.dtype)
    factor = scale / jnp.sqrt(var + epsilon)
    return (x - _per_channel(mean, x.ndim)) * _per_channel(factor, x.ndim) + \
        _per_channel(bias, x.ndim)


def layer_normalization(node, x, scale, bias=None):
    axis = node.attr("axis", -1) % x.ndim
    axes = tuple(range(axis, x.ndim))
    epsilon = np.asarray(node.attr("epsilon", 1e-5), x.dtype)
    mean = jnp.mean(x, axis=axes, keepdims=True)
    centered = x - mean
    inverse = 1 / jnp.sqrt(jnp.mean(centered * centered, axis=axes, keepdims=True) +
                           epsilon)
    y = centered * inverse * scale
    return [y if bias is None else y + bias, mean, inverse]


def instance_normalization(node, x, scale, bias):
    """Each image's each channel normalized over its spatial axes."""
    axes = tuple(range(2, x.ndim))
    epsilon = np.asarray(node.attr("epsilon", 1e-5), x.dtype)
    centered = x - jnp.mean(x, axis=axes, keepdims=True)
    variance = jnp.mean(centered * centered, axis=axes, keepdims=True)
    return centered / jnp.sqrt(variance + epsilon) * _per_channel(scale, x.ndim) + \
        _per_channel(bias, x.ndim)


# --- windows -------------------------------------------------------------------------------

class Windows:
    """The windows of a convolution or pooling over the spatial axes of (N, C, *S)."""

    def __init__(self, node, spatial, kernel, ceil_mode=False):
        d = len(spatial)
        self.kernel = tuple(kernel)
        self.strides = tuple(node.attr("strides", [1] * d))
        self.dilations = tuple(node.attr("dilations", [1] * d))
        reach = [dil * (k - 1) + 1 for dil, k in zip(self.dilations, kernel)]
        pads = _pads(node, spatial, reach, self.strides)
        self.before, after = pads[:d], pads[d:]
        sizes = [_windows_along(n, r, s, b, a, ceil_mode)
                 for n, r, s, b, a in zip(spatial, reach, self.strides, self.before, after)]
        self.out, self.extra = [o for o, _ in sizes], [e for _, e in sizes]
        self.after = tuple(a + e for a, e in zip(after, self.extra))
        if any(o < 1 for o in self.out):
            raise node.fail(f"a window of {list(kernel)} does not fit in {list(spatial)}")

    def widths(self):
        return [(0, 0), (0, 0)] + list(zip(self.before, self.after))

    def slices(self, padded):
        """For each offset in the window, its element of every window: (N, C, *out)."""
        for offset in itertools.product(*(range(k) for k in self.kernel)):
            index = [slice(None), slice(None)]
            for o, dil, s, n in zip(offset, self.dilations, self.strides, self.out):
                index.append(slice(o * dil, o * dil + s * (n - 1) + 1, s))
            yield padded[tuple(index)]


def _windows_along(n, reach, stride, before, after, ceil_mode):
    """How many windows fit along an axis of n, padded; and the padding ceil_mode adds
    after it for the last window (which must still start inside the input)."""
    span = n + before + after - reach
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= n + before:
        out -= 1
    return out, max((out - 1) * stride + reach - (n + before + after), 0)


def _pads(node, spatial, reach, strides):
    """Explicit pads (before..., after...), or those auto_pad asks for."""
    auto = node.attr("auto_pad", "NOTSET")
    d = len(spatial)
    if auto in ("NOTSET", "VALID"):
        return list(node.attr("pads", [0] * 2 * d)) if auto == "NOTSET" else [0] * 2 * d
    before, after = [], []
    for n, r, s in zip(spatial, reach, strides):
        total = max((-(-n // s) - 1) * s + r - n, 0)
        small = total // 2
        before.append(small if auto == "SAME_UPPER" else total - small)
        after.append(total - before[-1])
    return before + after


def conv(node, x, weight, bias=None):
    groups = node.attr("group", 1)
    filters, per_group = weight.shape[:2]
    windows = Windows(node, x.shape[2:], node.attr("kernel_shape", weight.shape[2:]))
    padded = jnp.pad(x, windows.widths()) if any(map(any, windows.widths())) else x
    columns = jnp.stack(list(windows.slices(padded)), axis=2)  # (N, C, K, *out)
    n, positions = x.shape[0], int(np.prod(windows.out, dtype=np.int64))
    # one product per group over every image at once: (C/g K) rows, N * positions columns
    columns = jnp.reshape(columns, (n, groups, -1, positions)).transpose(1, 2, 0, 3)
    columns = jnp.reshape(columns, (groups, columns.shape[1], n * positions))
    kernel = jnp.reshape(weight, (groups, filters // groups, -1))
    y = jnp.reshape(jnp.matmul(kernel, columns), (groups, filters // groups, n, positions))
    y = jnp.reshape(y.transpose(2, 0, 1, 3), (n, filters, *windows.out))
    return y if bias is None else y + _per_channel(bias, y.ndim)


def max_pool(node, x):
    if node.attr("storage_order", 0):
        raise node.fail("storage_order=1 (column-major indices) is not supported")
    windows = Windows(node, x.shape[2:], node.attr("kernel_shape"),
                      bool(node.attr("ceil_mode", 0)))
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    padded = jnp.pad(x, windows.widths(), constant_values=np.asarray(lowest, x.dtype))
    return functools.reduce(jnp.maximum, windows.slices(padded))


def average_pool(node, x):
    """The mean of each window: over the elements inside the input, or over the
    explicit padding too with count_include_pad (never the room ceil_mode adds)."""
    windows = Windows(node, x.shape[2:], node.attr("kernel_shape"),
                      bool(node.attr("ceil_mode", 0)))
    padded = jnp.pad(x, windows.widths())
    total = functools.reduce(jnp.add, windows.slices(padded))
    inside = np.ones((1, 1) + tuple(x.shape[2:]), x.dtype)
    if node.attr("count_include_pad", 0):
        explicit = [(0, 0), (0, 0)] + [(b, a - e) for b, a, e in
                                       zip(windows.before, windows.after, windows.extra)]
        inside = np.pad(inside, explicit, constant_values=1)
        inside = np.pad(inside, [(0, 0), (0, 0)] + [(0, e) for e in windows.extra])
    else:
        inside = np.pad(inside, windows.widths())
    counts = functools.reduce(np.add, windows.slices(inside))
    return total / counts


def global_pool(fn):
    return lambda node, x: fn(x, axis=tuple(range(2, x.ndim)), keepdims=True)


NN_OPS = {
    "Softmax": softmax_like(jnp.softmax), "LogSoftmax": softmax_like(jnp.log_softmax),
    "BatchNormalization": batch_normalization, "LayerNormalization": layer_normalization,
    "InstanceNormalization": instance_normalization,
    "Conv": conv, "MaxPool": max_pool, "AveragePool": average_pool,
    "GlobalAveragePool": global_pool(jnp.mean), "GlobalMaxPool": global_pool(jnp.max),
}
