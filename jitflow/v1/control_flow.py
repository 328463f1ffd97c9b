"""cond and while_loop in graph mode, over jitflow.cond and jitflow.while_loop.

The operations a branch or a loop body makes are collected apart (Graph.capturing);
they run only inside the Cond or While operation, whose inputs are the tensors from
outside that they read. When a run needs that operation, its branches or body are
replayed as the functions jitflow's control flow traces into subgraphs, so the compiled
code branches and loops, and derivatives go through them as jitflow's do.
"""
from ..control_flow import cond as jitflow_cond
from ..control_flow import while_loop as jitflow_while_loop
from ..errors import at_user_line
from .graph import get_default_graph
from .ops import logical_and
from .replay import Replay
from .state import constant, convert_to_tensor
from .tensor import Operation, Tensor, TensorShape


class _Body:
    """A branch or loop body: the operations it made and the tensors it returns."""

    def __init__(self, graph, function, arguments, what):
        with graph.capturing() as operations:
            results = function(*arguments)
        self.structure = results
        self.listed = isinstance(results, (list, tuple))
        results = list(results) if self.listed else [results]
        for op in operations:
            if op.assigns is not None:
                raise ValueError(at_user_line(
                    f"{what}: assigning Variable {op.assigns.op.name!r} inside it is not "
                    f"supported; compute the new value with {what.split(':')[0]} and "
                    f"assign it outside"))
        with graph.capturing() as converted:  # Python numbers a body returns
            self.outputs = [convert_to_tensor(r) for r in results]
        self.operations = operations + converted
        made = {t for op in self.operations for t in op.outputs}
        inner = set(arguments) | made
        self.outside = [t for op in self.operations for t in op.inputs if t not in inner]
        self.outside += [t for t in self.outputs if t not in inner]

    @classmethod
    def made_of(cls, operations, outputs, listed):
        """A body from its operations and results (a GraphDef imported)."""
        body = cls.__new__(cls)
        body.operations, body.outputs, body.listed = list(operations), list(outputs), listed
        body.structure, body.outside = None, []
        return body

    def replay(self, context, bound=()):
        replay = Replay(context.fed, context.variables, context.env)
        replay.env.update(bound)
        replay.run(self.operations)
        return tuple(replay.env[t] for t in self.outputs)


def _merged(first, second, what):
    """The static type both branches' outputs fit."""
    if first.dtype != second.dtype:
        raise TypeError(at_user_line(f"{what}: the branches return {first.dtype} and "
                                     f"{second.dtype} ({first.name} and {second.name})"))
    a, b = first.shape.dims, second.shape.dims
    if a is None or b is None or len(a) != len(b):
        return TensorShape(None), first.dtype
    return TensorShape([x if x == y else None for x, y in zip(a, b)]), first.dtype


def cond(pred, true_fn, false_fn, name=None):
    """true_fn() if pred else false_fn(), pred a boolean scalar Tensor; both branches
    return the same structure of tensors (of the same dtypes)."""
    if not isinstance(pred, Tensor):
        return true_fn() if pred else false_fn()
    graph = pred.graph
    with graph.name_scope(name or "cond") as scope:
        with graph.name_scope("true"):
            true = _Body(graph, true_fn, (), "cond: true_fn")
        with graph.name_scope("false"):
            false = _Body(graph, false_fn, (), "cond: false_fn")
    if len(true.outputs) != len(false.outputs) or true.listed != false.listed:
        raise TypeError(at_user_line(f"cond: true_fn returns {len(true.outputs)} tensors, "
                                     f"false_fn {len(false.outputs)}"))
    types = [_merged(t, f, "cond") for t, f in zip(true.outputs, false.outputs)]
    outside = list(dict.fromkeys(true.outside + false.outside))

    op = cond_operation(graph, f"{scope}Merge", pred, outside, true, false, types)
    return list(op.outputs) if true.listed else op.outputs[0]


def cond_operation(graph, name, pred, outside, true, false, types):
    """The If operation running body `true` or `false` (_Body) as `pred` says."""
    def compute(context, pred_value, *values):
        return list(jitflow_cond(pred_value, lambda: true.replay(context),
                                 lambda: false.replay(context)))
    op = Operation(graph, "If", name, [pred] + outside, compute, types, needs_context=True)
    op.bodies = (true, false)  # what a GraphDef stores of it (graph_def.py)
    return op


def while_loop(cond, body, loop_vars, shape_invariants=None, maximum_iterations=None,
               name=None, **ignored):  # parallel_iterations, back_prop, swap_memory
    """Repeat loop_vars = body(*loop_vars) while cond(*loop_vars); the loop variables
    keep their dtypes and shapes. Returns them in a list, or one Tensor for one loop
    variable (as TensorFlow 1 does)."""
    if shape_invariants is not None:
        raise TypeError(at_user_line(
            "while_loop: shape_invariants is not supported: a loop variable keeps its "
            "shape through the loop in jitflow's compiled loops"))
    listed = isinstance(loop_vars, (list, tuple))
    initial = [convert_to_tensor(v) for v in (loop_vars if listed else [loop_vars])]
    graph = initial[0].graph if initial else get_default_graph()
    if maximum_iterations is not None:
        return _bounded(cond, body, initial, maximum_iterations, name)
    with graph.name_scope(name or "while") as scope:
        with graph.capturing():  # they are the body's inputs, made by no operation
            carried = [_loop_variable(graph, t, i) for i, t in enumerate(initial)]
        condition = _Body(graph, cond, carried, "while_loop: cond")
        step = _Body(graph, body, carried, "while_loop: body")
    _check_step(step, initial)
    outside = list(dict.fromkeys(condition.outside + step.outside))

    op = while_operation(graph, f"{scope}Exit", initial, outside, carried, condition, step)
    return op.outputs[0] if len(initial) == 1 else list(op.outputs)


def while_operation(graph, name, initial, outside, carried, condition, step):
    """The While operation: the loop variables `carried` (LoopVar tensors) start as
    `initial` and become `step`'s results while `condition` (_Body) holds."""
    def compute(context, *values):
        def keep_going(state):
            return condition.replay(context, zip(carried, state))[0]

        def advance(state):
            return step.replay(context, zip(carried, state))
        return list(jitflow_while_loop(keep_going, advance, tuple(values[:len(initial)])))
    op = Operation(graph, "While", name, initial + outside, compute,
                   [(t.shape, t.dtype) for t in initial], needs_context=True)
    op.bodies = (condition, step)  # what a GraphDef stores of it (graph_def.py)
    op.carried = tuple(carried)
    return op


def _loop_variable(graph, tensor, index):
    op = Operation(graph, "LoopVar", graph.unique_name(f"loop_var_{index}"), (), None,
                   [(tensor.shape, tensor.dtype)])
    return op.outputs[0]


def _check_step(step, initial):
    if len(step.outputs) != len(initial):
        raise TypeError(at_user_line(f"while_loop: body returns {len(step.outputs)} "
                                     f"tensors for {len(initial)} loop variables"))
    for before, after in zip(initial, step.outputs):
        if before.dtype != after.dtype or not _fits(after.shape, before.shape):
            raise TypeError(at_user_line(
                f"while_loop: body turns loop variable {before.name} of dtype "
                f"{before.dtype}, shape {before.shape} into {after.dtype}, shape "
                f"{after.shape}; a loop variable keeps its dtype and shape"))


def _fits(shape, expected):
    if shape.dims is None or expected.dims is None:
        return True
    return len(shape.dims) == len(expected.dims) and all(
        a is None or b is None or a == b for a, b in zip(shape.dims, expected.dims))


def _bounded(cond, body, initial, maximum_iterations, name):
    """maximum_iterations: a counter carried along, checked with cond."""
    count = constant(0, name="iteration")

    def bounded_cond(i, *rest):
        return logical_and(i < maximum_iterations, cond(*rest))

    def bounded_body(i, *rest):
        out = body(*rest)
        return [i + 1] + (list(out) if isinstance(out, (list, tuple)) else [out])
    results = while_loop(bounded_cond, bounded_body, [count] + initial, name=name)
    rest = results[1:]
    return rest[0] if len(rest) == 1 else rest
