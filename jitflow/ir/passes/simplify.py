"""Algebraic simplification, exact under IEEE 754: every rewrite gives the same bits.

Only identities that hold for NaN, infinities and signed zeros are used. Not x*0 -> 0
(NaN*0 is NaN), and not x+0.0 -> x for floats (-0.0 + 0.0 is +0.0): the exact float
additive identity is -0.0. A rewrite applies only when its result has exactly the node's
type, so none of them changes a dtype, a shape or weak typing.
"""
import numpy as np

from ..graph import Lit, Node
from ..primitive import REGISTRY
from ..types import is_floating
from .rewrite import rewrite


def simplify(graph):
    return rewrite(graph, _simplify_node, simplify)


def _simplify_node(node, producers):
    rule = RULES.get(node.op)
    if rule is None:
        return None
    result = rule(node, *node.inputs, producers=producers, **node.params)
    if result is None:
        return None
    if isinstance(result, Node):
        return result if _types_match(result) else None
    return (result,) if result.type == node.outputs[0].type else None


def _types_match(node):
    """A rewritten node must define its outputs with exactly their old types."""
    try:
        types = node.prim.infer_types(*(v.type for v in node.inputs), **node.params)
    except (TypeError, ValueError):
        return False
    return types == tuple(v.type for v in node.outputs)


# --- matching helpers ------------------------------------------------------------------

def _scalar(value, producers):
    """The single value every element of `value` holds, if it is a uniform constant."""
    producer = producers.get(value)
    if producer is not None and producer.op == "broadcast_to":
        value = producer.inputs[0]
    if not isinstance(value, Lit) or value.value.size == 0:
        return None
    first = value.value.flat[0]
    if not np.all(value.value == first):
        return None
    if is_floating(value.type.dtype) and \
            np.any(np.signbit(value.value) != np.signbit(first)):
        return None  # 0.0 and -0.0 are equal but not the same constant
    return first


def _is(value, producers, number, negative_zero=None):
    found = _scalar(value, producers)
    if found is None or found != number:
        return False
    return negative_zero is None or bool(np.signbit(float(found))) == negative_zero


def _is_additive_identity(value, other, producers):
    """-0.0 for floats (x + -0.0 == x for every x); 0 for integers and bool."""
    if is_floating(other.type.dtype):
        return _is(value, producers, 0, negative_zero=True)
    return _is(value, producers, 0)


def _op(value, producers, name):
    producer = producers.get(value)
    return producer if producer is not None and producer.op == name else None


def _negation_in_result_dtype(value, node, producers):
    """The neg node defining `value`, if it negates in the node's result dtype: an integer
    negation promoted afterwards (-0 is +0, -MIN wraps) is not a float negation."""
    neg = _op(value, producers, "neg")
    if neg is None or neg.outputs[0].type.dtype != node.outputs[0].type.dtype:
        return None
    return neg


def _node(name, inputs, node, **params):
    """A node of primitive `name` that defines `node`'s outputs."""
    return Node(REGISTRY[name], inputs, params, node.outputs)


def _commuted(rule):
    """Try a rule on (x, y) and then on (y, x)."""
    def both_ways(node, x, y, producers, **_):
        return rule(node, x, y, producers) or rule(node, y, x, producers)
    return both_ways


# --- rules: one per line, the algebra in the comment ------------------------------------------

@_commuted
def _add(node, x, y, producers):
    if _is_additive_identity(y, x, producers):
        return x                                              # x + (-0.0) -> x; i + 0 -> i
    if (neg := _negation_in_result_dtype(y, node, producers)) is not None:
        return _node("sub", (x, neg.inputs[0]), node)        # x + (-y) -> x - y
    return None


def _sub(node, x, y, producers, **_):
    if _is(y, producers, 0, negative_zero=False) or (
            not is_floating(x.type.dtype) and _is(y, producers, 0)):
        return x                                              # x - 0.0 -> x
    if (neg := _negation_in_result_dtype(y, node, producers)) is not None:
        return _node("add", (x, neg.inputs[0]), node)        # x - (-y) -> x + y
    if is_floating(x.type.dtype) and _is(x, producers, 0, negative_zero=True):
        return _node("neg", (y,), node)                      # -0.0 - y -> -y
    return None


@_commuted
def _mul(node, x, y, producers):
    if _is(y, producers, 1):
        return x                                              # x * 1 -> x
    if _is(y, producers, -1) and node.outputs[0].type == x.type and \
            x.type.dtype.kind != "u":  # a Python -1 times a uint array raises OverflowError
        return _node("neg", (x,), node)                      # x * -1 -> -x
    return None


def _div(node, x, y, producers, **_):
    if _is(y, producers, 1):
        return x                                              # x / 1 -> x
    if _is(y, producers, -1) and node.outputs[0].type == x.type:
        return _node("neg", (x,), node)                      # x / -1 -> -x
    return None


def _pow(node, x, y, producers, **_):
    if _is(y, producers, 1):
        return x                                              # x ** 1 -> x
    if _is(y, producers, 2) and node.outputs[0].type == x.type:
        return _node("mul", (x, x), node)                    # x ** 2 -> x * x
    return None


def _neg(node, x, producers, **_):
    inner = _op(x, producers, "neg")
    return inner.inputs[0] if inner is not None else None    # -(-x) -> x


def _logical_not(node, x, producers, **_):
    inner = _op(x, producers, "logical_not")
    return inner.inputs[0] if inner is not None else None    # not not x -> x


def _abs(node, x, producers, **_):
    inner = _op(x, producers, "abs")
    return x if inner is not None else None                  # |(|x|)| -> |x|


def _idempotent(node, x, y, producers, **_):
    return x if x is y else None                              # max(x, x) -> x


def _where(node, c, x, y, producers, **_):
    if x is y:
        return x                                              # where(c, x, x) -> x
    chosen = _scalar(c, producers)
    if chosen is not None:
        return x if chosen else y                             # where(True, x, y) -> x
    return None


def _transpose(node, x, producers, perm):
    inner = _op(x, producers, "transpose")
    if inner is not None:                                     # t(t(x, p), q) -> t(x, p[q])
        x, perm = inner.inputs[0], tuple(inner.params["perm"][i] for i in perm)
    if perm == tuple(range(len(perm))):
        return x                                              # transpose(x, id) -> x
    return _node("transpose", (x,), node, perm=perm) if inner is not None else None


def _reshape(node, x, producers, shape):
    inner = _op(x, producers, "reshape")
    if inner is not None:                                     # reshape(reshape(x)) -> reshape(x)
        x = inner.inputs[0]
    if shape == x.type.shape:
        return x                                              # reshape(x, x.shape) -> x
    return _node("reshape", (x,), node, shape=shape) if inner is not None else None


def _broadcast_to(node, x, producers, shape):
    inner = _op(x, producers, "broadcast_to")
    if inner is not None:                                     # bcast(bcast(x)) -> bcast(x)
        x = inner.inputs[0]
    if shape == x.type.shape:
        return x                                              # broadcast_to(x, x.shape) -> x
    return _node("broadcast_to", (x,), node, shape=shape) if inner is not None else None


def _same_type(node, x, producers, **_):
    return x                                                  # cast(x, x.dtype) -> x


def _sum_of_one(node, x, producers, **_):
    # NumPy's float sums start from +0.0, so a float sum of one -0.0 is +0.0, not x.
    return None if is_floating(x.type.dtype) else x  # sum over size-1 axes -> x


def _no_longer_needed(node, x, producers, **_):
    # Derivatives are taken while tracing; the traced graph only computes values.
    return x                                                  # stop_gradient(x) -> x


def _slice(node, x, producers, starts, steps, sizes):
    full = sizes == x.type.shape and all(s == 1 for s in steps)
    return x if full else None                               # x[:, :] -> x


RULES = {
    "add": _add, "sub": _sub, "mul": _mul, "div": _div, "pow": _pow,
    "neg": _neg, "logical_not": _logical_not, "abs": _abs,
    "max": _idempotent, "min": _idempotent, "where": _where,
    "transpose": _transpose, "reshape": _reshape, "broadcast_to": _broadcast_to,
    "cast": _same_type, "reduce_sum": _sum_of_one, "slice": _slice,
    "stop_gradient": _no_longer_needed,
}
