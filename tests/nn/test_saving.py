"""model.save / nn.load_model, save_weights / load_weights: architectures come back
from configs (no code in the file), weights by name, and training resumed in a fresh
process goes on bit for bit as the run that never stopped."""
import json
import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import jitflow
from fidelity import assert_same
from jitflow import nn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RNG = np.random.default_rng(0)
SEQUENCES = RNG.standard_normal((20, 5, 3)).astype(np.float32)
LABELS = RNG.integers(0, 3, 20)


@pytest.fixture
def native_only():
    """Every call runs native code: the first call of a signature, which otherwise
    runs on the interpreter while native code is built, rounds the same as the rest."""
    saved = jitflow.config.background_compile
    jitflow.config.background_compile = False
    yield
    jitflow.config.background_compile = saved


def sequence_model():
    inputs = nn.Input((5, 3))
    x = nn.Conv1D(4, 2, padding="causal", activation="relu")(inputs)
    x = nn.LSTM(6, return_sequences=True)(x)
    x = nn.MultiHeadAttention(2, 3)(x, x, use_causal_mask=True)
    x = nn.Dropout(0.25, seed=3)(nn.GlobalAveragePooling1D()(x))
    model = nn.Model(inputs, nn.Dense(3)(x))
    model.compile(jitflow.optim.Adam(0.01),
                  nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


RESUME = """
import json, sys
import numpy as np
import jitflow
from jitflow import nn
jitflow.config.background_compile = False
data = np.load(sys.argv[1])
model = nn.load_model(sys.argv[2])
history = model.fit(data["x"], data["y"], batch_size=8, epochs=4, initial_epoch=2,
                    verbose=0)
model.save_weights(sys.argv[3])
print(json.dumps(history.history))
"""


def test_training_resumed_in_a_fresh_process_matches_the_run_that_never_stopped(
        tmp_path, native_only):
    whole = sequence_model()
    start = whole.get_weights()
    uninterrupted = whole.fit(SEQUENCES, LABELS, batch_size=8, epochs=4, verbose=0)
    first = sequence_model()
    first.set_weights(start)
    first.fit(SEQUENCES, LABELS, batch_size=8, epochs=2, verbose=0)
    first.save(tmp_path / "model.jitflow")
    np.savez(tmp_path / "data.npz", x=SEQUENCES, y=LABELS)
    result = subprocess.run(
        [sys.executable, "-c", RESUME, str(tmp_path / "data.npz"),
         str(tmp_path / "model.jitflow"), str(tmp_path / "resumed.safetensors")],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT},
        timeout=300)
    assert result.returncode == 0, result.stderr
    resumed = json.loads(result.stdout.strip().splitlines()[-1])
    for name, values in resumed.items():
        assert values == uninterrupted.history[name][2:], name
    whole.save_weights(tmp_path / "whole.safetensors")
    from safetensors.numpy import load_file
    expected = load_file(str(tmp_path / "whole.safetensors"))
    got = load_file(str(tmp_path / "resumed.safetensors"))
    # The same weights under the other model's layer names, in the same order.
    for (name, want), value in zip(sorted(expected.items()), [
            got[n] for n in sorted(got)]):
        np.testing.assert_array_equal(value, want, err_msg=name)


def test_a_functional_model_comes_back_with_its_layers_calls_and_options(tmp_path):
    text, image = nn.Input((4,), dtype="int32", name="text"), nn.Input((6, 6, 2),
                                                                       name="image")
    shared = nn.Dense(5, activation="gelu", name="shared")
    embedded = nn.Embedding(10, 3)(text)
    sequence = nn.Bidirectional(nn.GRU(3, return_sequences=True), merge_mode="sum")(embedded)
    attended = nn.MultiHeadAttention(1, 2, output_shape=4)(sequence, sequence,
                                                           use_causal_mask=True)
    pooled = nn.GlobalMaxPooling2D()(nn.Conv2DTranspose(2, 3, strides=2)(image))
    inner = nn.Sequential([nn.Dense(4), nn.Activation("relu")], name="inner")
    from_text = shared(nn.Flatten()(attended))  # the shared layer called twice
    from_image = shared(nn.Dense(16)(pooled))
    joined = nn.Concatenate()([from_text, from_image, inner(pooled)])
    outputs = {"score": nn.Dense(1, name="score")(joined),
               "twice": nn.Add(name="twice")([from_text, from_image])}
    model = nn.Model({"text": text, "image": image}, outputs, name="several")
    x = {"text": RNG.integers(0, 10, (3, 4)),
         "image": RNG.standard_normal((3, 6, 6, 2)).astype(np.float32)}
    before = model.predict(x, verbose=0)
    model.save(tmp_path / "several.jitflow")
    loaded = nn.load_model(tmp_path / "several.jitflow")
    after = loaded.predict(x, verbose=0)
    for key in before:
        np.testing.assert_array_equal(after[key], before[key])
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in model.layers]
    assert [w.name for w in loaded.weights] == [w.name for w in model.weights]
    lines = []
    loaded.summary(print_fn=lines.append)
    expected = []
    model.summary(print_fn=expected.append)
    assert lines == expected
    with zipfile.ZipFile(tmp_path / "several.jitflow") as archive:
        assert sorted(archive.namelist()) == ["config.json", "state.safetensors",
                                              "weights.safetensors"]
        config = json.loads(archive.read("config.json"))
    assert config["compile"] is None
    assert {entry["class_name"] for entry in config["model"]["config"]["layers"]} >= {
        "Bidirectional", "MultiHeadAttention", "Sequential", "Embedding"}


def test_a_sequential_model_and_its_compile_arguments_come_back(tmp_path):
    model = nn.Sequential([nn.Input((3,)), nn.Dense(4, activation="tanh"),
                           nn.BatchNormalization(), nn.Dense(2)])
    model.compile(jitflow.optim.SGD(0.1, momentum=0.5), loss="mse",
                  metrics=["mae", nn.metrics.BinaryAccuracy(threshold=0.2)],
                  loss_weights=None)
    x, y = RNG.standard_normal((8, 3)), RNG.standard_normal((8, 2))
    model.fit(x, y, epochs=1, verbose=0)
    model.save(tmp_path / "sequential.jitflow")
    loaded = nn.load_model(tmp_path / "sequential.jitflow")
    assert type(loaded) is nn.Sequential
    assert_same(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    assert type(loaded.optimizer) is jitflow.optim.SGD and loaded.optimizer.momentum == 0.5
    assert int(loaded.optimizer.iterations.numpy()) == 1
    results = loaded.evaluate(x, y, verbose=0, return_dict=True)
    assert list(results) == ["loss", "mae", "binary_accuracy"]
    assert results == model.evaluate(x, y, verbose=0, return_dict=True)
    uncompiled = nn.load_model(tmp_path / "sequential.jitflow", compile=False)
    assert uncompiled._config is None


@nn.register_layer(name="tests>Scale")
class Scale(nn.Layer):
    def __init__(self, factor, name=None):
        super().__init__(name)
        self.factor = factor

    def build(self, input_shape, dtype):
        self.offset = self.add_weight("offset", input_shape[-1:], "ones", dtype)

    def call(self, x, training=False):
        return x * self.factor + self.offset

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class Unregistered(Scale):
    pass


def test_registered_layers_load_and_code_is_never_saved(tmp_path):
    inputs = nn.Input((3,))
    model = nn.Model(inputs, Scale(2.0)(inputs))
    model.save(tmp_path / "custom.jitflow")
    loaded = nn.load_model(tmp_path / "custom.jitflow")
    assert type(loaded.layers[1]) is Scale and loaded.layers[1].factor == 2.0
    with pytest.raises(ValueError, match="Unregistered is not registered"):
        nn.Model(inputs, Unregistered(1.0)(inputs)).save(tmp_path / "no.jitflow")
    with pytest.raises(ValueError, match="a saved model holds no Python code"):
        nn.Model(inputs, nn.Lambda(lambda v: v * 2)(inputs)).save(tmp_path / "no.jitflow")
    with pytest.raises(ValueError, match="activation .* is a Python function"):
        nn.Model(inputs, nn.Dense(2, activation=lambda v: v)(inputs)).save(
            tmp_path / "no.jitflow")
    with pytest.raises(ValueError, match="'dense' is a jitflow layer's name|jitflow layer"):
        nn.register_layer(name="Dense")(Unregistered)


def test_weights_save_and_load_by_name_in_safetensors_and_npz(tmp_path):
    inputs = nn.Input((3,))
    model = nn.Model(inputs, nn.Dense(2, name="out")(nn.Dense(4, name="hidden")(inputs)))
    for suffix in ("safetensors", "npz"):
        path = tmp_path / f"weights.{suffix}"
        model.save_weights(path)
        twin = nn.Model(inputs, nn.Dense(2, name="out")(nn.Dense(4, name="hidden")(inputs)))
        twin.load_weights(path)
        for a, b in zip(twin.get_weights(), model.get_weights(), strict=True):
            np.testing.assert_array_equal(a, b)
    from safetensors.numpy import load_file
    assert sorted(load_file(str(tmp_path / "weights.safetensors"))) == [
        "hidden/bias", "hidden/kernel", "out/bias", "out/kernel"]
    other = nn.Model(inputs, nn.Dense(2, name="other")(inputs))
    with pytest.raises(ValueError, match=r"weights missing from the file \['other/bias'"):
        other.load_weights(tmp_path / "weights.safetensors")


def test_model_checkpoint_can_save_the_whole_model(tmp_path):
    model = sequence_model()
    path = tmp_path / "epoch{epoch}.jitflow"
    model.fit(SEQUENCES, LABELS, epochs=1, verbose=0, callbacks=[
        nn.callbacks.ModelCheckpoint(str(path), monitor="loss", save_weights_only=False)])
    loaded = nn.load_model(tmp_path / "epoch1.jitflow")
    assert_same(loaded.predict(SEQUENCES, verbose=0), model.predict(SEQUENCES, verbose=0))


def test_a_file_of_another_kind_is_refused(tmp_path):
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as archive:
        archive.writestr("config.json", json.dumps({"format": "something else"}))
    with pytest.raises(ValueError, match="is not a jitflow.nn model file"):
        nn.load_model(tmp_path / "other.zip")


def test_saving_is_described_in_a_form_that_needs_no_pickle():
    source = textwrap.dedent(open(os.path.join(ROOT, "jitflow", "nn", "model_file.py")).read())
    assert "pickle" not in source.replace("no pickle", "")


@nn.register_layer(name="tests>TwoLayers")
class TwoLayers(nn.Model):
    """A subclassed model: its layers are attributes, named anew when it is made."""

    def __init__(self, hidden, name=None):
        super().__init__(name=name)
        self.hidden = hidden
        self.first, self.dropout = nn.Dense(hidden, activation="relu"), nn.Dropout(0.5)
        self.second = nn.Dense(2)

    def call(self, x, training=False):
        return self.second(self.dropout(self.first(x), training=training))

    def get_config(self):
        return {"name": self.name, "hidden": self.hidden}


def test_a_registered_subclassed_model_resumes_with_its_weights_matched_in_order(tmp_path):
    x, y = RNG.standard_normal((8, 3)).astype(np.float32), np.ones((8, 2), np.float32)
    model = TwoLayers(5)
    model.compile("adam", "mse")
    model.fit(x, y, batch_size=4, verbose=0)
    model.save(tmp_path / "subclassed.jitflow")
    loaded = nn.load_model(tmp_path / "subclassed.jitflow")
    assert type(loaded) is TwoLayers and loaded.hidden == 5
    assert [w.name for w in loaded.weights] != [w.name for w in model.weights]
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    assert int(loaded.dropout.generator.draws.numpy()) == 2
    continued = model.fit(x, y, batch_size=4, epochs=2, verbose=0).history["loss"]
    assert loaded.fit(x, y, batch_size=4, epochs=2, verbose=0).history["loss"] == \
        pytest.approx(continued, rel=1e-6)
    with pytest.raises(NotImplementedError, match="defines get_config"):
        nn.Model.get_config(model)
