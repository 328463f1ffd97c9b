"""Session: runs the part of a graph that fetches need, compiled by jitflow.

A run's fetches and the names of its feeds select a Plan: the operations the fetches
need (pruned at fed tensors), replayed in creation order as one Python function of the
fed values and the Variables read, made a @jitflow.function. jitflow traces it to its
IR, optimizes and compiles it once per shape of the feeds and caches the native code,
so a repeated run is a dictionary lookup, a check of each feed, and a native call.
"""
import numpy as np

from .. import pytree
from ..errors import at_user_line
from .graph import _STACK, get_default_graph
from .plan import Plan
from .tensor import Operation, Tensor

_ELEMENTS = (Tensor, Operation, str)


class FailedPreconditionError(RuntimeError):
    """A run needs a Variable that the session has not initialized."""


class Session:
    """Session(graph=None): runs `graph` (the default graph) and holds its Variables."""

    def __init__(self, target="", graph=None, config=None):
        self.graph = graph if graph is not None else get_default_graph()
        self._values = {}  # Variable -> its array in this session
        self._closed = False
        self._default = None

    def __enter__(self):
        self._default = self.graph.as_default()
        _STACK.sessions.append(self)
        return self

    def __exit__(self, *exc):
        _STACK.sessions.remove(self)
        self._default.__exit__(*exc)
        self.close()

    def close(self):
        self._closed = True
        self._values = {}

    def as_default(self):
        return _AsDefault(self)

    @property
    def graph_def(self):
        """The GraphDef of the session's graph (graph_def.py)."""
        return self.graph.as_graph_def()

    # --- running ---------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """The values of `fetches` (a Tensor, an Operation, a name, or lists, tuples
        and dicts of them; an Operation gives None), with `feed_dict` giving values of
        tensors (or tensor names): placeholders, or any tensor to replace."""
        if self._closed:
            raise RuntimeError(at_user_line("this Session is closed; open another"))
        feeds = feed_dict or {}
        key = (fetches, tuple(feeds)) if isinstance(fetches, _ELEMENTS) else None
        plan = self.graph._plans.get(key) if key is not None else None
        if plan is None:
            plan = self._plan(fetches, feeds, key)
        return plan.run(self, feeds)

    def _plan(self, fetches, feeds, key):
        leaves, _, structure = pytree.flatten(fetches)
        if key is None:
            key = (structure, tuple(leaves), tuple(feeds))
            plan = self.graph._plans.get(key)
            if plan is not None:
                return plan
        elements = [self._element(leaf, "fetch") for leaf in leaves]
        fed = [self._element(name, "feed_dict key") for name in feeds]
        for tensor in fed:
            if not isinstance(tensor, Tensor):
                raise TypeError(at_user_line(
                    f"feed_dict key {tensor.name!r} is an operation; feed its output "
                    f"tensors ('{tensor.name}:0')"))
        plan = self.graph._plans[key] = Plan(self.graph, elements, structure, fed)
        return plan

    def _element(self, obj, what):
        try:
            return self.graph.as_graph_element(obj)
        except (KeyError, ValueError, TypeError) as error:
            raise type(error)(at_user_line(f"{what} {obj!r}: {error.args[0]}")) from None

    # --- Variables -------------------------------------------------------------------
    def variable_values(self, variables):
        values = self._values
        try:
            return [values[v] for v in variables]
        except KeyError:
            missing = next(v for v in variables if v not in values)
            raise FailedPreconditionError(at_user_line(
                f"Variable {missing.op.name!r} is read before it is initialized in this "
                f"session; run its initializer (or global_variables_initializer()) "
                f"first")) from None

    def store(self, variables, arrays):
        values = self._values
        for variable, array in zip(variables, arrays):
            values[variable] = array

    def load_variable(self, variable, value):
        array = np.array(value, dtype=variable.dtype)
        if not variable.shape.is_compatible_with(array.shape):
            raise ValueError(at_user_line(f"Variable {variable.op.name!r} has shape "
                                          f"{variable.shape}; got a value of shape "
                                          f"{array.shape}"))
        self._values[variable] = array

    def __repr__(self):
        return f"<jitflow.v1.Session on {self.graph!r}>"


class _AsDefault:
    def __init__(self, session):
        self.session = session

    def __enter__(self):
        _STACK.sessions.append(self.session)
        return self.session

    def __exit__(self, *exc):
        _STACK.sessions.remove(self.session)


class InteractiveSession(Session):
    """A Session that makes itself the default at once."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        _STACK.sessions.append(self)

    def close(self):
        if self in _STACK.sessions:
            _STACK.sessions.remove(self)
        super().close()
