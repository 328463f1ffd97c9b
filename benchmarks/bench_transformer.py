"""A GPT-style transformer training step (token and position embeddings, causal
multi-head self-attention, LayerNorm, a GELU MLP, AdamW with weight decay; 2 blocks,
width 128, 4 heads, 64 tokens, batch 16, 256 symbols, float32), written once as plain
array code and run by jitflow (`@jitflow.function` of the NumPy code, gradients by
jitflow.value_and_grad) and by JAX (`jax.jit` of the same code on jax.numpy, parameters
donated), and written as PyTorch's users would (torch.nn.functional's layer_norm, GELU,
causal scaled_dot_product_attention and cross_entropy, torch.optim.AdamW), eager and
torch.compile'd, whichever are installed.

Each library runs in a fresh process of its own (disk caches off), several times, the
libraries taking turns. A process times the first call, cold, until native code ran
(jitflow: its first call runs on the interpreter while the native code is built, so
the time to the second call's end is reported too), then steps in batches. Every process starts from the same
parameters and data; its first two losses are checked against jitflow's. Prints the
median time per step with the range over processes, and the ratio to the best peer.

    python benchmarks/bench_transformer.py [processes]
"""
import importlib.util
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

from peers import cpu_name

VOCABULARY, CONTEXT, WIDTH, HEADS, BLOCKS, BATCH = 256, 64, 128, 4, 2, 16
LEARNING_RATE, BETA_1, BETA_2, EPSILON, DECAY = 3e-4, 0.9, 0.999, 1e-8, 0.01
STEPS_PER_BATCH, BATCHES = 10, 15
LOSS_RTOL = 1e-4


# --- the model, on any NumPy-like namespace `xp` ------------------------------------------

def initial_parameters():
    rng = np.random.default_rng(0)

    def normal(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    def ones(n):
        return np.ones(n, np.float32)

    def zeros(n):
        return np.zeros(n, np.float32)
    params = [normal(VOCABULARY, WIDTH), normal(CONTEXT, WIDTH)]
    for _ in range(BLOCKS):
        params += [ones(WIDTH), zeros(WIDTH), normal(WIDTH, 3 * WIDTH), zeros(3 * WIDTH),
                   normal(WIDTH, WIDTH), zeros(WIDTH), ones(WIDTH), zeros(WIDTH),
                   normal(WIDTH, 4 * WIDTH), zeros(4 * WIDTH), normal(4 * WIDTH, WIDTH),
                   zeros(WIDTH)]
    return params + [ones(WIDTH), zeros(WIDTH), normal(WIDTH, VOCABULARY)]


def batch():
    rng = np.random.default_rng(1)
    tokens = rng.integers(0, VOCABULARY, (BATCH, CONTEXT + 1)).astype(np.int32)
    return tokens[:, :-1], tokens[:, 1:]


def layer_norm(xp, x, gain, bias):
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / xp.sqrt(variance + 1e-5) * gain + bias


def gelu(xp, x):
    return 0.5 * x * (1.0 + xp.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def softmax(xp, x):
    e = xp.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def heads(x):
    """(batch, tokens, width) -> (batch, heads, tokens, width / heads)."""
    return x.reshape(BATCH, CONTEXT, HEADS, WIDTH // HEADS).transpose(0, 2, 1, 3)


def attention(xp, x, causal, w, b, projection, projection_bias):
    qkv = x @ w + b
    q, k, v = (heads(qkv[..., i * WIDTH:(i + 1) * WIDTH]) for i in range(3))
    scores = q @ k.transpose(0, 1, 3, 2) * (1.0 / math.sqrt(WIDTH // HEADS))
    weights = softmax(xp, xp.where(causal, scores, -1e9))
    mixed = (weights @ v).transpose(0, 2, 1, 3).reshape(BATCH, CONTEXT, WIDTH)
    return mixed @ projection + projection_bias


def loss(xp, params, tokens, targets):
    causal = np.tril(np.ones((CONTEXT, CONTEXT), bool))
    h = params[0][tokens] + params[1]
    for block in range(BLOCKS):
        (g1, b1, w_qkv, b_qkv, w_o, b_o, g2, b2, w_up, b_up, w_down,
         b_down) = params[2 + 12 * block:14 + 12 * block]
        h = h + attention(xp, layer_norm(xp, h, g1, b1), causal, w_qkv, b_qkv, w_o, b_o)
        h = h + gelu(xp, layer_norm(xp, h, g2, b2) @ w_up + b_up) @ w_down + b_down
    logits = layer_norm(xp, h, params[-3], params[-2]) @ params[-1]
    top = logits.max(axis=-1, keepdims=True)
    log_total = xp.log(xp.exp(logits - top).sum(axis=-1, keepdims=True)) + top
    picked = xp.take_along_axis(logits, targets[..., None], axis=-1)
    return (log_total - picked).mean()


def adamw(xp, params, m, v, grads, t):
    """One AdamW update (decoupled weight decay on every parameter)."""
    correction = xp.sqrt(1 - BETA_2 ** t) / (1 - BETA_1 ** t)
    m = [a + (g - a) * (1 - BETA_1) for a, g in zip(m, grads)]
    v = [a + (g * g - a) * (1 - BETA_2) for a, g in zip(v, grads)]
    params = [p - LEARNING_RATE * (correction * a / (xp.sqrt(b) + EPSILON) + DECAY * p)
              for p, a, b in zip(params, m, v)]
    return params, m, v


# --- each library's step: make(params) -> step(tokens, targets) -> loss ------------------

def jitflow_step(params):
    import jitflow

    def train_step(params, m, v, t, tokens, targets):
        value, grads = jitflow.value_and_grad(
            lambda p: loss(np, p, tokens, targets))(params)
        params, m, v = adamw(np, params, m, v, grads, t)
        return value, params, m, v

    compiled = jitflow.function(train_step)
    state = [params, [np.zeros_like(p) for p in params],
             [np.zeros_like(p) for p in params]]
    count = [0]

    def step(tokens, targets):
        count[0] += 1
        value, *state[:] = compiled(*state, np.float32(count[0]), tokens, targets)
        return float(value)
    return step, lambda tokens, targets: (tokens, targets)


def jax_step(params):
    import jax
    import jax.numpy as jnp

    def train_step(state, t, tokens, targets):
        params, m, v = state
        value, grads = jax.value_and_grad(lambda p: loss(jnp, p, tokens, targets))(params)
        return value, adamw(jnp, params, m, v, grads, t)

    compiled = jax.jit(train_step, donate_argnums=0)
    state = [[jnp.asarray(p) for p in params], [jnp.zeros_like(p) for p in params],
             [jnp.zeros_like(p) for p in params]]
    holder, count = [tuple(state)], [0]

    def step(tokens, targets):
        count[0] += 1
        value, holder[0] = compiled(holder[0], jnp.float32(count[0]), tokens, targets)
        return float(jax.block_until_ready(value))
    return step, lambda tokens, targets: (jax.device_put(tokens), jax.device_put(targets))


def torch_step(params, compiled):
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(2)  # one per core of this 2-core machine
    if compiled:
        import torch._inductor.config
        torch._inductor.config.force_disable_caches = True  # the first call compiles
    weights = [torch.tensor(p, requires_grad=True) for p in params]
    optimizer = torch.optim.AdamW(weights, lr=LEARNING_RATE, betas=(BETA_1, BETA_2),
                                  eps=EPSILON, weight_decay=DECAY)

    def split_heads(x):
        return x.view(BATCH, CONTEXT, HEADS, WIDTH // HEADS).transpose(1, 2)

    def block(h, g1, b1, w_qkv, b_qkv, w_o, b_o, g2, b2, w_up, b_up, w_down, b_down):
        q, k, v = (F.layer_norm(h, (WIDTH,), g1, b1) @ w_qkv + b_qkv).split(WIDTH, -1)
        mixed = F.scaled_dot_product_attention(split_heads(q), split_heads(k),
                                               split_heads(v), is_causal=True)
        h = h + mixed.transpose(1, 2).reshape(BATCH, CONTEXT, WIDTH) @ w_o + b_o
        up = F.layer_norm(h, (WIDTH,), g2, b2) @ w_up + b_up
        return h + F.gelu(up, approximate="tanh") @ w_down + b_down

    def step_loss(tokens, targets):
        h = weights[0][tokens] + weights[1]
        for index in range(BLOCKS):
            h = block(h, *weights[2 + 12 * index:14 + 12 * index])
        logits = F.layer_norm(h, (WIDTH,), weights[-3], weights[-2]) @ weights[-1]
        return F.cross_entropy(logits.reshape(-1, VOCABULARY), targets.reshape(-1))

    def train_step(tokens, targets):
        optimizer.zero_grad(set_to_none=True)
        value = step_loss(tokens, targets)
        value.backward()
        optimizer.step()
        return value.detach()

    # (max-autotune: its fastest mode here, 27.3 ms a step against the default's 28.6)
    run = torch.compile(train_step, mode="max-autotune") if compiled else train_step

    def step(tokens, targets):
        return float(run(tokens, targets))

    def convert(tokens, targets):
        return (torch.from_numpy(tokens.astype(np.int64)),
                torch.from_numpy(targets.astype(np.int64)))
    return step, convert


LIBRARIES = {"jitflow": ("jitflow", jitflow_step), "JAX": ("jax", jax_step),
             "torch": ("torch", lambda params: torch_step(params, False)),
             "torch.compile": ("torch", lambda params: torch_step(params, True))}


# --- one process: one library --------------------------------------------------------------

def run_one(name):
    """Prints a JSON record: the first call's and second call's end (s), the first two
    losses and the time per step of each batch."""
    os.environ["JITFLOW_CACHE"] = "0"
    os.environ["JAX_ENABLE_COMPILATION_CACHE"] = "false"
    params = initial_parameters()
    tokens, targets = batch()
    started = time.perf_counter()
    step, convert = LIBRARIES[name][1](params)
    args = convert(tokens, targets)
    losses = [step(*args)]
    first = time.perf_counter() - started
    losses.append(step(*args))
    second = time.perf_counter() - started
    times = []
    for _ in range(BATCHES):
        begun = time.perf_counter()
        for _ in range(STEPS_PER_BATCH):
            step(*args)
        times.append((time.perf_counter() - begun) / STEPS_PER_BATCH)
    print(json.dumps({"first": first, "second": second, "losses": losses,
                      "times": times}))


def run_fresh(name):
    output = subprocess.run([sys.executable, __file__, "--run", name], check=True,
                            capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main(processes):
    import platform

    present = [name for name, (package, _) in LIBRARIES.items()
               if importlib.util.find_spec(package) is not None]
    print(f"CPU: {cpu_name()}; {platform.python_version()}; libraries: "
          f"{', '.join(present)}; {processes} fresh processes each")
    records = {name: [] for name in present}
    for round in range(processes):  # the libraries take turns, in a rotating order:
        # this machine's speed drifts over minutes, and a ratio should compare
        # processes that ran close together
        for name in present[round % len(present):] + present[:round % len(present)]:
            records[name].append(run_fresh(name))
    reference = records["jitflow"][0]["losses"]
    for name, runs in records.items():
        for run in runs:
            errors = [abs(a - b) / abs(b) for a, b in zip(run["losses"], reference)]
            assert max(errors) <= LOSS_RTOL, f"{name}'s losses {run['losses']} differ " \
                f"from jitflow's {reference}"
    _print_table(records)


def _print_table(records):
    medians = {name: [float(np.median(run["times"])) for run in runs]
               for name, runs in records.items()}
    best_peer = min((np.median(m) for name, m in medians.items() if name != "jitflow"),
                    default=None)
    print(f"{'library':10} {'ms/step':>8} {'range over processes':>22} {'1st call':>10} "
          f"{'2nd done':>10}")
    for name, runs in records.items():
        ms = np.array(medians[name]) * 1e3
        first = np.median([run["first"] for run in runs])
        second = np.median([run["second"] for run in runs])
        print(f"{name:10} {np.median(ms):8.2f} {ms.min():10.2f} - {ms.max():<9.2f} "
              f"{first:9.2f}s {second:9.2f}s")
    if best_peer is not None:
        ratio = np.median(medians["jitflow"]) / best_peer
        print(f"jitflow / best peer, time per step: {ratio:.2f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run"]:
        run_one(sys.argv[2])
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
