"""RegisterGradient: an operation's derivative written by the user with graph
operations, as TensorFlow 1 takes it (Graph.gradient_override_map, in graph.py, gives it
to the operations of a type).

The registered function is called once, when gradients() first needs the operation: on
the operation and one stand-in Tensor per output's gradient, it returns one Tensor (or
None) per input. The operations it makes are collected apart, like a cond branch's. When
a run differentiates the operation, it is a jitflow.custom_vjp whose backward rule
replays them on the values of the inputs, the outputs and the incoming gradients.
"""
from ..autodiff import custom_vjp
from ..errors import at_user_line
from .graph import REGISTERED_GRADIENTS, NotFoundError
from .replay import Replay
from .tensor import Operation, Tensor


class RegisterGradient:
    """@RegisterGradient("name") on f(op, *grads) -> [gradient of each input]; the
    graph's registry (graph.py) holds it, for Graph.gradient_override_map."""

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("RegisterGradient: the name must be a string")
        self.name = op_type

    def __call__(self, function):
        if self.name in REGISTERED_GRADIENTS:
            raise NotFoundError(f"a gradient named {self.name!r} is registered already")
        REGISTERED_GRADIENTS[self.name] = function
        return function


class CustomGradient:
    """The gradient operations built for one operation, and how to run it with them."""

    def __init__(self, op):
        graph, function = op.graph, REGISTERED_GRADIENTS.get(op.gradient_name)
        if function is None:  # (an imported graph's operation, named a gradient there)
            raise NotFoundError(at_user_line(
                f"operation {op.name!r} takes the gradient registered as "
                f"{op.gradient_name!r}, which is not registered in this program (use "
                f"@RegisterGradient({op.gradient_name!r}))"))
        with graph.name_scope(f"{op.name}_grad"):
            with graph.capturing() as made:
                self.incoming = [Operation(graph, "GradientInput",
                                           graph.unique_name(f"grad_{i}"), (), None,
                                           [(t.shape, t.dtype)]).outputs[0]
                                 for i, t in enumerate(op.outputs)]
            with graph.capturing() as self.operations:
                results = function(op, *self.incoming)
        results = list(results) if isinstance(results, (list, tuple)) else [results]
        if len(results) != len(op.inputs) or not all(
                r is None or isinstance(r, Tensor) for r in results):
            raise TypeError(at_user_line(
                f"the gradient {op.gradient_name!r} of {op.name!r} must return one Tensor "
                f"(or None) for each of its {len(op.inputs)} inputs, got {results!r}"))
        self.results = results
        self.op = op

    @classmethod
    def made_of(cls, op, incoming, operations, results):
        """The gradient of `op` from the operations made for it (a GraphDef imported)."""
        gradient = cls.__new__(cls)
        gradient.op, gradient.incoming = op, list(incoming)
        gradient.operations, gradient.results = list(operations), list(results)
        return gradient

    def call(self, context, values):
        """op's compute on `values`, its derivative given by the registered gradient."""
        op = self.op
        several = len(op.outputs) > 1

        def forward(*inputs):
            out = op.compute(*inputs)
            return tuple(out) if several else out

        def backward(residuals, cotangents):
            inputs, outputs = residuals
            replay = Replay(context.fed, context.variables, context.env)
            replay.env.update(zip(op.inputs, inputs))
            replay.env.update(zip(op.outputs, outputs if several else (outputs,)))
            replay.env.update(zip(self.incoming, cotangents if several else (cotangents,)))
            replay.run(self.operations)
            return tuple(None if r is None else replay.env[r] for r in self.results)
        differentiable = custom_vjp(forward)
        differentiable.defvjp(lambda *inputs: (forward(*inputs), (inputs, forward(*inputs))),
                              backward)
        return differentiable(*values)
