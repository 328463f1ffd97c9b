"""Primitive: every rule of one operation in one place, and the registry of them all."""
from dataclasses import dataclass
from typing import Callable, Optional

from .types import bfloat16, is_bfloat16


class MissingRuleError(NotImplementedError):
    """A transform or backend needs a rule a primitive does not define."""


@dataclass(eq=False)
class Primitive:
    """An operation the IR knows.

    type_rule(*in_types, **params) -> TensorType, or a tuple when multiple_results.
    impl(*arrays, **params) -> ndarray (or tuple): eager execution, the reference
    interpreter and constant folding all use it. Primitives owning subgraphs receive them
    as the keyword `subgraphs` in both.

    vjp(ct, *primals, out, **params) -> one cotangent per input (None: zero); with
    vjp_takes_needs it also gets needs=(one bool per input) and may leave the cotangents
    of inputs not needed as None (work that eager derivatives could not drop later), and
    jvp(tangents, *primals, out, **params) -> the output's tangent (None: zero), are
    written with jitflow's ops, so they trace and differentiate again. A primitive whose
    results are never floats has no rules, and says why in `no_gradient`.
    """
    name: str
    type_rule: Callable
    impl: Callable
    multiple_results: bool = False
    elementwise: bool = False
    has_subgraphs: bool = False
    pure: bool = True  # deterministic and effect-free: may be folded, merged or dropped
    ufunc: object = None  # the NumPy ufunc whose dtype rules an elementwise primitive follows
    vjp: Optional[Callable] = None
    vjp_takes_needs: bool = False
    jvp: Optional[Callable] = None
    lower: Optional[Callable] = None
    no_gradient: str = ""
    is_call: bool = False  # runs its one subgraph: the inline pass replaces it by its body
    # "early": run as soon as its operands are ready, "late": as late as the first use of
    # its results allows (passes/schedule.py): the start and the wait of a nonblocking
    # operation, so that work runs while it is in flight
    schedule: str = ""

    def infer_types(self, *in_types, subgraphs=(), **params):
        if self.has_subgraphs:
            params["subgraphs"] = subgraphs
        result = self.type_rule(*in_types, **params)
        out_types = tuple(result) if self.multiple_results else (result,)
        self._check_bfloat16(in_types + out_types)
        return out_types

    def _check_bfloat16(self, types):
        """Native code computes bfloat16 in the primitives of BFLOAT16_PRIMITIVES and in
        elementwise ones; the NumPy functions that take bfloat16 reach only those (a sum
        as a running sum, a max as float32's), so any other is refused, not guessed."""
        if bfloat16 is None or self.elementwise or self.name in BFLOAT16_PRIMITIVES:
            return
        if any(is_bfloat16(t.dtype) for t in types if hasattr(t, "dtype")):
            raise TypeError(f"bfloat16 operands are not supported here; cast them to "
                            f"float32 first (types {', '.join(map(str, types))})")

    def evaluate(self, *values, subgraphs=(), **params):
        """Run impl and always return a tuple of outputs."""
        if self.has_subgraphs:
            params["subgraphs"] = subgraphs
        result = self.impl(*values, **params)
        return tuple(result) if self.multiple_results else (result,)

    def rule(self, kind):
        rule = getattr(self, kind)
        if rule is None:
            raise MissingRuleError(f"{kind} rule for primitive '{self.name}' is not "
                                   f"implemented")
        return rule

    def __repr__(self):
        return f"<primitive {self.name}>"


REGISTRY: dict = {}

# Primitives other than elementwise ones whose native code handles bfloat16: they move
# elements, or round each step of a running sum or product to bfloat16 as NumPy does.
BFLOAT16_PRIMITIVES = frozenset({
    "reshape", "broadcast_to", "transpose", "slice", "gather", "concatenate", "pad",
    "cumsum", "cumprod"})
# Rearrangements of their operand's elements: native code makes them strided views of
# its memory, with no code, so passes leave them where they are read.
VIEW_OPS = frozenset({"reshape", "transpose", "broadcast_to", "slice"})


def register(prim):
    if prim.name in REGISTRY:
        raise ValueError(f"primitive '{prim.name}' is registered twice")
    REGISTRY[prim.name] = prim
    return prim
