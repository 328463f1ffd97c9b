"""Layers that rearrange their input without weights, as Keras' Reshape, Permute,
RepeatVector and UpSampling2D (each acts on the axes after the batch axis)."""
import math

from .. import numpy as jnp
from ..errors import at_user_line
from .layer import Layer
from .windows import pair


class Reshape(Layer):
    """(batch, ...) -> (batch, *target_shape); one entry of target_shape may be -1."""

    def __init__(self, target_shape, name=None):
        super().__init__(name)
        self.target_shape = tuple(int(d) for d in target_shape)
        if sum(d == -1 for d in self.target_shape) > 1 or any(
                d < -1 for d in self.target_shape):
            raise ValueError(at_user_line(
                f"{self.name}: target_shape {self.target_shape} may hold one -1 and "
                f"otherwise non-negative sizes"))

    def call(self, x, training=False):
        size = math.prod(x.shape[1:])
        known = math.prod(d for d in self.target_shape if d != -1)
        shape = tuple(size // max(known, 1) if d == -1 else d for d in self.target_shape)
        if math.prod(shape) != size:
            raise ValueError(at_user_line(
                f"{self.name}: cannot reshape examples of shape {tuple(x.shape[1:])} "
                f"({size} elements) to {self.target_shape}"))
        return jnp.reshape(x, (x.shape[0], *shape))

    def get_config(self):
        return {**super().get_config(), "target_shape": list(self.target_shape)}


class Permute(Layer):
    """Reorder the axes after the batch: dims is a permutation of 1 .. rank - 1 (the
    batch axis is 0 and stays first), as in Keras."""

    def __init__(self, dims, name=None):
        super().__init__(name)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(at_user_line(
                f"{self.name}: dims {self.dims} must be a permutation of 1 .. "
                f"{len(self.dims)} (axis 0, the batch, is not permuted)"))

    def call(self, x, training=False):
        if len(x.shape) != len(self.dims) + 1:
            raise ValueError(at_user_line(
                f"{self.name}: dims {self.dims} permute {len(self.dims)} axes, the input "
                f"of shape {tuple(x.shape)} has {len(x.shape) - 1} after the batch"))
        return jnp.transpose(x, (0, *self.dims))

    def get_config(self):
        return {**super().get_config(), "dims": list(self.dims)}


class RepeatVector(Layer):
    """(batch, features) -> (batch, n, features): each example repeated n times."""

    def __init__(self, n, name=None):
        super().__init__(name)
        self.n = int(n)

    def call(self, x, training=False):
        if len(x.shape) != 2:
            raise ValueError(at_user_line(
                f"{self.name}: takes inputs of shape (batch, features), got "
                f"{tuple(x.shape)}"))
        return jnp.broadcast_to(x[:, None, :], (x.shape[0], self.n, x.shape[1]))

    def get_config(self):
        return {**super().get_config(), "n": self.n}


class UpSampling2D(Layer):
    """Repeat each row of NHWC images size[0] times and each column size[1] times
    (nearest-neighbour upsampling)."""

    def __init__(self, size=(2, 2), interpolation="nearest", name=None):
        super().__init__(name)
        self.size = pair(size, "size", self.name)
        if interpolation != "nearest":
            raise ValueError(at_user_line(
                f"{self.name}: interpolation {interpolation!r} is not supported; "
                f"'nearest' is"))

    def call(self, x, training=False):
        if len(x.shape) != 4:
            raise ValueError(at_user_line(
                f"{self.name}: takes NHWC images (4-D), got shape {tuple(x.shape)}"))
        n, height, width, channels = x.shape
        rows, columns = self.size
        # A broadcast over two new axes, then one reshape: the repeats fuse into a copy.
        wide = jnp.broadcast_to(x[:, :, None, :, None, :],
                                (n, height, rows, width, columns, channels))
        return jnp.reshape(wide, (n, height * rows, width * columns, channels))

    def get_config(self):
        return {**super().get_config(), "size": list(self.size)}


__all__ = ["Reshape", "Permute", "RepeatVector", "UpSampling2D"]
