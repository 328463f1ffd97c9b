"""MultiHeadAttention, as Keras' layer: its weights, masks and causal option.

    mha = nn.MultiHeadAttention(num_heads=2, key_dim=8)
    y = mha(query, value)                        # key defaults to value
    y = mha(x, x, use_causal_mask=True)          # each position sees itself and before

query (batch, T, Dq), value (batch, S, Dv), key (batch, S, Dk). Each head projects them
(query/kernel (Dq, heads, key_dim) and so on), takes softmax(q k^T / sqrt(key_dim)) over
the S positions, averages the projected values with it, and attention_output/kernel
(heads, value_dim, Dq) maps the heads back. attention_mask (batch, T, S), true where a
query position may attend to a key position, and the causal mask combine; a masked score
is replaced by a large negative number before the softmax, as in Keras (a row with
nothing to attend to spreads evenly). The masks of the inputs (from
Embedding(mask_zero=True) or Masking, or query_mask / value_mask / key_mask given for
arrays) join them as in Keras: query position i may attend to key position j when
query_mask[i] and value_mask[j] and key_mask[j]; the output keeps the query's mask.
"""
import math

import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from ..random import Generator
from . import masks
from .layer import Layer

_MASKED = -1e9  # Keras' large negative for a masked score


class MultiHeadAttention(Layer):
    any_length = True  # sequences of any length
    supports_masking = True

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", seed=0, rng=None, name=None):
        super().__init__(name)
        self.num_heads, self.key_dim = int(num_heads), int(key_dim)
        self.value_dim = int(value_dim) if value_dim is not None else self.key_dim
        if not 0.0 <= dropout < 1.0:
            raise ValueError(at_user_line(
                f"{self.name}: dropout must be in [0, 1), got {dropout}"))
        self.dropout, self.seed = float(dropout), int(seed)
        self.generator = Generator(seed, name=self.name) if dropout else None
        self.use_bias = bool(use_bias)
        self.output_dim = None if output_shape is None else int(
            output_shape if np.ndim(output_shape) == 0 else output_shape[-1])
        self.initializers = kernel_initializer, bias_initializer
        self.rng = rng

    def __call__(self, query, value=None, key=None, attention_mask=None, training=False,
                 return_attention_scores=False, use_causal_mask=False, query_mask=None,
                 value_mask=None, key_mask=None, mask=None):
        inputs = query if isinstance(query, dict) else _inputs(
            self.name, query, value, key, attention_mask)
        if mask is None and any(m is not None for m in (query_mask, value_mask, key_mask)):
            mask = {"query": query_mask, "value": value_mask, "key": key_mask}
        elif mask is not None and not isinstance(mask, dict):
            raise TypeError(at_user_line(
                f"{self.name} (MultiHeadAttention): give the masks of its inputs as "
                f"query_mask=, value_mask= and key_mask= (or a dict by input name), not "
                f"mask= alone"))
        return super().__call__(inputs, training=training, mask=mask,
                                return_attention_scores=bool(return_attention_scores),
                                use_causal_mask=bool(use_causal_mask))

    # --- weights --------------------------------------------------------------------------
    def build(self, input_shape, dtype):
        shapes = _projected_shapes(input_shape)
        for name, shape in shapes.items():
            if len(shape) != 3:
                raise ValueError(at_user_line(
                    f"{self.name} (MultiHeadAttention): {name} must be (batch, positions, "
                    f"features), got shape {tuple(shape)}"))
        out = self.output_dim or shapes["query"][-1]
        heads, k, v = self.num_heads, self.key_dim, self.value_dim
        self.projections = {
            name: self._dense(name, (shapes[name][-1], heads, size), (heads, size), dtype)
            for name, size in (("query", k), ("key", k), ("value", v))}
        self.output_projection = self._dense("attention_output", (heads, v, out), (out,),
                                             dtype)

    def _check_input(self, x):
        """Later calls may change the batch size, the lengths and the mask, not the
        features each projection takes."""
        built = _projected_shapes(self.input_shape)
        given = _projected_shapes({name: None if v is None else tuple(v.shape)
                                   for name, v in x.items()})
        if any(len(given[n]) != 3 or given[n][-1] != built[n][-1] for n in built):
            raise ValueError(at_user_line(
                f"{self.name} (MultiHeadAttention): built for query, value and key of "
                f"{[built[n][-1] for n in built]} features, called on shapes "
                f"{[given[n] for n in built]}"))

    def _dense(self, name, kernel_shape, bias_shape, dtype):
        kernel = self.add_weight(f"{name}/kernel", kernel_shape, self.initializers[0],
                                 dtype, rng=self.rng)
        bias = self.add_weight(f"{name}/bias", bias_shape, self.initializers[1], dtype) \
            if self.use_bias else None
        return kernel, bias

    # --- the computation ------------------------------------------------------------------
    def call(self, inputs, training=False, return_attention_scores=False,
             use_causal_mask=False, mask=None):
        dtype = self.output_projection[0].dtype
        query = jnp.asarray(inputs["query"], dtype=dtype)
        value = jnp.asarray(inputs["value"], dtype=dtype)
        key = value if inputs.get("key") is None else jnp.asarray(inputs["key"], dtype=dtype)
        q, k, v = (self._heads(x, name) for x, name in
                   ((query, "query"), (key, "key"), (value, "value")))
        scores = jnp.matmul(q, jnp.swapaxes(k, -1, -2)) / \
            jnp.asarray(math.sqrt(self.key_dim), dtype=dtype)
        mask = self._mask(inputs.get("attention_mask"), query, key, use_causal_mask,
                          mask or {})
        if mask is not None:
            scores = jnp.where(mask[:, None], scores, jnp.asarray(_MASKED, dtype=dtype))
        weights = jnp.softmax(scores, axis=-1)
        attended = jnp.matmul(self._dropped(weights, training), v)  # (batch, heads, T, v)
        output = self._merged_heads(attended)
        return (output, weights) if return_attention_scores else output

    def _heads(self, x, name):
        """x (batch, n, d) projected to (batch, heads, n, size)."""
        kernel, bias = self.projections[name]
        d, heads, size = kernel.shape
        projected = jnp.matmul(x, jnp.reshape(kernel, (d, heads * size)))
        projected = jnp.reshape(projected, (x.shape[0], x.shape[1], heads, size))
        if bias is not None:
            projected = projected + bias
        return jnp.transpose(projected, (0, 2, 1, 3))

    def _merged_heads(self, attended):
        kernel, bias = self.output_projection
        heads, size, out = kernel.shape
        batch, _, positions, _ = attended.shape
        rows = jnp.reshape(jnp.transpose(attended, (0, 2, 1, 3)),
                           (batch, positions, heads * size))
        output = jnp.matmul(rows, jnp.reshape(kernel, (heads * size, out)))
        return output if bias is None else output + bias

    def _mask(self, attention_mask, query, key, causal, input_masks):
        """(batch, T, S) booleans, or None when nothing is masked."""
        batch, t, s = query.shape[0], query.shape[1], key.shape[1]
        from_inputs = self._input_masks(input_masks, batch, t, s)
        given = None
        if attention_mask is not None:
            given = jnp.asarray(attention_mask) != 0
            if tuple(given.shape) not in ((batch, t, s), (t, s)):
                raise ValueError(at_user_line(
                    f"{self.name} (MultiHeadAttention): attention_mask must have shape "
                    f"(batch, T, S) = {(batch, t, s)}, got {tuple(given.shape)}"))
            given = jnp.broadcast_to(given, (batch, t, s))
        mask = masks.all_of([given, from_inputs])
        if causal:
            lower = np.tril(np.ones((t, s), dtype=bool))  # query i sees keys up to i
            mask = jnp.broadcast_to(lower, (batch, t, s)) if mask is None else mask & lower
        return mask

    def _input_masks(self, input_masks, batch, t, s):
        """The query, value and key masks joined into (batch, T, S), or None."""
        value_mask = input_masks.get("value")
        key_mask = input_masks.get("key")
        key_mask = value_mask if key_mask is None else key_mask  # key defaults to value
        parts = []
        for name, mask, length in (("query", input_masks.get("query"), t),
                                   ("value", value_mask, s), ("key", key_mask, s)):
            if mask is None:
                continue
            mask = masks.boolean(mask)
            if tuple(mask.shape) != (batch, length):
                raise ValueError(at_user_line(
                    f"{self.name} (MultiHeadAttention): the {name} mask must have shape "
                    f"(batch, positions) = {(batch, length)}, got {tuple(mask.shape)}"))
            parts.append(mask[:, :, None] if name == "query" else mask[:, None, :])
        if not parts:
            return None
        return jnp.broadcast_to(masks.all_of(parts), (batch, t, s))

    def compute_mask(self, inputs, mask=None):
        """The output has the query's positions, so the query's mask."""
        return mask.get("query") if isinstance(mask, dict) else None

    def _dropped(self, weights, training):
        if not training or self.generator is None:
            return weights
        keep = self.generator.uniform(weights.shape, weights.dtype) >= self.dropout
        return jnp.where(keep, weights / (1.0 - self.dropout), 0.0).astype(weights.dtype)

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads,
                "key_dim": self.key_dim, "value_dim": self.value_dim,
                "dropout": self.dropout, "use_bias": self.use_bias,
                "output_shape": self.output_dim, "seed": self.seed,
                "kernel_initializer": self.initializers[0],
                "bias_initializer": self.initializers[1]}


def _projected_shapes(input_shape):
    """The shapes of query, value and key (the value's when no key is given)."""
    return {"query": input_shape["query"], "value": input_shape["value"],
            "key": input_shape["key"] or input_shape["value"]}


def _inputs(name, query, value, key, attention_mask):
    if value is None:
        raise TypeError(at_user_line(
            f"{name} (MultiHeadAttention): call it as layer(query, value[, key, "
            f"attention_mask=...]); value is missing"))
    return {"query": query, "value": value, "key": key, "attention_mask": attention_mask}


__all__ = ["MultiHeadAttention"]
