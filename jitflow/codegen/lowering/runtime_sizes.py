"""Run-time sizes in the code a Lowering emits (ir/sizes.py): their values, computed
from n in each function's first block, and the size decisions that only tune speed
take them at.
"""
from llvmlite import ir

from ...ir.sizes import DynamicDecision, typical
from ..sizes import Blocks

INT64 = ir.IntType(64)  # (I64 of a Size would be that size's value)


class RuntimeSizes:
    """Lowering's part for graphs whose shapes hold Sizes: `size_input` is the position
    of the input holding n (None for a graph of one size), `typical_size` the size the
    code is tuned for; `_size_values` and `_n_pointer` belong to the function being
    lowered (Lowering.FUNCTION_STATE)."""

    def _size_value(self, size, bits=64):
        """The value of a Size (ir/sizes.py) in the function being lowered, an integer
        of `bits` bits, computed from n in its first block."""
        made = self._size_values
        if isinstance(size, Blocks):
            return self._blocks_value(size, bits)
        if "n" not in made:
            pointer = self.size_pointer()
            made["n"] = ir.IRBuilder(self._allocas).load(pointer, typ=INT64)
        if (size.per, size.const) not in made:
            b = ir.IRBuilder(self._allocas)
            made[size.per, size.const] = b.add(b.mul(made["n"], ir.Constant(INT64, size.per)),
                                               ir.Constant(INT64, size.const))
        if bits == 64:
            return made[size.per, size.const]
        if (size.per, size.const, bits) not in made:
            made[size.per, size.const, bits] = ir.IRBuilder(self._allocas).trunc(
                made[size.per, size.const], ir.IntType(bits))
        return made[size.per, size.const, bits]

    def _blocks_value(self, blocks, bits):
        """The value of a loop count Blocks (codegen/sizes.py): its size's, divided."""
        made = self._size_values
        key = ("blocks", blocks.size.per, blocks.size.const, blocks.length, blocks.whole,
               bits)
        if key not in made:
            size = self._size_value(blocks.size, bits)
            length = ir.Constant(size.type, blocks.length)
            b = ir.IRBuilder(self._allocas)
            made[key] = b.udiv(size, length) if blocks.whole else b.urem(size, length)
        return made[key]

    def size_pointer(self):
        """Where n is, for the function being lowered: its input's buffer, or in a
        shared kernel, the slot of its frame that the caller fills (kernels.py)."""
        if self._n_pointer is None:
            if self.size_input is None or self._args.parent is not self._function:
                raise DynamicDecision("a run-time size is needed where n is not at hand")
            self._n_pointer = self._slot(self.size_input)
        return self._n_pointer

    def typical(self, value):
        """`value` (an int, Size or Blocks) at the size this code is tuned for: for
        decisions that only tune speed."""
        if isinstance(value, Blocks):
            return value.at(self.typical_size)
        return typical(value, self.typical_size)
