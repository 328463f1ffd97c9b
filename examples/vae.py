"""A variational autoencoder of the 8x8 digits, trained with a compiled step that draws
its own noise (jitflow.random, the reparameterization trick). Held-out digits must come
back much closer than the average digit is to them: the cross-entropy above its floor
(the pixels' own entropy: they are grey levels, not bits) at most 0.7 of the average
digit's. Saves vae.png (digits decoded from
random codes) when matplotlib is installed.

    python examples/vae.py
"""
import numpy as np

import jitflow
import jitflow.numpy as jnp
from jitflow import nn
from jitflow.datasets import load_digits
from jitflow.nn.losses import binary_crossentropy_from_logits
from jitflow.optim import Adam
from jitflow.random import Generator

PIXELS, LATENT, HIDDEN = 64, 8, 128


class VAE:
    def __init__(self, seed=0):
        rng = np.random.default_rng(seed)
        self.encoder = nn.Sequential([nn.Dense(HIDDEN, activation="relu", rng=rng),
                                      nn.Dense(2 * LATENT, rng=rng)])
        self.decoder = nn.Sequential([nn.Dense(HIDDEN, activation="relu", rng=rng),
                                      nn.Dense(PIXELS, rng=rng)])
        self.noise = Generator(seed)

    @property
    def trainable_variables(self):
        return self.encoder.trainable_variables + self.decoder.trainable_variables

    def negative_elbo(self, x):
        """Per-example reconstruction cross-entropy plus KL(q(z|x) || N(0, 1)), and the
        reconstruction part alone, both averaged over the batch."""
        code = self.encoder(x)
        mean, log_variance = code[:, :LATENT], code[:, LATENT:]
        z = mean + jnp.exp(0.5 * log_variance) * self.noise.normal(mean.shape, x.dtype)
        reconstruction = binary_crossentropy_from_logits(
            x, self.decoder(z), reduction="none").sum(axis=1).mean()
        divergence = -0.5 * (1.0 + log_variance - mean * mean -
                             jnp.exp(log_variance)).sum(axis=1).mean()
        return reconstruction + divergence, reconstruction


def train(epochs=60, batch_size=64, learning_rate=2e-3, seed=0, report=print):
    (train_images, _), (test_images, _) = load_digits()
    x, test = train_images.reshape(-1, PIXELS), test_images.reshape(-1, PIXELS)
    vae = VAE(seed)
    optimizer = Adam(learning_rate)

    @jitflow.function
    def step(batch):
        with jitflow.GradientTape() as tape:
            loss, _ = vae.negative_elbo(batch)
        grads = tape.gradient(loss, vae.trainable_variables)
        optimizer.apply_gradients(zip(grads, vae.trainable_variables))
        return loss
    evaluate = jitflow.function(vae.negative_elbo)
    rng = np.random.default_rng(seed)
    for epoch in range(epochs):
        order = rng.permutation(len(x))
        for start in range(0, len(x) - batch_size + 1, batch_size):
            step(x[order[start:start + batch_size]])
        if epoch % 10 == 0 or epoch == epochs - 1:
            loss, reconstruction = evaluate(test)
            report(f"epoch {epoch:3d}: held-out negative ELBO {float(loss):.2f}, "
                   f"reconstruction {float(reconstruction):.2f}")
    return vae, float(evaluate(test)[1]), _average_digit_loss(x, test), _floor(test)


def _average_digit_loss(x, test):
    """The reconstruction cross-entropy of always answering the mean training digit."""
    average = np.clip(x.mean(0), 1e-6, 1 - 1e-6)
    logits = np.broadcast_to(np.log(average / (1 - average)), test.shape)
    return float(binary_crossentropy_from_logits(test, logits, reduction="none").sum(1).mean())


def _floor(test):
    """The least cross-entropy any reconstruction can have: the pixels' entropy."""
    p = test.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        bits = np.where(p > 0, p * np.log(p), 0) + np.where(p < 1, (1 - p) * np.log1p(-p), 0)
    return float(-bits.sum(1).mean())


def save_plot(vae, path="vae.png"):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    codes = np.random.default_rng(1).standard_normal((16, LATENT)).astype(np.float32)
    digits = 1 / (1 + np.exp(-np.asarray(vae.decoder(codes))))
    for i, digit in enumerate(digits):
        plt.subplot(4, 4, i + 1)
        plt.imshow(digit.reshape(8, 8), cmap="gray")
        plt.axis("off")
    plt.savefig(path)
    return path


def main():
    vae, reconstruction, baseline, floor = train()
    print(f"held-out reconstruction cross-entropy {reconstruction:.2f} per digit, against "
          f"{baseline:.2f} for the average digit (floor {floor:.2f})")
    saved = save_plot(vae)
    if saved:
        print(f"decoded samples saved to {saved}")
    assert reconstruction - floor < 0.7 * (baseline - floor), \
        "the VAE should reconstruct held-out digits"


if __name__ == "__main__":
    main()
