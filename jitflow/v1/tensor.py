"""Operation, Tensor and TensorShape.

An Operation applies a jitflow function (`compute`) to the values of its input Tensors;
its outputs are Tensors, each (operation, output index). Their static shapes and dtypes
are found as jitflow finds types: by tracing `compute` on abstract values (infer.py).
A Tensor's operators, indexing and NumPy protocols add operations, so the modules that
make operations install them on it (tensor_methods.py); this module imports none of them.
"""
from ..errors import user_location
from .graph import default_session


class TensorShape:
    """A shape whose dimensions may be unknown (None); the rank too (dims None)."""
    __slots__ = ("dims",)

    def __init__(self, dims):
        self.dims = None if dims is None else tuple(
            None if d is None or d == -1 else int(d) for d in dims)

    @property
    def ndims(self):
        return None if self.dims is None else len(self.dims)

    rank = ndims

    def as_list(self):
        if self.dims is None:
            raise ValueError("as_list() is not defined on a shape of unknown rank")
        return list(self.dims)

    def is_fully_defined(self):
        return self.dims is not None and None not in self.dims

    def is_compatible_with(self, shape):
        """Whether a concrete shape (a tuple of ints) fits this one."""
        if self.dims is None:
            return True
        return len(shape) == len(self.dims) and all(
            d is None or d == s for d, s in zip(self.dims, shape))

    def __len__(self):
        return len(self.as_list())

    def __iter__(self):
        return iter(self.as_list())

    def __getitem__(self, index):
        return self.as_list()[index]

    def __eq__(self, other):
        if isinstance(other, TensorShape):
            return self.dims == other.dims
        if isinstance(other, (tuple, list)):
            return self.dims is not None and list(self.dims) == list(other)
        return NotImplemented

    def __hash__(self):
        return hash(self.dims)

    def __str__(self):
        if self.dims is None:
            return "<unknown>"
        dims = ", ".join("?" if d is None else str(d) for d in self.dims)
        return f"({dims}{',' if len(self.dims) == 1 else ''})"

    def __repr__(self):
        return f"TensorShape({None if self.dims is None else list(self.dims)})"


class Operation:
    """A node of a Graph: `compute(*input values) -> output values`, named and typed.

    `control_inputs` are operations that run whenever this one does (what group() and
    global_variables_initializer() make); `assigns` is the Variable a state-changing
    operation writes (its output is the new value)."""

    def __init__(self, graph, op_type, name, inputs, compute, out_types,
                 control_inputs=(), attrs=None, assigns=None, needs_context=False):
        self.graph = graph
        self.type = op_type
        self.name = name
        self.inputs = tuple(inputs)
        self.control_inputs = tuple(control_inputs)
        self.compute = compute
        self.attrs = dict(attrs or {})
        self.assigns = assigns
        self.needs_context = needs_context  # compute(context, *values): gradients
        self.location = user_location()  # named by errors of the runs that run it
        self.gradient_name = graph._gradient_overrides.get(op_type)
        self.custom_gradient = None  # built by gradients() (custom_gradients.py)
        self.outputs = tuple(Tensor(self, i, shape, dtype)
                             for i, (shape, dtype) in enumerate(out_types))
        graph._add(self)

    def get_attr(self, name):
        return self.attrs[name]

    def run(self, feed_dict=None, session=None):
        """Run this operation (and what it needs) in `session` or the default one."""
        _session_for(session, self).run(self, feed_dict)

    def __repr__(self):
        return f"<jitflow.v1.Operation '{self.name}' type={self.type}>"


def _session_for(session, element):
    session = session or default_session()
    if session is None:
        raise ValueError(f"no session to run {element.name!r} in: pass session=, or "
                         f"call it inside `with Session():`")
    return session


class Tensor:
    """Output `value_index` of operation `op`: a value that exists only while a
    Session runs. Operators and NumPy's functions on Tensors add operations (installed
    by tensor_methods.py)."""
    __array_priority__ = 300  # ndarray (+) Tensor is the Tensor's operation

    def __init__(self, op, value_index, shape, dtype):
        self.op = op
        self.value_index = value_index
        self._shape = shape
        self.dtype = dtype

    @property
    def name(self):
        return f"{self.op.name}:{self.value_index}"

    @property
    def graph(self):
        return self.op.graph

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        """Narrow the static shape to `shape` where it is unknown; a run still gives
        the values their own shapes, and a shape that does not fit raises."""
        shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
        if shape.dims is None:
            return
        if self._shape.dims is not None and not (
                len(shape.dims) == len(self._shape.dims) and all(
                    a is None or b is None or a == b
                    for a, b in zip(shape.dims, self._shape.dims))):
            raise ValueError(f"set_shape: shape {shape} does not fit Tensor {self.name!r} "
                             f"of shape {self._shape}")
        old = self._shape.dims or (None,) * len(shape.dims)
        self._shape = TensorShape([a if a is not None else b
                                   for a, b in zip(shape.dims, old)])

    @property
    def ndim(self):
        return self._shape.ndims

    def eval(self, feed_dict=None, session=None):
        """The value of this tensor, run in `session` or the default one."""
        return _session_for(session, self).run(self, feed_dict)

    def consumers(self):
        return [op for op in self.graph.get_operations() if self in op.inputs]

    def __repr__(self):
        dtype = "?" if self.dtype is None else self.dtype.name
        return f"<jitflow.v1.Tensor '{self.name}' shape={self._shape} dtype={dtype}>"

    # Tensors are hashable and compared by identity (they are feed_dict keys), as in
    # TensorFlow 1; equal() compares values.
    __hash__ = object.__hash__

    def __bool__(self):
        raise TypeError(f"the truth value of Tensor {self.name!r} is not known while the "
                        f"graph is built; use cond() or where() in the graph, or run it")

    def __iter__(self):
        raise TypeError(f"Tensor {self.name!r} is not iterable while the graph is built; "
                        f"use unstack() or split()")

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"Tensor {self.name!r} has no value while the graph is built; "
                        f"run it in a Session (session.run(t) or t.eval())")
