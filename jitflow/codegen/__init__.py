"""The LLVM backend: lowering of optimized graphs to native code through llvmlite."""
