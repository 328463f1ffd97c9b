"""Control flow in native code: real branches and loops.

Owns the lowerings of switch (branches.py), while and scan (loops.py) and while_grad
(while_grad.py). Their subgraphs are compiled apart and called from the generated
code (callees.py: Callee); the compiler of those subgraphs is the Lowering's
`compile_graph`, handed in from above, so nothing here imports the runtime.
"""
