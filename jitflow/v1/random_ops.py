"""Random operations: each draws new values at every run, from a NumPy Generator of its
own (seeded by `seed`), which jitflow's tracing turns into state of the compiled run
(jitflow.random): the same seed gives the same sequence of draws."""
import numpy as np

from ..ir.types import as_dtype
from .numpy_calls import operation


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(n) for n in shape)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=np.float32, seed=None, name=None):
    """Normal values of `mean` and `stddev` (drawn in float64, rounded to dtype)."""
    rng, shape, dtype = np.random.default_rng(seed), _shape(shape), as_dtype(dtype)

    def draw(mean, stddev):
        return (mean + stddev * rng.standard_normal(shape)).astype(dtype)
    return _drawn(operation("RandomStandardNormal", draw, (mean, stddev), {}, name),
                  random_normal, shape, dtype, seed)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=np.float32, seed=None, name=None):
    """Uniform values in [minval, maxval) (drawn in float64, rounded to dtype)."""
    rng, shape, dtype = np.random.default_rng(seed), _shape(shape), as_dtype(dtype)

    def draw(minval, maxval):
        return (minval + (maxval - minval) * rng.random(shape)).astype(dtype)
    return _drawn(operation("RandomUniform", draw, (minval, maxval), {}, name),
                  random_uniform, shape, dtype, seed)


def _drawn(tensor, function, shape, dtype, seed):
    """`tensor`, its operation noting how to make it again (what a GraphDef stores of
    it, graph_def.py: the function, its static arguments, then the inputs')."""
    tensor.op.random = (function, {"shape": shape, "dtype": dtype, "seed": seed})
    return tensor
