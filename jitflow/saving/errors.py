"""The errors of saving and loading."""


class FormatError(ValueError):
    """A file that is not a jitflow file this version reads: malformed, truncated, of
    another kind or of a newer format version. Nothing of it was run."""


class NotSerializableError(TypeError):
    """A graph or function holding something the format cannot store without code (a
    Python callback, a custom-derivative rule's code, a Python object as a parameter)."""
