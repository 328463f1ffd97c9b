"""Random numbers in compiled code.

jitflow.random.Generator(seed) draws reproducible numbers, the same eager and compiled
(generator.py). NumPy's own random functions and Generator/RandomState methods called
while @jitflow.function traces are traced too, into the same kind of draws (numpy_rng.py).
"""
from .generator import Draws, Generator, _mix_seed, mix_seed, stream_bits
from .numpy_rng import eager_numpy

__all__ = ["Generator", "eager_numpy"]
