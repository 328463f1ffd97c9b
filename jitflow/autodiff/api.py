"""grad, value_and_grad, vjp, jvp, jacrev, jacfwd, jacobian and hessian, with JAX's names
and conventions: arguments and results are pytrees, argnums picks what to differentiate.
"""
import functools

import numpy as np

from .. import numpy as jnp
from .. import pytree
from ..batching.vmap import vmap
from ..errors import at_user_line
from ..ir.types import is_floating
from ..trace import Tracer, constant_type
from .linearize import Linearized, result, zeros_of
from .transform import differentiable


def _name(fn):
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))


def _argnums(argnums, args, what):
    numbers = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for number in numbers:
        if not isinstance(number, int) or not -len(args) <= number < len(args):
            raise ValueError(at_user_line(
                f"{what}: argnums {argnums!r} does not fit the {len(args)} positional "
                f"arguments it was called with"))
    return numbers


def _linearize_args(fn, args, kwargs, numbers, what, has_aux=False):
    """fn linearized in the arguments `numbers` only; the others stay as they are."""
    def partial(*chosen):
        full = list(args)
        for number, value in zip(numbers, chosen):
            full[number] = value
        return fn(*full, **kwargs)
    return Linearized(partial, tuple(args[n] for n in numbers), name=what,
                      has_aux=has_aux)


def _require_float_inputs(lin, what):
    for type, path in zip(lin.arg_types, lin.arg_paths):
        if not differentiable(type):
            raise TypeError(at_user_line(
                f"{what}: differentiating with respect to the argument at {path} of "
                f"dtype {type.dtype}; derivatives need float inputs (cast it with "
                f".astype(np.float64), or leave it out of argnums)"))


def _in_derivatives(lin, cts, reverse=True):
    """Cotangents (or tangents) of the argument leaves, zeros where None, as pytrees.

    A complex argument's derivative is made from those of its real and imaginary parts
    x and y. In reverse mode that is JAX's (and autograd's) convention: the gradient of
    a real L is dL/dx - i dL/dy, the conjugate of the steepest-ascent direction (so a
    descent step is z - lr * conj(grad)); tangents are dx + i dy."""
    leaves = [zeros_of(t) if ct is None else result(ct) for t, ct in zip(lin.arg_types, cts)]
    return pytree.unflatten(lin.arg_structure, leaves, conjugate=reverse)


# --- reverse mode -----------------------------------------------------------------------

def value_and_grad(fn, argnums=0, has_aux=False):
    """fn's value and its gradient with respect to the arguments `argnums` (an int: that
    argument's gradient; a tuple: a tuple of them). fn must return a float scalar, or
    (scalar, aux) with has_aux; then the result is ((value, aux), gradient)."""
    what = f"grad of '{_name(fn)}'"

    @functools.wraps(fn)
    def value_and_gradient(*args, **kwargs):
        numbers = _argnums(argnums, args, what)
        lin = _linearize_args(fn, args, kwargs, numbers, what, has_aux)
        _require_float_inputs(lin, what)
        (out_type,) = _scalar_output(lin, what)
        one = np.ones((), out_type.dtype)
        grads = _in_derivatives(lin, lin.pullback([one]))
        grads = grads[0] if isinstance(argnums, int) else grads
        value = (lin.outputs(), lin.aux()) if has_aux else lin.outputs()
        return value, grads
    return value_and_gradient


def _scalar_output(lin, what):
    types = lin.out_types
    if pytree.has_complex(lin.out_structure):
        raise TypeError(at_user_line(
            f"{what}: the function returns a complex value; a gradient needs a real "
            f"float scalar (take its .real, or abs()), or use jitflow.vjp"))
    if len(types) != 1 or types[0].shape != () or not differentiable(types[0]):
        got = ", ".join(f"{t.dtype}{list(t.shape)}" for t in types) or "nothing"
        raise TypeError(at_user_line(
            f"{what}: the function must return one float scalar (0-d) to take its "
            f"gradient, got {got}; for other outputs use jitflow.vjp or jitflow.jacobian"))
    return types


def grad(fn, argnums=0, has_aux=False):
    """The gradient of a scalar function: grad(f)(x) has x's shape and dtype."""
    both = value_and_grad(fn, argnums, has_aux)

    @functools.wraps(fn)
    def gradient(*args, **kwargs):
        value, grads = both(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return gradient


def vjp(fn, *primals, has_aux=False):
    """(fn(*primals), vjp_fn[, aux]): vjp_fn(cotangent) -> a tuple with one cotangent per
    primal, for a cotangent shaped like fn's output."""
    what = f"vjp of '{_name(fn)}'"
    lin = Linearized(fn, primals, name=what, has_aux=has_aux)

    def vjp_fn(cotangent):
        cts = _check_like(pytree.conjugated(cotangent), lin.out_structure, lin.out_types, lin.out_paths,
                          f"{what}: the cotangent")
        return tuple(_in_derivatives(lin, lin.pullback(cts)))
    out = lin.outputs()
    return (out, vjp_fn, lin.aux()) if has_aux else (out, vjp_fn)


def _check_like(tree, structure, types, paths, what):
    """The leaves of `tree`, checked against the structure and types they pair with."""
    leaves, _, got_structure = pytree.flatten(tree)
    if got_structure != structure:
        raise ValueError(at_user_line(f"{what} has structure {got_structure}, expected "
                                      f"{structure}"))
    checked = []
    for leaf, type, path in zip(leaves, types, paths):
        got = constant_type(leaf)
        if got.shape != type.shape or (differentiable(type) and not is_floating(got.dtype)):
            raise ValueError(at_user_line(
                f"{what}{path} has shape {got.shape} and dtype {got.dtype}, expected "
                f"shape {type.shape} and dtype {type.dtype}"))
        checked.append(leaf if differentiable(type) else None)
    return checked


# --- forward mode -----------------------------------------------------------------------

def jvp(fn, primals, tangents, has_aux=False):
    """(fn(*primals), the derivative of fn at primals in the direction `tangents`).
    primals and tangents are tuples (or lists) with matching structures and types."""
    what = f"jvp of '{_name(fn)}'"
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(at_user_line(f"{what}: primals and tangents must be tuples or "
                                     f"lists, got {type(primals).__name__} and "
                                     f"{type(tangents).__name__}"))
    lin = Linearized(fn, tuple(primals), name=what, has_aux=has_aux)
    given = _check_like(tuple(tangents), lin.arg_structure, lin.arg_types, lin.arg_paths,
                        f"{what}: tangents")
    out_tangents = lin.pushforward(given)
    tangent_out = pytree.unflatten(lin.out_structure, [
        zeros_of(t) if tangent is None else result(tangent)
        for t, tangent in zip(lin.out_types, out_tangents)])
    out = lin.outputs()
    return (out, tangent_out, lin.aux()) if has_aux else (out, tangent_out)


# --- Jacobians --------------------------------------------------------------------------

def jacrev(fn, argnums=0):
    """The Jacobian by reverse mode: one backward pass, batched over the output's
    elements (vmap). Each leaf has shape output.shape + input.shape."""
    what = f"jacrev of '{_name(fn)}'"

    @functools.wraps(fn)
    def jacobian_rev(*args, **kwargs):
        lin = _linearize_for_jacobian(fn, args, kwargs, argnums, what)
        rows = _pass_per_seed_leaf(lin.pullback, lin.out_types, lin.arg_types)
        blocks = [[_block(out_type, in_type, rows[o][i], rows_first=True)
                   for i, in_type in enumerate(lin.arg_types)]
                  for o, out_type in enumerate(lin.out_types)]
        return _nest(lin, blocks, argnums)
    return jacobian_rev


def jacfwd(fn, argnums=0):
    """The Jacobian by forward mode: one tangent pass, batched over the input's elements
    (vmap)."""
    what = f"jacfwd of '{_name(fn)}'"

    @functools.wraps(fn)
    def jacobian_fwd(*args, **kwargs):
        lin = _linearize_for_jacobian(fn, args, kwargs, argnums, what)
        columns = _pass_per_seed_leaf(lin.pushforward, lin.arg_types, lin.out_types)
        blocks = [[_block(out_type, in_type, columns[i][o], rows_first=False)
                   for i, in_type in enumerate(lin.arg_types)]
                  for o, out_type in enumerate(lin.out_types)]
        return _nest(lin, blocks, argnums)
    return jacobian_fwd


jacobian = jacrev


def hessian(fn, argnums=0):
    """The matrix of second derivatives of a scalar function: forward over reverse."""
    return jacfwd(jacrev(fn, argnums), argnums)


def _linearize_for_jacobian(fn, args, kwargs, argnums, what):
    lin = _linearize_args(fn, args, kwargs, _argnums(argnums, args, what), what)
    if pytree.has_complex(lin.arg_structure) or pytree.has_complex(lin.out_structure):
        raise TypeError(at_user_line(f"{what}: Jacobians of complex inputs or outputs are "
                                     f"not supported; use jitflow.vjp or jitflow.jvp"))
    _require_float_inputs(lin, what)
    for type in lin.out_types:
        if not differentiable(type):
            raise TypeError(at_user_line(f"{what}: the function returns a value of "
                                         f"dtype {type.dtype}; Jacobians need float "
                                         f"outputs"))
    return lin


def _pass_per_seed_leaf(derivative_pass, seed_types, result_types):
    """For each leaf of seed_types, derivative_pass (seeds, None for zero, -> one
    derivative per result leaf) run on every one-hot seed of that leaf at once: per
    result leaf, an array with the seeds' axis in front."""
    stacked = []
    for which, seed_type in enumerate(seed_types):
        def one_pass(seed, which=which, seed_type=seed_type):
            seeds = [None] * len(seed_types)
            seeds[which] = seed
            return _filled(derivative_pass(seeds), result_types, seed_type)
        stacked.append(_batched(one_pass, seed_type, result_types))
    return stacked


def _batched(one_pass, seed_type, result_types):
    """one_pass run on all the one-hot seeds of seed_type at once (vmap)."""
    size = seed_type.size
    if size == 0:
        return [np.zeros((0,) + t.shape, np.result_type(t.dtype, seed_type.dtype))
                for t in result_types]
    seeds = np.eye(size, dtype=seed_type.strong().dtype).reshape((size,) + seed_type.shape)
    return vmap(one_pass)(seeds)


def _filled(derivatives, types, seed_type):
    """A pass's results with zeros for its symbolic zeros (None), in the Jacobian's
    dtype, so that the batched pass returns an array for every leaf."""
    filled = []
    for derivative, type in zip(derivatives, types):
        dtype = np.result_type(type.dtype, seed_type.dtype)
        filled.append(jnp.zeros(type.shape, dtype) if derivative is None
                      else jnp.astype(derivative, dtype))
    return filled


def _block(out_type, in_type, stacked, rows_first):
    """The block d out / d in, of shape out.shape + in.shape, from the batched pass:
    with one row of in.shape per output element (rows_first), or one column of
    out.shape per input element."""
    shape = out_type.shape + in_type.shape
    if not rows_first and len(out_type.shape) > 0:
        order = tuple(range(1, len(out_type.shape) + 1)) + (0,)
        stacked = jnp.transpose(stacked, order)
    return result(jnp.reshape(stacked, shape))


def _nest(lin, blocks, argnums):
    """Blocks per (output leaf, argument leaf) into the output's pytree of the
    arguments' pytrees, JAX's layout."""
    per_output = [pytree.unflatten(lin.arg_structure, row) for row in blocks]
    if isinstance(argnums, int):
        per_output = [tree[0] for tree in per_output]
    return pytree.unflatten(lin.out_structure, per_output)


__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd", "jacobian",
           "hessian", "Tracer"]
