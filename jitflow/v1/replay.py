"""Replay: operations run on values (traced ones, inside a Session's function): each
operation's compute reads its inputs' values from the environment and writes its
outputs' values there, as every IR consumer of jitflow does."""
from ..errors import at_user_line


class Replay:
    def __init__(self, fed, variables, env=None):
        self.env = dict(fed if env is None else env)  # Tensor -> value
        self.fed = fed
        self.variables = variables  # Variable -> its value at the start of the run
        self.assigned = {}  # Variable -> its new value

    def read_variable(self, variable):
        return self.variables[variable]

    def run(self, operations, keep=()):
        """Run `operations` in order; the values of fed tensors, and of those in `keep`,
        stay as they are."""
        env = self.env
        fixed = set(self.fed) | set(keep) if keep else self.fed
        for op in operations:
            if op.compute is None or (op.outputs and all(t in fixed for t in op.outputs)):
                continue  # a NoOp, or every output given
            values = [env[t] for t in op.inputs]
            try:
                results = self._compute(op, values)
            except (ValueError, TypeError, IndexError) as error:
                where = f", made at {op.location}" if op.location else ""
                raise type(error)(f"{error}\n  in operation {op.name!r} ({op.type}){where}") \
                    from None
            if not isinstance(results, (list, tuple)):
                results = (results,)
            if len(results) != len(op.outputs):
                raise ValueError(at_user_line(
                    f"operation {op.name!r} made {len(results)} outputs at this run's "
                    f"shapes, where the graph has {len(op.outputs)}"))
            for tensor, value in zip(op.outputs, results):
                if tensor not in fixed:
                    env[tensor] = value
            if op.assigns is not None:
                self.assigned[op.assigns] = results[0]

    def _compute(self, op, values):
        if op.custom_gradient is not None:
            return op.custom_gradient.call(self, values)
        if op.needs_context:
            return op.compute(self, *values)
        return op.compute(*values)
