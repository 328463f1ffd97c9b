"""ONNX's TopK on jitflow's arrays: the k smallest or largest values along an axis and
their positions, sorted, equal values in the order of their positions (as ONNX asks)."""
import numpy as np

from .. import numpy as jnp


def top_k(node, x, k):
    axis = node.attr("axis", -1)
    count = int(node.static(k, "k").reshape(-1)[0])
    length = jnp.shape(x)[axis]
    if not 0 <= count <= length:
        raise node.fail(f"k = {count} is outside the axis' length {length}")
    key = jnp.astype(x, np.int8) if jnp.result_type(x) == np.bool_ else x
    if node.attr("largest", 1):
        # descending and stable: a float negated; an integer inverted (~x = -x - 1),
        # which orders the same way and cannot overflow
        key = jnp.negative(key) if jnp.result_type(key).kind == "f" else jnp.invert(key)
    order = jnp.argsort(key, axis=axis, kind="stable")
    positions = jnp.take(order, np.arange(count), axis=axis)
    return jnp.take_along_axis(x, positions, axis=axis), jnp.astype(positions, np.int64)


SORTING_OPS = {"TopK": top_k}
