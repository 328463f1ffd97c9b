"""conv2d: 2-D convolution of NHWC images (TensorFlow's layout and padding rules).

Computed as one matrix product: the kh*kw strided slices of the padded image (one per
kernel offset) are concatenated along the channels into rows of kh*kw*Cin values, and
multiplied by the kernel reshaped to (kh*kw*Cin, Cout). The product runs on BLAS, the
slices fuse into one copy, and the gradient is the same ops' gradients.
"""
from .. import numpy as jnp
from ..errors import at_user_line
from .windows import Windows, check_images, pair

NAME = "conv2d"


def conv2d(x, kernel, strides=1, padding="valid"):
    """Cross-correlate images x (N, H, W, Cin) with kernel (kh, kw, Cin, Cout), as
    tf.nn.conv2d does: the result is (N, OH, OW, Cout)."""
    check_images(x, NAME)
    _check_kernel(x, kernel)
    kh, kw, channels, filters = kernel.shape
    n, height, width, _ = x.shape
    windows = Windows((height, width), (kh, kw), pair(strides, "strides", NAME), padding,
                      NAME)
    padded = jnp.pad(x, windows.padding_widths()) if any(map(any, windows.pads)) else x
    columns = jnp.concatenate([windows.at(padded, o) for o in windows.offsets()], axis=-1)
    oh, ow = windows.out
    rows = columns.reshape(n * oh * ow, kh * kw * channels)
    return jnp.matmul(rows, kernel.reshape(kh * kw * channels, filters)).reshape(
        n, oh, ow, filters)


def _check_kernel(x, kernel):
    if len(kernel.shape) != 4:
        raise ValueError(at_user_line(
            f"{NAME}: the kernel must be 4-D (height, width, in channels, out channels), "
            f"got shape {tuple(kernel.shape)}"))
    if kernel.shape[2] != x.shape[3]:
        raise ValueError(at_user_line(
            f"{NAME}: the kernel {tuple(kernel.shape)} takes {kernel.shape[2]} channels, "
            f"but the images {tuple(x.shape)} have {x.shape[3]}"))


def conv1d(x, kernel, strides=1, padding="valid"):
    """Cross-correlate sequences x (N, steps, Cin) with kernel (k, Cin, Cout): the 2-D
    convolution of a one-row image. 'causal' padding pads k - 1 steps before the
    sequence only, so that output t sees inputs up to t."""
    if len(x.shape) != 3 or len(kernel.shape) != 3:
        raise ValueError(at_user_line(
            f"conv1d: x must be (batch, steps, channels) and the kernel (size, in "
            f"channels, out channels), got shapes {tuple(x.shape)} and "
            f"{tuple(kernel.shape)}"))
    if padding == "causal":
        x = jnp.pad(x, ((0, 0), (kernel.shape[0] - 1, 0), (0, 0)))
        padding = "valid"
    stride = strides if isinstance(strides, int) else tuple(strides)[0]
    y = conv2d(x[:, None], kernel[None], (1, stride), padding)
    return y[:, 0]
