"""The generator's parts (sitegen/__init__.py lists them): a module imports only modules of its own part
or of parts listed above it, and no two modules import each other, at any depth, even for types."""
from __future__ import annotations

import ast
from pathlib import Path

import sitegen

PACKAGE = Path(sitegen.__file__).parent
LAYERS = ["core", "project", "labs", "pages", "render", "publish", "commands"]


def _imports() -> dict[str, set[str]]:
    """module ("labs/labrun") -> the generator's modules it imports anywhere in its code."""
    graph = {}
    for path in sorted(PACKAGE.glob("*/*.py")):
        name = path.relative_to(PACKAGE).with_suffix("").as_posix()
        here, found = name.split("/")[:-1], set()
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.ImportFrom) and node.level:
                parts = [*here[:len(here) - node.level + 1], *(node.module.split(".") if node.module else [])]
                for alias in node.names:
                    module = "/".join([*parts, alias.name])
                    found.add(module if (PACKAGE / f"{module}.py").is_file() else "/".join(parts))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                found |= {"/".join(n.split(".")[1:3]) for n in names if n.startswith("sitegen.")}
        graph[name] = {m for m in found if m != name and not m.endswith("__init__")}
    return graph


def test_every_module_sits_in_a_listed_part():
    parts = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert parts == {*LAYERS}
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == ["__init__.py", "__main__.py"]


def test_no_part_imports_a_part_below_it():
    wrong = [(module, other) for module, imported in _imports().items() for other in imported
             if LAYERS.index(other.split("/")[0]) > LAYERS.index(module.split("/")[0])]
    assert wrong == []


def test_no_modules_import_each_other_at_any_depth():
    graph, state, circles = _imports(), {}, []

    def visit(module, path):
        state[module] = "open"
        for other in sorted(graph.get(module, ())):
            if state.get(other) == "open":
                circles.append(path[path.index(other):] + [other])
            elif other not in state:
                visit(other, [*path, other])
        state[module] = "done"
    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert circles == []


def test_the_check_sees_an_import_upward_and_a_circle():
    # (the checks above could pass on a graph read wrong: this one proves the reader finds real edges)
    graph = _imports()
    assert "core/errors" in graph["labs/labrun"] or "project/cells" in graph["labs/labrun"]
    assert "pages/page" in graph["pages/blocks"]       # a TYPE_CHECKING import is an import
