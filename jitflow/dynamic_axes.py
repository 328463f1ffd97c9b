"""dynamic_axes: one compile of a function for every size of one axis of its
arguments (jitflow.function(fn, dynamic_axes={"x": 0}): the batch; {"tokens": 1}: the
length of sequences laid out (batch, time, ...)). The axes named share one size.

The first size n1 is compiled as usual. At a second size n2 the two graphs, fused and
scheduled, are made into a template (ir/size_templates.py) and that is compiled once,
taking the size at run time (codegen/runtime/dynamic_native.py), on the thread that
builds n2's native code (executable.py: in the background, while n2's first call is
interpreted, as for any new signature). Every later size is traced again (a trace
costs little beside a compile) and runs the template's code only if its own template
from n1 prints the same. The code serves a range of sizes (where a decision differs
between sizes, ir/sizes.py); a size outside it gets code of the same template for its
own range. Where the graph differs, and wherever the template cannot be compiled (an
operation whose code needs its sizes at compile time), the size is compiled for
itself, as without dynamic_axes. So each size runs code made for a graph equal to its
own, with the bits of code compiled for that size alone, and the way each size ran is
listed in `report`.
"""
import threading

from .codegen.runtime.dynamic_native import DynamicNative
from .ir.passes.fuse import fuse
from .ir.passes.schedule import schedule
from .ir.size_templates import NotGeneral, generalize
from .ir.sizes import MAX_N, MIN_N, DynamicDecision


def inferred_axes(old, new):
    """{argument: axis} when signature `new` differs from `old` only in the size of
    one axis of some arrays (the same axis, from one size to one other), else None."""
    if (old.structure, old.statics, old.matmul_precision, old.paths) != \
            (new.structure, new.statics, new.matmul_precision, new.paths):
        return None
    axes, sizes = {}, set()
    for path, before, after in zip(new.paths, old.types, new.types):
        if before == after:
            continue
        axis = _changed_axis(before, after)
        if axis is None or axes.setdefault(path.split("[")[0], axis) != axis:
            return None
        sizes.add((before.shape[axis], after.shape[axis]))
    return axes if len(sizes) == 1 and len(set(axes.values())) == 1 else None


def _changed_axis(before, after):
    """The one axis whose size differs between two array types alike otherwise."""
    shapes = getattr(before, "shape", None), getattr(after, "shape", None)
    if None in shapes or before.with_shape(after.shape) != after or \
            len(shapes[0]) != len(shapes[1]):
        return None
    changed = [axis for axis, (a, b) in enumerate(zip(*shapes)) if a != b]
    return changed[0] if len(changed) == 1 else None


class DynamicAxes:
    def __init__(self, name, axes, parameters, inferred=False):
        """inferred: the axes were found by inferred_axes, not asked for (retraces of
        a new size still warn then)."""
        for argument, axis in axes.items():
            if argument not in parameters:
                raise ValueError(f"{name}: dynamic_axes names '{argument}', which is not "
                                 f"a parameter")
            if not isinstance(axis, int) or isinstance(axis, bool) or axis < 0:
                raise ValueError(f"{name}: dynamic_axes['{argument}'] = {axis!r}; give "
                                 f"the position of one axis, counted from 0")
        self.name, self.axes, self.inferred = name, dict(axes), inferred
        self._families = {}  # signature with the sizes left out -> _Family
        self.report = []  # one line per size compiled: how it runs

    def native(self, signature, graph):
        """What runs `graph` (optimized) for `signature`: a SizedNative where the
        template's code serves it; None where it is compiled for this size; or, where
        the template's code is still to be compiled, a function that compiles it and
        returns a SizedNative or None (slow: Executable may call it on a thread of its
        own, as it builds any native code)."""
        found = self._size(signature)
        if found is None:
            return None
        n, family_key = found
        family = self._families.setdefault(family_key, _Family(self.name))
        return family.native(schedule(fuse(graph)), n, self.report.append)

    def seed(self, signature, graph):
        """Take `graph` (optimized), compiled for `signature` before the axes were
        known, as its family's first size."""
        found = self._size(signature)
        if found is not None:
            family = self._families.setdefault(found[1], _Family(self.name))
            family.first = (schedule(fuse(graph)), found[0])
            self.report.append(f"n={found[0]}: compiled for this size (the first)")

    def only_size_changed(self, old, new):
        """Whether signature `new` differs from `old` only in the dynamic axes' size."""
        before, after = self._size(old), self._size(new)
        return before is not None and after is not None and before[1] == after[1]

    def _size(self, signature):
        """(n, the signature without it), or None when the dynamic axes of the arrays
        given do not all have one size, from MIN_N to MAX_N."""
        sizes, types = set(), []
        for path, type in zip(signature.paths, signature.types):
            axis = self.axes.get(path.split("[")[0])
            shape = getattr(type, "shape", ())
            if axis is not None and axis < len(shape):
                sizes.add(shape[axis])
                type = type.with_shape(shape[:axis] + (None,) + shape[axis + 1:])
            types.append(type)
        if len(sizes) != 1 or not MIN_N <= min(sizes) <= MAX_N:
            return None
        return sizes.pop(), (signature.structure, tuple(types), signature.statics,
                             signature.matmul_precision)


class _Family:
    """The sizes of one signature: the first graph, then the template's codes, each
    serving a range of sizes (a decision that differs between sizes, rows or columns
    for a short reduction say, cuts the sizes into ranges: ir/sizes.py)."""

    def __init__(self, name):
        self.name = name
        self.first = None  # (fused graph, n) of the first size
        self.codes = []  # DynamicNatives of one template, for ranges of sizes apart
        self.failed = None  # why a template's code could not be made
        self.chosen = None  # (template, n): the one whose code is compiled first
        self._compiling = threading.Lock()  # held while a template's code compiles

    def native(self, graph, n, report):
        """DynamicAxes.native's answer for size n, whose fused graph is `graph`;
        report(line) tells how the size runs."""
        if self.first is None:
            self.first = (graph, n)
            report(f"n={n}: compiled for this size (the first)")
            return None
        try:
            template, passed = generalize(*self.first, graph, n)
        except NotGeneral as error:
            report(f"n={n}: compiled for this size: its graph differs ({error})")
            return None
        if self.codes and template.text != self.codes[0].template.text:
            report(f"n={n}: compiled for this size: its graph is not the template's")
            return None
        code = self._serving(n)
        if code is not None:
            report(f"n={n}: runs the code for all sizes")
            return code.at(n, passed)
        if self.failed is not None:
            report(f"n={n}: compiled for this size: {self.failed}")
            return None
        if self.chosen is None:  # (here, in call order: which size's template is
            self.chosen = (template, n)  # compiled first never depends on threads)
        return lambda: self._compiled_now(template, passed, n, report)

    def _compiled_now(self, template, passed, n, report):
        """Compile the chosen template's code (unless done), and then, if no code
        serves size n, code for the sizes around n; then serve n. A size that comes
        while a code compiles (on another thread) waits for it here."""
        with self._compiling:
            if not self.codes and self.failed is None:
                self._compile(*self.chosen)
            if self._serving(n) is None and self.failed is None:
                self._compile(template, n)
        if self.codes and template.text != self.codes[0].template.text:
            report(f"n={n}: compiled for this size: its graph is not the template's")
            return None
        code = self._serving(n)
        if code is None:
            report(f"n={n}: compiled for this size: {self.failed}")
            return None
        compiled_now = " (compiled now)" if code.template is template else ""
        report(f"n={n}: runs the code for all sizes{compiled_now}")
        return code.at(n, passed)

    def _serving(self, n):
        return next((code for code in self.codes if code.sizes[0] <= n <= code.sizes[1]),
                    None)

    def _compile(self, template, n):
        """Code of `template` for the sizes around n that it can serve, tuned for the
        larger of n and the first size: a split between threads that does not pay at
        the smaller costs little, one missing at the larger, half. (The bits are the
        same at any tuning.)"""
        try:
            self.codes.append(DynamicNative(template, self.name,
                                            typical=max(self.first[1], n), n=n))
        except Exception as error:  # (code that does not take run-time sizes yet)
            kind = "" if isinstance(error, DynamicDecision) else f"{type(error).__name__}: "
            self.failed = f"the code for all sizes could not be made ({kind}{error})"
