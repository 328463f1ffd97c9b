"""ONNX's DFT on jitflow's arrays: the signal's last axis holds one component (real)
or two (real, imaginary); numpy.fft's transforms compute it, traced or not."""
import numpy as np

from .. import numpy as jnp
from .. import pytree


def dft(node, x, dft_length=None, axis=None):
    """DFT (opset 17: axis an attribute, default 1; from 20: an input, default -2);
    inverse divides by the length, as numpy.fft.ifft; onesided keeps the first n/2 + 1
    outputs of a real signal's transform, as rfft."""
    rank = jnp.ndim(x)
    if node.opset >= 20:
        axis = -2 if axis is None else int(node.static(axis, "axis"))
    else:
        axis = node.attr("axis", 1)
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank - 1:
        raise node.fail(f"axis {axis} is not an axis of the signal (rank {rank - 1})")
    length = None if dft_length is None else int(node.static(dft_length, "dft_length"))
    components = jnp.shape(x)[-1]
    if components not in (1, 2):
        raise node.fail(f"its input's last axis must hold 1 or 2 components, not "
                        f"{components}")
    inverse, onesided = node.attr("inverse", 0), node.attr("onesided", 0)
    if onesided and (inverse or components == 2):
        raise node.fail("onesided is supported for the forward transform of a real signal")
    signal = x[..., 0] if components == 1 else \
        pytree.from_interleaved(x, np.result_type(jnp.result_type(x), np.complex64))
    transform = jnp.fft.rfft if onesided else jnp.fft.ifft if inverse else jnp.fft.fft
    return pytree.as_interleaved(transform(signal, n=length, axis=axis))


FOURIER_OPS = {"DFT": dft}
