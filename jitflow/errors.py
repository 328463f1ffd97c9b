"""Errors users see, and how they point at the user's own source line."""
import linecache
import os
import sys

import numpy as np

_SKIPPED_DIRS = (os.path.dirname(os.path.abspath(__file__)) + os.sep,
                 os.path.dirname(os.path.abspath(np.__file__)) + os.sep)


def user_frame():
    """The innermost stack frame that belongs to the user, not to jitflow or NumPy."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_SKIPPED_DIRS) and not filename.startswith("<frozen"):
            return frame
        frame = frame.f_back
    return None


def user_location():
    """'file.py:12: the line' for the user's innermost frame (or '' if there is none)."""
    frame = user_frame()
    if frame is None:
        return ""
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
    return f"{where}: {line}" if line else where


def at_user_line(message):
    location = user_location()
    return f"{message}\n  at {location}" if location else message


class ConcretizationError(TypeError):
    """A traced value was asked for a concrete Python value (bool, int, float, array)."""


class TracerLeakError(RuntimeError):
    """A traced value was used after the trace that made it had ended."""


class BooleanIndexError(IndexError):
    """Boolean-mask indexing of a traced value, whose result shape depends on data."""


class RetraceWarning(UserWarning):
    """A jitflow.function keeps being traced again for new signatures."""
