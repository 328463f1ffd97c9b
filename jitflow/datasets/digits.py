"""The 8x8 handwritten digits (UCI's optical digits test set, data/DIGITS.md)."""
import os

import numpy as np

PATH = os.path.join(os.path.dirname(__file__), "data", "digits.csv.gz")


def load_digits(test_fraction=0.25, seed=0):
    """((train_images, train_labels), (test_images, test_labels)): images are float32
    (N, 8, 8, 1) scaled to [0, 1], labels int64 digits. The split is a seeded shuffle
    of the 1797 images."""
    table = np.loadtxt(PATH, delimiter=",", dtype=np.float32)
    images = (table[:, :64] / 16.0).reshape(-1, 8, 8, 1)
    labels = table[:, 64].astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    test = int(round(len(labels) * test_fraction))
    held_out, kept = order[:test], order[test:]
    return (images[kept], labels[kept]), (images[held_out], labels[held_out])
