"""A loop over the leading axis of arrays: scan.

    carry, ys = jitflow.scan(f, init, xs, length=None, reverse=False)

is, for i in range(length) (backwards if reverse), `carry, y = f(carry, xs[i])` with the
ys stacked. Eagerly it is that Python loop. Traced, f is traced once into the subgraph
of one `scan` node: (carry, x, captured values) -> (carry, y), the node's operands being
(init, xs, captured values) and its results (carry, ys).

Its jvp is a scan carrying tangents; its vjp a forward scan that keeps each step's carry
and a scan running the other way through the body's vjp, so derivatives of any order are
scans too.
"""
import numpy as np

from .. import numpy as jnp
from .. import ops, pytree
from ..autodiff.transform import backward_pass, differentiable, jvp_graph, read, zeros
from ..errors import at_user_line
from ..ir.graph import Graph, types_text, without_effects
from ..ir.interpret import eval_graph
from ..ir.passes.dce import dce
from ..ir.primitive import VIEW_OPS, Primitive
from ..ir.types import ShapeError, TensorType
from ..trace import Tracer, bind, constant_type, innermost_builder, make_graph
from .subgraphs import (Argument, check_types, described, regrouped, strong_leaves,
                        trace)


# --- the primitive ------------------------------------------------------------------------

def _scan_type(*in_types, subgraphs, length, reverse, carries, xs):
    (body,) = subgraphs
    expected = list(body.in_types)
    for i in range(carries, carries + xs):
        expected[i] = stacked(expected[i], length)
    if tuple(t.strong() for t in in_types) != tuple(t.strong() for t in expected):
        raise ShapeError(f"the body takes {types_text(body.in_types)}, so the scan takes "
                         f"{types_text(expected)}; got {types_text(in_types)}")
    if body.out_types[:carries] != body.in_types[:carries]:
        raise ShapeError(f"the body returns the carry "
                         f"{types_text(body.out_types[:carries])}, it takes "
                         f"{types_text(body.in_types[:carries])}")
    return body.out_types[:carries] + tuple(stacked(t, length)
                                            for t in body.out_types[carries:])


def stacked(type, length):
    return TensorType((length,) + type.shape, type.dtype)


def _scan_impl(*args, subgraphs, length, reverse, carries, xs):
    (body,) = subgraphs
    carry, sliced = list(args[:carries]), args[carries:carries + xs]
    consts = list(args[carries + xs:])
    ys = [np.empty((length,) + t.shape, t.dtype) for t in body.out_types[carries:]]
    for i in (reversed(range(length)) if reverse else range(length)):
        outs = eval_graph(body, carry + [x[i] for x in sliced] + consts)
        carry = outs[:carries]
        for y, value in zip(ys, outs[carries:]):
            y[i] = value
    return carry + ys


def _scan_jvp(tangents, *args, out, subgraphs, length, reverse, carries, xs):
    """A scan carrying the tangents of the float carries, and stacking those of the
    float ys, through the body's jvp."""
    (body,) = subgraphs
    groups = _Groups(body, carries, xs)
    seeds = [t if t is not None else zeros(constant_type(x).strong())
             for t, x in zip(tangents, args) if differentiable(constant_type(x))]
    seeds = groups.split_seeds(seeds)
    operands = groups.split(args)
    results = bind(scan_p, *operands[0], *seeds[0], *operands[1], *seeds[1],
                   *operands[2], *seeds[2], subgraphs=(groups.tangent_body(),),
                   length=length, reverse=reverse, carries=carries + len(seeds[0]),
                   xs=xs + len(seeds[1]))
    carry_seeds, ys = len(seeds[0]), len(body.outputs) - carries
    carry_tangents = iter(results[carries:carries + carry_seeds])
    y_tangents = iter(results[carries + carry_seeds + ys:])
    return [next(carry_tangents) if differentiable(v.type) else None
            for v in body.outputs[:carries]] + \
        [next(y_tangents) if differentiable(v.type) else None
         for v in body.outputs[carries:]]


class _Groups:
    """The body's inputs in their three groups (carry, x, consts) and what derivatives
    of it need to know about them."""

    def __init__(self, body, carries, xs):
        self.body, self.carries, self.xs = body, carries, xs
        taken = len(body.inputs)
        self.ranges = [range(carries), range(carries, carries + xs),
                       range(carries + xs, taken)]
        self.floats = [[i for i in r if differentiable(body.inputs[i].type)]
                       for r in self.ranges]

    def split(self, values):
        return [[values[i] for i in r] for r in self.ranges]

    def split_seeds(self, seeds):
        """Seeds for the float inputs, in input order, split into the three groups."""
        counts = np.cumsum([0] + [len(f) for f in self.floats])
        return [seeds[counts[k]:counts[k + 1]] for k in range(3)]

    def tangent_body(self):
        """The body's jvp with inputs (carry, carry tangents, x, x tangents, consts,
        const tangents) and outputs (carry, carry tangents, y, y tangents)."""
        taken, given = len(self.body.inputs), len(self.body.outputs)
        counts = np.cumsum([taken] + [len(f) for f in self.floats])
        seeds = [range(counts[k], counts[k + 1]) for k in range(3)]
        float_outs = [i for i in range(given) if differentiable(self.body.outputs[i].type)]
        carry_out = [given + k for k, i in enumerate(float_outs) if i < self.carries]
        y_out = [given + k for k, i in enumerate(float_outs) if i >= self.carries]
        inputs = [self.ranges[0], seeds[0], self.ranges[1], seeds[1], self.ranges[2],
                  seeds[2]]
        outputs = [range(self.carries), carry_out, range(self.carries, given), y_out]
        return regrouped(jvp_graph(without_effects(self.body)), inputs, outputs)


def _scan_vjp(cts, *args, out, subgraphs, length, reverse, carries, xs):
    """A scan keeping, from each step, the values its vjp reads (residuals: the carry it
    started from, the results of its products and functions), then a scan the other way
    through the body's vjp on them, carrying the carry's cotangent and summing the
    consts'."""
    (body,) = subgraphs
    groups = _Groups(body, carries, xs)
    init, sliced, consts = groups.split(args)
    seeds = [ct if ct is not None else zeros(constant_type(o).strong())
             for ct, o in zip(cts, out) if differentiable(constant_type(o))]
    float_carries = len(groups.floats[0])
    sums = [zeros(body.inputs[i].type.strong()) for i in groups.floats[2]]
    seed_types = [v.type.strong() for v in body.outputs if differentiable(v.type)]
    back, residuals = _backward_body(groups, seed_types)
    # The same body with more results (share_scans.py runs the steps forward once); a
    # residual that is a y is that y. Without its prints: the scan being differentiated
    # made them (a body with prints is then not shared, and runs twice).
    ys = list(body.outputs[carries:])
    extra = [v for v in dict.fromkeys(residuals) if v not in ys]
    keeping = Graph(body.inputs, without_effects(body).nodes, body.outputs + tuple(extra))
    results = bind(scan_p, *args, subgraphs=(keeping,), length=length, reverse=reverse,
                   carries=carries, xs=xs)
    stacked = dict(zip(ys + extra, results[carries:]))
    kept = [stacked[v] for v in residuals]
    results = bind(scan_p, *seeds[:float_carries], *sums, *kept, *sliced,
                   *seeds[float_carries:], *consts, subgraphs=(back,), length=length,
                   reverse=not reverse, carries=float_carries + len(sums),
                   xs=len(kept) + xs + len(seeds) - float_carries)
    grads = iter(results)
    carry_cts = [next(grads) for _ in groups.floats[0]]
    const_cts = [next(grads) for _ in groups.floats[2]]
    return _aligned(groups, [carry_cts, list(grads), const_cts])


def _backward_body(groups, seed_types):
    """One step of the body's vjp, (carry cotangents, const cotangent sums, residuals,
    x, y cotangents, consts) -> (carry cotangents, sums, x cotangents), and the body
    values its residuals are: those of the candidates the step reads."""
    body = groups.body
    # Views cost nothing to redo; weakly typed scalars are not worth a stacked copy.
    candidates = list(body.inputs[:groups.carries]) + [
        v for node in body.nodes if node.op not in VIEW_OPS for v in node.outputs
        if not v.type.weak]
    step = dce(_step_graph(groups, seed_types, candidates))
    read = {v for node in step.nodes for v in node.inputs} | set(step.outputs)
    first = len(groups.floats[0]) + len(groups.floats[2])
    offered = step.inputs[first:first + len(candidates)]
    inputs = list(step.inputs[:first]) + [v for v in offered if v in read] + \
        list(step.inputs[first + len(candidates):])
    residuals = [c for c, v in zip(candidates, offered) if v in read]
    return Graph(inputs, step.nodes, step.outputs), residuals


def _step_graph(groups, seed_types, candidates):
    """The backward step taking every candidate value as a residual input; the body's
    other values are recomputed from them."""
    body, carries = groups.body, groups.carries
    float_carries, float_xs = len(groups.floats[0]), len(groups.floats[1])
    sum_types = [body.inputs[i].type.strong() for i in groups.floats[2]]
    _, sliced, consts = groups.split([v.type for v in body.inputs])
    types = seed_types[:float_carries] + sum_types + [v.type for v in candidates] + \
        sliced + seed_types[float_carries:] + consts

    def step(*args):
        args = list(args)
        ct_carry, sums = _take(args, float_carries), _take(args, len(sum_types))
        given = dict(zip(candidates, _take(args, len(candidates))))
        rows, ct_ys = _take(args, len(sliced)), _take(args, len(seed_types) - float_carries)
        env = dict(zip(body.inputs[carries:], rows + args))
        env.update((v, given[v]) for v in body.inputs[:carries])
        _forward(body, env, given)
        seeds = iter(ct_carry + ct_ys)
        grads = backward_pass(body, env, [next(seeds) if differentiable(v.type) else None
                                          for v in body.outputs])
        grads = [g if g is not None else zeros(v.type.strong())
                 for g, v in zip(grads, body.inputs) if differentiable(v.type)]
        const_grads = grads[float_carries + float_xs:]
        return grads[:float_carries] + [ops.add(s, g) for s, g in zip(sums, const_grads)] \
            + grads[float_carries:float_carries + float_xs]
    names = [f"a{i}" for i in range(len(types))]
    return make_graph(step, types, names, name="scan's backward step")


def _take(values, count):
    """The first `count` of `values`, removed from it."""
    taken = values[:count]
    del values[:count]
    return taken


def _forward(body, env, given):
    """The body's values into `env`: the given ones as they are, the rest recomputed."""
    for node in body.nodes:
        if all(v in given for v in node.outputs):
            env.update((v, given[v]) for v in node.outputs)
            continue
        outs = bind(node.prim, *(read(env, v) for v in node.inputs),
                    subgraphs=node.subgraphs, **node.params)
        env.update(zip(node.outputs, outs if node.prim.multiple_results else (outs,)))


def _aligned(groups, float_values):
    """Per body input, the value for the float ones (from the three groups' lists) and
    None for the others."""
    result = []
    for group, values in zip(groups.ranges, float_values):
        values = iter(values)
        result += [next(values) if differentiable(groups.body.inputs[i].type) else None
                   for i in group]
    return result


# Not in the registry of ops (test_ops draws arrays for those): its operands are graphs.
scan_p = Primitive("scan", _scan_type, _scan_impl, multiple_results=True,
                   has_subgraphs=True, jvp=_scan_jvp, vjp=_scan_vjp)



# --- the function -------------------------------------------------------------------------

def scan(f, init, xs=None, length=None, reverse=False):
    """carry, ys: `carry, y = f(carry, x)` for each x along xs' leading axis (last to
    first if reverse), the ys stacked. xs is a pytree of arrays (or None, with length)."""
    x_leaves, x_paths, x_structure = pytree.flatten(xs)
    x_leaves = [x if isinstance(x, Tracer) else np.asarray(x) for x in x_leaves]
    length = _length(x_leaves, x_paths, length)
    if innermost_builder() is None and length > 0:
        return _eager_scan(f, init, x_leaves, x_structure, length, reverse)
    leaves, _, structure = strong_leaves(init)
    carry = Argument(structure, [constant_type(leaf) for leaf in leaves], "carry")
    x = Argument(x_structure, [_row_type(leaf) for leaf in x_leaves], "x")
    traced = trace(f, "scan's f", [carry, x], carry.types)
    y_structure = _check_step(traced, structure, carry)
    outs = bind(scan_p, *leaves, *x_leaves, *traced.captured, subgraphs=(traced.graph,),
                length=length, reverse=bool(reverse), carries=len(leaves), xs=len(x_leaves))
    return (pytree.unflatten(structure, list(outs[:len(leaves)])),
            pytree.unflatten(y_structure, list(outs[len(leaves):])))


def _length(leaves, paths, length):
    rows = [(constant_type(leaf).shape or (None,))[0] for leaf in leaves]
    for leaf, path, count in zip(leaves, paths, rows):
        if count is None:
            raise ValueError(at_user_line(f"scan: xs{path} is a scalar; every leaf of xs "
                                          f"needs a leading axis to scan along"))
    if length is not None:
        length = int(length)
        if length < 0:
            raise ValueError(at_user_line(f"scan: length must be >= 0, got {length}"))
    elif not rows:
        raise ValueError(at_user_line("scan: with no xs, give the length"))
    for path, count in zip(paths, rows):
        if count != (length if length is not None else rows[0]):
            raise ValueError(at_user_line(
                f"scan: xs{path} has {count} rows, but "
                + (f"length is {length}" if length is not None else
                   f"xs{paths[0]} has {rows[0]}")))
    return rows[0] if length is None else length


def _row_type(leaf):
    type = constant_type(leaf).strong()
    return TensorType(type.shape[1:], type.dtype)


def _check_step(traced, structure, carry):
    """The structure of f's y, after checking f returned (carry, y) with the carry's
    structure and types."""
    result = traced.out_structure
    if result is None or result == pytree.LEAF or result[0] not in (tuple, list) or \
            len(result[2]) != 2:
        raise TypeError(at_user_line("scan: f must return a pair (carry, y)"))
    carry_structure, y_structure = result[2]
    count = pytree.leaf_count(carry_structure)
    if carry_structure != structure:
        returned = ["carry" + p.removeprefix("[0]") for p in traced.out_paths[:count]]
        raise TypeError(at_user_line(f"scan: f returns the carry {described(returned)}, "
                                     f"but it came in as {described(carry.paths())}"))
    check_types("scan: f", ["returns " + p for p in carry.paths()],
                traced.graph.out_types[:count], carry.types, "it came in as")
    return y_structure


def _eager_scan(f, init, x_leaves, x_structure, length, reverse):
    carry, ys = init, []
    for i in (reversed(range(length)) if reverse else range(length)):
        carry, y = f(carry, pytree.unflatten(x_structure, [x[i] for x in x_leaves]))
        ys.append(y)
    if reverse:
        ys.reverse()
    leaves = [pytree.flatten(y)[0] for y in ys]
    structure = pytree.flatten(ys[0])[2]
    return carry, pytree.unflatten(structure, [_stack([row[k] for row in leaves])
                                               for k in range(len(leaves[0]))])


def _stack(rows):
    """Rows stacked as NumPy would, or by jitflow.numpy when a tape records them."""
    if any(isinstance(row, Tracer) for row in rows):
        return jnp.stack(rows)
    return np.stack([np.asarray(row) for row in rows])
