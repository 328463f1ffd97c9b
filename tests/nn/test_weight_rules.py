"""Kernel regularizers and constraints: penalties added to fit's loss (and its
gradients), constraints applied after each step inside the compiled step, both saved
by name or as jitflow's objects."""
import numpy as np
import pytest

from fidelity import assert_same
from jitflow import nn
from jitflow.optim import SGD

RNG = np.random.default_rng(0)
X = RNG.standard_normal((16, 3))
Y = RNG.standard_normal((16, 2))


def dense_model(**rules):
    inputs = nn.Input((3,), dtype="float64")
    model = nn.Model(inputs, nn.Dense(2, **rules)(inputs))
    model.compile(SGD(0.1), "mse")
    return model


def test_penalties_join_the_loss_and_its_gradient():
    model = dense_model(kernel_regularizer=nn.regularizers.L2(0.5), bias_regularizer="l1")
    kernel, bias = (w.numpy() for w in model.weights)
    penalty = 0.5 * np.sum(kernel ** 2) + 0.01 * np.sum(np.abs(bias))
    [value] = [float(p) for p in [sum(model.losses)]]
    assert value == pytest.approx(penalty, rel=1e-12)
    mse = np.mean(np.mean((X @ kernel + bias - Y) ** 2, axis=1))
    assert model.evaluate(X, Y, verbose=0, batch_size=16) == pytest.approx(mse + penalty,
                                                                            rel=1e-12)
    model.train_on_batch(X, Y)
    error = X @ kernel + bias - Y
    expected = kernel - 0.1 * (X.T @ error * 2 / error.size + 2 * 0.5 * kernel)
    assert_same(model.weights[0].numpy(), expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("constraint, check", [
    (nn.constraints.NonNeg(), lambda w: (w >= 0).all()),
    (nn.constraints.MaxNorm(0.1), lambda w: (np.linalg.norm(w, axis=0) <= 0.1 + 1e-9).all()),
    ("unit_norm", lambda w: np.allclose(np.linalg.norm(w, axis=0), 1, atol=1e-6)),
])
def test_constraints_hold_after_every_step(constraint, check):
    model = dense_model(kernel_constraint=constraint)
    model.fit(X, Y, batch_size=4, epochs=2, verbose=0)
    assert check(model.weights[0].numpy())


def test_max_norm_scales_only_the_long_columns():
    weight = np.array([[3.0, 0.1], [4.0, 0.1]])
    got = np.asarray(nn.constraints.MaxNorm(2.0)(weight))
    assert_same(got, np.array([[1.2, 0.1], [1.6, 0.1]]), rtol=1e-6)


def test_rules_are_saved_and_a_function_is_refused(tmp_path):
    inputs = nn.Input((4, 3))
    outputs = nn.LSTM(2, kernel_regularizer=nn.regularizers.L1L2(0.1, 0.2),
                      recurrent_constraint="max_norm")(inputs)
    model = nn.Model(inputs, nn.Dense(1, kernel_constraint=nn.constraints.MinMaxNorm(
        0.5, 1.0, rate=0.5))(outputs))
    model.save(tmp_path / "rules.jitflow")
    loaded = nn.load_model(tmp_path / "rules.jitflow")
    lstm, dense = loaded.layers[1], loaded.layers[2]
    assert [type(r).__name__ for _, r in lstm._penalties] == ["L1L2"]
    assert (lstm._penalties[0][1].l1, lstm._penalties[0][1].l2) == (0.1, 0.2)
    assert [w.name for w, _ in lstm._constraints] == [f"{lstm.name}/recurrent_kernel"]
    assert dense._constraints[0][1].rate == 0.5
    assert float(sum(loaded.losses)) == pytest.approx(float(sum(model.losses)), rel=1e-7)
    with pytest.raises(ValueError, match="kernel: .* is a Python function"):
        nn.Model(inputs, nn.Dense(1, kernel_regularizer=lambda w: 0.0)(
            nn.Flatten()(inputs))).save(tmp_path / "no.jitflow")
    with pytest.raises(ValueError, match="unknown constraint 'max'"):
        nn.Dense(1, kernel_constraint="max")
