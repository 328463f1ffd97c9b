"""compile, fit, evaluate, predict, train_on_batch and test_on_batch: fit against a
hand-written compiled loop (the same numbers), one compile for every batch size, sample
weights, several outputs, validation, the progress line and the errors."""
import numpy as np
import pytest

import jitflow
from fidelity import assert_same
from jitflow import nn
from jitflow.optim import SGD

THIS_FILE = "test_training.py"
RNG = np.random.default_rng(0)
X = RNG.standard_normal((40, 3))
LABELS = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(np.int64)


def make_mlp(seed=1, dtype="float64", batch_norm=False):
    rng = np.random.default_rng(seed)
    inputs = nn.Input((3,), dtype=dtype)
    hidden = nn.Dense(6, activation="tanh", rng=rng)(inputs)
    if batch_norm:
        hidden = nn.BatchNorm()(hidden)
    return nn.Model(inputs, nn.Dense(2, rng=rng)(hidden))


def reference_fit(model, x, labels, batch_size, epochs, learning_rate, sample_weight=None):
    """A hand-written loop: a compiled step of the mean loss, every batch in order; the
    epoch's loss is the mean of the batches' losses weighted by their sizes."""
    optimizer = SGD(learning_rate)
    weights_all = np.ones(len(x)) if sample_weight is None else sample_weight

    @jitflow.function
    def step(x, labels, weights):
        with jitflow.GradientTape() as tape:
            losses = nn.losses.sparse_softmax_cross_entropy_from_logits(
                labels, model(x, training=True), reduction="none")
            loss = (losses * weights).sum() / len(labels)
        variables = model.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss
    history = []
    for _ in range(epochs):
        total = count = 0.0
        for start in range(0, len(x), batch_size):
            rows = slice(start, start + batch_size)
            loss = float(step(x[rows], labels[rows], weights_all[rows]))
            total, count = total + loss * len(labels[rows]), count + len(labels[rows])
        history.append(total / count)
    return history, step


def fit_mlp(sample_weight=None, batch_norm=False):
    model = make_mlp(batch_norm=batch_norm)
    model.compile(SGD(0.1), nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(X, LABELS, batch_size=16, epochs=3, shuffle=False, verbose=0,
                        sample_weight=sample_weight)
    return model, history


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "sample_weight"])
def test_fit_computes_what_a_hand_written_compiled_loop_does(backend, weighted):
    sample_weight = RNG.uniform(0.5, 2.0, len(X)) if weighted else None
    model, history = fit_mlp(sample_weight)
    reference = make_mlp()
    expected, step = reference_fit(reference, X, LABELS, 16, 3, 0.1, sample_weight)
    assert history.history["loss"] == expected  # exactly, the padded batch's too
    for got, want in zip(model.weights, reference.weights, strict=True):
        # Native gradient sums over a padded batch may round differently in the last bit.
        assert_same(got.value, want.value, rtol=1e-14, atol=1e-16)
    # 40 examples in batches of 16: the last batch of 8 is padded, not compiled again.
    assert model._train_function.cache_info().traces == 1
    assert step.cache_info().traces == 2
    assert history.epoch == [0, 1, 2]


def test_batch_statistics_layers_train_their_last_batch_unpadded():
    model, history = fit_mlp(batch_norm=True)
    reference = make_mlp(batch_norm=True)
    expected, _ = reference_fit(reference, X, LABELS, 16, 3, 0.1)
    np.testing.assert_allclose(history.history["loss"], expected, rtol=1e-12)
    for got, want in zip(model.weights, reference.weights, strict=True):
        assert_same(got.value, want.value, rtol=1e-11, atol=1e-13)
    assert model._train_function.cache_info().traces == 2


def numpy_logits(model, x):
    first, second = (layer for layer in model.layers if isinstance(layer, nn.Dense))
    hidden = np.tanh(x @ first.kernel.numpy() + first.bias.numpy())
    return hidden @ second.kernel.numpy() + second.bias.numpy()


def numpy_sparse_crossentropy(labels, logits):
    shifted = logits - logits.max(-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -log_p[np.arange(len(labels)), labels]


def test_evaluate_predict_and_the_batch_methods_against_numpy(backend):
    model = make_mlp(seed=3)
    model.compile("sgd", nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    logits = numpy_logits(model, X)
    losses = numpy_sparse_crossentropy(LABELS, logits)
    accuracy = np.mean(logits.argmax(1) == LABELS)
    loss, acc = model.evaluate(X, LABELS, batch_size=16, verbose=0)
    assert loss == pytest.approx(losses.mean(), rel=1e-13) and acc == accuracy
    assert model.evaluate(X, LABELS, batch_size=16, verbose=0, return_dict=True) == \
        {"loss": loss, "accuracy": acc}
    assert_same(model.predict(X, batch_size=16, verbose=0), logits, rtol=1e-13, atol=1e-15)
    assert model._predict_function.cache_info().traces == 1
    assert model.test_on_batch(X[:5], LABELS[:5])[0] == pytest.approx(losses[:5].mean(),
                                                                       rel=1e-13)
    before = model.weights[0].numpy()
    model.train_on_batch(X[:5], LABELS[:5])
    assert not np.array_equal(before, model.weights[0].numpy())


def test_two_outputs_dict_inputs_and_loss_weights():
    a, b = nn.Input((3,), "float64", name="a"), nn.Input((2,), "float64", name="b")
    rng = np.random.default_rng(4)
    joined = nn.Dense(4, activation="relu", rng=rng)(a)
    value = nn.Dense(1, name="value", rng=rng)(joined)
    klass = nn.Dense(2, name="klass", rng=rng)(nn.Dense(2, rng=rng)(b))
    model = nn.Model([a, b], [value, klass])
    model.compile("adam", loss={"value": "mse",
                                "klass": nn.losses.SparseCategoricalCrossentropy(True)},
                  loss_weights=[0.5, 2.0], metrics=["accuracy"])
    xa, xb, target = X, RNG.standard_normal((40, 2)), RNG.standard_normal((40, 1))
    results = model.evaluate({"a": xa, "b": xb}, {"klass": LABELS, "value": target},
                             verbose=0, return_dict=True)
    predicted_value, logits = model.predict({"b": xb, "a": xa}, verbose=0)
    mse = np.mean((predicted_value - target) ** 2)
    crossentropy = numpy_sparse_crossentropy(LABELS, logits).mean()
    assert results["value_loss"] == pytest.approx(mse, rel=1e-12)
    assert results["klass_loss"] == pytest.approx(crossentropy, rel=1e-12)
    assert results["loss"] == pytest.approx(0.5 * mse + 2.0 * crossentropy, rel=1e-12)
    assert results["klass_accuracy"] == np.mean(logits.argmax(1) == LABELS)
    history = model.fit([xa, xb], [target, LABELS], epochs=2, verbose=0)
    assert set(history.history) == {"loss", "value_loss", "klass_loss", "value_accuracy",
                                    "klass_accuracy"}


def test_validation_split_validates_on_the_last_examples():
    model = make_mlp()
    model.compile(SGD(0.0), nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(X, LABELS, validation_split=0.25, epochs=1, verbose=0)
    assert history.history["val_loss"][0] == pytest.approx(
        model.evaluate(X[30:], LABELS[30:], verbose=0), rel=1e-14)
    assert history.history["loss"][0] == pytest.approx(
        model.evaluate(X[:30], LABELS[:30], verbose=0), rel=1e-14)
    other = model.fit(X[:30], LABELS[:30], validation_data=(X[30:], LABELS[30:]),
                      verbose=0)
    assert other.history["val_loss"] == history.history["val_loss"]


def test_fit_prints_a_progress_line(capsys):
    model = make_mlp()
    model.compile("sgd", nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    model.fit(X, LABELS, batch_size=8, epochs=2, verbose=1)
    out = capsys.readouterr().out
    assert "Epoch 1/2\n" in out and "Epoch 2/2\n" in out
    final = [line.split("\r")[-1] for line in out.splitlines() if "5/5 [" in line]
    assert len(final) == 2
    assert final[0].startswith("5/5 [==============================] - ")
    assert " - loss: " in final[0] and " - accuracy: " in final[0]
    model.fit(X, LABELS, batch_size=8, epochs=1, verbose=2)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Epoch 1/1 - ") and "loss: " in lines[0]


def test_compile_resolves_names():
    from jitflow.nn import metrics
    model = make_mlp()
    for name, cls in [("mse", nn.losses.MeanSquaredError), ("huber", nn.losses.Huber),
                      ("binary_crossentropy", nn.losses.BinaryCrossentropy),
                      ("categorical_crossentropy", nn.losses.CategoricalCrossentropy),
                      ("sparse_categorical_crossentropy",
                       nn.losses.SparseCategoricalCrossentropy)]:
        model.compile("adam", name, metrics=["accuracy", "mae"])
        (_, loss, _, found), = model._config.resolved(1)
        assert type(loss) is cls
        accuracy = {"binary_crossentropy": metrics.BinaryAccuracy,
                    "sparse_categorical_crossentropy": metrics.SparseCategoricalAccuracy}
        assert type(found[0]) is accuracy.get(name, metrics.CategoricalAccuracy)
        assert found[1].name == "mae"
    assert isinstance(model.optimizer, jitflow.optim.Adam)
    model.compile("rmsprop", "mse")
    assert isinstance(model.optimizer, jitflow.optim.RMSprop)


def test_training_errors_are_clear():
    model = make_mlp()
    with pytest.raises(RuntimeError, match=r"call compile\(optimizer, loss, metrics\) "
                                           r"before fit") as error:
        model.fit(X, LABELS)
    assert THIS_FILE in str(error.value)
    with pytest.raises(ValueError, match="unknown optimizer 'adamx'"):
        model.compile("adamx", "mse")
    with pytest.raises(ValueError, match="unknown loss 'msx'"):
        model.compile("adam", "msx")
    with pytest.raises(ValueError, match="unknown metric 'f1'"):
        model.compile("adam", "mse", metrics=["f1"])
    with pytest.raises(ValueError, match=r"compile: loss has no entry for output\(s\) "
                                         r"\['dense_\d+'\]"):
        model.compile("adam", {"nope": "mse"})
    model.compile("adam", nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    with pytest.raises(ValueError, match=r"different numbers of examples \(first axes\): "
                                         r"x \(40, 3\), y \(39,\)"):
        model.fit(X, LABELS[:39])
    with pytest.raises(ValueError, match=r"sample_weight has shape \(3,\)"):
        model.fit(X, LABELS, sample_weight=np.ones(3))
    model.compile("adam", lambda y, p: (p - y) ** 2)
    with pytest.raises(ValueError, match=r"loss <lambda>: gave values of shape \(16, 2\) "
                                         r"for predictions of shape \(16, 2\)"):
        model.fit(X, np.ones((40, 2)), batch_size=16, verbose=0)


def test_a_copy_of_a_compiled_model_trains_like_the_original():
    import copy
    import pickle
    model = make_mlp()
    model.compile(SGD(0.1), nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(X, LABELS, epochs=1, shuffle=False, verbose=0)
    twins = [copy.deepcopy(model), pickle.loads(pickle.dumps(model))]
    expected = model.fit(X, LABELS, epochs=2, verbose=0).history
    for twin in twins:
        assert twin.fit(X, LABELS, epochs=2, verbose=0).history == expected


def test_class_weight_weights_each_example_by_its_class():
    weighted, plain = make_mlp(), make_mlp()
    for model in (weighted, plain):
        model.compile(SGD(0.1), nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    class_weight = {0: 0.25, 1: 3.0}
    a = weighted.fit(X, LABELS, epochs=2, shuffle=False, verbose=0,
                     class_weight=class_weight)
    b = plain.fit(X, LABELS, epochs=2, shuffle=False, verbose=0,
                  sample_weight=np.where(LABELS == 0, 0.25, 3.0))
    assert a.history == b.history
    with pytest.raises(ValueError, match=r"class_weight has no weight for class\(es\) \[1\]"):
        weighted.fit(X, LABELS, verbose=0, class_weight={0: 1.0})


def test_subclassed_and_sequential_models_build_inside_their_first_step():
    class TwoLayers(nn.Model):
        def __init__(self):
            super().__init__()
            rng = np.random.default_rng(1)
            self.hidden = nn.Dense(6, activation="tanh", rng=rng)
            self.out = nn.Dense(2, rng=rng)

        def call(self, x, training=False):
            return self.out(self.hidden(x))
    rng = np.random.default_rng(1)
    sequential = nn.Sequential([nn.Dense(6, activation="tanh", rng=rng),
                                nn.Dense(2, rng=rng)])
    histories = []
    for model in (TwoLayers(), sequential):
        model.compile(SGD(0.1), nn.losses.SparseCategoricalCrossentropy(from_logits=True))
        histories.append(model.fit(X, LABELS, batch_size=16, epochs=3, shuffle=False,
                                   verbose=0).history)
        assert model.count_params() == 3 * 6 + 6 + 6 * 2 + 2
    expected, _ = reference_fit(make_mlp(), X, LABELS, 16, 3, 0.1)
    assert histories[0]["loss"] == histories[1]["loss"] == expected
    assert sequential.output_shape == (None, 2)


class Batches:
    """An iterable of (x, y) batches that starts again each time it is iterated."""

    def __init__(self, x, labels, size):
        self.x, self.labels, self.size = x, labels, size

    def __iter__(self):
        for start in range(0, len(self.x), self.size):
            yield self.x[start:start + self.size], self.labels[start:start + self.size]


def test_fit_and_evaluate_take_an_iterable_of_batches(capsys):
    from_arrays, from_batches = make_mlp(), make_mlp()
    for model in (from_arrays, from_batches):
        model.compile(SGD(0.1), nn.losses.SparseCategoricalCrossentropy(from_logits=True))
    expected = from_arrays.fit(X, LABELS, batch_size=16, epochs=3, shuffle=False,
                               verbose=0).history
    got = from_batches.fit(Batches(X, LABELS, 16), epochs=3, verbose=1).history
    assert got == expected
    assert from_batches._train_function.cache_info().traces == 1  # 16, 16, then 8 padded
    out = capsys.readouterr().out
    assert "3/3 [==============================] - " in out
    assert from_batches.evaluate(Batches(X, LABELS, 16), verbose=0) == \
        from_arrays.evaluate(X, LABELS, batch_size=16, verbose=0)
    with pytest.raises(ValueError, match="x is an iterator, which runs out after one epoch"):
        from_batches.fit(iter(Batches(X, LABELS, 16)), epochs=2, verbose=0)
    with pytest.raises(ValueError, match=r"must be a tuple \(x, y\) or \(x, y, "
                                         r"sample_weight\), got a ndarray"):
        from_batches.fit(iter([X]), verbose=0)
    with pytest.raises(ValueError, match="class_weight and validation_split need x and y"):
        from_batches.fit(Batches(X, LABELS, 16), validation_split=0.5, verbose=0)


def test_a_subclassed_model_with_two_outputs_takes_a_loss_per_output():
    class TwoHeads(nn.Model):
        def __init__(self):
            super().__init__()
            rng = np.random.default_rng(5)
            self.a, self.b = nn.Dense(1, rng=rng), nn.Dense(2, rng=rng)

        def call(self, x, training=False):
            return self.a(x), self.b(x)
    model = TwoHeads()
    model.compile("sgd", ["mse", nn.losses.SparseCategoricalCrossentropy(True)],
                  loss_weights=[1.0, 0.5])
    target = RNG.standard_normal((40, 1))
    results = model.evaluate(X, [target, LABELS], verbose=0, return_dict=True)
    value, logits = model.predict(X, verbose=0)
    mse = np.mean((value - target) ** 2)
    crossentropy = numpy_sparse_crossentropy(LABELS, logits).mean()
    assert results["output_0_loss"] == pytest.approx(mse, rel=1e-12)
    assert results["loss"] == pytest.approx(mse + 0.5 * crossentropy, rel=1e-12)
