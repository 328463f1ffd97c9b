"""Reverse mode of while_loop, whose trip count is only known when it runs.

    while_grad(carry, consts, carry_cts) -> (cotangents of the float carry leaves,
                                             cotangents of the float consts)

runs the loop forward keeping the carries the backward pass needs (in a buffer that
grows as the loop runs), then walks back through them applying the body's vjp. With
checkpoint_every=k it keeps only every k-th carry; going back, each stretch of k is
recomputed from its checkpoint, so memory holds about n/k + k carries for n steps.

Its own derivatives are loops again (the loop that carries tangents, TangentLoop), so
derivatives of any order work:
- forward over reverse: the while_grad of the tangent loop, seeded with (tangents of
  the cotangents, cotangents);
- reverse over reverse: the tangent loop itself (for the cotangents' cotangent) and its
  while_grad seeded with (0, cotangents).
"""
import functools

import numpy as np

from .. import ops
from ..autodiff.transform import differentiable, vjp_graph, zeros
from ..ir.graph import without_effects
from ..ir.interpret import eval_graph
from ..ir.primitive import Primitive
from ..ir.types import ShapeError
from ..trace import bind, constant_type, make_graph
from .subgraphs import run_graph
from .while_loop import TangentLoop, while_jvp, while_p


def _grad_type(*in_types, subgraphs, checkpoint_every):
    body = subgraphs[1]
    takes = tuple(t.strong() for t in body.in_types)
    seeds = tuple(t.strong() for t in body.out_types if differentiable(t))
    if tuple(t.strong() for t in in_types) != takes + seeds:
        raise ShapeError(f"while_grad takes {takes + seeds}, got {in_types}")
    return tuple(t for t in takes if differentiable(t))


def _grad_impl(*args, subgraphs, checkpoint_every):
    cond, body = subgraphs
    carried, taken = len(body.outputs), len(body.inputs)
    consts, cts = list(args[carried:taken]), list(args[taken:])
    float_carries = len(cts)
    backward = backward_graph(body)
    checkpoints, steps = _forward(cond, body, list(args[:carried]), consts,
                                  checkpoint_every)
    sums = [np.zeros(v.type.shape, v.type.dtype) for v in body.inputs[carried:]
            if differentiable(v.type)]
    for segment in reversed(range(len(checkpoints))):
        carries = [checkpoints[segment]]
        for _ in range(min(checkpoint_every, steps - segment * checkpoint_every) - 1):
            carries.append(eval_graph(body, carries[-1] + consts))
        for carry in reversed(carries):
            grads = eval_graph(backward, carry + consts + cts)[carried:]
            cts = grads[:float_carries]
            sums = [s + g for s, g in zip(sums, grads[float_carries:])]
    return cts + sums


def _forward(cond, body, carry, consts, every):
    """The loop run forward, keeping the carry every `every` steps: the checkpoints and
    the trip count."""
    checkpoints, steps = [], 0
    while eval_graph(cond, carry + consts)[0]:
        if steps % every == 0:
            checkpoints.append(carry)
        carry = eval_graph(body, carry + consts)
        steps += 1
    return checkpoints, steps


@functools.lru_cache(maxsize=64)
def backward_graph(body):
    """The body's vjp graph: (carry, consts, carry cotangents) -> (carry, cotangents of
    the float carry leaves, cotangents of the float consts)."""
    return vjp_graph(body)


def _grad_jvp(tangents, *args, out, subgraphs, checkpoint_every):
    cond, body = subgraphs
    loop, split = TangentLoop(cond, body), _Split(body, args)
    tangents = split.tangents(tangents)
    seeds = tangents[len(split.carry) + len(split.consts):] + list(split.cts)
    results = bind(while_grad_p, *split.carry, *split.float_of(tangents, "carry"),
                   *split.consts, *split.float_of(tangents, "consts"), *seeds,
                   subgraphs=(loop.cond, loop.body), checkpoint_every=checkpoint_every)
    floats = split.float_carries
    return list(results[:floats]) + \
        list(results[2 * floats:2 * floats + split.float_consts])


def _grad_vjp(cts, *args, out, subgraphs, checkpoint_every):
    cond, body = subgraphs
    loop, split = TangentLoop(cond, body), _Split(body, args)
    cts = [ct if ct is not None else zeros(constant_type(v).strong())
           for ct, v in zip(cts, out)]
    carry_cts, const_cts = cts[:split.float_carries], cts[split.float_carries:]
    directions = split.spread(carry_cts, "carry") + split.spread(const_cts, "consts")
    forward = while_jvp(directions, *split.carry, *split.consts, out=None,
                         subgraphs=subgraphs, checkpoint_every=checkpoint_every)
    seeds = [zeros(constant_type(c).strong()) for c in split.cts] + list(split.cts)
    results = bind(while_grad_p, *split.carry, *carry_cts, *split.consts, *const_cts,
                   *seeds, subgraphs=(loop.cond, loop.body),
                   checkpoint_every=checkpoint_every)
    floats = split.float_carries
    grads = iter(list(results[:floats]) +
                 list(results[2 * floats:2 * floats + split.float_consts]))
    return [next(grads) if differentiable(constant_type(x)) else None
            for x in split.carry + split.consts] + \
        [t for t in forward if t is not None]


class _Split:
    """A while_grad node's operands: carry, consts, cotangents of the float carries."""

    def __init__(self, body, args):
        carried, taken = len(body.outputs), len(body.inputs)
        self.carry, self.consts, self.cts = args[:carried], args[carried:taken], args[taken:]
        self.float_carries = len(self.cts)
        self.float_consts = sum(differentiable(constant_type(x)) for x in self.consts)

    def tangents(self, tangents):
        """Each operand's tangent, zeros for none."""
        return [t if t is not None else zeros(constant_type(x).strong())
                for t, x in zip(tangents, self.carry + self.consts + self.cts)]

    def float_of(self, values, part):
        """The values (aligned with all operands) of the float leaves of `part`."""
        start = 0 if part == "carry" else len(self.carry)
        operands = self.carry if part == "carry" else self.consts
        return [values[start + i] for i, x in enumerate(operands)
                if differentiable(constant_type(x))]

    def spread(self, float_values, part):
        """Values for the float leaves of `part` as a list aligned with all its leaves
        (None for the others)."""
        operands = self.carry if part == "carry" else self.consts
        values = iter(float_values)
        return [next(values) if differentiable(constant_type(x)) else None
                for x in operands]


# Not in the registry of ops: its operands are graphs.
while_grad_p = Primitive("while_grad", _grad_type, _grad_impl, multiple_results=True,
                         has_subgraphs=True, jvp=_grad_jvp, vjp=_grad_vjp)


def _while_vjp(cts, *args, out, subgraphs, checkpoint_every):
    body = subgraphs[1]
    seeds = [ct if ct is not None else zeros(v.type.strong())
             for ct, v in zip(cts, body.outputs) if differentiable(v.type)]
    # The loop runs forward again, but the original loop (kept) made its prints.
    subgraphs = tuple(without_effects(g) for g in subgraphs)
    results = iter(bind(while_grad_p, *args, *seeds, subgraphs=subgraphs,
                        checkpoint_every=checkpoint_every))
    return [next(results) if differentiable(constant_type(x)) else None for x in args]


# while's reverse mode is the loop above: this module gives while_p its vjp rule, so
# while_loop.py (which this one builds on) does not import it.
while_p.vjp = _while_vjp


@functools.lru_cache(maxsize=64)
def backward_step_graph(body):
    """One step back, as the native loop runs it: (carry, consts, carry cotangents,
    const cotangent sums) -> (the carry cotangents a step earlier, the sums with this
    step's added)."""
    backward = backward_graph(body)
    carried, taken = len(body.outputs), len(body.inputs)
    cts = [v.type.strong() for v in body.outputs if differentiable(v.type)]
    sums = [v.type.strong() for v in body.inputs[carried:] if differentiable(v.type)]

    def step(*args):
        values, seeds = args[:taken], args[taken:taken + len(cts)]
        grads = run_graph(backward, [*values, *seeds])[carried:]
        return grads[:len(cts)] + [ops.add(s, g) for s, g in
                                   zip(args[taken + len(cts):], grads[len(cts):])]
    types = [v.type for v in body.inputs] + cts + sums
    return make_graph(step, types, [f"a{i}" for i in range(len(types))],
                      name="while_loop's backward step")
