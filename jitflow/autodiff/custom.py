"""custom_vjp and custom_jvp: functions whose derivative the user writes, with JAX's
conventions (f.defvjp(fwd, bwd), f.defjvp(rule)).

Called outside any trace, such a function is just the function. Traced (eagerly for a
derivative, or by jitflow.function), it becomes one call node that owns the traced body
and carries the user's rule; the transforms use the rule, and once tracing is done the
inline pass puts the body in its place.
"""
import functools

from .. import pytree
from ..errors import at_user_line
from ..ir.interpret import eval_graph
from ..ir.primitive import Primitive
from ..pickling import found_by_name
from ..trace import GraphBuilder, bind, is_tracing, read_stateful, standing_in
from .linearize import Linearized, leaf_type, result
from .transform import NoCotangent, differentiable, run_nodes, tangent_pass, zeros


class _Call:
    """What a call node needs to run the user's rule: the function object, the pytree
    structures of its arguments and results, the non-differentiable arguments, and the
    traced values the function closes over (the node's last inputs)."""

    def __init__(self, owner, arg_structure, out_structure, static, captured=()):
        self.owner, self.arg_structure, self.out_structure = owner, arg_structure, out_structure
        self.static = static  # {position: value} of nondiff_argnums
        self.captured = list(captured)

    def arguments(self, leaves):
        """All of the function's arguments, from the leaves of the traced ones."""
        traced = iter(pytree.unflatten(self.arg_structure, leaves))
        count = len(self.static) + len(self.arg_structure[2])
        return [self.static[i] if i in self.static else next(traced) for i in range(count)]

    def closure(self, primals):
        """The user's rule runs where the derivative is taken, after the trace its
        closure comes from: there, each captured Tracer stands for the node's input."""
        return standing_in(zip(self.captured, primals[_argument_count(self):]))

    def closure_error(self, kind, body):
        """What to say when a value the function closes over (the body's last inputs)
        is differentiated: the rule gives derivatives for the arguments only."""
        types = ", ".join(str(v.type) for v in body.inputs[_argument_count(self):])
        return (f"{kind} '{self}' closes over a traced value ({types}) that is being "
                f"differentiated, but its rule gives derivatives for its arguments only; "
                f"pass that value as an argument instead")

    def __repr__(self):
        return self.owner.__name__


def _call_type(*in_types, subgraphs, call):
    return tuple(v.type for v in subgraphs[0].outputs)


def _call_impl(*args, subgraphs, call):
    return eval_graph(subgraphs[0], list(args))


def _argument_count(call):
    return pytree.leaf_count(call.arg_structure)


# The call primitives are not in the registry: like fused regions, they exist only
# between tracing and the inline pass.

# --- custom_vjp ------------------------------------------------------------------------

def _custom_vjp_rule(cts, *primals, out, subgraphs, call):
    """Run the user's fwd for its residuals, then bwd on them."""
    count = _argument_count(call)
    arguments = call.arguments(primals[:count])
    body = subgraphs[0]
    cts = [result(zeros(v.type.strong())) if ct is None else ct
           for v, ct in zip(body.outputs, cts)]
    statics = [call.static[i] for i in sorted(call.static)]
    with call.closure(primals):
        _, residuals = call.owner.fwd(*arguments)
        arg_cts = call.owner.bwd(*statics, residuals,
                                 pytree.unflatten(call.out_structure, cts))
    arguments = call.arg_structure[2]  # one subtree per differentiable argument
    if not isinstance(arg_cts, (tuple, list)) or len(arg_cts) != len(arguments):
        raise ValueError(at_user_line(
            f"custom_vjp '{call}': bwd must return a tuple with one cotangent (or None) "
            f"per differentiable argument ({len(arguments)}), got {arg_cts!r:.80}"))
    leaves = []
    for subtree, ct in zip(arguments, arg_cts):
        size = pytree.leaf_count(subtree)
        given = [None] * size if ct is None else pytree.flatten(ct)[0]
        if len(given) != size:
            raise ValueError(at_user_line(
                f"custom_vjp '{call}': a cotangent from bwd has {len(given)} leaves, its "
                f"argument has {size}"))
        leaves += given
    return list(leaves) + _closure_cotangents("custom_vjp", call, body)


def _closure_cotangents(kind, call, body):
    """For the captured values (the body's last inputs): none, and an error if one of
    them is being differentiated (transform.backward_pass decides)."""
    captured = body.inputs[_argument_count(call):]
    if not any(differentiable(v.type) for v in captured):
        return [None] * len(captured)
    return [NoCotangent(call.closure_error(kind, body))] * len(captured)


def _through_body(tangents, *primals, out, subgraphs, call):
    """Forward mode through the function's own body."""
    body = subgraphs[0]
    env = run_nodes(body, dict(zip(body.inputs, primals)))
    return tangent_pass(body, env, tangents)


custom_vjp_call_p = Primitive(
    "custom_vjp_call", _call_type, _call_impl, multiple_results=True, has_subgraphs=True,
    is_call=True, vjp=_custom_vjp_rule, jvp=_through_body)


# --- custom_jvp ------------------------------------------------------------------------

def _custom_jvp_rule(tangents, *primals, out, subgraphs, call):
    count = _argument_count(call)
    body = subgraphs[0]
    if any(t is not None for t in tangents[count:]):
        raise ValueError(at_user_line(call.closure_error("custom_jvp", body)))
    tangents = [result(zeros(v.type.strong())) if t is None else t
                for v, t in zip(body.inputs[:count], tangents)]
    arguments = call.arguments(primals[:count])
    tangent_args = call.arguments(tangents)
    diff = [i for i in range(len(arguments)) if i not in call.static]
    with call.closure(primals):
        _, tangent_out = call.owner.jvp_rule(tuple(arguments[i] for i in diff),
                                             tuple(tangent_args[i] for i in diff))
    return pytree.flatten(tangent_out)[0]


def _custom_jvp_transposed(cts, *primals, out, subgraphs, call):
    """Reverse mode from the user's jvp rule: its tangent output is linear in the input
    tangents, so its vjp (taken at zero tangents) is the transpose that maps output
    cotangents to input cotangents."""
    count = _argument_count(call)
    body = subgraphs[0]

    def tangent_out(*tangents):
        return _custom_jvp_rule(list(tangents), *primals, out=out, subgraphs=subgraphs,
                                call=call)
    lin = Linearized(tangent_out, tuple(result(zeros(v.type.strong()))
                                        for v in body.inputs[:count]),
                     name=f"custom_jvp '{call}' transposed")
    return lin.pullback(cts) + _closure_cotangents("custom_jvp", call, body)


custom_jvp_call_p = Primitive(
    "custom_jvp_call", _call_type, _call_impl, multiple_results=True, has_subgraphs=True,
    is_call=True, vjp=_custom_jvp_transposed, jvp=_custom_jvp_rule)


# --- the decorators -------------------------------------------------------------------

class _Custom:
    primitive = None

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)

    def __call__(self, *args):
        self._check_defined()
        if not is_tracing():
            return self.fun(*args)
        static = {i: args[i] for i in self.nondiff_argnums}
        traced = tuple(a for i, a in enumerate(args) if i not in static)
        leaves, paths, structure = pytree.flatten(traced)
        leaves = [read_stateful(leaf) for leaf in leaves]  # a Variable: its value
        body, out_structure, captured = self._trace(static, structure, leaves, paths)
        call = _Call(self, structure, out_structure, static, captured)
        outs = bind(self.primitive, *leaves, *captured, subgraphs=(body,), call=call)
        return pytree.unflatten(out_structure, list(outs))

    def __reduce_ex__(self, protocol):
        """Pickled by name where it is defined (its rules are its module's too)."""
        return self.__qualname__ if found_by_name(self) else super().__reduce_ex__(protocol)

    def _trace(self, static, structure, leaves, paths):
        out = {}
        with GraphBuilder(self.__name__) as builder:
            tracers = [builder.new_input(leaf_type(leaf, f"{self.__name__}(): argument"), p)
                       for leaf, p in zip(leaves, paths)]
            call = _Call(self, structure, None, static)
            result_tree = self.fun(*call.arguments(tracers))
            out_leaves, _, out["structure"] = pytree.flatten(result_tree)
            body = builder.build(out_leaves)
        return body, out["structure"], builder.outer_values()


class custom_vjp(_Custom):
    """A function with a hand-written reverse-mode derivative:

        @jitflow.custom_vjp
        def f(x): ...
        def f_fwd(x): return f(x), residuals
        def f_bwd(residuals, cotangent): return (cotangent_of_x,)
        f.defvjp(f_fwd, f_bwd)

    Forward mode differentiates f's own body. fwd and bwd may use traced values f
    closes over, but not to differentiate them: bwd gives cotangents for f's arguments
    only, so taking a derivative with respect to such a value is an error (pass it as
    an argument instead).
    """
    primitive = custom_vjp_call_p

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        return self

    def _check_defined(self):
        if getattr(self, "bwd", None) is None:
            raise TypeError(at_user_line(f"custom_vjp '{self.__name__}' was called "
                                         f"before defvjp(fwd, bwd)"))


class custom_jvp(_Custom):
    """A function with a hand-written forward-mode derivative:

        @jitflow.custom_jvp
        def f(x): ...
        @f.defjvp
        def f_jvp(primals, tangents): return f(*primals), tangent_out

    Reverse mode transposes the rule, which must be linear in the tangents.
    """
    primitive = custom_jvp_call_p

    def defjvp(self, rule):
        self.jvp_rule = rule
        return rule

    def _check_defined(self):
        if getattr(self, "jvp_rule", None) is None:
            raise TypeError(at_user_line(f"custom_jvp '{self.__name__}' was called "
                                         f"before defjvp(rule)"))


__all__ = ["custom_vjp", "custom_jvp"]
