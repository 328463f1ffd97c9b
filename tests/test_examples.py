"""Each demo in examples/ at a reduced size: it runs, learns, and its compiled steps do
what the same steps do eagerly."""
import os
import sys

import numpy as np
import pytest

import jitflow
from fidelity import assert_same

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "examples"))

import char_transformer  # noqa: E402
import cumulative  # noqa: E402
import digits_convnet  # noqa: E402
import logistic_regression  # noqa: E402
import newton_sqrt  # noqa: E402
import rnn  # noqa: E402
import spiral  # noqa: E402
import vae  # noqa: E402
import wgan_gp  # noqa: E402


def quiet(*args):
    pass


def test_the_digits_convnet_learns_in_a_few_epochs():
    accuracy, model, _ = digits_convnet.train(epochs=3, report=quiet)
    assert accuracy >= 0.85
    assert len(model.trainable_variables) == 8


def test_the_spiral_classifier_learns():
    points, labels = spiral.spiral_data(points_per_class=50)
    model, losses = spiral.train(points, labels, steps=300)
    assert losses[-1] < 0.3 * losses[0]
    assert (model.predict(points).argmax(1) == labels).mean() >= 0.8


def test_logistic_regression_finds_the_weights_direction():
    x, y, true_w = logistic_regression.make_data(samples=500)
    w, _, losses = logistic_regression.fit(x, y, steps=100)
    assert losses[-1] < losses[0]
    assert w @ true_w / np.linalg.norm(w) / np.linalg.norm(true_w) > 0.9


def test_the_wgan_critic_step_differentiates_through_a_gradient_as_eagerly():
    """The gradient penalty is second order; compiled and eager steps agree."""
    compiled, eager = wgan_gp.WGAN(iterations=10), wgan_gp.WGAN(iterations=10)
    for _ in range(3):
        distance, penalty = compiled.critic_step()
        eager_distance, eager_penalty = eager._critic_step()
        assert float(distance) == pytest.approx(float(eager_distance), rel=1e-4, abs=1e-5)
        assert float(penalty) == pytest.approx(float(eager_penalty), rel=1e-3, abs=1e-6)
    compiled.generator_step()
    eager._generator_step()
    for a, b in zip(compiled.critic.weights + compiled.generator.weights,
                    eager.critic.weights + eager.generator.weights, strict=True):
        assert_same(a.value, b.value, rtol=1e-4, atol=1e-5)


def test_the_wgan_trains_without_blowing_up():
    gan = wgan_gp.train(iterations=30, report=quiet)
    samples = np.asarray(gan.fake())
    assert np.isfinite(samples).all()


def test_the_vae_learns_and_its_compiled_step_is_the_eager_step():
    model, reconstruction, baseline, floor = vae.train(epochs=10, report=quiet)
    assert floor < reconstruction < baseline
    x = np.random.default_rng(0).random((16, vae.PIXELS)).astype(np.float32)
    twins = vae.VAE(seed=1), vae.VAE(seed=1)
    compiled = jitflow.function(lambda x: twins[0].negative_elbo(x))
    for _ in range(2):
        for actual, expected in zip(compiled(x), twins[1].negative_elbo(x)):
            assert float(actual) == pytest.approx(float(expected), rel=1e-5)


def test_newton_sqrt_and_its_derivatives_through_the_loop():
    trips, errors = newton_sqrt.check(np.array([1e-3, 0.5, 2.0, 7e5]))
    assert trips > 5 and max(errors.values()) < 1e-9


def test_the_rnn_learns_and_its_compiled_step_is_the_eager_step():
    compiled, eager = rnn.RNN(hidden=8), rnn.RNN(hidden=8)
    compiled_step = jitflow.function(rnn.make_step(compiled, rnn.Adam(0.01)))
    eager_step = rnn.make_step(eager, rnn.Adam(0.01))
    for seed in range(3):
        waves = rnn.sine_waves(4, 12, seed)
        assert_same(compiled_step(waves), eager_step(waves), rtol=1e-5, atol=1e-7)
    for a, b in zip(compiled.weights, eager.weights, strict=True):
        assert_same(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-6)
    model = rnn.train(steps=60, batch=16, length=20, report=quiet)
    test = rnn.sine_waves(64, 20, seed=99)
    assert float(rnn.loss(model, test)) < 0.3 * float(np.mean((test[:-1] - test[1:]) ** 2))


@pytest.mark.parametrize("run", [jitflow.function(cumulative.running_statistics),
                                 cumulative.running_statistics])
def test_cumulative_statistics_by_scan_match_numpy(run):
    xs = np.random.default_rng(1).standard_normal((50, 2)) * 3 + 1
    assert max(cumulative.compare(xs, run).values()) < 1e-12


def test_the_char_transformer_learns_and_writes_from_its_vocabulary():
    model, vocabulary, history = char_transformer.train(epochs=2, examples=256,
                                                        verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0] < np.log(len(vocabulary)) + 0.5
    sample = char_transformer.generate(model, vocabulary, "The keeper", 20)
    assert sample.startswith("The keeper") and len(sample) == 30
    assert set(sample) <= set(vocabulary.characters)
    attention = [layer for layer in model.layers if isinstance(layer, jitflow.nn.MultiHeadAttention)]
    assert len(attention) == 2
