"""ONNX's Resize (and Upsample): nearest and linear interpolation, one axis at a time
(linear interpolation is separable), each output position's source coordinate worked
out with NumPy from the static sizes, as ONNX's coordinate transformation modes say."""
import numpy as np

from .. import numpy as jnp

# The source coordinate of output position x for an axis of n resized to m by `scale`
# (align_corners divides by the unrounded length n * scale, as ONNX's reference does)
TRANSFORMS = {
    "half_pixel": lambda x, n, m, scale: (x + 0.5) / scale - 0.5,
    "pytorch_half_pixel": lambda x, n, m, scale: (x + 0.5) / scale - 0.5 if m > 1 else 0 * x,
    "align_corners": lambda x, n, m, scale:
        x * (n - 1) / (n * scale - 1) if n * scale > 1 else 0 * x,
    "asymmetric": lambda x, n, m, scale: x / scale,
}
# The input position nearest to a source coordinate
ROUNDINGS = {"round_prefer_floor": lambda c: np.ceil(c - 0.5),
             "round_prefer_ceil": lambda c: np.floor(c + 0.5),
             "floor": np.floor, "ceil": np.ceil}


def resize(node, x, roi=None, scales=None, sizes=None):
    mode = node.attr("mode", "nearest")
    transform = node.attr("coordinate_transformation_mode", "half_pixel")
    if mode not in ("nearest", "linear") or transform not in TRANSFORMS or \
            node.attr("antialias", 0) or node.attr("axes") is not None or \
            node.attr("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise node.fail(f"mode {mode!r} with coordinate_transformation_mode "
                        f"{transform!r} (and antialias, axes, keep_aspect_ratio_policy "
                        f"other than their defaults) is not supported; jitflow resizes "
                        f"with modes 'nearest' and 'linear' and the transformations "
                        f"{sorted(TRANSFORMS)}")
    targets, factors = _targets(node, x.shape, scales, sizes)
    for axis, (n, m, scale) in enumerate(zip(x.shape, targets, factors)):
        if m == n and scale == 1:
            continue
        source = TRANSFORMS[transform](np.arange(m, dtype=np.float64), n, m, scale)
        x = _nearest(node, x, axis, source, n) if mode == "nearest" else \
            _linear(x, axis, source, n)
    return x


def upsample(node, x, scales=None):
    """Upsample (before opset 10): Resize with the asymmetric transformation."""
    scales = node.attr("scales") if scales is None else node.static(scales, "scales")
    mode = node.attr("mode", "nearest")
    targets = [int(np.floor(n * s)) for n, s in zip(x.shape, scales)]
    for axis, (n, m, scale) in enumerate(zip(x.shape, targets, scales)):
        if m != n or scale != 1:
            source = np.arange(m, dtype=np.float64) / scale
            x = _nearest(node, x, axis, source, n, "floor") if mode == "nearest" else \
                _linear(x, axis, source, n)
    return x


def _targets(node, shape, scales, sizes):
    """The output size of each axis and its scale factor."""
    if sizes is not None and np.size(node.static(sizes, "sizes")):
        targets = node.static_ints(sizes, "sizes")
        return targets, [m / n for m, n in zip(targets, shape)]
    factors = [float(s) for s in node.static(scales, "scales").reshape(-1)]
    return [int(np.floor(n * s)) for n, s in zip(shape, factors)], factors


def _nearest(node, x, axis, source, n, rounding=None):
    rounding = rounding or node.attr("nearest_mode", "round_prefer_floor")
    index = np.clip(ROUNDINGS[rounding](source), 0, n - 1).astype(np.int64)
    return jnp.take(x, index, axis=axis)


def _linear(x, axis, source, n):
    source = np.clip(source, 0, n - 1)
    low = np.floor(source).astype(np.int64)
    high = np.minimum(low + 1, n - 1)
    weight = (source - low).astype(x.dtype).reshape([-1 if a == axis else 1
                                                      for a in range(x.ndim)])
    below, above = jnp.take(x, low, axis=axis), jnp.take(x, high, axis=axis)
    return below + (above - below) * weight


RESIZE_OPS = {"Resize": resize, "Upsample": upsample}
