"""NumPy's shape, indexing, sum and product functions on traced complex values against
NumPy, and the clear errors for what jitflow does not compute on complex values."""
import numpy as np
import pytest

import jitflow
import jitflow.numpy as jnp
from complex_checks import assert_complex_same

pytestmark = pytest.mark.usefixtures("backend")

rng = np.random.default_rng(7)
Z = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4)))
W = Z.T[::-1].astype(np.complex64)  # a reversed, transposed view
X = rng.standard_normal((4, 3)).astype(np.float32)

EXACT = {
    "reshape": lambda z, w, x: z.reshape(2, 6), "T": lambda z, w, x: w.T,
    "transpose": lambda z, w, x: np.transpose(z, (1, 0)), "ravel": lambda z, w, x: z.ravel(),
    "flip": lambda z, w, x: np.flip(w, 0), "roll": lambda z, w, x: np.roll(z, 2, axis=1),
    "slice": lambda z, w, x: z[1:, ::-2], "take": lambda z, w, x: z[[2, 0, -1], 1:],
    "mask": lambda z, w, x: w[:, np.array([True, False, True])],
    "concatenate": lambda z, w, x: np.concatenate([z, w.T, x.T]),
    "stack": lambda z, w, x: np.stack([z, x.T], axis=-1), "vstack": lambda z, w, x: np.vstack([w, x]),
    "where": lambda z, w, x: np.where(x > 0, w, 2 + 0j), "diagonal": lambda z, w, x: z.diagonal(),
    "expand_dims": lambda z, w, x: np.expand_dims(z, 1), "squeeze": lambda z, w, x: z[:1].squeeze(),
    "broadcast_to": lambda z, w, x: np.broadcast_to(z[0], (2, 4)),
    "swapaxes": lambda z, w, x: w.swapaxes(0, 1), "tril": lambda z, w, x: np.tril(z),
    "pad": lambda z, w, x: np.pad(z, 1), "real and imag": lambda z, w, x: (z.real, w.imag),
    "astype": lambda z, w, x: (z.astype(np.complex64), w.astype(np.complex128)),
    "fftshift": lambda z, w, x: np.fft.fftshift(z),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_shapes_and_indexing_are_exact(name):
    fn = EXACT[name]
    got, expected = jitflow.function(fn)(Z, W, X), fn(Z, W, X)
    for g, e in zip(*(r if isinstance(r, tuple) else (r,) for r in (got, expected))):
        assert_complex_same(g, e, what=name)


SUMS = {
    "sum": (lambda z, w, x: z.sum(axis=1), lambda z, w, x: np.abs(z).sum(axis=1)),
    "sum all": (lambda z, w, x: np.sum(w), lambda z, w, x: np.abs(w).sum()),
    "mean": (lambda z, w, x: np.mean(z, axis=0, keepdims=True),
             lambda z, w, x: np.abs(z).mean(axis=0, keepdims=True)),
    "cumsum": (lambda z, w, x: np.cumsum(w, axis=0), lambda z, w, x: np.abs(w).cumsum(0)),
    "trace": (lambda z, w, x: np.trace(z), lambda z, w, x: np.abs(z).sum()),
    "matmul": (lambda z, w, x: z @ w, lambda z, w, x: np.abs(z) @ np.abs(w)),
    "matmul with real": (lambda z, w, x: z @ x, lambda z, w, x: np.abs(z) @ np.abs(x)),
    "real matmul": (lambda z, w, x: x @ z, lambda z, w, x: np.abs(x) @ np.abs(z)),
    "dot": (lambda z, w, x: np.dot(w, z), lambda z, w, x: np.abs(w) @ np.abs(z)),
    "vdot": (lambda z, w, x: np.vdot(z, w.T), lambda z, w, x: np.abs(z).ravel() @ np.abs(w.T).ravel()),
    "outer": (lambda z, w, x: np.outer(z[0], w[0]), lambda z, w, x: np.outer(np.abs(z[0]), np.abs(w[0]))),
    "tensordot": (lambda z, w, x: np.tensordot(z, w, 1), lambda z, w, x: np.abs(z) @ np.abs(w)),
}


@pytest.mark.parametrize("name", sorted(SUMS))
def test_sums_and_products_within_rounding(name):
    fn, magnitude = SUMS[name]
    got, expected = jitflow.function(fn)(Z, W, X), fn(Z, W, X)
    assert_complex_same(got, expected, scale=magnitude(Z, W, X),
                        eps=8 * np.finfo(np.asarray(expected).dtype).eps, what=name)


MAGNITUDES = {
    "var": lambda z: np.var(z), "var ddof": lambda z: np.var(z, axis=0, ddof=1),
    "std": lambda z: z.std(axis=1, keepdims=True), "norm": lambda z: np.linalg.norm(z),
    "norm of rows": lambda z: np.linalg.norm(z, axis=1),
    "1-norm": lambda z: np.linalg.norm(z, 1), "inf-norm": lambda z: np.linalg.norm(z, np.inf),
    "3-norm": lambda z: np.linalg.norm(z[0], 3), "fro": lambda z: np.linalg.norm(z, "fro")}


@pytest.mark.parametrize("name", sorted(MAGNITUDES))
def test_statistics_and_norms_of_magnitudes(name):
    fn = MAGNITUDES[name]
    got, expected = jitflow.function(fn)(Z), fn(Z)
    assert_complex_same(got, expected, scale=np.abs(expected), eps=1e-15, what=name)


@pytest.mark.parametrize("fn, name", [
    (lambda z: np.nanpercentile(z, 50), "jitflow.numpy.nanpercentile"),
    (lambda z: np.floor(z), "jitflow.numpy.floor"),
    (lambda z: np.real_if_close(z), "jitflow.numpy.real_if_close"),
    (lambda z: jnp.nanquantile(z, 0.5), "jitflow.numpy.nanquantile")])
def test_what_is_not_computed_on_complex_values_raises_naming_it(fn, name):
    with pytest.raises(TypeError, match=name.replace(".", r"\.")):
        jitflow.function(fn)(Z)


def test_writes_reach_views_and_the_callers_array_and_leave_new_arrays_alone():
    def write(z):
        view = z[0]
        fresh = [z.conj(), +z, z.astype(complex), z ** 1, z[:1].prod(axis=0), z.copy()]
        z[0, 1] = 7 - 1j
        view += 1j
        for array in fresh:
            array[...] = 0
        z *= np.float32(2)
        z[1] /= 1 + 1j
        return z, view, fresh
    ours, theirs = Z.copy(), Z.copy()
    got, expected = jitflow.function(write)(ours), write(theirs)
    for g, e in zip([got[0], got[1], *got[2]], [expected[0], expected[1], *expected[2]]):
        assert_complex_same(g, e, scale=np.abs(e), eps=4e-16)
    assert_complex_same(ours, theirs, scale=np.abs(theirs), eps=4e-16)


def test_a_complex_write_into_a_numpy_array_raises():
    def write(z):
        c = np.zeros(4, complex)
        c += z[0]
        return c
    with pytest.raises(TypeError, match="out="):
        jitflow.function(write)(Z)


def test_complex_results_in_containers_and_python_complex_arguments():
    def fn(z, c, scale):
        return {"z": z * c, "parts": [np.abs(z), z.conj() * scale]}
    compiled = jitflow.function(fn)
    for c, scale in [(2 - 1j, 0.5), (3j, -1.0)]:  # a new Python number: no new trace
        got, expected = compiled(Z, c, scale), fn(Z, c, scale)
        assert_complex_same(got["z"], expected["z"], scale=np.abs(expected["z"]), eps=4e-16)
        for g, e in zip(got["parts"], expected["parts"]):
            assert_complex_same(g, e, scale=np.abs(e), eps=4e-16)
    assert compiled.cache_info().traces == 1


def test_eager_calls_stay_numpys():
    for name in ("exp", "sum", "angle", "real", "sort", "var", "cumprod", "max"):
        np.testing.assert_array_equal(getattr(jnp, name)(Z), getattr(np, name)(Z))
    np.testing.assert_array_equal(jnp.fft.fft(Z), np.fft.fft(Z))
    np.testing.assert_array_equal(jnp.linalg.det(Z[:, :3]), np.linalg.det(Z[:, :3]))


def test_vmap_counts_a_complex_arrays_axes_from_its_own_end():
    z = np.arange(24).reshape(2, 3, 4) * (1 + 2j)

    def f(v):
        return v.sum(axis=0) * 1j + v[0]
    for in_axes, out_axes in [(0, 0), (1, 0), (-1, 0), (-2, 0), (0, -1), (-1, -2)]:
        got = jitflow.vmap(f, in_axes=in_axes, out_axes=out_axes)(z)
        moved = np.moveaxis(z, in_axes, 0)
        expected = np.moveaxis(np.stack([f(m) for m in moved]), 0, out_axes)
        assert_complex_same(got, expected)


def test_out_arrays_and_donation_take_complex_arrays():
    f = jitflow.function(lambda z: z * 1j)
    out = np.empty(Z.shape, complex)
    assert f(Z, out=out) is out
    assert_complex_same(out, Z * 1j)
    with pytest.raises(TypeError, match="one complex128 array"):
        f(Z, out=np.empty(Z.shape, np.complex64))
    donated = Z.copy()
    got = jitflow.function(lambda z: z * 2, donate_argnames=("z",))(donated)
    assert_complex_same(got, Z * 2)


def test_onnx_export_takes_and_gives_complex_values_as_their_parts():
    # (tests/onnx/test_onnx_complex.py has the rest)
    import jitflow.onnx
    model = jitflow.onnx.to_model(lambda x: x * 1j, Z.real)
    assert [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim] == \
        list(Z.shape) + [2]
    assert_complex_same(jitflow.onnx.load(model)(Z.real), Z.real * 1j)
    loaded = jitflow.onnx.load(jitflow.onnx.to_model(lambda x: x * 2, Z))
    assert_complex_same(loaded(Z), Z * 2)


def test_saved_functions_take_give_and_hold_complex_values(tmp_path):
    """Complex arguments (arrays, Python complex numbers), results and Variables are
    saved (a Variable's value as its parts) and loaded: the same values, assignments
    and gradients as the function saved."""
    phases = jitflow.Variable(np.exp(1j * np.arange(4.0)).astype(np.complex64))

    def rotate(x, z, scale):
        phases.assign(phases * np.complex64(1j))
        return {"rotated": z * phases * scale, "size": np.abs(z).sum() * x}

    args = (np.float32(2), Z[0].astype(np.complex64), 1 - 2j)
    start = phases.numpy()
    path = jitflow.save(rotate, str(tmp_path / "rotate.jitflow"), *args)
    loaded = jitflow.load(path)
    assert_complex_same(loaded.variables[0].numpy(), start)
    for _ in range(2):
        got, expected = loaded(*args), rotate(*args)
        assert_complex_same(got["rotated"], expected["rotated"])
        assert_complex_same(got["size"], expected["size"])
        assert_complex_same(loaded.variables[0].numpy(), phases.numpy())
    gradient = jitflow.grad(lambda z: np.sum(np.abs(loaded(args[0], z, 1j)["rotated"] - 1)))
    expected = jitflow.grad(lambda z: np.sum(np.abs(rotate(args[0], z, 1j)["rotated"] - 1)))
    phases.assign(loaded.variables[0].numpy())
    assert_complex_same(gradient(args[1]), expected(args[1]), eps=1e-6)
