"""A small character-level transformer language model: token and position embeddings,
causal multi-head self-attention blocks with layer normalization, trained with
model.fit on a short story shipped in examples/data, then sampled one character at a
time.

    python examples/char_transformer.py                      # a minute or two
    JITFLOW_EXAMPLE_FAST=1 python examples/char_transformer.py   # seconds (tests)
"""
import os
import sys
import time

import numpy as np

import jitflow
import jitflow.numpy as jnp
from jitflow import nn

TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "lighthouse.txt")
CONTEXT = 32  # characters the model sees


class Vocabulary:
    """The text's characters, each an integer id."""

    def __init__(self, text):
        self.characters = sorted(set(text))
        self.ids = {c: i for i, c in enumerate(self.characters)}

    def __len__(self):
        return len(self.characters)

    def encode(self, text):
        return np.array([self.ids[c] for c in text], dtype=np.int32)

    def decode(self, ids):
        return "".join(self.characters[i] for i in ids)


@nn.register_layer(name="char_transformer>TokenAndPosition")
class TokenAndPosition(nn.Layer):
    """Each token's learned embedding plus its position's."""

    def __init__(self, vocabulary_size, length, width, name=None):
        super().__init__(name)
        self.vocabulary_size, self.length, self.width = vocabulary_size, length, width

    def build(self, input_shape, dtype):
        init = nn.initializers.RandomNormal(stddev=0.02)
        self.tokens = self.add_weight("tokens", (self.vocabulary_size, self.width), init,
                                      dtype)
        self.positions = self.add_weight("positions", (self.length, self.width), init,
                                         dtype)

    def call(self, x, training=False):
        return jnp.take(self.tokens, x, axis=0) + self.positions[:x.shape[1]]

    def get_config(self):
        return {**super().get_config(), "vocabulary_size": self.vocabulary_size,
                "length": self.length, "width": self.width}


def transformer_block(x, heads, width, hidden):
    """Pre-norm block: x + attention(norm(x)), then x + feed-forward(norm(x))."""
    normed = nn.LayerNormalization(epsilon=1e-5)(x)
    attended = nn.MultiHeadAttention(heads, width // heads)(normed, normed,
                                                           use_causal_mask=True)
    x = nn.Add()([x, attended])
    normed = nn.LayerNormalization(epsilon=1e-5)(x)
    return nn.Add()([x, nn.Dense(width)(nn.Dense(hidden, activation="gelu")(normed))])


def build_model(vocabulary_size, width=48, heads=4, blocks=2):
    tokens = nn.Input((CONTEXT,), dtype="int32", name="tokens")
    x = TokenAndPosition(vocabulary_size, CONTEXT, width)(tokens)
    for _ in range(blocks):
        x = transformer_block(x, heads, width, 4 * width)
    logits = nn.Dense(vocabulary_size)(nn.LayerNormalization(epsilon=1e-5)(x))
    model = nn.Model(tokens, logits, name="char_transformer")
    model.compile(jitflow.optim.Adam(3e-3),
                  nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def windows(ids, count, rng):
    """`count` random windows of the text: inputs and the characters that follow."""
    starts = rng.integers(0, len(ids) - CONTEXT - 1, count)
    rows = ids[starts[:, None] + np.arange(CONTEXT + 1)]
    return rows[:, :-1], rows[:, 1:]


def train(epochs=10, examples=4000, batch_size=64, verbose=2, seed=0):
    """The trained model, the vocabulary and fit's History."""
    with open(TEXT, encoding="utf-8") as file:
        text = file.read()
    vocabulary = Vocabulary(text)
    ids = vocabulary.encode(text)
    x, y = windows(ids, examples, np.random.default_rng(seed))
    model = build_model(len(vocabulary))
    history = model.fit(x, y, batch_size=batch_size, epochs=epochs, validation_split=0.1,
                        verbose=verbose)
    return model, vocabulary, history


def generate(model, vocabulary, prompt, length, temperature=0.8, seed=0):
    """`prompt` continued by `length` characters, each drawn from the model's
    distribution for the next one given the last CONTEXT characters."""
    rng = np.random.default_rng(seed)
    ids = list(vocabulary.encode(prompt.rjust(CONTEXT)))
    for _ in range(length):
        context = np.array(ids[-CONTEXT:], dtype=np.int32)[None]
        logits = model.predict(context, verbose=0)[0, -1].astype(np.float64)
        weights = np.exp((logits - logits.max()) / temperature)
        ids.append(int(rng.choice(len(weights), p=weights / weights.sum())))
    return prompt + vocabulary.decode(ids[CONTEXT:])


def main():
    fast = os.environ.get("JITFLOW_EXAMPLE_FAST") == "1"
    start = time.perf_counter()
    model, vocabulary, history = train(epochs=1 if fast else 10,
                                       examples=256 if fast else 4000)
    seconds = time.perf_counter() - start
    print(f"trained in {seconds:.1f}s; validation loss "
          f"{history.history['val_loss'][-1]:.3f} nats per character "
          f"(uniform guessing: {np.log(len(vocabulary)):.3f})")
    print(generate(model, vocabulary, "The keeper", 60 if fast else 400))


if __name__ == "__main__":
    sys.exit(main())
