"""Defun: a Python function defined once as a subgraph and called as one operation.

    @tf.Defun(tf.float32, tf.float32)
    def Scale(x, y):
        return x * y, x + y
    a, b = Scale(u, v)      # one operation of type "Scale" in u's graph

As TensorFlow 1's FunctionDef: the body's operations are collected apart (as a cond
branch's are: control_flow._Body) and run only inside the calling operation, which
replays them on its inputs' values; the tensors from outside that the body reads become
inputs of every call. The body is built once per graph and argument shapes, and shared
by the calls with those; derivatives go through it as through any replayed operation.
"""
from ..errors import at_user_line
from ..ir.types import as_dtype
from .control_flow import _Body
from .graph import get_default_graph
from .state import convert_to_tensor
from .tensor import Operation, TensorShape


class Defun:
    """@Defun(*input_types, func_name=None): the decorated function as a graph function
    taking tensors of `input_types` (dtypes; their shapes come from the call)."""

    def __init__(self, *input_types, func_name=None, **ignored):  # grad_func, noinline...
        self.input_types = [as_dtype(t, what="Defun input type") for t in input_types]
        self.func_name = func_name

    def __call__(self, function):
        return DefinedFunction(function, self.input_types,
                               self.func_name or function.__name__)


class DefinedFunction:
    """A function defined by Defun: calling it on tensors adds one operation."""

    def __init__(self, function, input_types, name):
        self.function, self.input_types, self.name = function, input_types, name
        self._bodies = {}  # (graph, argument shapes) -> (argument tensors, _Body)

    def __call__(self, *args, name=None):
        inputs = [convert_to_tensor(a) for a in args]
        self._check(inputs)
        graph = inputs[0].graph if inputs else get_default_graph()
        arguments, body = self._body(graph, inputs)
        op = defun_operation(graph, graph.unique_name(name or self.name), self.name,
                             inputs, body.outside, arguments, body)
        return list(op.outputs) if body.listed else op.outputs[0]

    def _check(self, inputs):
        if self.input_types and len(inputs) != len(self.input_types):
            raise TypeError(at_user_line(
                f"{self.name}: defined for {len(self.input_types)} arguments, called with "
                f"{len(inputs)}"))
        for position, (tensor, dtype) in enumerate(zip(inputs, self.input_types)):
            if tensor.dtype != dtype:
                raise TypeError(at_user_line(
                    f"{self.name}: argument {position} ({tensor.name}) is {tensor.dtype}, "
                    f"the function is defined for {dtype}"))

    def _body(self, graph, inputs):
        key = (id(graph), tuple((t.dtype, str(t.shape)) for t in inputs))
        if key not in self._bodies:
            with graph.name_scope(self.name):
                with graph.capturing():  # made by no operation of the graph
                    arguments = [_argument(graph, t, i) for i, t in enumerate(inputs)]
                body = _Body(graph, self.function, arguments, f"{self.name}: the body")
            self._bodies[key] = (arguments, body)
        return self._bodies[key]


def defun_operation(graph, name, op_type, inputs, outside, arguments, body):
    """The operation calling `body` (_Body) with `arguments` (Arg tensors) bound to
    `inputs`; the tensors from outside it reads are its further inputs."""
    op = Operation(graph, op_type, name, list(inputs) + list(outside),
                   _replaying(body, arguments), [(t.shape, t.dtype) for t in body.outputs],
                   needs_context=True)
    op.bodies = (body,)
    op.defun_arguments = tuple(arguments)  # what a GraphDef stores of it (graph_def.py)
    return op


def _replaying(body, arguments):
    def compute(context, *values):
        return list(body.replay(context, zip(arguments, values[:len(arguments)])))
    return compute


def _argument(graph, tensor, index):
    op = Operation(graph, "Arg", graph.unique_name(f"arg_{index}"), (), None,
                   [(TensorShape(tensor.shape.dims), tensor.dtype)])
    return op.outputs[0]
