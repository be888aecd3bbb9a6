"""The generator's parts (sitegen/__init__.py lists them): a module imports only modules of its own part
or of parts listed above it, and no two modules import each other, at any depth, even for types."""
from __future__ import annotations

from pathlib import Path

import sitegen
from support import generator_imports

PACKAGE = Path(sitegen.__file__).parent
LAYERS = ["core", "project", "labs", "pages", "render", "publish", "commands"]


def test_every_module_sits_in_a_listed_part():
    parts = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert parts == {*LAYERS}
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == ["__init__.py", "__main__.py"]


def test_no_part_imports_a_part_below_it():
    wrong = [(module, other) for module, imported in generator_imports().items() for other in imported
             if LAYERS.index(other.split("/")[0]) > LAYERS.index(module.split("/")[0])]
    assert wrong == []


def test_no_modules_import_each_other_at_any_depth():
    graph, state, circles = generator_imports(), {}, []

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
    graph = generator_imports()
    assert "core/errors" in graph["labs/labrun"] or "project/cells" in graph["labs/labrun"]
    assert "pages/page" in graph["pages/blocks"]       # a TYPE_CHECKING import is an import
