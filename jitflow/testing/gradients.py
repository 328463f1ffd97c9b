"""check_grads: jitflow's derivatives against central finite differences in float64,
and forward mode against reverse mode, to any order."""
import numpy as np

from .. import pytree
from ..autodiff import jvp, vjp


class GradientCheckError(AssertionError):
    """A derivative disagrees with finite differences or with the other mode."""


def check_grads(fn, args, order=2, modes=("fwd", "rev"), eps=1e-5, rtol=1e-5, atol=1e-5,
                seed=0):
    """Check fn's derivatives at `args` (a tuple of pytrees of float arrays).

    Float arguments are converted to float64 first. For each order up to `order`: the
    jvp (mode "fwd") in a random direction against the central difference
    (f(x + eps v) - f(x - eps v)) / 2 eps; the vjp (mode "rev") against the jvp through
    <u, J v> == <J^T u, v> for a random u; and, for inputs of at most 16 elements, the
    full Jacobian column by column. Higher orders check the derivative functions the
    same way. Raises GradientCheckError naming the input and the worst element.
    """
    args = tuple(pytree.unflatten(s, [_as_float64(leaf) for leaf in leaves])
                 for leaves, _, s in map(pytree.flatten, args))
    rng = np.random.default_rng(seed)
    _check(fn, args, order, tuple(modes), eps, rtol, atol, rng)


def _as_float64(leaf):
    array = np.asarray(leaf)
    return array.astype(np.float64) if array.dtype.kind == "f" else array


def _check(fn, args, order, modes, eps, rtol, atol, rng):
    tolerance = {"rtol": rtol, "atol": atol}
    direction = _random_like(args, rng)
    if "fwd" in modes or "rev" in modes:
        _check_jvp(fn, args, direction, eps, tolerance)
    if "rev" in modes:
        _check_vjp(fn, args, direction, rng, tolerance)
    if sum(np.size(leaf) for leaf in _float_leaves(args)) <= 16:
        _check_jacobian(fn, args, eps, tolerance)
    if order <= 1:
        return
    if "fwd" in modes:
        def tangent_fn(*xs):
            return jvp(fn, xs, direction)[1]
        _check(tangent_fn, args, order - 1, modes, eps, rtol, atol, rng)
    if "rev" in modes:
        out, _ = vjp(fn, *args)
        cotangent = _random_like(out, rng)

        def cotangent_fn(*xs):
            return vjp(fn, *xs)[1](cotangent)
        _check(cotangent_fn, args, order - 1, modes, eps, rtol, atol, rng)


# --- the checks -------------------------------------------------------------------------

def _check_jvp(fn, args, direction, eps, tolerance):
    _, tangent = jvp(fn, args, direction)
    expected = _central_difference(fn, args, direction, eps)
    _compare(tangent, expected, tolerance, "jvp", "central difference", args)


def _check_vjp(fn, args, direction, rng, tolerance):
    out, vjp_fn = vjp(fn, *args)
    cotangent = _random_like(out, rng)
    _, tangent = jvp(fn, args, direction)
    through_vjp = _inner(vjp_fn(cotangent), direction)
    through_jvp = _inner(cotangent, tangent)
    _compare(through_vjp, through_jvp, tolerance, "<vjp(u), v>", "<u, jvp(v)>", args)


def _check_jacobian(fn, args, eps, tolerance):
    """Every column of the Jacobian: jvp along each unit vector against differences."""
    leaves, _, structure = pytree.flatten(args)
    for i, leaf in enumerate(leaves):
        if np.asarray(leaf).dtype.kind != "f":
            continue
        for k in range(np.size(leaf)):
            unit = [np.zeros_like(np.asarray(other), dtype=np.float64)
                    if np.asarray(other).dtype.kind == "f" else np.zeros_like(other)
                    for other in leaves]
            unit[i].flat[k] = 1.0
            direction = pytree.unflatten(structure, unit)
            _, tangent = jvp(fn, args, direction)
            expected = _central_difference(fn, args, direction, eps)
            _compare(tangent, expected, tolerance, f"jacobian column {k} of leaf {i}",
                     "central difference", args)


# --- helpers -----------------------------------------------------------------------------

def _float_leaves(tree):
    return [leaf for leaf in pytree.flatten(tree)[0] if np.asarray(leaf).dtype.kind == "f"]


def _random_like(tree, rng):
    leaves, _, structure = pytree.flatten(tree)
    return pytree.unflatten(structure, [
        rng.standard_normal(np.shape(leaf)) if np.asarray(leaf).dtype.kind == "f"
        else np.zeros_like(np.asarray(leaf)) for leaf in leaves])


def _shifted(args, direction, step):
    leaves, _, structure = pytree.flatten(args)
    steps = pytree.flatten(direction)[0]
    return pytree.unflatten(structure, [
        np.asarray(x) + step * np.asarray(d) if np.asarray(x).dtype.kind == "f" else x
        for x, d in zip(leaves, steps)])


def _central_difference(fn, args, direction, eps):
    plus = pytree.flatten(fn(*_shifted(args, direction, eps)))
    minus = pytree.flatten(fn(*_shifted(args, direction, -eps)))
    values = [(np.asarray(p, np.float64) - np.asarray(m, np.float64)) / (2 * eps)
              for p, m in zip(plus[0], minus[0])]
    return pytree.unflatten(plus[2], values)


def _inner(a, b):
    return sum(float(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64)))
               for x, y in zip(pytree.flatten(a)[0], pytree.flatten(b)[0]))


def _compare(actual, expected, tolerance, what, against, args):
    actual_leaves, expected_leaves = pytree.flatten(actual)[0], pytree.flatten(expected)[0]
    for index, (got, want) in enumerate(zip(actual_leaves, expected_leaves)):
        got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
        if got.shape != want.shape:
            raise GradientCheckError(f"{what} has shape {got.shape}, {against} has "
                                     f"{want.shape} (output leaf {index})")
        error = np.abs(got - want)
        bound = tolerance["atol"] + tolerance["rtol"] * np.abs(want)
        bad = ~(error <= bound) & ~(np.isnan(got) & np.isnan(want))
        if np.any(bad):
            worst = np.unravel_index(np.argmax(np.where(bad, error - bound, -np.inf)),
                                     got.shape) if got.ndim else ()
            raise GradientCheckError(
                f"{what} disagrees with {against} at output leaf {index}, element "
                f"{worst}: {got[worst]!r} vs {want[worst]!r} (error {error[worst]:.3g}, "
                f"allowed {bound[worst]:.3g}), {int(np.sum(bad))} of {bad.size} elements "
                f"off.\nInput: {args!r}")
