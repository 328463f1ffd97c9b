"""Top-k accuracies, Precision, Recall and AUC against NumPy written from their
definitions; their sums accumulate exactly over batches, and compile takes them by
name."""
import numpy as np
import pytest

from jitflow import nn
from jitflow.nn import metrics

RNG = np.random.default_rng(0)
SCORES = RNG.standard_normal((30, 6))
LABELS = RNG.integers(0, 6, 30)
PROBABILITIES = RNG.random((40, 2))
TRUTH = (RNG.random((40, 2)) < PROBABILITIES).astype(np.float32)  # informative scores


@pytest.mark.parametrize("k", [1, 2, 5])
def test_top_k_accuracies_match_numpy(k):
    in_top = np.array([label in np.argsort(row)[-k:] for row, label in zip(SCORES, LABELS)])
    sparse, categorical = metrics.SparseTopKCategoricalAccuracy(k), \
        metrics.TopKCategoricalAccuracy(k)
    for rows in (slice(0, 11), slice(11, None)):
        sparse.update_state(LABELS[rows], SCORES[rows])
        categorical.update_state(np.eye(6)[LABELS[rows]], SCORES[rows])
    assert sparse.result() == categorical.result() == pytest.approx(in_top.mean(), abs=1e-15)


def test_top_k_counts_ties_at_the_boundary_as_in():
    scores = np.array([[0.5, 0.5, 0.1, 0.1]])
    assert metrics.SparseTopKCategoricalAccuracy(1).totals(np.array([1]), scores,
                                                            np.ones(1))[0] == 1


def counts(truth, scores, threshold, weights):
    positive, above = truth.reshape(len(truth), -1) != 0, scores.reshape(len(truth), -1) > threshold
    w = np.broadcast_to(weights[:, None], positive.shape)
    return ((w * (above & positive)).sum(), (w * (above & ~positive)).sum(),
            (w * (~above & ~positive)).sum(), (w * (~above & positive)).sum())


def test_precision_and_recall_match_numpy_with_weights_and_thresholds():
    weights = RNG.random(40)
    tp, fp, _, fn = counts(TRUTH, PROBABILITIES, 0.5, weights)
    precision, recall = metrics.Precision(), metrics.Recall()
    for rows in (slice(0, 13), slice(13, None)):
        precision.update_state(TRUTH[rows], PROBABILITIES[rows], weights[rows])
        recall.update_state(TRUTH[rows], PROBABILITIES[rows], weights[rows])
    assert precision.result() == pytest.approx(tp / (tp + fp), rel=1e-13)
    assert recall.result() == pytest.approx(tp / (tp + fn), rel=1e-13)
    several = metrics.Recall(thresholds=[0.2, 0.7])
    several.update_state(TRUTH, PROBABILITIES)
    expected = [c[0] / (c[0] + c[3]) for c in
                (counts(TRUTH, PROBABILITIES, t, np.ones(40)) for t in (0.2, 0.7))]
    np.testing.assert_allclose(several.result(), expected, rtol=1e-13)
    empty = metrics.Precision(thresholds=0.99)
    empty.update_state(TRUTH, PROBABILITIES * 0)
    assert empty.result() == 0.0  # no positive predicted: 0, not nan


def auc_reference(truth, scores, num_thresholds, curve):
    """The trapezoids under the curve through the points at each threshold, written
    as a loop over the thresholds."""
    thresholds = [-1e-7] + [(i + 1) / (num_thresholds - 1)
                            for i in range(num_thresholds - 2)] + [1 + 1e-7]
    points = []
    for t in thresholds:
        tp, fp, tn, fn = counts(truth, scores, t, np.ones(len(truth)))
        rate = tp / (tp + fn) if tp + fn else 0.0
        if curve == "ROC":
            points.append((fp / (fp + tn) if fp + tn else 0.0, rate))
        else:
            points.append((rate, tp / (tp + fp) if tp + fp else 0.0))
    return sum((x0 - x1) * (y0 + y1) / 2 for (x0, y0), (x1, y1) in zip(points, points[1:]))


def pr_auc_by_quadrature(truth, scores, num_thresholds):
    """The area under precision against recall where, between two thresholds, the
    true positives grow linearly with the predicted positives p: precision(p) =
    tp(p) / p, recall(p) = tp(p) / positives; integrated numerically (midpoints)."""
    thresholds = [-1e-7] + [(i + 1) / (num_thresholds - 1)
                            for i in range(num_thresholds - 2)] + [1 + 1e-7]
    table = [counts(truth, scores, t, np.ones(len(truth))) for t in thresholds]
    positives = table[0][0] + table[0][3]
    area = 0.0
    for (tp0, fp0, _, _), (tp1, fp1, _, _) in zip(table, table[1:]):
        p0, p1 = tp0 + fp0, tp1 + fp1
        if p0 == p1:
            continue
        slope = (tp0 - tp1) / (p0 - p1)
        edges = np.linspace(p1, p0, 20001)
        middle = (edges[:-1] + edges[1:]) / 2
        precision = (tp1 + slope * (middle - p1)) / middle
        area += np.sum(precision * slope / positives * np.diff(edges))
    return area


def mann_whitney(truth, scores):
    """The ROC AUC exactly: the chance a positive scores above a negative."""
    positive, negative = scores[truth != 0], scores[truth == 0]
    return np.mean(positive[:, None] > negative[None, :])


def test_auc_matches_the_trapezoids_and_the_exact_roc_auc():
    auc = metrics.AUC(num_thresholds=50)
    for rows in (slice(0, 17), slice(17, None)):
        auc.update_state(TRUTH[rows], PROBABILITIES[rows])
    assert auc.result() == pytest.approx(auc_reference(TRUTH, PROBABILITIES, 50, "ROC"),
                                         rel=1e-12)
    fine = metrics.AUC(num_thresholds=2000)
    fine.update_state(TRUTH, PROBABILITIES)
    assert fine.result() == pytest.approx(mann_whitney(TRUTH.ravel(),
                                                       PROBABILITIES.ravel()), abs=2e-3)
    majoring = metrics.AUC(num_thresholds=50, curve="PR", summation_method="majoring")
    minoring = metrics.AUC(num_thresholds=50, curve="PR", summation_method="minoring")
    interpolated = metrics.AUC(num_thresholds=50, curve="PR")
    for metric in (majoring, minoring, interpolated):
        metric.update_state(TRUTH, PROBABILITIES)
    assert minoring.result() <= interpolated.result() <= majoring.result()
    assert interpolated.result() == pytest.approx(
        pr_auc_by_quadrature(TRUTH, PROBABILITIES, 50), rel=1e-6)


def test_perfect_and_reversed_scores():
    truth = np.array([0, 0, 1, 1])
    for scores, area in (([0.1, 0.2, 0.8, 0.9], 1.0), ([0.9, 0.8, 0.2, 0.1], 0.0)):
        auc = metrics.AUC()
        auc.update_state(truth, np.array(scores))
        assert auc.result() == pytest.approx(area, abs=1e-12)


def test_compile_takes_the_new_metrics_by_name_and_fit_accumulates_them_exactly():
    inputs = nn.Input((3,))
    model = nn.Model(inputs, nn.Dense(1, activation="sigmoid")(inputs))
    model.compile("sgd", "binary_crossentropy",
                  metrics=["auc", "precision", "recall", metrics.AUC(curve="PR", name="pr")])
    x = RNG.standard_normal((50, 3)).astype(np.float32)
    y = (x[:, :1] + 0.3 * RNG.standard_normal((50, 1)) > 0).astype(np.float32)
    results = model.evaluate(x, y, batch_size=16, verbose=0, return_dict=True)
    predictions = model.predict(x, verbose=0)
    for name, metric in (("auc", metrics.AUC()), ("precision", metrics.Precision()),
                         ("recall", metrics.Recall()),
                         ("pr", metrics.AUC(curve="PR"))):
        metric.update_state(y, predictions)
        assert results[name] == pytest.approx(metric.result(), rel=1e-6), name
    history = model.fit(x, y, batch_size=16, epochs=2, verbose=0)
    assert set(history.history) == {"loss", "auc", "precision", "recall", "pr"}
    labels = RNG.integers(0, 4, 20)
    classifier = nn.Model(inputs, nn.Dense(4)(inputs))
    classifier.compile("sgd", nn.losses.SparseCategoricalCrossentropy(from_logits=True),
                       metrics=["sparse_top_k_categorical_accuracy",
                                metrics.SparseTopKCategoricalAccuracy(k=2, name="top2")])
    scores = classifier.evaluate(x[:20], labels, verbose=0, return_dict=True)
    top2 = metrics.SparseTopKCategoricalAccuracy(k=2)
    top2.update_state(labels, classifier.predict(x[:20], verbose=0))
    assert scores["top2"] == top2.result()
    assert scores["sparse_top_k_categorical_accuracy"] == 1.0  # 4 classes, k = 5


def test_the_metric_objects_are_saved_with_their_arguments(tmp_path):
    inputs = nn.Input((3,))
    model = nn.Model(inputs, nn.Dense(1, activation="sigmoid")(inputs))
    model.compile("sgd", "binary_crossentropy",
                  metrics=[metrics.AUC(num_thresholds=30, curve="PR", name="pr"),
                           metrics.Precision(thresholds=0.3)])
    model.save(tmp_path / "metrics.jitflow")
    loaded = nn.load_model(tmp_path / "metrics.jitflow")
    auc, precision = loaded._config.metrics
    assert (auc.num_thresholds, auc.curve, auc.name) == (30, "PR", "pr")
    assert precision.thresholds == 0.3
    x = RNG.standard_normal((10, 3)).astype(np.float32)
    y = (x[:, :1] > 0).astype(np.float32)
    assert loaded.evaluate(x, y, verbose=0) == model.evaluate(x, y, verbose=0)
