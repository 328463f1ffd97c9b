"""The optimization pipeline: one ordered tuple of pure Graph -> Graph passes."""
from ..graph import verify
from .cse import cse
from .dce import dce
from .fold import constant_fold
from .hoist import hoist
from .inline import inline
from .share_scans import share_scans
from .operands import tidy_operands
from .simplify import simplify

PIPELINE = (
    inline,         # custom-derivative calls become their bodies
    share_scans,    # one scan where reverse mode ran the same steps again
    simplify,       # exact algebraic identities; exposes constants and duplicates
    constant_fold,  # evaluate small all-constant nodes with the reference impls
    cse,            # one node per (op, inputs, params)
    hoist,          # loop-invariant work out of loop bodies, done once before the loop
    tidy_operands,  # subgraphs' operands: constants moved in, duplicates and unused ones out
    dce,            # drop what no output needs any more
)

MAX_ROUNDS = 8  # a pass can enable another; stop when a whole round changes nothing


def optimize(graph, pipeline=PIPELINE, *, dump=False, check=False):
    """Run the pipeline to a fixpoint; print the IR after each pass if `dump`, verify it
    after each pass if `check`."""
    for _ in range(MAX_ROUNDS):
        before = graph
        for graph_pass in pipeline:
            graph = _run(graph_pass, graph, dump, check)
        if graph is before:
            break
    return graph


def _run(graph_pass, graph, dump, check):
    result = graph_pass(graph)
    if dump:
        print(f"--- after {graph_pass.__name__} ---\n{result}")
    if check:
        verify(result)
    return result
