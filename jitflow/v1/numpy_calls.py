"""operation(): a jitflow function applied to Tensors becomes an Operation.

Every op function of jitflow.v1, every operator on a Tensor and every NumPy function
called on Tensors (np.exp(t), np.concatenate([t, u]), t @ w) comes here: the Tensors
among the arguments become the operation's inputs, everything else is kept as it is now
(arrays are copied: a later change of the caller's array does not change the graph).
"""
import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from .graph import get_default_graph
from .infer import output_types
from .tensor import Operation, Tensor

# NumPy's names whose TensorFlow operation type is not the name capitalized.
_TYPE_NAMES = {"matmul": "MatMul", "add": "AddV2", "subtract": "Sub", "multiply": "Mul",
               "divide": "RealDiv", "true_divide": "RealDiv", "negative": "Neg",
               "sum": "Sum", "mean": "Mean", "concatenate": "ConcatV2",
               "floor_divide": "FloorDiv", "remainder": "FloorMod", "power": "Pow",
               "absolute": "Abs", "argmax": "ArgMax", "argmin": "ArgMin",
               "logical_and": "LogicalAnd", "logical_or": "LogicalOr",
               "logical_not": "LogicalNot", "not_equal": "NotEqual",
               "greater_equal": "GreaterEqual", "less_equal": "LessEqual",
               "expand_dims": "ExpandDims", "take": "GatherV2", "where": "SelectV2"}


def type_name(numpy_name):
    """TensorFlow's operation type for a NumPy function name: 'exp' -> 'Exp'."""
    return _TYPE_NAMES.get(numpy_name) or "".join(
        part.capitalize() for part in numpy_name.split("_"))


def operation(op_type, function, args, kwargs, name=None):
    """Add `function(*args, **kwargs)` to the graph of the Tensors in the arguments (or
    the default graph); returns its output Tensor, or a list when it has several."""
    inputs = []
    arguments = _lift((args, kwargs), inputs)
    graph = _graph_of(inputs, op_type)

    def compute(*values):
        call_args, call_kwargs = _lower(arguments, values)
        return function(*call_args, **call_kwargs)
    op = make_operation(graph, op_type, name, inputs, compute)
    op.recipe = (function, arguments)  # what a GraphDef stores of it (graph_def.py)
    return op.outputs[0] if len(op.outputs) == 1 and not op.attrs["listed"] \
        else list(op.outputs)


def make_operation(graph, op_type, name, inputs, compute, **options):
    """An Operation whose output types are traced from `compute` (infer.py)."""
    types, listed = output_types(compute, inputs)
    op = Operation(graph, op_type, graph.unique_name(name or op_type), inputs, compute,
                   types, **options)
    op.attrs["listed"] = listed
    return op


def _graph_of(inputs, op_type):
    graphs = {id(t.graph): t.graph for t in inputs}
    if len(graphs) > 1:
        names = ", ".join(repr(t.name) for t in inputs)
        raise ValueError(at_user_line(f"{op_type}: the input tensors {names} belong to "
                                      f"different graphs; an operation's inputs must all "
                                      f"come from one graph"))
    return next(iter(graphs.values())) if graphs else get_default_graph()


class _Slot:
    """Where the value of input number `index` goes when the operation runs."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def _lift(tree, inputs):
    """`tree` with every Tensor replaced by a _Slot (the Tensor appended to `inputs`)
    and every ndarray by a read-only copy."""
    if isinstance(tree, Tensor):
        inputs.append(tree)
        return _Slot(len(inputs) - 1)
    if isinstance(tree, (list, tuple)):
        lifted = [_lift(item, inputs) for item in tree]
        return lifted if isinstance(tree, list) else tuple(lifted)
    if isinstance(tree, dict):
        return {key: _lift(value, inputs) for key, value in tree.items()}
    if isinstance(tree, np.ndarray):
        frozen = tree.copy()
        frozen.flags.writeable = False  # a constant of the graph
        return frozen
    if isinstance(tree, slice):
        return slice(*(_lift(part, inputs) for part in (tree.start, tree.stop, tree.step)))
    return tree


def _lower(tree, values):
    if isinstance(tree, _Slot):
        return values[tree.index]
    if isinstance(tree, list):
        return [_lower(item, values) for item in tree]
    if isinstance(tree, tuple):
        return tuple(_lower(item, values) for item in tree)
    if isinstance(tree, dict):
        return {key: _lower(value, values) for key, value in tree.items()}
    if isinstance(tree, slice):
        return slice(*(_lower(part, values) for part in (tree.start, tree.stop, tree.step)))
    return tree


def ufunc_operation(ufunc, method, inputs, kwargs):
    """np.exp(t), np.add.reduce(t): the jitflow.numpy function NumPy's call maps to."""
    if kwargs.get("out") is not None:
        raise TypeError(at_user_line(f"numpy.{ufunc.__name__}(..., out=...) on graph "
                                     f"tensors: a graph tensor cannot be written into; "
                                     f"assign the result instead"))
    if method == "__call__":
        return operation(type_name(ufunc.__name__), getattr(np, ufunc.__name__), inputs,
                         kwargs)
    return operation(type_name(f"{ufunc.__name__}_{method}"), getattr(ufunc, method),
                     inputs, kwargs)


def function_operation(func, args, kwargs):
    """np.sum(t), np.concatenate([t, u]): NumPy's function itself, applied to traced
    values when the graph runs (they dispatch to jitflow.numpy)."""
    if getattr(jnp, func.__name__, None) is None:
        raise TypeError(at_user_line(f"numpy.{func.__name__} is not supported by jitflow "
                                     f"on graph tensors (jitflow.numpy lists what is)"))
    return operation(type_name(func.__name__), func, args, kwargs)


def _jitflow_numpy_call(function, args, kwargs):
    """jnp.exp(t), jitflow.nn.relu(t): jitflow.numpy's own function, as an operation."""
    return operation(type_name(function.__name__), function, args, kwargs)


jnp.register_deferred(Tensor, _jitflow_numpy_call)
