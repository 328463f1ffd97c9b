"""Small data sets the examples train on, shipped with jitflow (see data/*.md for each
one's source and license)."""
from .digits import load_digits

__all__ = ["load_digits"]
