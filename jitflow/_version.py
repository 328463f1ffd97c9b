"""jitflow's version, in a module of its own so every layer can read it."""
__version__ = "0.1.0"
