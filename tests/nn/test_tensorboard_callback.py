"""nn.callbacks.TensorBoard: fit's curves, weight histograms and the model's graph, read
back with tensorboard's EventAccumulator."""
import numpy as np
import pytest

import jitflow.nn as nn
from event_files import accumulator, series


class BatchLogs(nn.callbacks.Callback):
    """The logs of every training step, as fit handed them to callbacks."""

    def __init__(self):
        super().__init__()
        self.logs = []

    def on_train_batch_end(self, batch, logs=None):
        self.logs.append(dict(logs))


def _data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(80, 4)).astype(np.float32)
    return x, (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1)


def _model(name):
    inputs = nn.Input((4,), name=f"{name}_x")
    hidden = nn.Dense(6, activation="relu", rng=np.random.default_rng(1),
                      name=f"{name}_hidden")(inputs)
    model = nn.Model(inputs, nn.Dense(3, rng=np.random.default_rng(2),
                                      name=f"{name}_logits")(hidden), name=name)
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def test_epoch_and_batch_scalars_match_what_fit_reported(tmp_path):
    x, y = _data()
    model, batches = _model("curves"), BatchLogs()
    board = nn.callbacks.TensorBoard(tmp_path, update_freq=2, write_graph=False)
    history = model.fit(x, y, batch_size=16, epochs=3, validation_split=0.25, verbose=0,
                        callbacks=[board, batches])
    train, validation = accumulator(tmp_path / "train"), accumulator(tmp_path / "validation")
    for name in ("loss", "accuracy"):
        assert series(train, f"epoch_{name}") == [
            (epoch, np.float32(value)) for epoch, value in enumerate(history.history[name])]
        assert series(validation, f"epoch_{name}") == [
            (epoch, np.float32(value))
            for epoch, value in enumerate(history.history[f"val_{name}"])]
    assert series(train, "epoch_learning_rate") == [(epoch, np.float32(1e-3))
                                                    for epoch in range(3)]
    steps = len(batches.logs)  # 3 epochs of 60 examples in batches of 16
    assert steps == 12
    assert series(train, "batch_loss") == [
        (step, np.float32(batches.logs[step - 1]["loss"])) for step in range(2, steps + 1, 2)]


def test_a_second_fit_continues_the_step_count(tmp_path):
    x, y = _data()
    model = _model("resumed")
    for epochs, initial in ((1, 0), (2, 1)):
        model.fit(x, y, batch_size=20, epochs=epochs, initial_epoch=initial, verbose=0,
                  callbacks=[nn.callbacks.TensorBoard(tmp_path / str(initial),
                                                      update_freq="batch",
                                                      write_graph=False)])
    first = [step for step, _ in series(accumulator(tmp_path / "0" / "train"), "batch_loss")]
    second = [step for step, _ in series(accumulator(tmp_path / "1" / "train"), "batch_loss")]
    assert first == [1, 2, 3, 4] and second == [5, 6, 7, 8]
    assert [e for e, _ in series(accumulator(tmp_path / "1" / "train"), "epoch_loss")] == [1]


def test_weight_histograms_every_epoch_hold_every_weight(tmp_path):
    x, y = _data()
    model = _model("weights")
    model.fit(x, y, batch_size=40, epochs=2, verbose=0,
              callbacks=[nn.callbacks.TensorBoard(tmp_path, histogram_freq=1,
                                                  write_graph=False)])
    found = accumulator(tmp_path / "train")
    for layer in model.layers:
        for weight in layer.weights:
            (epoch0, _), (epoch1, buckets) = series(found, weight.name)
            assert (epoch0, epoch1) == (0, 1)
            values = weight.numpy()
            assert buckets[:, 2].sum() == values.size
            assert buckets[0, 0] == values.min() and buckets[-1, 1] == values.max()


def test_the_model_graph_has_a_scope_per_layer_with_its_operations(tmp_path):
    x, y = _data()
    model = _model("drawn")
    model.fit(x, y, batch_size=40, epochs=1, verbose=0,
              callbacks=[nn.callbacks.TensorBoard(tmp_path)])
    nodes = {node.name: node for node in accumulator(tmp_path / "train").Graph().node}
    scopes = {name.partition("/")[0] for name in nodes if "/" in name}
    assert scopes == {"drawn_hidden", "drawn_logits"}
    assert nodes["drawn_hidden/kernel"].op == "Variable"
    assert "drawn_x" in nodes["drawn_hidden/matmul"].input
    assert "drawn_hidden/kernel" in nodes["drawn_hidden/matmul"].input
    logits = [n for n in nodes.values() if n.op == "Output"]
    assert len(logits) == 1
    shape = [d.size for d in logits[0].attr["_output_shapes"].list.shape[0].dim]
    assert shape == [-1, 3]  # the batch dimension is unknown


def test_a_sequential_model_graph_too(tmp_path):
    model = nn.Sequential([nn.Input((4,)), nn.Dense(2, name="seq_dense")], name="seq")
    model.compile("sgd", "mse")
    x, _ = _data()
    model.fit(x, np.zeros((80, 2), np.float32), batch_size=40, verbose=0,
              callbacks=[nn.callbacks.TensorBoard(tmp_path)])
    names = [node.name for node in accumulator(tmp_path / "train").Graph().node]
    assert "seq_dense/matmul" in names and "seq_dense/kernel" in names


@pytest.mark.parametrize("argument, value", [("update_freq", 0), ("update_freq", "step"),
                                             ("histogram_freq", -1)])
def test_bad_settings_are_refused(argument, value):
    with pytest.raises(ValueError, match=f"TensorBoard: {argument}"):
        nn.callbacks.TensorBoard("logs", **{argument: value})


class TwoLayers(nn.Model):
    def __init__(self):
        super().__init__(name="subclassed")
        self.first = nn.Dense(5, activation="tanh", name="sub_first")
        self.second = nn.Dense(2, name="sub_second")

    def call(self, x, training=False):
        return self.second(self.first(x))


def test_a_subclassed_model_graph_is_one_scope(tmp_path):
    model = TwoLayers()
    model.compile("sgd", "mse")
    x, _ = _data()
    model.fit(x, np.zeros((80, 2), np.float32), batch_size=40, verbose=0,
              callbacks=[nn.callbacks.TensorBoard(tmp_path)])
    nodes = accumulator(tmp_path / "train").Graph().node
    assert {node.name.partition("/")[0] for node in nodes if "/" in node.name} == \
        {"subclassed"}
    assert sorted(node.op for node in nodes if node.op in ("matmul", "tanh")) == \
        ["matmul", "matmul", "tanh"]
