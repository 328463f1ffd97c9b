"""Sliding windows over the two spatial axes of NHWC images, shared by convolution and
pooling: output sizes and padding (TensorFlow's 'valid' and 'same'), and the strided
slices that list every window's element at one offset.

A window operation is written as a handful of strided slices of the padded input (one
per offset in the window) combined elementwise or by one matrix product, so it traces
to a few nodes that fuse and compile, whatever the image size; nothing loops over
pixels in Python.
"""
from ..errors import at_user_line

PADDINGS = ("valid", "same")


def pair(value, what, name):
    """An int or a pair of ints as a pair of positive ints."""
    values = (value, value) if isinstance(value, int) else tuple(value)
    if len(values) != 2 or not all(isinstance(v, int) and v > 0 for v in values):
        raise ValueError(at_user_line(f"{name}: {what} must be a positive int or a pair "
                                      f"of them, got {value!r}"))
    return values


class Windows:
    """Windows of `size` (kh, kw) moved by `strides` over an image of `spatial` (H, W)
    with `padding`: the output's spatial shape and the padding before and after."""

    def __init__(self, spatial, size, strides, padding, name):
        if padding not in PADDINGS:
            raise ValueError(at_user_line(f"{name}: padding must be one of {PADDINGS}, got "
                                          f"{padding!r}"))
        self.size, self.strides = size, strides
        self.pads = tuple(_pads(n, k, s, padding) for n, k, s in zip(spatial, size, strides))
        padded = [n + before + after for n, (before, after) in zip(spatial, self.pads)]
        if any(p < k for p, k in zip(padded, size)):
            raise ValueError(at_user_line(
                f"{name}: a window of {size} does not fit in an image of {spatial} with "
                f"{padding!r} padding"))
        self.out = tuple((p - k) // s + 1 for p, k, s in zip(padded, size, strides))

    def offsets(self):
        return [(i, j) for i in range(self.size[0]) for j in range(self.size[1])]

    def at(self, padded, offset):
        """The element at `offset` of every window: a strided slice (N, OH, OW, C) of
        the padded image."""
        (i, j), (sh, sw), (oh, ow) = offset, self.strides, self.out
        return padded[:, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw, :]

    def padding_widths(self):
        """jnp.pad's widths for an NHWC image."""
        return ((0, 0), self.pads[0], self.pads[1], (0, 0))


def _pads(n, k, s, padding):
    """TensorFlow's padding: none for 'valid'; for 'same' enough that the output has
    ceil(n / s) positions, split evenly with the odd one after."""
    if padding == "valid":
        return (0, 0)
    total = max((-(-n // s) - 1) * s + k - n, 0)
    return (total // 2, total - total // 2)


def check_images(x, name, what="input"):
    """x must be a batch of images, (N, H, W, C)."""
    if len(x.shape) != 4:
        raise ValueError(at_user_line(
            f"{name}: the {what} must be 4-D (batch, height, width, channels), got shape "
            f"{tuple(x.shape)}"))
