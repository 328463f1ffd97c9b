"""A Wasserstein GAN with gradient penalty learns a 2-D Gaussian. The critic's loss
penalizes the norm of the critic's gradient with respect to its input, so its step
differentiates through a gradient: second-order autodiff inside @jitflow.function.
Saves wgan_gp.png (samples against data) when matplotlib is installed.

    python examples/wgan_gp.py
"""
import numpy as np

import jitflow
import jitflow.numpy as jnp
from jitflow import nn
from jitflow.optim import Adam, schedules
from jitflow.random import Generator

TARGET_MEAN = np.array([2.0, -1.0], np.float32)
TARGET_STD = np.array([0.5, 1.0], np.float32)
NOISE, BATCH, PENALTY = 4, 128, 10.0


def mlp(sizes, seed):
    rng = np.random.default_rng(seed)
    layers = [nn.Dense(n, activation="leaky_relu", rng=rng) for n in sizes[:-1]]
    return nn.Sequential(layers + [nn.Dense(sizes[-1], rng=rng)])


class WGAN:
    """The two networks, their optimizers (Adam with a cosine decay of the rate over
    `iterations`, which settles the oscillation of the two players) and their steps."""

    def __init__(self, iterations, critic_steps=5, learning_rate=2e-3, seed=0):
        self.generator = mlp([32, 32, 2], seed)
        self.critic = mlp([64, 64, 1], seed + 1)
        self.random = Generator(seed)
        self.critic_optimizer = Adam(schedules.CosineDecay(
            learning_rate, critic_steps * iterations), beta_1=0.5, beta_2=0.9)
        self.generator_optimizer = Adam(schedules.CosineDecay(learning_rate, iterations),
                                        beta_1=0.5, beta_2=0.9)
        self.critic_step = jitflow.function(self._critic_step)
        self.generator_step = jitflow.function(self._generator_step)

    def real(self):
        return TARGET_MEAN + TARGET_STD * self.random.normal((BATCH, 2))

    def fake(self):
        return self.generator(self.random.normal((BATCH, NOISE)))

    def _critic_step(self):
        real, fake = self.real(), self.fake()
        mix = self.random.uniform((BATCH, 1))
        between = mix * real + (1.0 - mix) * fake
        with jitflow.GradientTape() as tape:
            slope = jitflow.grad(lambda x: self.critic(x).sum())(between)
            norm = jnp.sqrt((slope * slope).sum(axis=1) + 1e-12)
            penalty = ((norm - 1.0) ** 2).mean()
            distance = self.critic(real).mean() - self.critic(fake).mean()
            loss = PENALTY * penalty - distance
        variables = self.critic.trainable_variables
        self.critic_optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return distance, penalty

    def _generator_step(self):
        with jitflow.GradientTape() as tape:
            loss = -self.critic(self.fake()).mean()
        variables = self.generator.trainable_variables
        self.generator_optimizer.apply_gradients(zip(tape.gradient(loss, variables),
                                                     variables))
        return loss


def train(iterations=3000, critic_steps=5, seed=0, report=print):
    gan = WGAN(iterations, critic_steps, seed=seed)
    for iteration in range(iterations):
        for _ in range(critic_steps):
            distance, penalty = gan.critic_step()
        gan.generator_step()
        if iteration % 500 == 0:
            report(f"iteration {iteration:5d}: critic's distance {float(distance):.3f}, "
                   f"penalty {float(penalty):.3f}")
    return gan


def save_plot(samples, real, path="wgan_gp.png"):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    plt.scatter(real[:, 0], real[:, 1], s=4, label="data")
    plt.scatter(samples[:, 0], samples[:, 1], s=4, label="generated")
    plt.legend()
    plt.savefig(path)
    return path


def main():
    gan = train()
    samples = np.concatenate([np.asarray(gan.fake()) for _ in range(20)])
    mean, std = samples.mean(0), samples.std(0)
    print(f"generated mean {mean.round(2)} (data {TARGET_MEAN}), "
          f"std {std.round(2)} (data {TARGET_STD})")
    saved = save_plot(samples, np.concatenate([np.asarray(gan.real()) for _ in range(20)]))
    if saved:
        print(f"samples saved to {saved}")
    # The two players keep circling the target: over seeds 0-3 and AVX2 and AVX-512
    # code the means came within 0.26 and the spreads within 23%, while an untrained
    # generator is 1.8 off in mean and 65% off in spread. The bounds leave room for that
    # circling, which rounding on another CPU or seed sends elsewhere.
    assert np.all(np.abs(mean - TARGET_MEAN) < 0.4), "the generator missed the data's mean"
    assert np.all(np.abs(std / TARGET_STD - 1) < 0.35), "the generator missed its spread"


if __name__ == "__main__":
    main()
