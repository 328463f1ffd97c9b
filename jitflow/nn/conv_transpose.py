"""conv2d_transpose: the transposed 2-D convolution of NHWC images (TensorFlow's
conv2d_transpose and Keras' Conv2DTranspose, with their output sizes).

Each input pixel adds kernel[:, :, f, c] * x[c] to the output window at its position
times the stride. Computed as a plain convolution: zeros inserted between the input's
pixels (stride - 1 of them), the result padded, and cross-correlated with the kernel
flipped in space (the adjoint of a strided convolution).
"""
from .. import numpy as jnp
from ..errors import at_user_line
from .convolution import conv2d
from .windows import PADDINGS, check_images, pair

NAME = "conv2d_transpose"


def conv2d_transpose(x, kernel, strides=1, padding="valid"):
    """x (N, H, W, Cin), kernel (kh, kw, Cout, Cin) -> (N, OH, OW, Cout), with OH =
    H * s + max(kh - s, 0) for 'valid' and H * s for 'same' (the same for OW)."""
    check_images(x, NAME)
    _check(x, kernel, padding)
    strides = pair(strides, "strides", NAME)
    dilated = _with_zeros_between(x, strides)
    widths = [_pads(n, k, s, padding) for n, k, s in
              zip(x.shape[1:3], kernel.shape[:2], strides)]
    padded = jnp.pad(dilated, ((0, 0), widths[0], widths[1], (0, 0)))
    flipped = jnp.transpose(kernel[::-1, ::-1], (0, 1, 3, 2))
    return conv2d(padded, flipped, 1, "valid")


def _with_zeros_between(x, strides):
    """x with s - 1 zeros between neighbouring pixels along each spatial axis."""
    sh, sw = strides
    if (sh, sw) == (1, 1):
        return x
    n, height, width, channels = x.shape
    spread = jnp.pad(x[:, :, None, :, None, :],
                     ((0, 0), (0, 0), (0, sh - 1), (0, 0), (0, sw - 1), (0, 0)))
    spread = jnp.reshape(spread, (n, height * sh, width * sw, channels))
    return spread[:, :(height - 1) * sh + 1, :(width - 1) * sw + 1]


def _pads(n, k, s, padding):
    """Padding of the zero-spread input (length (n - 1) s + 1) before and after, so
    the valid cross-correlation with a k-wide kernel has the transposed output size."""
    if padding == "valid":
        return (k - 1, k - 1 + max(s - k, 0))
    before = max(k - s, 0) // 2  # what the forward 'same' convolution pads before
    return (k - 1 - before, s - 1 + before)


def _check(x, kernel, padding):
    if padding not in PADDINGS:
        raise ValueError(at_user_line(f"{NAME}: padding must be one of {PADDINGS}, got "
                                      f"{padding!r}"))
    if len(kernel.shape) != 4 or kernel.shape[3] != x.shape[3]:
        raise ValueError(at_user_line(
            f"{NAME}: the kernel must be (height, width, out channels, in channels) "
            f"with in channels = the images' {x.shape[3]}, got {tuple(kernel.shape)}"))


__all__ = ["conv2d_transpose"]
