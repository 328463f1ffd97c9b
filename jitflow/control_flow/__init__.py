"""Control flow that stays in the graph: branches (switch, cond) and loops (while_loop,
fori_loop, scan), traced once, compiled to real branches and loops, differentiable."""
from .scan import scan
from .switch import cond, switch
from .while_loop import fori_loop, while_loop
from . import while_grad  # noqa: F401  (gives while_loop's primitive its reverse mode)

__all__ = ["switch", "cond", "while_loop", "fori_loop", "scan"]
