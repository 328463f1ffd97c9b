"""Every primitive's derivative rules, from one table.

For each registered primitive, hypothesis draws shapes (0-d, size-1 and broadcast axes)
and float64 operands inside the primitive's smooth domain (away from poles, kinks, jumps
and ties, where finite differences say nothing), and check_grads compares:
  - jvp with central differences, and vjp with jvp, to second order;
  - for small inputs, the whole Jacobian column by column;
  - the compiled vjp (jitflow.function) with the eager one.
A primitive with no rules must say why (Primitive.no_gradient); one missing from the
table fails the test.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
from jitflow.ir.primitive import REGISTRY
from jitflow.testing import check_grads
from jitflow.trace import bind

from strategies import broadcastable_pair, shapes

EXAMPLES = max(2, settings.default.max_examples // 5)


def smooth_shapes():
    return shapes(max_side=3)


def uniform(rng, shape, low, high):
    return rng.uniform(low, high, shape)


def away_from_zero(rng, shape, low=0.3, high=2.0):
    return rng.uniform(low, high, shape) * rng.choice([-1.0, 1.0], shape)


def distinct(rng, shape):
    """Values no two of which are close: max, min and their reductions have no ties."""
    size = int(np.prod(shape))
    return (rng.permutation(size) * 0.5 + rng.uniform(0, 0.1, size) - size / 4).reshape(shape)


def unary(domain):
    def draw(data, rng):
        return [domain(rng, data.draw(smooth_shapes(), label="shape"))], {}
    return draw


def binary(domains):
    def draw(data, rng):
        shape_x, shape_y = data.draw(broadcastable_pair(), label="shapes")
        return [domains[0](rng, shape_x), domains[1](rng, shape_y)], {}
    return draw


def normal(rng, shape):
    return rng.standard_normal(shape)


def fractional(rng, shape):
    """Away from integers, where floor, ceil and sign-like functions jump."""
    return rng.integers(-3, 3, shape) + rng.uniform(0.2, 0.8, shape)


def _quotient_draw(data, rng):
    """x / y stays away from integers: floor_divide and mod are smooth there."""
    shape_x, shape_y = data.draw(broadcastable_pair(), label="shapes")
    shape = np.broadcast_shapes(shape_x, shape_y)
    y = away_from_zero(rng, shape_y, 0.5, 2.0)
    x = np.broadcast_to(y, shape) * fractional(rng, shape)
    return [x, y], {}


def _extremum_draw(data, rng):
    """x off the integer grid, y on it: no ties, and every pair at least 0.2 apart."""
    shape_x, shape_y = data.draw(broadcastable_pair(), label="shapes")
    return [fractional(rng, shape_x), rng.integers(-3, 3, shape_y).astype(np.float64)], {}


def _where_draw(data, rng):
    shapes_ = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3,
                                                          max_side=3)).input_shapes
    cond = rng.uniform(size=shapes_[0]) < 0.5
    return [cond, normal(rng, shapes_[1]), normal(rng, shapes_[2])], {}


def _axes(data, ndim):
    return tuple(sorted(data.draw(st.sets(st.integers(0, ndim - 1), max_size=ndim),
                                  label="axes"))) if ndim else ()


def reduction(domain):
    def draw(data, rng):
        shape = data.draw(shapes(max_side=3, min_side=1), label="shape")
        return [domain(rng, shape)], {"axes": _axes(data, len(shape)),
                                      "keepdims": data.draw(st.booleans())}
    return draw


def signed_near_one(rng, shape):
    return away_from_zero(rng, shape, 0.5, 1.5)


def _cumsum_draw(data, rng):
    shape = data.draw(shapes(min_dims=1, max_side=3), label="shape")
    return [normal(rng, shape)], {"axis": data.draw(st.integers(0, len(shape) - 1))}


def _cumprod_draw(data, rng):
    """Some elements exactly zero: the derivative must not divide by them."""
    [x], params = _cumsum_draw(data, rng)
    return [np.where(rng.random(x.shape) < 0.3, 0.0, x)], params


def _sort_draw(data, rng):
    """Distinct values: where two tie, sort is not differentiable."""
    shape = data.draw(shapes(min_dims=1, max_side=3), label="shape")
    return [distinct(rng, shape)], {"axis": data.draw(st.integers(0, len(shape) - 1))}


def _reshape_draw(data, rng):
    shape = data.draw(smooth_shapes(), label="shape")
    new = (int(np.prod(shape)),) if data.draw(st.booleans()) else shape[::-1]
    return [normal(rng, shape)], {"shape": new}


def _broadcast_draw(data, rng):
    target = data.draw(shapes(max_side=3), label="target")
    own = tuple(1 if data.draw(st.booleans()) else d for d in target)
    own = own[data.draw(st.integers(0, len(own)), label="dropped"):]
    return [normal(rng, own)], {"shape": target}


def _transpose_draw(data, rng):
    shape = data.draw(smooth_shapes(), label="shape")
    return [normal(rng, shape)], {"perm": tuple(data.draw(st.permutations(range(len(shape)))))}


def _slice_draw(data, rng):
    shape = data.draw(shapes(max_side=4), label="shape")
    starts, steps, sizes = [], [], []
    for dim in shape:
        step = data.draw(st.sampled_from([1, 2, -1, -2]), label="step")
        if dim == 0:
            starts.append(0), steps.append(step), sizes.append(0)
            continue
        start = data.draw(st.integers(0, dim - 1), label="start")
        room = start // -step + 1 if step < 0 else (dim - 1 - start) // step + 1
        starts.append(start), steps.append(step)
        sizes.append(data.draw(st.integers(0, room), label="size"))
    return [normal(rng, shape)], {"starts": tuple(starts), "steps": tuple(steps),
                                  "sizes": tuple(sizes)}


def _indices(data, rng, dims):
    index_shapes = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=len(dims), max_dims=2, max_side=3), label="index shapes").input_shapes
    return [rng.integers(-dim, dim, shape) for dim, shape in zip(dims, index_shapes)]


def _gather_draw(data, rng):
    shape = data.draw(shapes(min_dims=1, min_side=1, max_side=3), label="shape")
    axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
    count = data.draw(st.integers(1, len(shape) - axis), label="index count")
    indices = _indices(data, rng, shape[axis:axis + count])
    return [normal(rng, shape), *indices], {"axis": axis}


def _scatter_add_draw(data, rng):
    (x, *indices), params = _gather_draw(data, rng)
    taken = x[(slice(None),) * params["axis"] + tuple(indices)]
    return [normal(rng, taken.shape), *indices], dict(params, shape=x.shape)


def _scatter_draw(data, rng):
    (x, *indices), params = _gather_draw(data, rng)
    taken = x[(slice(None),) * params["axis"] + tuple(indices)]
    # repeated indices: only the last write of each position has a derivative
    return [x, normal(rng, taken.shape), *indices], dict(params, unique=False)


def _concatenate_draw(data, rng):
    shape = data.draw(shapes(min_dims=1, max_side=3), label="shape")
    axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
    pieces = []
    for _ in range(data.draw(st.integers(1, 3), label="count")):
        own = list(shape)
        own[axis] = data.draw(st.integers(0, 3), label="length")
        pieces.append(normal(rng, tuple(own)))
    return pieces, {"axis": axis}


def _pad_draw(data, rng):
    shape = data.draw(smooth_shapes(), label="shape")
    widths = tuple(data.draw(st.tuples(st.integers(0, 2), st.integers(0, 2)))
                   for _ in shape)
    return [normal(rng, shape)], {"widths": widths, "value": data.draw(st.sampled_from(
        [0.0, 1.5]))}


def _matmul_draw(data, rng):
    batch_x, batch_y = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, max_dims=2, max_side=2), label="batch").input_shapes
    n, k, m = (data.draw(st.integers(1, 3), label=name) for name in "nkm")
    return [normal(rng, batch_x + (n, k)), normal(rng, batch_y + (k, m))], {}


def _square_batch(data):
    batch = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=2), label="batch")
    return batch, data.draw(st.integers(1, 3), label="n")


def well_conditioned(rng, shape):
    """Square matrices far from singular: normal entries plus 3 on the diagonal."""
    return normal(rng, shape) + 3 * np.eye(shape[-1])


def _solve_draw(data, rng):
    batch, n = _square_batch(data)
    batch_b = data.draw(st.sampled_from([batch, batch[1:]]), label="b's batch")
    return [well_conditioned(rng, batch + (n, n)),
            normal(rng, batch_b + (n, data.draw(st.integers(1, 2), label="k")))], {}


def _slogdet_draw(data, rng):
    batch, n = _square_batch(data)
    return [well_conditioned(rng, batch + (n, n))], {}


def _complex_slogdet_draw(data, rng):
    batch, n = _square_batch(data)
    return [well_conditioned(rng, batch + (n, n)), normal(rng, batch + (n, n))], {}


def _complex_svd_draw(data, rng):
    """The singular values only: each pair of singular vectors has a phase of LAPACK's
    choosing (the vectors are tested with functions free of it in
    tests/complex_values/test_complex_singular_values.py)."""
    batch, _ = _square_batch(data)
    m, n = (data.draw(st.integers(1, 3), label=name) for name in "mn")
    real = separated_singular_values(rng, batch, m, n)
    return [real, 0.1 * normal(rng, batch + (m, n))], {"full_matrices": False,
                                                        "compute_uv": False}


def _complex_solve_draw(data, rng):
    (a, b), _ = _solve_draw(data, rng)
    return [a, normal(rng, a.shape), b, normal(rng, b.shape)], {}


def _complex_qr_draw(data, rng):
    operands, params = _qr_draw(data, rng)
    return [operands[0], 0.1 * normal(rng, operands[0].shape)], params


def _eig_draw(data, rng):
    """Real matrices P diag(w) P^-1 with real eigenvalues apart, P near the identity;
    eigenvalues and eigenvectors both. (geev turns a complex pair's vectors so that the
    largest component is real, with the sign of its real part before the turn, which
    jumps where that crosses 0: pairs are tested at chosen matrices in
    tests/complex_values/test_complex_linalg_and_sorting.py.)"""
    batch, n = _square_batch(data)
    p = np.eye(n) + 0.3 * normal(rng, batch + (n, n))
    a = p @ ((1.5 * np.arange(n) - 2)[:, None] * np.linalg.inv(p))
    return [a], {"vectors": data.draw(st.booleans(), label="vectors")}


def _complex_eig_draw(data, rng):
    batch, n = _square_batch(data)
    values = np.arange(n) * (1.3 - 0.6j) + 0.4j
    p = np.eye(n) + 0.3 * (normal(rng, batch + (n, n)) + 1j * normal(rng, batch + (n, n)))
    a = p @ (values[:, None] * np.linalg.inv(p))
    return [a.real, a.imag], {"vectors": data.draw(st.booleans(), label="vectors")}


def separated_singular_values(rng, batch, m, n):
    """Matrices whose singular values lie 1 apart from 1 up (no ties, none near 0)."""
    k = min(m, n)
    left = np.linalg.qr(normal(rng, batch + (m, m)))[0][..., :k]
    right = np.linalg.qr(normal(rng, batch + (n, n)))[0][..., :k]
    values = np.arange(k, 0, -1) + rng.uniform(0, 0.3, batch + (k,))
    return (left * values[..., None, :]) @ np.swapaxes(right, -1, -2)


def _svd_draw(data, rng):
    batch, _ = _square_batch(data)
    m, n = (data.draw(st.integers(1, 3), label=name) for name in "mn")
    full = data.draw(st.booleans(), label="full_matrices") if m == n else False
    vectors = data.draw(st.booleans(), label="compute_uv")
    return [separated_singular_values(rng, batch, m, n)], {"full_matrices": full,
                                                           "compute_uv": vectors}


def _qr_draw(data, rng):
    batch, _ = _square_batch(data)
    n = data.draw(st.integers(1, 3), label="n")
    m = data.draw(st.integers(n, 4), label="m")
    return [separated_singular_values(rng, batch, m, n)], {"complete": m == n and
                                                           data.draw(st.booleans())}


def _ldexp_draw(data, rng):
    shape_x, shape_n = data.draw(broadcastable_pair(), label="shapes")
    return [normal(rng, shape_x), rng.integers(-3, 4, shape_n)], {}


def _dft_draw(data, rng):
    rows = data.draw(st.integers(0, 3), label="rows")
    n = data.draw(st.sampled_from([1, 2, 3, 4, 6, 8, 10, 12]), label="n")
    return [normal(rng, (rows, n)), normal(rng, (rows, n))], {
        "sign": data.draw(st.sampled_from([-1, 1]), label="sign")}


def _complex_cumprod_draw(data, rng):
    """Some elements exactly 0 + 0i: the derivative must not divide by them."""
    (x,), params = _cumprod_draw(data, rng)
    imag = np.where((x == 0) & (rng.random(x.shape) < 0.5), 0.0, normal(rng, x.shape))
    return [x, imag], params


def _cast_draw(data, rng):
    return [normal(rng, data.draw(smooth_shapes()))], {"dtype": np.dtype(np.float64)}


CASES = {
    "neg": unary(normal), "abs": unary(away_from_zero), "sign": unary(away_from_zero),
    "exp": unary(lambda rng, s: uniform(rng, s, -3, 3)),
    "log": unary(lambda rng, s: uniform(rng, s, 0.2, 5)),
    "log1p": unary(lambda rng, s: uniform(rng, s, -0.8, 5)),
    "expm1": unary(lambda rng, s: uniform(rng, s, -3, 3)),
    "sqrt": unary(lambda rng, s: uniform(rng, s, 0.2, 5)),
    "sin": unary(normal), "cos": unary(normal),
    "tan": unary(lambda rng, s: uniform(rng, s, -1.2, 1.2)),
    "tanh": unary(normal), "logistic": unary(normal), "arctan": unary(normal),
    "arcsin": unary(lambda rng, s: uniform(rng, s, -0.9, 0.9)),
    "arccos": unary(lambda rng, s: uniform(rng, s, -0.9, 0.9)),
    "arctan2": binary((normal, lambda rng, s: away_from_zero(rng, s, 0.5, 2.0))),
    "floor": unary(fractional), "ceil": unary(fractional),
    "add": binary((normal, normal)), "sub": binary((normal, normal)),
    "mul": binary((normal, normal)), "div": binary((normal, away_from_zero)),
    "floor_divide": _quotient_draw, "mod": _quotient_draw, "fmod": _quotient_draw,
    "copysign": binary((away_from_zero, away_from_zero)), "ldexp": _ldexp_draw,
    "cbrt": unary(away_from_zero), "nextafter": binary((normal, normal)),
    "pow": binary((lambda rng, s: uniform(rng, s, 0.5, 2),
                   lambda rng, s: uniform(rng, s, -2, 2))),
    "max": _extremum_draw, "min": _extremum_draw,
    "where": _where_draw, "cast": _cast_draw,
    "reduce_sum": reduction(normal), "reduce_prod": reduction(signed_near_one),
    "reduce_max": reduction(distinct), "reduce_min": reduction(distinct),
    "cumsum": _cumsum_draw, "cumprod": _cumprod_draw, "reshape": _reshape_draw, "broadcast_to": _broadcast_draw,
    "transpose": _transpose_draw, "slice": _slice_draw, "gather": _gather_draw,
    "scatter_add": _scatter_add_draw, "scatter": _scatter_draw, "concatenate": _concatenate_draw, "pad": _pad_draw,
    "matmul": _matmul_draw, "sort": _sort_draw, "dft": _dft_draw,
    "solve": _solve_draw, "slogdet": _slogdet_draw, "svd": _svd_draw, "qr": _qr_draw,
    "complex_slogdet": _complex_slogdet_draw, "complex_svd": _complex_svd_draw,
    "complex_qr": _complex_qr_draw, "complex_solve": _complex_solve_draw,
    "complex_cumprod": _complex_cumprod_draw, "eig": _eig_draw,
    "complex_eig": _complex_eig_draw,
}

# Deliberately not differentiated as the function they compute.
SPECIAL = {"stop_gradient": "its derivative is zero by definition (tested in test_api.py)",
           "pure_callback": "a Python function: its rules refuse by name (tested in "
                            "tests/test_pure_callback.py)",
           **dict.fromkeys(["cholesky", "eigh"], "reads one triangle of a symmetric matrix, "
                           "differentiated as a symmetric function of it: tested on "
                           "symmetrized operands in tests/test_linalg_factorizations.py"),
           "complex_cholesky": "reads one triangle of a Hermitian matrix, differentiated "
                               "as a Hermitian function of it: tested on Hermitian operands "
                               "in tests/complex_values/test_complex_factorizations.py",
           "complex_eigh": "reads one triangle of a Hermitian matrix and its eigenvectors' "
                           "phases are LAPACK's choice: differentiated as a Hermitian "
                           "function, tested on Hermitian operands with losses that do not "
                           "depend on the phases in "
                           "tests/complex_values/test_complex_decompositions.py"}


def differentiable_primitives():
    return sorted(name for name, prim in REGISTRY.items() if not prim.no_gradient
                  and name not in SPECIAL and not prim.has_subgraphs)


def test_every_primitive_has_rules_or_says_why():
    for name, prim in REGISTRY.items():
        if prim.no_gradient:
            assert prim.vjp is None and prim.jvp is None, name
        elif not prim.has_subgraphs:
            assert prim.vjp is not None and prim.jvp is not None, f"{name} has no rules"
    missing = sorted(set(differentiable_primitives()) - set(CASES))
    assert not missing, f"primitives without a case in test_rules.CASES: {missing}"


@pytest.mark.parametrize("name", differentiable_primitives())
@settings(max_examples=EXAMPLES)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_derivatives_match_finite_differences(name, data, seed):
    prim = REGISTRY[name]
    operands, params = CASES[name](data, np.random.default_rng(seed))
    floats = [i for i, x in enumerate(operands) if np.asarray(x).dtype.kind == "f"]

    def fn(*xs):
        full = list(operands)
        for i, x in zip(floats, xs):
            full[i] = x
        return bind(prim, *full, **params)
    check_grads(fn, tuple(operands[i] for i in floats), order=2, rtol=1e-5, atol=1e-6)

    # Compiled == eager: the same transform, traced, optimized and run natively.
    out = fn(*(operands[i] for i in floats))
    rng = np.random.default_rng(seed + 1)
    cotangent = tuple(rng.standard_normal(np.shape(o)) for o in out) \
        if isinstance(out, tuple) else rng.standard_normal(np.shape(out))
    pullback = jitflow.function(lambda *xs: jitflow.vjp(fn, *xs[:-1])[1](xs[-1]))
    compiled = pullback(*(operands[i] for i in floats), cotangent)
    eager = jitflow.vjp(fn, *(operands[i] for i in floats))[1](cotangent)
    for c, e in zip(compiled, eager):
        np.testing.assert_allclose(c, e, rtol=1e-12, atol=1e-12)


def test_a_matrix_applied_to_a_stack_gets_its_cotangent_from_one_product():
    # Dense on (batch, time, features): dW is one (K, rows) x (rows, N) product, not a
    # product per batch entry summed after
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((4, 3, 5)), rng.standard_normal((5, 2))
    check_grads(lambda x, w: np.tanh(x @ w).sum(), (x, w), order=2)
    graph = jitflow.function(jitflow.grad(lambda w, x: np.tanh(x @ w).sum())).trace(w, x)
    products = [n for n in graph.nodes if n.op == "matmul"]
    assert [n.outputs[0].type.shape for n in products] == [(4, 3, 2), (5, 2)]
    assert not any(n.op == "reduce_sum" and n.outputs[0].type.shape == (5, 2)
                   for n in graph.nodes)
