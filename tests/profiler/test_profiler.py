"""jitflow.profile(): per-call and per-kernel times of a small digits training step, the
summary naming the kernels native code runs, and a Chrome trace that loads."""
import inspect
import json
import os

import numpy as np
import pytest

import jitflow
from jitflow import nn
from jitflow.datasets import load_digits
from jitflow.executable import PROFILERS
from jitflow.ir.primitive import VIEW_OPS
from jitflow.optim import Adam
from jitflow.profiler import describe

CALLS = 3


def _small_digits_step():
    """The digits convnet's training step (examples/digits_convnet.py), smaller."""
    rng = np.random.default_rng(0)
    model = nn.Sequential([nn.Conv2D(4, 3, padding="same", activation="relu", rng=rng),
                           nn.MaxPool2D(2), nn.Flatten(), nn.Dense(10, rng=rng)])
    optimizer = Adam(1e-3)

    def train_step(images, labels):
        with jitflow.GradientTape() as tape:
            logits = model(images, training=True)
            loss = nn.losses.sparse_softmax_cross_entropy_from_logits(labels, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    (images, labels), _ = load_digits()
    return jitflow.function(train_step), images[:32], labels[:32]


@pytest.fixture(scope="module")
def profiled():
    step, images, labels = _small_digits_step()
    with jitflow.profile() as prof:
        losses = [float(step(images, labels)) for _ in range(CALLS)]
    return prof, step, losses, (images, labels)


def test_each_call_is_recorded_with_every_kernel_of_its_native_code(profiled):
    prof, step, losses, _ = profiled
    assert len(prof.calls) == CALLS and losses[-1] < losses[0]  # it trained
    executable = prof.calls[0].executable
    graph = executable.profiled_native().graph
    timed = [i for i, node in enumerate(graph.nodes) if node.op not in VIEW_OPS]
    for call in prof.calls:
        assert call.executable is executable
        assert sorted(call.node_times) == timed
        assert all(runs == 1 for _, runs in call.node_times.values())
        # the kernels run inside the call: their times add up to no more than it took
        assert 0 < sum(ns for ns, _ in call.node_times.values()) * 1e-9 <= call.seconds


def test_the_summary_names_the_real_kernels_with_their_rates(profiled):
    prof, *_ = profiled
    executable = prof.calls[0].executable
    graph = executable.profiled_native().graph
    kernels = prof.kernels()
    assert {k.kernel for k in kernels} == {describe(n, executable.locations)
                                          for n in graph.nodes if n.op not in VIEW_OPS}
    assert all(k.calls == CALLS for k in kernels)
    seconds = [k.seconds for k in kernels]
    assert seconds == sorted(seconds, reverse=True)
    kinds = {k.kernel.kind for k in kernels}
    assert {"matmul", "fused region"} <= kinds
    text = prof.summary(top=8, print_fn=None)
    assert "train_step" in text and "GFLOP/s" in text and "GB/s" in text
    for kernel in kernels[:8]:
        assert kernel.kernel.name[:40] in text


def test_kernels_name_the_lines_of_the_step_that_made_them(profiled):
    prof, step, *_ = profiled
    source, first = inspect.getsourcelines(step.fn)
    step_lines = {first + i: text.strip() for i, text in enumerate(source)}
    found = {(os.path.basename(f), line)
             for k in prof.kernels() for f, line in k.kernel.lines}
    assert {name for name, _ in found} == {"test_profiler.py"}
    assert all(step_lines[line].startswith(("logits =", "loss =", "grads =", "optimizer."))
               for _, line in found)
    forward = next(line for line, text in step_lines.items() if text.startswith("logits ="))
    assert (os.path.basename(__file__), forward) in found
    assert "test_profiler.py:" in prof.summary(top=40, print_fn=None)


def test_trace_optimize_and_build_times_are_recorded(profiled):
    prof, *_ = profiled
    (function,) = prof.functions()
    assert function.calls == CALLS and function.traces == 1
    assert function.trace_seconds > 0 and function.optimize_seconds > 0
    assert function.build_seconds > 0


def test_the_chrome_trace_loads_with_kernels_inside_their_calls(profiled, tmp_path):
    prof, *_ = profiled
    with open(prof.export_chrome_trace(tmp_path / "trace.json")) as file:
        events = json.load(file)["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    calls = [e for e in complete if e["cat"] == "call"]
    assert len(calls) == CALLS
    for call in calls:
        inside = [e for e in complete if e["tid"] == call["tid"] and e["cat"] != "call"
                  and call["ts"] <= e["ts"] < call["ts"] + call["dur"]]
        assert len(inside) == len(prof.calls[0].node_times)
        assert max(e["ts"] + e["dur"] for e in inside) <= call["ts"] + call["dur"] + 1e-3
    compiles = sorted(e["name"].split()[0] for e in complete if e["cat"] == "compile")
    assert compiles == ["build", "optimize", "trace"]
    assert all(isinstance(e["pid"], int) and e["dur"] >= 0 for e in complete)


def test_nothing_is_recorded_outside_the_block(profiled):
    prof, step, _, (images, labels) = profiled
    assert PROFILERS == []
    step(images, labels)
    assert len(prof.calls) == CALLS


def test_a_single_product_is_the_whole_call():
    product = jitflow.function(lambda a, b: a @ b)
    a = np.ones((192, 192), np.float32)
    product(a, a)
    with jitflow.profile() as prof:
        for _ in range(5):
            product(a, a)
    (kernel,) = prof.kernels()
    assert kernel.kernel.kind == "matmul" and kernel.kernel.flops == 2 * 192 ** 3
    assert kernel.kernel.bytes == 3 * 192 * 192 * 4
    assert kernel.seconds <= sum(call.seconds for call in prof.calls)
    assert prof.functions()[0].traces == 0  # compiled before the block


def test_the_kernels_of_a_loop_body_count_every_iteration(tmp_path):
    @jitflow.function
    def powers(x):
        def body(carry):
            i, v = carry
            return i + 1, np.tanh(v @ v) * 0.5
        return jitflow.while_loop(lambda c: c[0] < 4, body, (0, x))[1].sum()
    x = np.random.default_rng(0).random((64, 64)).astype(np.float32)
    with jitflow.profile() as prof:
        for _ in range(2):
            powers(x)
    kernels = {k.kernel.name.split(" ")[0]: k for k in prof.kernels()}
    assert kernels["while"].kernel.kind == "control flow" and kernels["while"].runs == 2
    bodies = [k for k in prof.kernels() if k.kernel.body == "body"]
    product = next(k for k in bodies if k.kernel.kind == "matmul")
    assert product.calls == 2 and product.runs == 2 * 4
    assert product.kernel.rate(product.mean_seconds).endswith("GFLOP/s")
    conditions = [k for k in prof.kernels() if k.kernel.body == "cond"]
    assert conditions and all(k.runs == 2 * 5 for k in conditions)
    for call in prof.calls:  # the bodies' kernels run inside the while node
        (loop_ns, _), = [t for i, t in call.node_times.items()
                         if prof.kernel_of(call.executable, i).kind == "control flow"]
        assert sum(ns for ns, _ in call.body_times.values()) <= loop_ns
    with open(prof.export_chrome_trace(tmp_path / "loop.json")) as file:
        events = [e for e in json.load(file)["traceEvents"] if e["ph"] == "X"]
    for loop in (e for e in events if e["cat"] == "control flow"):
        inside = [e for e in events if e["cat"] in ("in a body", "in a cond")
                  and loop["ts"] <= e["ts"] <= loop["ts"] + loop["dur"]]
        assert len(inside) == len(prof.calls[0].body_times)
