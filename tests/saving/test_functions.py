"""jitflow.save and jitflow.load: a function with its Variables goes to a file, and a
fresh Python process without its source loads it, runs it compiled and differentiates
it, with the same results as the original."""
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jitflow

ROOT = pathlib.Path(__file__).resolve().parents[2]

W0 = np.array([[0.5, -1.0], [0.25, 2.0], [-0.75, 0.125]], np.float32)
X = np.array([[1.0, 2.0, -0.5], [0.5, -1.5, 3.0]], np.float32)


@jitflow.custom_vjp
def clipped_gradient(x):
    """The identity, whose derivative is clipped to [-0.005, 0.005]: a loaded model must
    keep the rule (the identity's own derivative would be 1)."""
    return x * 1.0


clipped_gradient.defvjp(lambda x: (clipped_gradient(x), None),
                        lambda _, ct: (np.clip(ct, -0.005, 0.005),))


def make_model():
    """A model reading a Variable, with a custom derivative, a loop, a branch and a
    dict of results; and a step that assigns Variables."""
    w = jitflow.Variable(W0, name="w")
    steps = jitflow.Variable(np.int64(0), name="steps")

    @jitflow.function
    def predict(x, scale):
        h = np.tanh(clipped_gradient(x) @ w) * scale
        h = jitflow.fori_loop(0, 3, lambda i, v: v * 0.9 + np.sin(v), h)
        h = jitflow.cond(h.sum() > 0, lambda v: v * 2.0, lambda v: np.exp(v), h)
        return {"out": h, "loss": (h * h).mean()}

    @jitflow.function
    def step(x, scale):
        result = predict(x, scale)
        w.assign(w * np.float32(0.5))
        steps.assign_add(1)
        return result
    return predict, step, w, steps


def loss_of(fn):
    return lambda x: fn(x, 1.5)["loss"]


def test_a_loaded_function_gives_the_same_results_and_changes_its_variables(tmp_path):
    _, step, w, steps = make_model()
    path = jitflow.save(step, tmp_path / "step.jitflow", X, 1.5)
    loaded = jitflow.load(path)
    assert [v.name for v in loaded.variables] == ["w", "steps"]
    for _ in range(2):
        got, expected = loaded(X, 1.5), step(X, 1.5)
        np.testing.assert_array_equal(got["out"], expected["out"])
        assert got["loss"].dtype == expected["loss"].dtype == np.float32
        np.testing.assert_array_equal(loaded.variables[0].numpy(), w.numpy())
        assert loaded.variables[1].numpy() == steps.numpy()


def test_a_fresh_process_loads_runs_and_differentiates_it(tmp_path):
    predict, _, w, _ = make_model()
    path = jitflow.save(predict, tmp_path / "predict.jitflow", X, 1.5)
    expected_grad = jitflow.grad(loss_of(predict))(X)
    expected_grad_compiled = jitflow.function(jitflow.grad(loss_of(predict)))(X)
    expected = predict(X, 1.5)
    script = textwrap.dedent(f"""
        import numpy as np, jitflow, sys
        jitflow.config.background_compile = False  # native code from the first call, as here
        loaded = jitflow.load({str(path)!r})
        x = np.load({str(tmp_path / 'x.npy')!r})
        loss = lambda x: loaded(x, 1.5)["loss"]
        grad = jitflow.grad(loss)(x)
        compiled_grad = jitflow.function(jitflow.grad(loss))(x)
        result = loaded(x, 1.5)
        assert loaded._compiled.cache_info().traces == 1  # compiled, then called
        assert not any("test_functions" in name for name in sys.modules)
        np.savez({str(tmp_path / 'got.npz')!r}, out=result["out"], loss=result["loss"],
                 grad=grad, compiled_grad=compiled_grad, w=loaded.variables[0].numpy())
    """)
    np.save(tmp_path / "x.npy", X)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    got = np.load(tmp_path / "got.npz")
    np.testing.assert_array_equal(got["out"], expected["out"])
    np.testing.assert_array_equal(got["loss"], expected["loss"])
    np.testing.assert_array_equal(got["grad"], expected_grad)
    np.testing.assert_array_equal(got["compiled_grad"], expected_grad_compiled)
    np.testing.assert_array_equal(got["w"], w.numpy())


def test_python_numbers_and_pytrees_of_arguments(tmp_path):
    @jitflow.function
    def f(params, x, scale=2):
        return params["a"] * x + params["b"][0] * scale
    params = {"a": np.float64(1.5), "b": [np.arange(3.0)]}
    loaded = jitflow.load(jitflow.save(f, tmp_path / "f.jitflow", params, np.ones(3), 3))
    np.testing.assert_array_equal(loaded(params, np.ones(3), 3), f(params, np.ones(3), 3))
    np.testing.assert_array_equal(loaded(params, x=np.ones(3) * 2, scale=5),
                                  f(params, np.ones(3) * 2, 5))


def test_calls_that_do_not_fit_the_saved_signature_are_refused(tmp_path):
    loaded = jitflow.load(jitflow.save(lambda x: x * 2, tmp_path / "f.jitflow",
                                       np.ones(3, np.float32)))
    with pytest.raises(TypeError, match=r"argument 'x' is f64\[3\].*saved for f32\[3\]"):
        loaded(np.ones(3))
    with pytest.raises(TypeError, match=r"f32\[2\].*saved for f32\[3\]"):
        loaded(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="takes 1 arguments"):
        loaded(np.ones(3, np.float32), 1)


def test_what_cannot_be_saved_is_named(tmp_path):
    v = jitflow.Variable(np.ones(2))
    with pytest.raises(jitflow.saving.NotSerializableError, match="argument 1 is a Variable"):
        jitflow.save(lambda x, v: x + v, tmp_path / "f", np.ones(2), v)
    generator = np.random.default_rng(0)  # its state is a NumPy object
    with pytest.raises(jitflow.saving.NotSerializableError, match="only Variables"):
        jitflow.save(lambda x: x + generator.normal(size=2), tmp_path / "f", np.ones(2))

    def writes(x):
        x[0] = 1.0
        return x.sum()
    with pytest.raises(jitflow.saving.NotSerializableError, match="writes into an array"):
        jitflow.save(writes, tmp_path / "f", np.ones(2))


def test_a_generator_it_draws_from_is_saved_and_draws_the_same_numbers(tmp_path):
    generator = jitflow.random.Generator(7)

    @jitflow.function
    def noisy(x):
        return x + generator.normal((3,))
    x = np.zeros(3, np.float32)
    loaded = jitflow.load(jitflow.save(noisy, tmp_path / "noisy.jitflow", x))
    for _ in range(2):
        np.testing.assert_array_equal(loaded(x), noisy(x))


def test_a_training_step_with_its_optimizer_state_goes_on_as_the_original(tmp_path):
    w = jitflow.Variable(np.array([[0.5], [-1.0]]), name="w")
    optimizer = jitflow.optim.Adam(0.1)

    @jitflow.function
    def train_step(x, y):
        loss, g = jitflow.value_and_grad(lambda v: ((x @ v - y) ** 2).mean())(w.value)
        optimizer.apply_gradients([(g, w)])
        return loss
    x, y = np.array([[1.0, 2.0], [3.0, 1.0]]), np.array([[1.0], [2.0]])
    train_step(x, y)  # one step before saving: the optimizer's slots hold values
    loaded = jitflow.load(jitflow.save(train_step, tmp_path / "step.jitflow", x, y))
    assert [v.name for v in loaded.variables] == ["w", "Adam/iterations", "Adam/w/m",
                                                  "Adam/w/v"]
    for _ in range(3):
        assert loaded(x, y) == train_step(x, y)
    for saved, original in zip(loaded.variables, [w] + optimizer.variables()):
        np.testing.assert_array_equal(saved.numpy(), original.numpy())


def test_a_loaded_function_can_be_saved_again(tmp_path):
    predict, _, _, _ = make_model()
    once = jitflow.load(jitflow.save(predict, tmp_path / "once.jitflow", X, 1.5))
    twice = jitflow.load(jitflow.save(once, tmp_path / "twice.jitflow", X, 1.5))
    assert twice.parameters == ["x", "scale"]
    np.testing.assert_array_equal(twice(X, scale=1.5)["out"], predict(X, 1.5)["out"])
    np.testing.assert_array_equal(jitflow.grad(loss_of(twice))(X),
                                  jitflow.grad(loss_of(predict))(X))
