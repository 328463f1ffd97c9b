"""codegen's imports point one way: out of the package only to jitflow.ir and small leaf
modules, and inside it from each layer only to itself and the layers below (the order
codegen/__init__.py gives), with no circle. Imports inside functions count too."""
import ast
from pathlib import Path

import pytest

import jitflow.codegen

CODEGEN = Path(jitflow.codegen.__file__).parent
# Bottom to top; "" holds the shared files at codegen's top level (emitter, views, ...).
LAYERS = ["", "jit", "math", "loops", "gemm", "linalg", "control", "lowering", "runtime"]
ALLOWED_OUTSIDE = ("jitflow.ir", "jitflow.config", "jitflow.errors", "jitflow._version")


def module_name(path):
    parts = ("jitflow", "codegen") + path.relative_to(CODEGEN).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in CODEGEN.rglob("*.py")}


def imports(name):
    """The jitflow modules `name` imports, wherever in the file the import stands."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("jitflow")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            if not base.startswith("jitflow"):
                continue
            submodules = {f"{base}.{a.name}" for a in node.names} & set(MODULES)
            found |= submodules or {base}
    return found


def layer(name):
    inner = name.split(".")[2:]
    return LAYERS.index(inner[0]) if len(inner) > 1 else 0


def test_the_layers_list_every_subpackage():
    assert {name.split(".")[2] for name in MODULES if name.count(".") > 2} == set(LAYERS[1:])


@pytest.mark.parametrize("name", sorted(MODULES))
def test_codegen_imports_only_jitflow_ir_and_leaf_modules_outside_itself(name):
    outside = {m for m in imports(name) if not m.startswith("jitflow.codegen")}
    assert all(m.startswith(ALLOWED_OUTSIDE) for m in outside), outside


@pytest.mark.parametrize("name", sorted(set(MODULES) - {"jitflow.codegen"}))
def test_no_module_imports_a_layer_above_its_own(name):
    # (jitflow.codegen itself is the interface on top: it offers NativeGraph.)
    above = {m for m in imports(name) if m in MODULES and layer(m) > layer(name)}
    assert not above, f"{name} ({LAYERS[layer(name)] or 'top level'}) imports {above}"


def test_no_import_circle():
    graph = {name: {m for m in imports(name) if m in MODULES and m != name}
             for name in MODULES}
    done, path = set(), []

    def visit(name):
        if name in path:
            pytest.fail("import circle: " + " -> ".join(path[path.index(name):] + [name]))
        if name in done:
            return
        path.append(name)
        for imported in sorted(graph[name]):
            visit(imported)
        path.pop()
        done.add(name)
    for name in sorted(graph):
        visit(name)
