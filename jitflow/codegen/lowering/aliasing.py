"""Alias scopes: telling LLVM which buffers a node's loads and stores never share.

Without this, LLVM's loop vectorizer cannot prove that a loop's stores miss the memory
its loads read, so it emits a runtime check of every store against every load before
each vectorized loop (on a training step's fused regions, blocks of ~280 compares), and
a scalar copy of the loop for when the check fails. Both cost compile time for nothing.
Nodes whose loops are all vector code already (loops/vector_loops.py) go without: the
scopes cost time to build, print and parse, and no vectorizer reads them.

What makes the claim true: while one node is lowered, every buffer it touches is a
different allocation that stays live for the whole node. Its inputs are graph inputs
or buffers not freed until after the node; its outputs are fresh arrays or workspace
regions no live buffer holds (the memory plan frees only after a node is done); its
scratch is taken from freed regions. (Stack slots need no scope: LLVM sees that they
share nothing.) (Two graph inputs may be one array,
but only stores need disjointness, and nothing stores into an input.) Buffers of
different nodes may reuse the same bytes, so each node gets a scope domain of its own:
LLVM then concludes nothing between instructions of different nodes.

A buffer is recognized by its base pointer: the pointer value an allocation returned
(registered here), reached from an address by walking back through GEPs.
"""
from llvmlite import ir

# Where the address sits among an instruction's operands.
_POINTER_OPERAND = {"load": 0, "store": 1}
_MASKED_POINTER_OPERAND = {"llvm.masked.load": 0, "llvm.masked.store": 1}


class AliasScopes:
    def __init__(self, module, function):
        self.module, self.function = module, function
        self._bases = {}     # id(base pointer) -> the pointer (kept alive)
        self._scanned = {}   # block -> instructions already seen
        self._nodes = 0

    def register(self, pointer):
        """`pointer` starts an allocation of its own (an argument, a workspace
        buffer)."""
        self._bases[id(pointer)] = pointer
        return pointer

    def annotate_new(self, needed=True):
        """Give the loads and stores emitted since the last call (one node's) scopes
        by the buffer they address, each declared not to alias the node's others; or,
        when not `needed` (the node left no loop to LLVM's vectorizer), pass them by."""
        if not needed:
            for _ in self._new_instructions():
                pass
            return
        by_base = {}
        for instruction in self._new_instructions():
            base = self._base_of(instruction)
            if base is not None:
                by_base.setdefault(base, []).append(instruction)
        if len(by_base) < 2:
            return
        self._nodes += 1
        domain = self.module.add_metadata([ir.MetaDataString(
            self.module, f"jitflow.node.{self._nodes}")])
        scopes = {base: self.module.add_metadata([ir.MetaDataString(
            self.module, f"jitflow.node.{self._nodes}.buffer.{i}"), domain])
            for i, base in enumerate(by_base)}
        for base, instructions in by_base.items():
            own = self.module.add_metadata([scopes[base]])
            others = self.module.add_metadata([s for b, s in scopes.items() if b != base])
            for instruction in instructions:
                instruction.set_metadata("alias.scope", own)
                instruction.set_metadata("noalias", others)

    def _new_instructions(self):
        for block in self.function.blocks:
            instructions = block.instructions
            seen = self._scanned.get(block, 0)
            self._scanned[block] = len(instructions)
            yield from instructions[seen:]

    def _base_of(self, instruction):
        """id of the registered allocation `instruction` loads from or stores to."""
        operands, position = instruction.operands, _POINTER_OPERAND.get(instruction.opname)
        if instruction.opname == "call":
            callee = getattr(instruction.callee, "name", "")
            operands = instruction.args
            position = next((p for prefix, p in _MASKED_POINTER_OPERAND.items()
                             if callee.startswith(prefix)), None)
        if position is None:
            return None
        pointer = operands[position]
        while id(pointer) not in self._bases and isinstance(pointer, ir.GEPInstr):
            pointer = pointer.pointer
        return id(pointer) if id(pointer) in self._bases else None
