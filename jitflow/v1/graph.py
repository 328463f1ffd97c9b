"""Graph: the operations a TensorFlow-1 style program declares, named and scoped.

A Graph records each operation as the jitflow function it applies to its input tensors
(an Operation); nothing runs while the graph is built. A Session turns the part of the
graph a run needs into one traced jitflow function, so the IR, the passes and the native
code are jitflow's own (session.py).
"""
import contextlib
import threading

from ..errors import at_user_line


class NotFoundError(KeyError):
    """A name that names nothing in the graph (a KeyError, shown as its message)."""

    def __str__(self):
        return str(self.args[0])


# The gradients registered by name: RegisterGradient (custom_gradients.py) writes here,
# gradient_override_map checks its names here.
REGISTERED_GRADIENTS = {}  # name -> gradient function(op, *grads)


class Graph:
    """A collection of Operations, in creation order (which is topological: an
    operation's inputs exist before it does)."""

    def __init__(self):
        self._operations = []
        self._by_name = {}
        self._names_in_use = {}
        self._scope = ""
        self._finalized = False
        self._collections = {}
        self._plans = {}  # what Sessions compiled for this graph (session.py)
        self._branches = []  # the op lists of the cond/while bodies being built
        self._gradient_overrides = {}  # op type -> registered gradient name

    # --- building --------------------------------------------------------------------
    def as_default(self):
        """Make this the default graph at once, and again until the `with` block ends
        (used without `with`, it stays the default, as the graph API's first programs
        expect)."""
        _STACK.graphs.append(self)
        return _Default(self)

    def unique_name(self, name, mark_as_used=True):
        """`name` under the current name scope, made unique as TensorFlow does: the
        second 'MatMul' in scope 'dense' is 'dense/MatMul_1'."""
        full = f"{self._scope}/{name}" if self._scope else name
        key = full.lower()
        count = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = count + 1
        if count == 0:
            return full
        unique = f"{full}_{count}"
        while unique.lower() in self._names_in_use:
            count += 1
            unique = f"{full}_{count}"
        if mark_as_used:
            self._names_in_use[unique.lower()] = 1
        return unique

    @contextlib.contextmanager
    def name_scope(self, name):
        """Names made inside are prefixed with `name/` (made unique: a second scope
        'dense' is 'dense_1'); a name ending in '/' re-enters that scope exactly, and
        None or '' returns to the top."""
        old = self._scope
        if not name:
            self._scope = ""
        elif name.endswith("/"):
            self._scope = name[:-1]
        else:
            self._scope = self.unique_name(name)
        try:
            yield f"{self._scope}/" if self._scope else ""
        finally:
            self._scope = old

    @contextlib.contextmanager
    def capturing(self):
        """Collect the operations made inside into a list: the body of a cond branch
        or a while loop (control_flow.py), which runs only inside its operation."""
        operations = []
        self._branches.append(operations)
        try:
            yield operations
        finally:
            self._branches.pop()

    def _add(self, operation):
        if self._finalized:
            raise RuntimeError(at_user_line(
                f"the graph is finalized and cannot be modified (adding operation "
                f"'{operation.name}')"))
        operation.index = len(self._operations)  # creation order is topological
        self._operations.append(operation)
        if self._branches:  # it runs only when its cond branch or loop body does
            self._branches[-1].append(operation)
        self._by_name[operation.name] = operation

    @contextlib.contextmanager
    def gradient_override_map(self, mapping):
        """Operations of the types in `mapping` made inside the block take the gradient
        registered (RegisterGradient) under the name it maps them to."""
        for name in mapping.values():
            if name not in REGISTERED_GRADIENTS:
                raise NotFoundError(at_user_line(
                    f"gradient_override_map: no gradient is registered as {name!r} (use "
                    f"@RegisterGradient({name!r}))"))
        saved = self._gradient_overrides
        self._gradient_overrides = {**saved, **mapping}
        try:
            yield
        finally:
            self._gradient_overrides = saved

    def finalize(self):
        """Make the graph read-only: adding an operation afterwards raises."""
        self._finalized = True

    @property
    def finalized(self):
        return self._finalized

    # --- reading ---------------------------------------------------------------------
    def get_operations(self):
        return list(self._operations)

    def get_operation_by_name(self, name):
        operation = self._by_name.get(name)
        if operation is None:
            raise NotFoundError(f"the name {name!r} refers to no operation in this graph")
        return operation

    def get_tensor_by_name(self, name):
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise ValueError(f"{name!r} is not a tensor name: tensor names look like "
                             f"'op_name:0' (the operation's name, then the output index)")
        operation = self.get_operation_by_name(op_name)
        if int(index) >= len(operation.outputs):
            raise NotFoundError(f"the name {name!r} refers to a tensor that does not exist: "
                           f"operation {op_name!r} has {len(operation.outputs)} outputs")
        return operation.outputs[int(index)]

    def as_graph_element(self, obj):
        """The Tensor or Operation `obj` stands for in this graph: itself, or the one a
        name names ('x:0' a tensor, 'x' an operation)."""
        if isinstance(obj, str):
            return self.get_tensor_by_name(obj) if ":" in obj else \
                self.get_operation_by_name(obj)
        graph = getattr(obj, "graph", None)
        if graph is None:
            raise TypeError(f"can not convert a {type(obj).__name__} into a Tensor or "
                            f"Operation")
        if graph is not self:
            raise ValueError(f"{type(obj).__name__} {obj.name!r} is not an element of this "
                             f"graph (it belongs to another Graph)")
        return obj

    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def get_collection(self, name):
        return list(self._collections.get(name, ()))

    def __repr__(self):
        return f"<jitflow.v1.Graph: {len(self._operations)} operations>"


class _Default:
    """What Graph.as_default returns: ends the graph's turn as default on exit."""

    def __init__(self, graph):
        self.graph = graph

    def __enter__(self):
        return self.graph

    def __exit__(self, *exc):
        graphs = _STACK.graphs
        for i in range(len(graphs) - 1, -1, -1):
            if graphs[i] is self.graph:
                del graphs[i]
                break


class _Stack(threading.local):
    def __init__(self):
        self.graphs = []
        self.sessions = []


_STACK = _Stack()
_GLOBAL = [Graph()]


def get_default_graph():
    """The graph operations are added to: the innermost `as_default()` one, else the
    global default graph."""
    graphs = _STACK.graphs
    return graphs[-1] if graphs else _GLOBAL[0]


def reset_default_graph():
    """Replace the global default graph with a new, empty one."""
    if _STACK.graphs:
        del _STACK.graphs[:]
    _GLOBAL[0] = Graph()


def name_scope(name, default_name=None, values=None):
    """graph.name_scope(name or default_name) for the default graph."""
    return get_default_graph().name_scope(name if name is not None else default_name)


def default_session():
    """The Session of the innermost `with Session():` block, or None."""
    sessions = _STACK.sessions
    return sessions[-1] if sessions else None
