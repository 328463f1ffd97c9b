"""gradients(ys, xs): the derivative operation, made by jitflow's autodiff transform.

The operation it adds has one output per x. When a run needs it, it replays the
operations between xs and ys as a function of the xs and hands that function to
jitflow.vjp: the reverse pass is jitflow's own graph transform, traced into the same
IR as the forward pass (the optimizer shares the forward work between them), and a
derivative of a derivative is a vjp of a function that calls vjp, to any order.
"""
from .. import numpy as jnp
from ..autodiff import vjp
from ..errors import at_user_line
from .custom_gradients import CustomGradient
from .replay import Replay
from .state import convert_to_tensor
from .tensor import Operation, Tensor


def gradients(ys, xs, grad_ys=None, name="gradients", stop_gradients=None):
    """[d(sum of ys)/dx for x in xs], each a Tensor shaped like x, or None for an x
    the ys do not depend on. grad_ys weighs each y (ones by default)."""
    ys, xs = _listed(ys), _listed(xs)
    grad_ys = [None] * len(ys) if grad_ys is None else _listed(grad_ys)
    if len(grad_ys) != len(ys):
        raise ValueError(at_user_line(f"gradients: {len(grad_ys)} grad_ys for {len(ys)} ys"))
    for tensor in ys + xs:
        if not isinstance(tensor, Tensor):
            raise TypeError(at_user_line(f"gradients: {tensor!r} is not a graph Tensor"))
    blocked = set(_listed(stop_gradients or []))
    path = _path(ys, xs, blocked)
    for op in path:
        if op.gradient_name is not None and op.custom_gradient is None:
            op.custom_gradient = CustomGradient(op)
    reached = [x for x in xs if x.dtype.kind == "f" and _reaches(x, ys, path)]
    if not reached:
        return [None] * len(xs)
    grad_ys = [g if g is None else convert_to_tensor(g, dtype=None if isinstance(
        g, Tensor) else y.dtype) for g, y in zip(grad_ys, ys)]
    graph = ys[0].graph
    op = gradients_operation(graph, graph.unique_name(name), reached, ys, grad_ys, path,
                             blocked)
    outputs = dict(zip(reached, op.outputs))
    return [outputs.get(x) for x in xs]


def gradients_operation(graph, name, xs, ys, grad_ys, path, blocked):
    """The Gradients operation: d(ys weighted by grad_ys)/d(each of xs), through the
    operations `path`, not through the tensors `blocked`."""
    weights = [g for g in grad_ys if g is not None]
    op = Operation(graph, "Gradients", name, xs + ys + weights,
                   _derivative(xs, ys, grad_ys, path, blocked),
                   [(x.shape, x.dtype) for x in xs], needs_context=True)
    op.derivative = (xs, ys, grad_ys, path, blocked)  # what a GraphDef stores (graph_def.py)
    return op


def _listed(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _path(ys, xs, blocked):
    """The operations between xs and ys, in creation order: those the ys need that
    depend on an x."""
    needed, stack = set(), [y.op for y in ys]
    while stack:
        op = stack.pop()
        if op not in needed:
            needed.add(op)
            stack.extend(t.op for t in op.inputs)
    depends = set(xs)
    path = []
    for op in sorted(needed, key=lambda op: op.index):
        if any(t in depends and t not in blocked for t in op.inputs):
            path.append(op)
            depends.update(t for t in op.outputs if t not in xs)
    return path


def _reaches(x, ys, path):
    return x in ys or any(x in op.inputs for op in path)


def _derivative(xs, ys, grad_ys, path, blocked):
    def compute(context, *values):
        x_values, y_values = values[:len(xs)], values[len(xs):len(xs) + len(ys)]
        weights = iter(values[len(xs) + len(ys):])

        def forward(*xv):
            replay = Replay(context.fed, context.variables, context.env)
            replay.env.update(zip(xs, xv))
            replay.run(path, keep=set(xs) | blocked)
            return [replay.env[y] for y in ys]
        _, pullback = vjp(forward, *x_values)
        cotangents = [jnp.ones_like(y) if g is None else jnp.asarray(next(weights), y.dtype)
                      for y, g in zip(y_values, grad_ys)]
        return list(pullback(cotangents))
    return compute
