"""The arrays fit, evaluate and predict take: x and y as arrays or dicts (or lists) of
arrays with one row per example, sample weights, validation splits and batches."""
import numpy as np

from .. import pytree
from ..errors import at_user_line


class ArrayData:
    """x, y (None for predict) and one weight per example, as NumPy arrays."""

    def __init__(self, x, y=None, sample_weight=None, what="fit"):
        self.x = _as_arrays(x)
        self.y = None if y is None else _as_arrays(y)
        self.size = _common_size(self.x, self.y, what)
        if sample_weight is None:
            self.sample_weight = np.ones(self.size)
        else:
            self.sample_weight = np.asarray(sample_weight, np.float64)
            if self.sample_weight.shape[:1] != (self.size,):
                raise ValueError(at_user_line(
                    f"{what}: sample_weight has shape {self.sample_weight.shape}; it needs "
                    f"one weight per example, shape ({self.size},), or one per step of "
                    f"a sequence output, shape ({self.size}, steps)"))

    def steps(self, batch_size):
        return len(batch_starts(self.size, batch_size))

    def batches(self, batch_size, order=None, pad=True):
        """Each batch of `batch_size` examples taken in `order` (by default in order):
        (x, y, sample_weight * mask, mask, the number of real examples), the last batch
        padded to `batch_size` unless `pad` is False."""
        order = np.arange(self.size) if order is None else order
        whole = np.ones(batch_size)  # the mask of every full batch
        for start in batch_starts(self.size, batch_size):
            indices = order[start:start + batch_size]
            if len(indices) == batch_size:
                yield *self.take(indices), whole, batch_size
                continue
            rows, mask = padded(indices, batch_size if pad else len(indices))
            x, y, weights = self.take(rows)
            yield x, y, by_rows(weights, mask), mask, len(indices)

    def take(self, indices):
        """(x, y, sample_weight) of the examples at `indices`."""
        return (_map(self.x, lambda a: a[indices]),
                None if self.y is None else _map(self.y, lambda a: a[indices]),
                self.sample_weight[indices])

    def split(self, fraction, what="fit"):
        """(the first 1 - fraction of the examples, the last fraction), as Keras'
        validation_split takes the last examples, before any shuffling."""
        if not 0.0 < fraction < 1.0:
            raise ValueError(at_user_line(
                f"{what}: validation_split must be in (0, 1), got {fraction}"))
        cut = int(self.size * (1.0 - fraction))
        if cut == 0 or cut == self.size:
            raise ValueError(at_user_line(
                f"{what}: validation_split={fraction} of {self.size} examples leaves "
                f"{cut} to train on and {self.size - cut} to validate on"))
        return self._subset(np.arange(cut)), self._subset(np.arange(cut, self.size))

    def _subset(self, indices):
        x, y, weights = self.take(indices)
        return ArrayData(x, y, weights)


class BatchStream:
    """Batches a user's iterable gives: (x, y) or (x, y, sample_weight) tuples of arrays
    (or dicts and lists of arrays); iterated anew each epoch. A batch smaller than the
    first is padded up to the first's size, so it needs no new compile."""

    def __init__(self, source, what):
        self.source, self.what = source, what
        self.size = None  # unknown before it is iterated

    def steps(self, batch_size=None):
        return len(self.source) if hasattr(self.source, "__len__") else None

    def batches(self, batch_size=None, order=None, pad=True):
        first = None
        for item in self.source:
            data = ArrayData(*_unpacked(item, self.what), what=self.what)
            first = first or data.size
            size = first if pad and data.size < first else data.size
            rows, mask = padded(np.arange(data.size), size)
            x, y, weights = data.take(rows)
            yield x, y, by_rows(weights, mask), mask, data.size


def is_batch_stream(x):
    """Whether fit's x is an iterable of batches rather than arrays: an iterable that is
    not an array, list, tuple or dict (a generator, or a dataset object)."""
    return x is not None and hasattr(x, "__iter__") and not isinstance(
        x, (np.ndarray, np.generic, list, tuple, dict, str))


def _unpacked(item, what):
    if not isinstance(item, tuple) or len(item) not in (2, 3):
        raise ValueError(at_user_line(
            f"{what}: each batch the iterable gives must be a tuple (x, y) or (x, y, "
            f"sample_weight), got a {type(item).__name__}"))
    return item


def class_weights(class_weight, y, what="fit"):
    """One weight per example: class_weight[its class], the class being an integer
    label, or the argmax of a one-hot row (Keras' rule); single-output models only."""
    if not isinstance(y, np.ndarray):
        raise ValueError(at_user_line(
            f"{what}: class_weight needs y to be one array (a model with one output)"))
    if y.ndim > 2 or _integer_label_rows(y):
        raise ValueError(at_user_line(
            f"{what}: class_weight takes y of one integer label or one one-hot row per "
            f"example; y has shape {y.shape} and dtype {y.dtype} (for sequences of "
            f"labels, weigh the examples with sample_weight)"))
    labels = y.argmax(-1) if y.ndim == 2 and y.shape[1] > 1 else y.reshape(len(y))
    missing = sorted(set(np.unique(labels).tolist()) - set(class_weight))
    if missing:
        raise ValueError(at_user_line(
            f"{what}: class_weight has no weight for class(es) {missing}"))
    return np.array([class_weight[label] for label in labels.tolist()], np.float64)


def _integer_label_rows(y):
    """Whether y holds rows of integer labels (a sequence's), not one-hot rows."""
    if y.ndim != 2 or y.shape[1] == 1 or y.dtype.kind not in "iub":
        return False
    return not (np.all((y == 0) | (y == 1)) and np.all(y.sum(1) == 1))


def validation_data(data, what="fit"):
    """ArrayData from fit's validation_data: (x, y) or (x, y, sample_weight)."""
    if isinstance(data, ArrayData):
        return data
    if not isinstance(data, (tuple, list)) or len(data) not in (2, 3):
        raise ValueError(at_user_line(
            f"{what}: validation_data must be (x, y) or (x, y, sample_weight), got a "
            f"{type(data).__name__}"))
    return ArrayData(*data, what=f"{what}: validation_data")


def by_rows(weights, row_values):
    """weights (one per example, or per step) times one value per row."""
    return weights * np.reshape(row_values, (-1,) + (1,) * (np.ndim(weights) - 1))


def batch_starts(size, batch_size):
    return range(0, size, batch_size)


def padded(indices, batch_size):
    """`indices` repeated up to `batch_size` (real examples, so every padded row gives
    finite values), and the mask that is 1 on the real rows."""
    mask = np.zeros(batch_size)
    mask[:len(indices)] = 1.0
    return np.resize(indices, batch_size), mask


def _as_arrays(tree):
    leaves, _, structure = pytree.flatten(tree)
    return pytree.unflatten(structure, [np.asarray(leaf) for leaf in leaves])


def _map(tree, fn):
    if isinstance(tree, np.ndarray):  # the common case, without the pytree walk
        return fn(tree)
    leaves, _, structure = pytree.flatten(tree)
    return pytree.unflatten(structure, [fn(leaf) for leaf in leaves])


def _common_size(x, y, what):
    leaves = [("x" + p, a) for a, p in zip(*pytree.flatten(x)[:2])]
    if y is not None:
        leaves += [("y" + p, a) for a, p in zip(*pytree.flatten(y)[:2])]
    if not leaves:
        raise ValueError(at_user_line(f"{what}: no input arrays given"))
    for name, array in leaves:
        if array.ndim == 0:
            raise ValueError(at_user_line(
                f"{what}: {name} is a scalar; give one row per example"))
    sizes = {array.shape[0] for _, array in leaves}
    if len(sizes) != 1:
        shapes = ", ".join(f"{name} {array.shape}" for name, array in leaves)
        raise ValueError(at_user_line(
            f"{what}: the arrays have different numbers of examples (first axes): "
            f"{shapes}"))
    return sizes.pop()
