"""The package's imports point one way, down the layers, and never in a circle.

Every import of every module is read with `ast`, those inside functions too (an import
deferred to call time is still a dependency); imports under `if TYPE_CHECKING:` are left
out. docs/ARCHITECTURE.md draws the same layers.
"""
import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "jitflow"

# The layers, lowest first. A module may import from its own layer and the layers before
# it; a name is a module or a package (all the modules inside it).
LAYERS = [
    # Settings, errors and plain-Python helpers: they import nothing of jitflow.
    ("leaves", ["jitflow._version", "jitflow.config", "jitflow.errors", "jitflow.pytree",
                "jitflow.pickling"]),
    # Types, graphs, primitives, the printer, the interpreter and the passes: pure data
    # and pure transforms of it.
    ("ir", ["jitflow.ir"]),
    # Graph -> native code. It reads the IR alone, so it sits right above it, and the
    # executables call it.
    ("codegen", ["jitflow.codegen"]),
    # The Tracer, what it knows of its memory, the builders and bind().
    ("trace", ["jitflow.trace"]),
    # The functions that emit primitives, each with its rules.
    ("ops", ["jitflow.ops"]),
    # The NumPy-compatible API over ops: jitflow.numpy, contractions, indexing, writes,
    # NEP 13/18 dispatch, and the Tracer's operators and methods, installed from here.
    ("numpy", ["jitflow.numpy", "jitflow.contract", "jitflow.einsum", "jitflow.indexing",
               "jitflow.writes", "jitflow.numpy_dispatch", "jitflow.array_methods",
               "jitflow.masked_selection", "jitflow.ufunc_at",
               "jitflow.in_place", "jitflow.array_references",
               "jitflow.complex_values"]),
    # Graph -> graph transforms and the structured primitives they meet.
    ("transforms", ["jitflow.autodiff", "jitflow.batching", "jitflow.control_flow"]),
    # @function, its executables and signature cache, state (Variables, closed-over
    # arrays) and the eager GradientTape.
    ("function", ["jitflow.function", "jitflow.executable", "jitflow.inspection",
                  "jitflow.named_arrays", "jitflow.watched_arrays",
                  "jitflow.bound_methods", "jitflow.nan_check", "jitflow.out_arrays",
                  "jitflow.donation", "jitflow.writing_calls", "jitflow.dynamic_axes",
                  "jitflow.memory_extents", "jitflow.retraces",
                  "jitflow.recycled_variables",
                  "jitflow.variables",
                  "jitflow.variable_scope",
                  "jitflow.tape"]),
    # Features built on all of the above.
    ("features", ["jitflow.random", "jitflow.testing", "jitflow.datasets", "jitflow.debug",
                  "jitflow.distributed", "jitflow.summary", "jitflow.profiler",
                  "jitflow.drawing", "jitflow.saving", "jitflow.callbacks"]),
    # Layers, models, losses and optimizers.
    ("models", ["jitflow.nn", "jitflow.optim"]),
    # The graph-and-session API (Graph, placeholder, Session.run) over the same IR.
    ("graph api", ["jitflow.v1"]),
    # Exchange with other tools: ONNX models written and read.
    ("exchange", ["jitflow.onnx"]),
    # The package's own namespace, which gathers everything.
    ("api", ["jitflow"]),
]

# jitflow.v1's own modules, lowest first: the graph api layer is layered the same way
# inside (the Tensor's operators are installed from above, as the Tracer's are).
V1_LAYERS = [
    # The Graph: names, scopes, collections, the default graph and session, and the
    # registry of named gradients.
    ("graph", ["jitflow.v1.graph"]),
    # Operation, Tensor and TensorShape: what a graph is made of.
    ("tensor", ["jitflow.v1.tensor"]),
    # Operations run on values: the loop every runner of a graph shares.
    ("replay", ["jitflow.v1.replay"]),
    # Adding an operation: a jitflow function applied to Tensors, its output types traced.
    ("operations", ["jitflow.v1.infer", "jitflow.v1.numpy_calls"]),
    # The op functions made from tables, and the Tensor's operators installed from them.
    ("op functions", ["jitflow.v1.ops", "jitflow.v1.nn", "jitflow.v1.random_ops",
                      "jitflow.v1.tensor_methods"]),
    # The graph's sources: constants, placeholders, Variables, group.
    ("state", ["jitflow.v1.state"]),
    # Derivatives and control flow, run through jitflow's own.
    ("derivatives", ["jitflow.v1.custom_gradients", "jitflow.v1.gradients",
                     "jitflow.v1.control_flow", "jitflow.v1.defun"]),
    # Graphs and Variables' values to files and back (jitflow.saving's format).
    ("saving", ["jitflow.v1.functions_table", "jitflow.v1.graph_def",
                "jitflow.v1.graph_import", "jitflow.v1.io",
                "jitflow.v1.saver"]),
    # Optimizers: assign operations over gradients.
    ("train", ["jitflow.v1.train"]),
    # Sessions and the compiled plans they run.
    ("session", ["jitflow.v1.plan", "jitflow.v1.session"]),
    # TensorBoard's event files of a graph (through jitflow.summary).
    ("summaries", ["jitflow.v1.summary"]),
    # jitflow.v1's namespace, which gathers everything.
    ("namespace", ["jitflow.v1"]),
]


# --- reading the imports -------------------------------------------------------------------

def module_names(root, package):
    """{dotted module name: its file} for every module under `root` (the package)."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def import_graph(root, package):
    """{module: {imported module of the package: the first line importing it}}."""
    modules = module_names(root, package)
    return {name: _imports_of(name, path, modules, package)
            for name, path in modules.items()}


def _imports_of(name, path, modules, package):
    tree = ast.parse(path.read_text(), filename=str(path))
    here = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = {}
    for node in _import_nodes(tree):
        for target in _targets(node, here, modules):
            if target != name and (target == package or target.startswith(package + ".")):
                found.setdefault(target, node.lineno)
    return found


def _import_nodes(tree):
    """Every import statement, at any depth, except under `if TYPE_CHECKING:`."""
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            pending.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        pending.extend(ast.iter_child_nodes(node))


def _is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _targets(node, here, modules):
    """The modules an import statement reads: `from a import b` reads a.b when that is
    a module, otherwise a itself."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = here.split(".")
    if node.level:
        base = base[:len(base) - (node.level - 1)]
    else:
        base = []
    source = ".".join(base + ([node.module] if node.module else []))
    targets = []
    for alias in node.names:
        submodule = f"{source}.{alias.name}"
        targets.append(submodule if submodule in modules else source)
    return targets


# --- judging them --------------------------------------------------------------------------

def layer_of(module, layers):
    """The index of the layer holding `module`: the longest name that is it or holds it."""
    best, best_length = None, -1
    for index, (_, names) in enumerate(layers):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best_length:
                best, best_length = index, len(name)
    return best


def upward_imports(graph, layers, importers=lambda module: True):
    """Every `module:line imports target` where target's layer is above module's."""
    found = []
    for module, targets in sorted(graph.items()):
        if not importers(module):
            continue
        own = layer_of(module, layers)
        for target, line in sorted(targets.items()):
            if layer_of(target, layers) > own:
                found.append(f"{module}:{line} imports {target} "
                             f"({layers[own][0]} -> {layers[layer_of(target, layers)][0]})")
    return found


def circles(graph):
    """The sets of modules that import each other in a loop (strongly connected
    components of more than one module), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(module):  # Tarjan's algorithm, iterative so deep chains do not recurse
        work = [(module, iter(sorted(graph.get(module, ()))))]
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def _in_codegen(module):
    return module == "jitflow.codegen" or module.startswith("jitflow.codegen.")


def _in_v1(module):
    return module == "jitflow.v1" or module.startswith("jitflow.v1.")


@pytest.fixture(scope="module")
def graph():
    return import_graph(PACKAGE, "jitflow")


# --- the package ---------------------------------------------------------------------------

def test_every_module_has_a_layer(graph):
    assert [m for m in graph if layer_of(m, LAYERS) is None] == []


def test_no_module_imports_from_a_layer_above_its_own(graph):
    assert upward_imports(graph, LAYERS, lambda module: not _in_codegen(module)) == []


def test_codegen_imports_only_the_ir_and_the_leaves_in_no_circle(graph):
    assert upward_imports(graph, LAYERS, _in_codegen) == []
    assert [c for c in circles(graph) if all(map(_in_codegen, c))] == []


def test_no_modules_import_each_other_in_a_circle(graph):
    # (a circle of codegen's modules alone is the test above's)
    assert [c for c in circles(graph) if not all(map(_in_codegen, c))] == []


def test_v1_layers_name_every_module_of_v1(graph):
    listed = {name for _, names in V1_LAYERS for name in names}
    assert {m for m in graph if _in_v1(m)} == listed


def test_v1_modules_import_only_their_own_layer_and_those_below(graph):
    inside = {module: {t: line for t, line in targets.items() if _in_v1(t)}
              for module, targets in graph.items() if _in_v1(module)}
    assert upward_imports(inside, V1_LAYERS) == []


# --- the checker itself, on a small package written for it --------------------------------

def _write(root, files):
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


TOY_LAYERS = [("low", ["toy.low"]), ("high", ["toy.high", "toy"])]


def test_an_import_of_a_higher_layer_inside_a_function_is_found(tmp_path):
    _write(tmp_path, {
        "__init__.py": "",
        "low.py": "def f():\n    from .high import g\n    return g\n",
        "high.py": "from . import low\n\ndef g():\n    return low\n"})
    graph = import_graph(tmp_path, "toy")
    assert graph["toy.low"] == {"toy.high": 2}
    assert upward_imports(graph, TOY_LAYERS) == ["toy.low:2 imports toy.high (low -> high)"]
    assert circles(graph) == [["toy.high", "toy.low"]]


def test_a_package_import_counts_as_its_init_and_a_submodule_as_itself(tmp_path):
    _write(tmp_path, {
        "__init__.py": "from . import high\n",
        "low/__init__.py": "",
        "low/a.py": "from .. import version\n",  # a name of toy/__init__.py: toy itself
        "low/b.py": "import toy.high\nfrom toy.low import a\n",
        "high.py": "from .low import b\n"})
    graph = import_graph(tmp_path, "toy")
    assert graph["toy.low.a"] == {"toy": 1}
    assert graph["toy.low.b"] == {"toy.high": 1, "toy.low.a": 2}
    assert upward_imports(graph, TOY_LAYERS) == [
        "toy.low.a:1 imports toy (low -> high)", "toy.low.b:1 imports toy.high (low -> high)"]
    # toy/__init__ imports high, which reaches low.a, which imports toy/__init__
    assert circles(graph) == [["toy", "toy.high", "toy.low.a", "toy.low.b"]]


def test_imports_for_type_checking_only_are_left_out(tmp_path):
    _write(tmp_path, {
        "__init__.py": "",
        "low.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                   "    from .high import g\nelse:\n    g = None\n"),
        "high.py": "from .low import g\n"})
    graph = import_graph(tmp_path, "toy")
    assert graph["toy.low"] == {}
    assert upward_imports(graph, TOY_LAYERS) == []
    assert circles(graph) == []


def test_downward_imports_pass(tmp_path):
    _write(tmp_path, {"__init__.py": "from . import high\n", "low.py": "",
                      "high.py": "from .low import *\n"})
    graph = import_graph(tmp_path, "toy")
    assert upward_imports(graph, TOY_LAYERS) == []
    assert circles(graph) == []
