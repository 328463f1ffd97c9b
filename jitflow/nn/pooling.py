"""max_pool2d and avg_pool2d over NHWC images (TensorFlow's layout and padding rules).

Each is an elementwise maximum or sum of the window's strided slices (windows.py), which
fuse into one loop. 'same' padding pads with -inf for the maximum, and the average
divides by the number of elements of the window inside the image, as TensorFlow does.
"""
import functools

import numpy as np

from .. import numpy as jnp
from .windows import Windows, check_images, pair


def max_pool2d(x, pool_size=2, strides=None, padding="valid"):
    """The maximum of each pool_size window (default strides: the pool size)."""
    windows = _windows(x, pool_size, strides, padding, "max_pool2d")
    padded = x
    if any(map(any, windows.pads)):
        padded = jnp.pad(x, windows.padding_widths(), constant_values=_lowest(x.dtype))
    return functools.reduce(jnp.maximum, [windows.at(padded, o) for o in windows.offsets()])


def avg_pool2d(x, pool_size=2, strides=None, padding="valid"):
    """The mean of each pool_size window's elements inside the image."""
    windows = _windows(x, pool_size, strides, padding, "avg_pool2d")
    padded = jnp.pad(x, windows.padding_widths()) if any(map(any, windows.pads)) else x
    total = functools.reduce(jnp.add, [windows.at(padded, o) for o in windows.offsets()])
    return total / _counts(windows, x.shape[1:3]).astype(x.dtype)


def _windows(x, pool_size, strides, padding, name):
    check_images(x, name)
    size = pair(pool_size, "pool_size", name)
    strides = size if strides is None else pair(strides, "strides", name)
    return Windows(tuple(x.shape[1:3]), size, strides, padding, name)


def _counts(windows, spatial):
    """How many elements of each window lie inside the image: (OH, OW, 1), a constant
    worked out with NumPy from where the padding is."""
    inside = np.pad(np.ones((1, *spatial, 1)), windows.padding_widths())
    return sum(windows.at(inside, o) for o in windows.offsets())[0]


def _lowest(dtype):
    dtype = np.dtype(dtype)
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min
