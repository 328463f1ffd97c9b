"""The graph's sources: constant, placeholder, Variable, and the operations that group
others (group, global_variables_initializer).

A constant is held in the graph. A placeholder's value comes from each run's feed_dict.
A Variable's value lives in each Session, which changes it only by running its assign
operations: the new values are stored after the whole run has succeeded.
"""
import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from ..ir.types import as_dtype
from .graph import default_session, get_default_graph
from .numpy_calls import make_operation
from .ops import cast, identity, python_default
from .tensor import Operation, Tensor, TensorShape

VARIABLES = "variables"
TRAINABLE_VARIABLES = "trainable_variables"


def constant(value, dtype=None, shape=None, name="Const"):
    """A Tensor holding `value` (cast to `dtype`; broadcast to `shape` if given)."""
    dtype = python_default(value) if dtype is None else as_dtype(dtype, what="dtype")
    array = np.array(value, dtype=dtype)
    if shape is not None:
        array = np.array(np.broadcast_to(array, tuple(shape)))
    array.flags.writeable = False
    graph = get_default_graph()
    op = Operation(graph, "Const", graph.unique_name(name), (), lambda: array,
                   [(TensorShape(array.shape), array.dtype)], attrs={"value": array})
    return op.outputs[0]


Constant = constant  # the spelling of the graph API's first programs


def convert_to_tensor(value, dtype=None, name=None):
    if isinstance(value, Tensor):
        return value
    return constant(value, dtype=dtype, name=name or "Const")


def placeholder(dtype, shape=None, name=None):
    """A Tensor fed at each run (feed_dict); `shape` may leave dimensions (None) or the
    whole shape (shape=None) open."""
    dtype = as_dtype(dtype, what="placeholder dtype")
    graph = get_default_graph()
    op = Operation(graph, "Placeholder", graph.unique_name(name or "Placeholder"), (), None,
                   [(TensorShape(shape), dtype)], attrs={"dtype": dtype})
    return op.outputs[0]


def placeholder_with_default(input, shape, name=None):
    """`input` unless a run feeds this tensor."""
    default = convert_to_tensor(input)
    graph = default.graph
    op = Operation(graph, "PlaceholderWithDefault",
                   graph.unique_name(name or "PlaceholderWithDefault"), (default,),
                   lambda value: value, [(TensorShape(shape), default.dtype)])
    return op.outputs[0]


class Variable(Tensor):
    """Variable(initial_value, trainable=True, name=None, dtype=None): state that
    persists across runs of a Session. As a Tensor it is the value at the start of a run;
    `initializer` sets it to `initial_value`; assign() and assign_add() make operations
    that change it."""

    def __init__(self, initial_value=None, trainable=True, name=None, dtype=None,
                 collections=None, validate_shape=True):
        if initial_value is None:
            raise ValueError(at_user_line("Variable: initial_value must be given"))
        graph = get_default_graph()
        with graph.name_scope(name or "Variable") as scope:
            if callable(initial_value):
                initial_value = initial_value()
            self.initial_value = convert_to_tensor(initial_value, dtype=dtype,
                                                   name="initial_value")
            if dtype is not None and as_dtype(dtype) != self.initial_value.dtype:
                self.initial_value = cast(self.initial_value, dtype)
        shape = self.initial_value.shape
        if not shape.is_fully_defined():
            raise ValueError(at_user_line(
                f"Variable {scope[:-1]!r}: the initial value's shape {shape} is not fully "
                f"known"))
        self.trainable = bool(trainable)
        op = Operation(graph, "VariableV2", scope[:-1], (), self._read,
                       [(shape, self.initial_value.dtype)], needs_context=True)
        super().__init__(op, 0, shape, self.initial_value.dtype)
        op.outputs = (self,)
        with graph.name_scope(scope):
            self.initializer = self._assign_op("Assign", (self.initial_value,),
                                               self._checked, None)
        for collection in collections or [VARIABLES]:
            graph.add_to_collection(collection, self)
        if self.trainable:
            graph.add_to_collection(TRAINABLE_VARIABLES, self)

    def _read(self, context):
        return context.read_variable(self)

    def _checked(self, value):
        """`value` as this Variable's new value: same shape, cast to its dtype."""
        if tuple(value.shape) != tuple(self.shape.dims):
            raise ValueError(f"assigning a value of shape {tuple(value.shape)} to Variable "
                             f"{self.op.name!r} of shape {tuple(self.shape.dims)}")
        return jnp.astype(value, self.dtype)

    def _assign_op(self, op_type, inputs, compute, name):
        for value in inputs:
            if value is not self and not np.can_cast(value.dtype, self.dtype, "same_kind"):
                raise TypeError(at_user_line(
                    f"{op_type}: Variable {self.op.name!r} holds {self.dtype}, and a "
                    f"{value.dtype} value would not fit it (cast it first)"))
        return make_operation(self.graph, op_type, name, inputs, compute, assigns=self)

    def assign(self, value, name=None):
        """An operation setting this Variable to `value`; its output is the new value."""
        value = convert_to_tensor(value, dtype=self._python_dtype(value))
        return self._assign_op("Assign", (value,), self._checked, name).outputs[0]

    def assign_add(self, delta, name=None):
        delta = convert_to_tensor(delta, dtype=self._python_dtype(delta))
        return self._assign_op("AssignAdd", (self, delta),
                               lambda v, d: self._checked(v + d), name).outputs[0]

    def assign_sub(self, delta, name=None):
        delta = convert_to_tensor(delta, dtype=self._python_dtype(delta))
        return self._assign_op("AssignSub", (self, delta),
                               lambda v, d: self._checked(v - d), name).outputs[0]

    def _python_dtype(self, value):
        """A Python number or list takes the Variable's dtype, as it would in NumPy."""
        if isinstance(value, (Tensor, np.ndarray, np.generic)):
            return None
        return self.dtype

    def read_value(self):
        return identity(self, name=f"{self.op.name}/read")

    def value(self):
        return self

    def initialized_value(self):
        return self.initial_value

    def load(self, value, session=None):
        (session or default_session()).load_variable(self, value)

    def __repr__(self):
        return (f"<jitflow.v1.Variable '{self.op.name}:0' shape={self.shape} "
                f"dtype={self.dtype.name}>")


def group(*inputs, name=None):
    """An operation that runs all of `inputs` (operations or tensors), returning nothing."""
    graph = get_default_graph()
    ops = [x.op if isinstance(x, Tensor) else x for x in _flat(inputs)]
    return Operation(graph, "NoOp", graph.unique_name(name or "group_deps"), (), None, [],
                     control_inputs=ops)


def _flat(items):
    for item in items:
        if isinstance(item, (list, tuple)):
            yield from _flat(item)
        elif item is not None:
            yield item


def no_op(name=None):
    return group(name=name or "NoOp")


def global_variables(scope=None):
    return get_default_graph().get_collection(VARIABLES)


def trainable_variables(scope=None):
    return get_default_graph().get_collection(TRAINABLE_VARIABLES)


def variables_initializer(var_list, name="init"):
    return group(*[v.initializer for v in var_list], name=name)


def global_variables_initializer():
    """An operation that sets every Variable of the default graph to its initial value."""
    return variables_initializer(global_variables(), name="init")


initialize_all_variables = global_variables_initializer
