"""The call boundary of compiled code.

Owns NativeGraph (native.py): a graph lowered and compiled, called through the checked
path (every argument checked and converted in Python) or through the Python entry
(python_entry.py and python_call.py: native code that Python calls like a builtin
function and that checks its arguments itself). Where outputs live: the outputs the
code may write over one of its inputs (in_place.py), and large outputs over buffers
that come back when the caller lets go of them (output_pool.py). How little a first
call builds: the libraries every process needs, built at import on a thread
(libraries.py), and whole graphs found in the disk cache without being lowered
(graph_cache.py).
"""
