"""The throughput of model.fit against the same models trained as JAX's users train them:
the digits convnet of examples/digits_convnet.py (Conv 16, pool, Conv 32, pool, Dense
64, Dense 10; 1344 training images of 8x8) and the character transformer of
examples/char_transformer.py (2 pre-norm blocks, width 48, 4 heads, 32 characters;
2048 windows of the shipped text), both with Adam (learning rate 3e-3), sparse softmax
cross-entropy from logits, accuracy as the metric, batches of 64, shuffled every epoch.

jitflow trains with `fit` (its whole step, metrics included, one compiled call). JAX
trains as its documentation recommends: the whole train step under `jax.jit` with the
state donated (donate_argnums), the data put on the device once (jax.device_put) and
each batch gathered inside the step from an index array, the loss and accuracy summed
on the device and read once per epoch; Adam is written out with Keras' formulas (optax
need not be installed). (torch is not timed: the script says whether it is importable;
no torch version is written, as none could be run where these figures are made.)

Every implementation runs in a fresh process of its own (compilation caches off),
alternating, `rounds` times. Each process first checks that it computes what jitflow
does: from the same initial weights (written once by this script), its first two
losses on the first batch (before and after one Adam step) must equal jitflow's within
float32 rounding. It then trains one epoch to warm up and times EPOCHS epochs. Printed:
the CPU, the threads, the median samples per second over the rounds with their range,
and the median of the rounds' ratios jitflow / JAX (above 1: jitflow is faster).

Threads: both libraries are held to the same CPUs (the process's affinity is set before
either is imported, and JITFLOW_THREADS to their number; XLA sizes its pool by the same
affinity).

    python benchmarks/bench_fit_peers.py [rounds] [--threads N]
"""
import argparse
import importlib.metadata
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")
BATCH, LEARNING_RATE = 64, 3e-3
BETA_1, BETA_2, EPSILON = 0.9, 0.999, 1e-7  # Keras' Adam, as jitflow's
EPOCHS = 3  # timed epochs per process, after one to warm up
LOSS_RTOL = 2e-4
DIGITS, WINDOWS = 1344, 2048  # whole batches of 64: 21 and 32 per epoch


# --- the data and the initial weights (written by the parent process) -------------------

def digits_data():
    from jitflow.datasets import load_digits

    (images, labels), _ = load_digits()
    return images[:DIGITS], labels[:DIGITS]


def text_data():
    import char_transformer

    with open(char_transformer.TEXT, encoding="utf-8") as file:
        text = file.read()
    vocabulary = char_transformer.Vocabulary(text)
    x, y = char_transformer.windows(vocabulary.encode(text), WINDOWS,
                                    np.random.default_rng(0))
    return x, y, len(vocabulary)


def jitflow_model(task, vocabulary=None):
    """The example's model, compiled as fit trains it."""
    import jitflow
    from jitflow import nn

    if task == "digits":
        import digits_convnet

        model = digits_convnet.build_model(0)
        model(np.zeros((1, 8, 8, 1), np.float32))  # builds its weights
        model.compile(jitflow.optim.Adam(LEARNING_RATE),
                      nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
        return model
    import char_transformer

    model = char_transformer.build_model(vocabulary)
    model.compile(jitflow.optim.Adam(LEARNING_RATE),
                  nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def write_inputs(task, path):
    """The task's data and the jitflow model's initial weights, to `path` (.npz)."""
    if task == "digits":
        x, y = digits_data()
        vocabulary = 0
    else:
        x, y, vocabulary = text_data()
    weights = jitflow_model(task, vocabulary).get_weights()
    np.savez(path, x=x, y=y, vocabulary=vocabulary,
             **{f"w{i}": w for i, w in enumerate(weights)})


def read_inputs(path):
    data = np.load(path)
    count = sum(name.startswith("w") for name in data.files)
    return data["x"], data["y"], int(data["vocabulary"]), \
        [data[f"w{i}"] for i in range(count)]


# --- jitflow: fit ----------------------------------------------------------------------------

def jitflow_run(task, path):
    x, y, vocabulary, weights = read_inputs(path)
    model = jitflow_model(task, vocabulary)
    model.set_weights(weights)
    started = time.perf_counter()
    losses = [float(model.train_on_batch(x[:BATCH], y[:BATCH])[0])]
    model._train_function.wait()
    first = time.perf_counter() - started
    losses.append(float(model.train_on_batch(x[:BATCH], y[:BATCH])[0]))

    from bench_fit import EpochTimes  # (it turns the disk cache off, as here)

    model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)  # warm up
    timer = EpochTimes()
    history = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, verbose=0,
                        callbacks=[timer])
    return {"losses": losses, "first": first, "seconds": timer.seconds,
            "accuracy": history.history["accuracy"][-1]}


# --- JAX: jax.jit of the whole step ------------------------------------------------------------

def jax_forward(task, jnp, lax, params, x):
    """The example's model in jax.numpy: logits for x."""
    if task == "digits":
        return jax_convnet(jnp, lax, params, x)
    return jax_transformer(jnp, lax, params, x)


def jax_convnet(jnp, lax, params, images):
    c1, b1, c2, b2, d1, e1, d2, e2 = params
    x = images
    for kernel, bias in ((c1, b1), (c2, b2)):
        x = lax.conv_general_dilated(x, kernel, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        x = jnp.maximum(x + bias, 0.0)
        x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    x = x.reshape(x.shape[0], -1)
    x = jnp.maximum(x @ d1 + e1, 0.0)
    return x @ d2 + e2


def layer_norm(jnp, x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(variance + 1e-5) * gamma + beta


def attention(jnp, x, weights):
    """Causal multi-head self-attention written with einsum, as Flax's attention is
    (XLA ran the backward pass about twice as fast this way as with reshapes and
    batched matmuls)."""
    import jax

    qk, qb, kk, kb, vk, vb, ok, ob = weights
    q, k, v = (jnp.einsum("btd,dhk->bthk", x, kernel) + bias
               for kernel, bias in ((qk, qb), (kk, kb), (vk, vb)))
    scores = jnp.einsum("bqhk,bshk->bhqs", q, k) / np.float32(np.sqrt(qb.shape[-1]))
    steps = x.shape[1]
    causal = np.tril(np.ones((steps, steps), bool))
    scores = jnp.where(causal, scores, np.float32(-1e9))
    mixed = jnp.einsum("bhqs,bshk->bqhk", jax.nn.softmax(scores, axis=-1), v)
    return jnp.einsum("bqhk,hkd->bqd", mixed, ok) + ob


def jax_transformer(jnp, lax, params, tokens):
    import jax

    embedded, positions = params[0], params[1]
    x = embedded[tokens] + positions[:tokens.shape[1]]
    rest = params[2:]
    while len(rest) > 4:  # a block: norm, attention, norm, the two dense layers
        g1, b1, *mha = rest[:10]
        g2, b2, up, up_bias, down, down_bias = rest[10:16]
        x = x + attention(jnp, layer_norm(jnp, x, g1, b1), mha)
        hidden = jax.nn.gelu(layer_norm(jnp, x, g2, b2) @ up + up_bias, approximate=False)
        x = x + hidden @ down + down_bias
        rest = rest[16:]
    gamma, beta, kernel, bias = rest
    return layer_norm(jnp, x, gamma, beta) @ kernel + bias


def jax_run(task, path):
    import jax
    import jax.numpy as jnp
    from jax import lax

    x_host, y_host, _, weights = read_inputs(path)
    x, y = jax.device_put(x_host), jax.device_put(y_host.astype(np.int32))

    def loss_and_hits(params, images, labels):
        logits = jax_forward(task, jnp, lax, params, images)
        log_probabilities = jax.nn.log_softmax(logits, axis=-1)
        picked = jnp.take_along_axis(log_probabilities, labels[..., None], -1)[..., 0]
        hits = (logits.argmax(-1) == labels).astype(jnp.float32)
        return -picked.mean(), hits.mean()

    def train_step(state, x, y, rows):
        params, m, v, t, loss_sum, hit_sum = state
        (loss, hits), grads = jax.value_and_grad(loss_and_hits, has_aux=True)(
            params, x[rows], y[rows])
        t = t + 1.0
        alpha = LEARNING_RATE * jnp.sqrt(1 - BETA_2 ** t) / (1 - BETA_1 ** t)
        m = [a + (g - a) * (1 - BETA_1) for a, g in zip(m, grads)]
        v = [b + (g * g - b) * (1 - BETA_2) for b, g in zip(v, grads)]
        params = [p - alpha * a / (jnp.sqrt(b) + EPSILON) for p, a, b in zip(params, m, v)]
        return (params, m, v, t, loss_sum + loss, hit_sum + hits), loss

    step = jax.jit(train_step, donate_argnums=0)
    params = [jax.device_put(w) for w in weights]
    state = (params, [jnp.zeros_like(p) for p in params],
             [jnp.zeros_like(p) for p in params], jnp.float32(0.0), jnp.float32(0.0),
             jnp.float32(0.0))
    first_rows = jax.device_put(np.arange(BATCH))
    started = time.perf_counter()
    state, loss = step(state, x, y, first_rows)
    losses = [float(loss)]
    first = time.perf_counter() - started
    state, loss = step(state, x, y, first_rows)
    losses.append(float(loss))
    steps = len(x_host) // BATCH

    def epoch(state, seed):
        order = np.random.default_rng(seed).permutation(len(x_host))[:steps * BATCH]
        batches = jax.device_put(order.reshape(steps, BATCH))
        state = state[:4] + (jnp.float32(0.0), jnp.float32(0.0))
        for i in range(steps):
            state, _ = step(state, x, y, batches[i])
        jax.block_until_ready(state)
        return state

    state = epoch(state, 0)  # warm up
    seconds = []
    for seed in range(1, EPOCHS + 1):
        start = time.perf_counter()
        state = epoch(state, seed)
        seconds.append(time.perf_counter() - start)
    return {"losses": losses, "first": first, "seconds": seconds,
            "accuracy": float(state[5]) / steps}


LIBRARIES = {"jitflow": jitflow_run, "JAX": jax_run}


# --- processes -----------------------------------------------------------------------------

def pin(threads):
    """Hold this process to `threads` CPUs, before jitflow or JAX start their pools."""
    allowed = sorted(os.sched_getaffinity(0))
    if threads < len(allowed):
        os.sched_setaffinity(0, allowed[:threads])
    os.environ["JITFLOW_THREADS"] = str(threads)


def run_child(library, task, path, threads):
    pin(threads)
    os.environ["JITFLOW_CACHE"] = "0"
    os.environ["JAX_ENABLE_COMPILATION_CACHE"] = "false"
    sys.path.insert(0, EXAMPLES)
    print(json.dumps(LIBRARIES[library](task, path)))


def run_fresh(library, task, path, threads):
    command = [sys.executable, __file__, "--child", library, task, path,
               "--threads", str(threads)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{library} on {task} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(task, rounds, threads, directory):
    path = os.path.join(directory, f"{task}.npz")
    write_inputs(task, path)
    size = len(np.load(path)["y"])
    runs = {name: [] for name in LIBRARIES}
    for _ in range(rounds):  # alternating, so that drifts in speed touch both
        for name in LIBRARIES:
            runs[name].append(run_fresh(name, task, path, threads))
    check_same_losses(task, runs)
    rates = {name: [size / statistics.median(run["seconds"]) for run in records]
             for name, records in runs.items()}
    ratios = [a / b for a, b in zip(rates["jitflow"], rates["JAX"])]
    print(f"{task}: {size} examples per epoch, batches of {BATCH}")
    for name, values in rates.items():
        first = statistics.median(run["first"] for run in runs[name])
        accuracy = statistics.median(run["accuracy"] for run in runs[name])
        print(f"  {name:8} {statistics.median(values):9,.0f} samples/s "
              f"(rounds {min(values):,.0f} - {max(values):,.0f}); first step "
              f"{first:5.2f} s; accuracy after {EPOCHS + 1} epochs {accuracy:.3f}")
    print(f"  jitflow / JAX, samples/s: {statistics.median(ratios):.2f} "
          f"(rounds {min(ratios):.2f} - {max(ratios):.2f})")


def check_same_losses(task, runs):
    """Every process's first two losses equal jitflow's (the same computation)."""
    reference = runs["jitflow"][0]["losses"]
    for name, records in runs.items():
        for record in records:
            errors = [abs(a - b) / abs(b) for a, b in zip(record["losses"], reference)]
            if max(errors) > LOSS_RTOL:
                raise AssertionError(f"{task}: {name}'s first losses {record['losses']} "
                                     f"differ from jitflow's {reference}")
    print(f"{task}: first two losses {reference[0]:.6f}, {reference[1]:.6f} "
          f"(every process agrees within {LOSS_RTOL:g})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("rounds", nargs="?", type=int, default=3)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    arguments = parser.parse_args()
    sys.path.insert(0, EXAMPLES)
    import jitflow
    from peers import cpu_name

    torch = "importable, not timed" if importlib.util.find_spec("torch") else \
        "not installed"
    # JAX is not imported here: its idle threads would spin beside the measured process.
    print(f"CPU: {cpu_name()}; {arguments.threads} thread(s) each (JITFLOW_THREADS and "
          f"the CPU affinity); jitflow backend {jitflow.config.backend}; jax "
          f"{importlib.metadata.version('jax')}; torch {torch}; {arguments.rounds} fresh "
          f"processes each, {EPOCHS} timed epochs per process")
    with tempfile.TemporaryDirectory() as directory:
        for task in ("digits", "transformer"):
            measure(task, arguments.rounds, arguments.threads, directory)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _, _, library, task, path, _, threads = sys.argv
        run_child(library, task, path, int(threads))
    else:
        main()
