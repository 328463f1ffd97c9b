"""The loop nests that elementwise and reduction work becomes.

Owns the vector code of innermost loops (vector_loops.py), the fixed order in which
reductions fold their elements (accumulate.py), the schedule of a fused region with
reductions (regions.py) and its rowwise and memory-order loops (row_loops.py,
column_loops.py, reductions.py: lower_region, reduce), argmax/argmin
(arg_reductions.py), and the loops that address arrays at integer indices (indexed.py,
scatter.py). Each is a function of a Lowering (lowering/) and the node's views.
"""
