"""ONNX models run by jitflow against ONNX Runtime (CPU, default session options):

- the digits convnet of examples/digits_convnet.py (untrained weights) exported with
  jitflow.onnx.export, run by ONNX Runtime and by jitflow.onnx.load, beside the
  @jitflow.function it was exported from;
- a convnet written in ONNX's own operators (Conv, BatchNormalization, Relu, MaxPool,
  GlobalAveragePool, Gemm, Softmax on NCHW images), run by both.

Batches of calls take turns; it prints the median time per call, and each one's time
over the first one's.

    python benchmarks/bench_onnx.py
"""
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))

ROUNDS, BATCH_TIME = 15, 0.05


def contenders(batch):
    import onnxruntime

    import jitflow
    import jitflow.onnx
    from digits_convnet import build_model

    model = build_model()
    images = np.random.default_rng(0).random((batch, 8, 8, 1), dtype=np.float32)
    predict = jitflow.function(lambda images: model(images))
    path = os.path.join(tempfile.mkdtemp(), "digits.onnx")
    jitflow.onnx.export(predict, path, images)
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    loaded = jitflow.onnx.load(path)
    runners = {"jitflow.function": lambda: predict(images),
               "onnxruntime": lambda: session.run(None, {name: images})[0],
               "jitflow.onnx.load": lambda: loaded(images)}
    expected = np.asarray(predict(images))
    for label, run in runners.items():
        assert np.allclose(np.asarray(run()), expected, rtol=1e-5, atol=1e-6), label
    return runners


def onnx_convnet(batch):
    """Conv(16) BN Relu MaxPool Conv(32) Relu GlobalAveragePool Gemm Softmax on 28x28."""
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    import jitflow.onnx

    rng = np.random.default_rng(1)
    weights = {"k1": rng.normal(size=(16, 1, 3, 3)), "b1": rng.normal(size=16),
               "s": rng.random(16) + 0.5, "t": rng.normal(size=16),
               "m": rng.normal(size=16), "v": rng.random(16) + 0.5,
               "k2": rng.normal(size=(32, 16, 3, 3)) * 0.1, "b2": rng.normal(size=32),
               "w": rng.normal(size=(10, 32)), "c": rng.normal(size=10)}
    nodes = [helper.make_node("Conv", ["x", "k1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c1", "s", "t", "m", "v"], ["n1"]),
             helper.make_node("Relu", ["n1"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p1", "k2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "w", "c"], ["logits"], transB=1),
             helper.make_node("Softmax", ["logits"], ["y"])]
    graph = helper.make_graph(
        nodes, "convnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                         ["n", 1, 28, 28])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 10])],
        initializer=[numpy_helper.from_array(v.astype(np.float32), k)
                     for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    images = rng.random((batch, 1, 28, 28), dtype=np.float32)
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    loaded = jitflow.onnx.load(model)
    runners = {"onnxruntime": lambda: session.run(None, {"x": images})[0],
               "jitflow.onnx.load": lambda: loaded(images)}
    assert np.allclose(np.asarray(loaded(images)), runners["onnxruntime"](), rtol=1e-4,
                       atol=1e-6)
    return runners


def per_call(run):
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < BATCH_TIME:
        run()
        calls += 1
    return (time.perf_counter() - start) / calls


def main():
    for batch in (1, 64, 512):
        report(f"digits convnet exported by jitflow, batch {batch}", contenders(batch))
    for batch in (1, 64):
        report(f"ONNX convnet (Conv, BatchNormalization, ...), 28x28, batch {batch}",
               onnx_convnet(batch))


def report(title, runners):
    times = {label: [] for label in runners}
    for _ in range(ROUNDS):
        for label, run in runners.items():
            per_call(run)  # lead-in
            times[label].append(per_call(run))
    base = statistics.median(next(iter(times.values())))
    print(f"{title}:")
    for label, measured in times.items():
        median = statistics.median(measured)
        print(f"  {label:18s} {median * 1e6:9.1f} us   x{median / base:5.2f}")


if __name__ == "__main__":
    main()
