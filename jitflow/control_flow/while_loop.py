"""Loops whose trip count is a value: while_loop and fori_loop.

    jitflow.while_loop(cond_fn, body_fn, init)       # while cond_fn(c): c = body_fn(c)
    jitflow.fori_loop(lower, upper, body_fn, init)   # for i in range(...): c = body_fn(i, c)

Eagerly they are Python loops. Traced, cond_fn and body_fn are traced once on the
carry's types into the two subgraphs of one `while` node; both take the carry's leaves
and then every captured outer value (the node's inputs after the initial carry).

Reverse mode works even though the trip count is only known at run time: see
while_grad.py. `checkpoint_every=k` bounds the memory that takes.
"""
import numpy as np

from .. import ops, pytree
from ..autodiff.transform import differentiable, jvp_graph, zeros
from ..errors import at_user_line
from ..ir.graph import types_text, without_effects
from ..ir.interpret import eval_graph
from ..ir.primitive import Primitive
from ..ir.types import ShapeError
from ..trace import Tracer, bind, constant_type, innermost_builder
from .scan import scan
from .subgraphs import (Argument, check_types, described, regrouped, sharing_captures,
                        strong_leaves, trace, with_unused_inputs)


# --- the primitive ------------------------------------------------------------------------

def _while_type(*in_types, subgraphs, checkpoint_every):
    cond, body = subgraphs
    carried = body.out_types
    if tuple(t.strong() for t in in_types) != tuple(t.strong() for t in body.in_types) \
            or cond.in_types != body.in_types:
        raise ShapeError(f"the loop's graphs take {types_text(body.in_types)} and "
                         f"{types_text(cond.in_types)}, its inputs are "
                         f"{types_text(in_types)}")
    if body.in_types[:len(carried)] != carried:
        raise ShapeError(f"the body returns {types_text(carried)}, it takes "
                         f"{types_text(body.in_types[:len(carried)])}")
    if len(cond.out_types) != 1 or cond.out_types[0].shape != () or \
            cond.out_types[0].dtype != np.bool_:
        raise ShapeError(f"the condition returns {types_text(cond.out_types)}, not a bool "
                         f"scalar")
    return carried


def _while_impl(*args, subgraphs, checkpoint_every):
    cond, body = subgraphs
    carry, consts = list(args[:len(body.outputs)]), list(args[len(body.outputs):])
    while eval_graph(cond, carry + consts)[0]:
        carry = eval_graph(body, carry + consts)
    return carry


def while_jvp(tangents, *args, out, subgraphs, checkpoint_every):
    """A loop carrying the tangents of the float carries beside them: the body's jvp,
    the same condition (which ignores them)."""
    cond, body = subgraphs
    loop = TangentLoop(cond, body)
    carry, consts = args[:loop.carried], args[loop.carried:]
    seeds = [t if t is not None else zeros(constant_type(x).strong())
             for t, x in zip(tangents, args) if differentiable(constant_type(x))]
    carry_seeds, const_seeds = seeds[:loop.float_carries], seeds[loop.float_carries:]
    results = bind(while_p, *carry, *carry_seeds, *consts, *const_seeds,
                   subgraphs=(loop.cond, loop.body), checkpoint_every=checkpoint_every)
    derivatives = iter(results[loop.carried:loop.carried + loop.float_carries])
    return [next(derivatives) if differentiable(v.type) else None for v in body.outputs]


# Not in the registry of ops (test_ops draws arrays for those): its operands are graphs.
# Its reverse mode is the while_grad loop, built on this one: while_grad.py gives it its
# vjp rule when it is imported (as the package's __init__ does).
while_p = Primitive("while", _while_type, _while_impl, multiple_results=True,
                    has_subgraphs=True, jvp=while_jvp)


class TangentLoop:
    """The loop that carries tangents: inputs (carry, carry tangents, consts, const
    tangents), tangents for the float values only; the body is the jvp of the body."""

    def __init__(self, cond, body):
        self.carried = len(body.outputs)
        inputs = body.inputs
        floats = [i for i, v in enumerate(inputs) if differentiable(v.type)]
        self.float_carries = sum(1 for i in floats if i < self.carried)
        carry, consts = range(self.carried), range(self.carried, len(inputs))
        seeds = len(inputs) + np.arange(len(floats))
        carry_seeds = seeds[:self.float_carries].tolist()
        const_seeds = seeds[self.float_carries:].tolist()
        outputs = len(body.outputs)
        # the loop being differentiated, kept beside this one, makes the prints
        self.body = regrouped(jvp_graph(without_effects(body)),
                              [carry, carry_seeds, consts, const_seeds], [range(outputs), range(outputs, outputs + self.float_carries)])
        tangent_types = [inputs[i].type.strong() for i in floats]
        cond = with_unused_inputs(cond, tangent_types[self.float_carries:], len(inputs))
        self.cond = with_unused_inputs(cond, tangent_types[:self.float_carries],
                                       self.carried)



# --- the functions ------------------------------------------------------------------------

def while_loop(cond_fn, body_fn, init, *, checkpoint_every=None):
    """carry = init; while cond_fn(carry): carry = body_fn(carry); return carry.

    cond_fn returns a boolean scalar; body_fn returns a carry of the same structure,
    shapes and dtypes. checkpoint_every=k: reverse mode keeps every k-th carry and
    recomputes the others, instead of keeping all of them."""
    checkpoint_every = _checkpoint_every(checkpoint_every)
    if innermost_builder() is None:
        carry = init
        while _eager_truth(cond_fn(carry)):
            carry = body_fn(carry)
        return carry
    leaves, paths, structure = strong_leaves(init)
    carry = Argument(structure, [constant_type(leaf) for leaf in leaves], "carry")
    cond = trace(cond_fn, "while_loop's cond_fn", [carry])
    _check_condition(cond)
    body = trace(body_fn, "while_loop's body_fn", [carry], carry.types)
    check_carry("while_loop: body_fn", body, structure, carry)
    graphs, captured = sharing_captures([cond, body])
    outs = bind(while_p, *leaves, *captured, subgraphs=graphs,
                checkpoint_every=checkpoint_every)
    return pytree.unflatten(structure, list(outs))


def _checkpoint_every(k):
    if k is None:
        return 1
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise ValueError(at_user_line(f"while_loop: checkpoint_every must be a positive "
                                      f"int or None, got {k!r}"))
    return int(k)


def _eager_truth(pred):
    value = np.asarray(pred)
    if value.shape != () or value.dtype != np.bool_:
        raise TypeError(at_user_line(f"while_loop: cond_fn must return a boolean scalar, "
                                     f"got {constant_type(value)}"))
    return bool(value)


def _check_condition(cond):
    types = cond.graph.out_types
    if len(types) != 1 or types[0].shape != () or types[0].dtype != np.bool_:
        raise TypeError(at_user_line(f"while_loop: cond_fn must return a boolean scalar, "
                                     f"got {types_text(types)}"))


def check_carry(what, traced, structure, carry):
    """The carry a body returns has the structure and types it came in with."""
    if traced.out_structure != structure:
        raise TypeError(at_user_line(
            f"{what} returns {described(['carry' + p for p in traced.out_paths])}, but "
            f"the carry is {described(carry.paths())}"))
    check_types(what, ["returns " + p for p in carry.paths()], traced.graph.out_types,
                carry.types, "it came in as")


def fori_loop(lower, upper, body_fn, init, *, checkpoint_every=None):
    """for i in range(lower, upper): carry = body_fn(i, carry); return carry.

    With bounds that are Python ints (or concrete) the loop is a scan of known length
    (whose reverse mode keeps every carry); with traced bounds it is a while_loop, and
    checkpoint_every applies as there."""
    if innermost_builder() is None:
        carry = init
        for i in range(_eager_bound(lower), _eager_bound(upper)):
            carry = body_fn(np.int64(i), carry)
        return carry
    if _concrete(lower) and _concrete(upper):
        start, stop = _eager_bound(lower), _eager_bound(upper)

        def step(carry, i):
            return body_fn(i, carry), None
        carry, _ = scan(step, init, np.arange(start, max(start, stop), dtype=np.int64))
        return carry
    return _fori_as_while(lower, upper, body_fn, init, checkpoint_every)


def _fori_as_while(lower, upper, body_fn, init, checkpoint_every):
    dtype = np.result_type(constant_type(lower).strong().dtype,
                           constant_type(upper).strong().dtype)
    start, stop = ops.cast(lower, dtype), ops.cast(upper, dtype)
    _, _, carry = while_loop(lambda c: c[0] < c[1],
                             lambda c: (c[0] + 1, c[1], body_fn(c[0], c[2])),
                             (start, stop, init), checkpoint_every=checkpoint_every)
    return carry


def _concrete(bound):
    return not isinstance(bound, Tracer)


def _eager_bound(bound):
    value = np.asarray(bound)
    if value.shape != () or value.dtype.kind not in "iu":
        raise TypeError(at_user_line(f"fori_loop: the bounds must be integer scalars, got "
                                     f"{constant_type(value)}"))
    return int(value)
