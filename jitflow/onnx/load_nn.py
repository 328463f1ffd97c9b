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
    """The windows of a convolution or pooling over the spatial axes of (N, C, *S):
    `pads` are (before..., after...) as ONNX writes them."""

    def __init__(self, spatial, kernel, strides, dilations, pads, ceil_mode, where):
        d = len(spatial)
        self.kernel, self.strides, self.dilations = tuple(kernel), tuple(strides), \
            tuple(dilations)
        reach = [dil * (k - 1) + 1 for dil, k in zip(dilations, kernel)]
        self.before, after = pads[:d], pads[d:]
        sizes = [_windows_along(n, r, s, b, a, ceil_mode)
                 for n, r, s, b, a in zip(spatial, reach, strides, self.before, after)]
        self.out, self.extra = [o for o, _ in sizes], [e for _, e in sizes]
        self.after = tuple(a + e for a, e in zip(after, self.extra))
        if any(o < 1 for o in self.out):
            raise ValueError(f"{where}: a window of {list(kernel)} does not fit in "
                             f"{list(spatial)}")

    def widths(self):
        return [(0, 0), (0, 0)] + list(zip(self.before, self.after))

    def slices(self, padded, channels_last=False):
        """For each offset in the window, its element of every window: (N, C, *out),
        or (N, *out, C) from an array whose channels are last."""
        for offset in itertools.product(*(range(k) for k in self.kernel)):
            index = [slice(None)] if channels_last else [slice(None), slice(None)]
            for o, dil, s, n in zip(offset, self.dilations, self.strides, self.out):
                index.append(slice(o * dil, o * dil + s * (n - 1) + 1, s))
            yield padded[tuple(index)]


def windows_of(node, spatial, kernel, ceil_mode=False):
    """The Windows a node's attributes describe."""
    d = len(spatial)
    strides = node.attr("strides", [1] * d)
    dilations = node.attr("dilations", [1] * d)
    reach = [dil * (k - 1) + 1 for dil, k in zip(dilations, kernel)]
    return Windows(spatial, kernel, strides, dilations, _pads(node, spatial, reach, strides),
                   ceil_mode, node.where())


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
    windows = windows_of(node, x.shape[2:], node.attr("kernel_shape", weight.shape[2:]))
    y = _convolve(x, weight, node.attr("group", 1), windows)
    return y if bias is None else y + _per_channel(bias, y.ndim)


def _convolve(x, weight, groups, windows):
    """x (N, C, *S) cross-correlated with weight (M, C / groups, *kernel)."""
    if groups == 1:
        return _convolve_channels_last(x, weight, windows)
    filters = weight.shape[0]
    padded = jnp.pad(x, windows.widths()) if any(map(any, windows.widths())) else x
    columns = jnp.stack(list(windows.slices(padded)), axis=2)  # (N, C, K, *out)
    n, positions = x.shape[0], int(np.prod(windows.out, dtype=np.int64))
    # one product per group over every image at once: (C/g K) rows, N * positions columns
    columns = jnp.reshape(columns, (n, groups, -1, positions)).transpose(1, 2, 0, 3)
    columns = jnp.reshape(columns, (groups, columns.shape[1], n * positions))
    kernel = jnp.reshape(weight, (groups, filters // groups, -1))
    y = jnp.reshape(jnp.matmul(kernel, columns), (groups, filters // groups, n, positions))
    return jnp.reshape(y.transpose(2, 0, 1, 3), (n, filters, *windows.out))


def _convolve_channels_last(x, weight, windows):
    """One convolution as one matrix product, channels last as jitflow.nn.conv2d lays
    it out: the window's elements of every position are a row of K * C values (offset
    by offset, each all the channels), times the kernel as (K * C, M)."""
    d, filters = x.ndim - 2, weight.shape[0]
    last = jnp.transpose(x, (0, *range(2, x.ndim), 1))  # (N, *S, C)
    padded = jnp.pad(last, [(0, 0)] + windows.widths()[2:] + [(0, 0)]) \
        if any(map(any, windows.widths())) else last
    rows = jnp.concatenate(list(windows.slices(padded, channels_last=True)), axis=-1)
    kernel = jnp.reshape(jnp.transpose(weight, (*range(2, 2 + d), 1, 0)), (-1, filters))
    y = jnp.matmul(jnp.reshape(rows, (-1, rows.shape[-1])), kernel)
    y = jnp.reshape(y, (x.shape[0], *windows.out, filters))
    return jnp.transpose(y, (0, x.ndim - 1, *range(1, x.ndim - 1)))


def conv_transpose(node, x, weight, bias=None):
    """The transpose of a convolution: x spread out by the strides (zeros between its
    elements), padded by the kernel's reach, convolved with the kernel flipped (its in
    and out channels swapped); then the pads cropped off."""
    d, groups = x.ndim - 2, node.attr("group", 1)
    kernel = tuple(node.attr("kernel_shape", weight.shape[2:]))
    strides = node.attr("strides", [1] * d)
    dilations = node.attr("dilations", [1] * d)
    extra = node.attr("output_padding", [0] * d)
    reach = [dil * (k - 1) for dil, k in zip(dilations, kernel)]
    spread = x
    for axis, stride in enumerate(strides):
        spread = _spread(spread, 2 + axis, stride)
    padded = jnp.pad(spread, [(0, 0), (0, 0)] + [(r, r + e) for r, e in zip(reach, extra)])
    c, per_group = weight.shape[:2]
    flipped = weight[(slice(None), slice(None)) + (slice(None, None, -1),) * d]
    flipped = jnp.reshape(flipped, (groups, c // groups, per_group) + kernel)
    flipped = jnp.reshape(jnp.swapaxes(flipped, 1, 2), (groups * per_group, c // groups) + kernel)
    windows = Windows(padded.shape[2:], kernel, [1] * d, dilations, [0] * 2 * d, False,
                      node.where())
    y = _convolve(padded, flipped, groups, windows)
    y = _cropped(y, _transpose_pads(node, x.shape[2:], y.shape[2:], strides))
    return y if bias is None else y + _per_channel(bias, y.ndim)


def _cropped(y, pads):
    """y without `pads` (before..., after...) on its spatial axes; a negative pad adds
    that many zeros instead (an output_shape larger than the full result)."""
    d = len(pads) // 2
    pairs = list(zip(pads[:d], pads[d:]))
    if any(p < 0 for p in pads):
        y = jnp.pad(y, [(0, 0), (0, 0)] + [(max(-b, 0), max(-a, 0)) for b, a in pairs])
    return y[(slice(None), slice(None)) + tuple(
        slice(max(b, 0), size - max(a, 0)) for (b, a), size in zip(pairs, y.shape[2:]))]


def _spread(x, axis, stride):
    """x with stride - 1 zeros between its elements along `axis`."""
    if stride == 1:
        return x
    n = x.shape[axis]
    x = jnp.expand_dims(x, axis + 1)
    x = jnp.pad(x, [(0, stride - 1) if a == axis + 1 else (0, 0) for a in range(x.ndim)])
    x = jnp.reshape(x, x.shape[:axis] + (n * stride,) + x.shape[axis + 2:])
    return x[(slice(None),) * axis + (slice(0, (n - 1) * stride + 1),)]


def _transpose_pads(node, spatial, full, strides):
    """The pads cropped off the full result: given, or making the output_shape asked
    for (the input's size times the stride, with auto_pad SAME_*), split as ONNX says."""
    auto, target = node.attr("auto_pad", "NOTSET"), node.attr("output_shape")
    if target is None and auto in ("SAME_UPPER", "SAME_LOWER"):
        target = [n * s for n, s in zip(spatial, strides)]
    if target is None:
        return list(node.attr("pads", [0] * 2 * len(spatial)))
    total = [f - t for f, t in zip(full, target[-len(spatial):])]
    if auto == "SAME_UPPER":
        return [t // 2 for t in total] + [t - t // 2 for t in total]
    return [t - t // 2 for t in total] + [t // 2 for t in total]


def max_pool(node, x):
    if node.attr("storage_order", 0):
        raise node.fail("storage_order=1 (column-major indices) is not supported")
    windows = windows_of(node, x.shape[2:], node.attr("kernel_shape"),
                      bool(node.attr("ceil_mode", 0)))
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    padded = jnp.pad(x, windows.widths(), constant_values=np.asarray(lowest, x.dtype))
    return functools.reduce(jnp.maximum, windows.slices(padded))


def average_pool(node, x):
    """The mean of each window: over the elements inside the input, or over the
    explicit padding too with count_include_pad (never the room ceil_mode adds)."""
    windows = windows_of(node, x.shape[2:], node.attr("kernel_shape"),
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
    "Conv": conv, "ConvTranspose": conv_transpose, "MaxPool": max_pool, "AveragePool": average_pool,
    "GlobalAveragePool": global_pool(jnp.mean), "GlobalMaxPool": global_pool(jnp.max),
}
