"""vmap: a function of one example, run on a whole batch at once.

The function is traced once on one example's types; the batching pass then walks its
graph and applies each node to the whole batch (rules.py). Like the derivative passes
it binds public ops, so the same code runs eagerly on NumPy values and records nodes
inside a trace, where they are optimized and compiled with the rest.
"""
import functools
import re

from .. import numpy as jnp
from .. import pytree
from ..autodiff.linearize import leaf_type, result
from ..autodiff.transform import read
from ..errors import at_user_line
from ..trace import (GraphBuilder, bind, constant_type, read_stateful,
                     standing_for_many_runs)
from ..trace.aliases import mark_readonly
from .rules import batch_node, batched_to_front


def batch_graph(graph, inputs, batched, size):
    """graph's outputs for a batch: inputs[i] has the batch as its axis 0 when
    batched[i], else it is shared by every element. Every output comes back batched."""
    env = dict(zip(graph.inputs, inputs, strict=True))
    is_batched = dict(zip(graph.inputs, batched))
    for node in graph.nodes:
        args = [read(env, v) for v in node.inputs]
        flags = [is_batched.get(v, False) for v in node.inputs]
        if any(flags):
            outs = batch_node(node, args, flags, size)
        else:
            outs = bind(node.prim, *args, subgraphs=node.subgraphs, **node.params)
            outs = outs if node.prim.multiple_results else (outs,)
        env.update(zip(node.outputs, outs))
        is_batched.update((v, any(flags)) for v in node.outputs)
    return [read(env, v) if is_batched.get(v, False) else
            batched_to_front(read(env, v), size) for v in graph.outputs]


def vmap(fn, in_axes=0, out_axes=0):
    """fn mapped over an axis of its arguments: vmap(f)(xs)[i] == f(xs[i]).

    in_axes: the axis each positional argument is mapped along (an int, negative counts
    from the end), or None for an argument every element shares; one value for all
    arguments, or a tuple with one entry per argument (each applying to all of that
    argument's leaves). Keyword arguments are mapped along their axis 0, as in JAX.
    out_axes: where the batch axis goes in every result leaf."""
    what = f"vmap of '{getattr(fn, '__qualname__', None) or repr(fn)}'"

    @functools.wraps(fn)
    def mapped(*args, **kwargs):
        axes = _leaf_axes(args, in_axes, what) + [0] * len(pytree.flatten(kwargs)[0])
        leaves, paths, structure = pytree.flatten((args, kwargs))
        leaves = [read_stateful(leaf) for leaf in leaves]  # a Variable: its value
        paths = [_argument_name(path) for path in paths]
        types = [leaf_type(leaf, f"{what}: {path}") for leaf, path in zip(leaves, paths)]
        size = _batch_size(types, axes, paths, what)
        fronts = [leaf if axis is None else jnp.moveaxis(leaf, axis, 0)
                  for leaf, axis in zip(leaves, axes)]
        example = [t if axis is None else t.with_shape(_drop(t.shape, axis))
                   for t, axis in zip(types, axes)]
        with GraphBuilder(what) as builder, standing_for_many_runs(what):
            tracers = [mark_readonly(builder.new_input(t, p), f"argument {p} of {what}, "
                                     f"whose writes would not reach the caller's array; "
                                     f"write into a copy (x = x.copy())")
                       for t, p in zip(example, paths)]
            positional, keywords = pytree.unflatten(structure, tracers)
            out = fn(*positional, **keywords)
            out_leaves, out_paths, out_structure = pytree.flatten(out)
            graph = builder.build(out_leaves)
        outer = builder.outer_values()
        batched = [axis is not None for axis in axes] + [False] * len(outer)
        outs = batch_graph(graph, fronts + outer, batched, size)
        outs = [result(jnp.moveaxis(o, 0, _axis(pytree.leaf_axis(out_axes, path),
                                              len(constant_type(o).shape), what,
                                              "out_axes")))
                for o, path in zip(outs, out_paths)]
        return pytree.unflatten(out_structure, outs)
    return mapped


def _leaf_axes(args, in_axes, what):
    """The mapped axis of every leaf of args (None: not mapped), from in_axes."""
    if isinstance(in_axes, (list, tuple)):
        if len(in_axes) != len(args):
            raise ValueError(at_user_line(
                f"{what}: in_axes has {len(in_axes)} entries but the function was called "
                f"with {len(args)} positional arguments"))
        per_arg = list(in_axes)
    else:
        per_arg = [in_axes] * len(args)
    axes = []
    for arg, axis in zip(args, per_arg):
        if axis is not None and not isinstance(axis, int):
            raise TypeError(at_user_line(f"{what}: in_axes entries must be ints or None, "
                                         f"got {axis!r}"))
        axes += [pytree.leaf_axis(axis, path) for path in pytree.flatten(arg)[1]]
    return axes


def _batch_size(types, axes, paths, what):
    sizes = {}
    for type, axis, path in zip(types, axes, paths):
        if axis is None:
            continue
        axis = _axis(axis, type.ndim, what, f"in_axes of {path}", type.shape)
        sizes[path] = type.shape[axis]
    if not sizes:
        raise ValueError(at_user_line(f"{what}: no argument is mapped (every in_axes "
                                      f"entry is None)"))
    if len(set(sizes.values())) > 1:
        listed = ", ".join(f"{p} has size {s}" for p, s in sizes.items())
        raise ValueError(at_user_line(f"{what}: mapped axes differ in size: {listed}"))
    return next(iter(sizes.values()))


def _argument_name(path):
    """'argument 0', "argument 'scale'" or 'argument 1['w']' for a leaf's path in the
    pair (positional arguments, keyword arguments)."""
    match = re.match(r"\[[01]\]\[([^\]]+)\](.*)$", path)
    return f"argument {match.group(1)}{match.group(2)}"


def _axis(axis, ndim, what, name, shape=None):
    if not -ndim <= axis < ndim:
        of = f"an array of shape {shape}" if shape is not None else f"a {ndim}-d result"
        raise ValueError(at_user_line(f"{what}: {name} is {axis}, out of range for {of}"))
    return axis % ndim


def _drop(shape, axis):
    axis %= len(shape)
    return shape[:axis] + shape[axis + 1:]
