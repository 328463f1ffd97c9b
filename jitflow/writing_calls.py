"""The calls of a jitflow.function that write their results into arrays given to them:
`f(..., out=arrays)` (out_arrays.py) and calls with donated arguments (donation.py).

Function takes these methods from WritingCalls. Both run the signature's Executable
with `into=` targets; out= first tries the native entry of the signature called last,
which checks the arrays itself (DirectEntry.into). Eager, numerics-checking and
profiled calls compute the results the usual way and copy them in.
"""
import functools

import numpy as np

from . import pytree, variable_scope
from .codegen import FALLBACK, raise_for
from .config import config
from .donation import donated_arrays, donated_leaf_indices, donated_leaves, matching_arrays
from .errors import at_user_line
from .executable import PROFILERS
from .memory_extents import Extents
from .out_arrays import deliver, out_targets
from .trace import is_tracing


_NOT_DIRECT = object()


class WritingCalls:
    """out= and donation for Function (which defines _call, _direct, _info, _named,
    donated, _fast_executable, _executable, _bind, _split and the fast path's
    bookkeeping)."""

    def _call_into(self, args, kwargs):
        """f(..., out=arrays): the results written into `arrays` (out_arrays.py), which
        are returned."""
        out = kwargs.pop("out")
        if is_tracing() or variable_scope.current() is not None:
            raise TypeError(at_user_line(
                f"{self.__qualname__}(out=...) inside a traced function or a tape: use "
                f"the result instead (write it with out= outside)"))
        if self._checked_path_only():
            return self._into_eagerly(out, self._call(args, kwargs))
        if self._named is None and not kwargs and self._into_directly(args, out):
            return out
        executable, leaves, _ = self._executable_for_call(args, kwargs)
        executable(leaves, into=out_targets(out, executable.out_structure,
                                            executable.result_types(), self.__qualname__))
        if not kwargs and self._direct is None:
            self._remember_direct_entry(args)
        return out

    def _into_directly(self, args, out):
        """f(*args, out=out) through the native entry of the signature called last
        (DirectEntry.into), which checks the arrays and declines what it cannot take
        as it is; True if it ran."""
        direct = self._direct
        if direct is None or direct.into is None:
            return False
        targets = direct.targets(out)
        if targets is None:
            return False
        result = direct.into(*args, *targets)
        if result.__class__ is int:
            if result != FALLBACK:
                raise_for(result, direct.name)
            return False
        self._info.hits += 1
        return True

    def _remember_direct_entry(self, args):
        """After an out= call on the checked path: let the next go straight to the
        native entry, as _call_fast does for plain calls."""
        signature, executable, _, structure = self._fast_executable(args)
        direct = executable.direct_entry() if executable is not None else None
        if direct is not None:
            self._remember_direct(direct, signature, structure)

    def _executable_for_call(self, args, kwargs, donating=False):
        """The Executable for these arguments and their leaves, from the fast path's
        cache when it holds them (out= and donated calls, which the Executable runs);
        then, when `donating`, the donated arrays among the leaves (else None)."""
        if self._named is not None:
            self._check_named_arrays()
        if not kwargs:
            _, executable, leaves, structure = self._fast_executable(args)
            if executable is not None:
                self._info.hits += 1
                donated = donated_leaves(leaves, structure, self._donated_positions) \
                    if donating else None
                return executable, leaves, donated
        bound = self._bind(args, kwargs)
        leaves, paths, structure, statics = self._split(bound)
        signature, executable = self._executable(bound, leaves, paths, structure, statics)
        self._remember_fast_path(args, kwargs, signature, executable)
        return executable, leaves, donated_arrays(bound, self.donated) if donating else None

    @functools.cached_property
    def _donated_positions(self):
        """The positions of the donated parameters (the fast path's calls pass every
        argument by position)."""
        return frozenset(position for position, name in enumerate(self.signature.parameters)
                         if name in self.donated)

    def _call_donating(self, args, kwargs):
        """A call with donated arguments (donation.py): results of their arrays' types
        computed into those arrays. Each argument array's extent is found once, for the
        matching and the overlap checks (a training step donates a hundred arrays)."""
        if is_tracing() or variable_scope.current() is not None:
            return self.fn(*args, **kwargs)  # inside a trace or a tape: inline it
        if self._checked_path_only():
            donated = donated_arrays(self._bind(args, kwargs), self.donated)
            result = self._call(args, kwargs)
            leaves, _, structure = pytree.flatten(result)
            into = matching_arrays(donated, [np.asarray(leaf) for leaf in leaves])
            deliver(into, leaves)
            return pytree.unflatten(structure, [leaf if target is None else target
                                                for leaf, target in zip(leaves, into)])
        if not kwargs and self._named is None:
            result = self._donate_directly(args)
            if result is not _NOT_DIRECT:
                return result
        executable, leaves, donated = self._executable_for_call(args, kwargs, donating=True)
        extents = Extents(leaves)
        return executable(leaves, into=matching_arrays(donated, executable.result_types(),
                                                       extents), extents=extents)

    def _donate_directly(self, args):
        """A donated call through the native entry of the signature's Executable
        (Executable.donated_call), or _NOT_DIRECT."""
        _, executable, leaves, structure = self._fast_executable(args)
        if executable is None:
            return _NOT_DIRECT
        donated = self._donated_leaf_indices.get(structure)
        if donated is None:
            donated = self._donated_leaf_indices[structure] = donated_leaf_indices(
                structure, self._donated_positions)
        result = executable.donated_call(leaves, donated)
        if result is None:
            return _NOT_DIRECT
        self._info.hits += 1
        return result

    @functools.cached_property
    def _donated_leaf_indices(self):
        """{structure of the arguments: the indices of the donated leaves}"""
        return {}

    def _checked_path_only(self):
        """Whether calls now run eagerly, check numerics or are profiled: out= and
        donation then copy the results computed the usual way."""
        return config.run_eagerly or config.debug_nans or config.debug_infs or \
            bool(PROFILERS)

    def _into_eagerly(self, out, result):
        """Write `result`, computed the usual way, into `out` (the eager, numerics-
        checking and profiled calls)."""
        leaves, _, structure = pytree.flatten(result)
        types = [np.asarray(leaf) for leaf in leaves]  # (their shape and dtype)
        deliver(out_targets(out, structure, types, self.__qualname__), leaves)
        return out
