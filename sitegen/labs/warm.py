"""What the lab host imports before it forks a lab, and what a lab sets up once it imports Matplotlib.

A lab is forked from the lab host (labhost.py): a module the host imported is there in the lab at no
cost, and shared by every lab the host forks. The host imports, before forking a lab, the libraries
of WARM that the lab's cells import (`modules_for`): a notebook of pandas tables waits for no
Matplotlib, a course of plots imports it once. WARM is a short list of libraries whose import
changes nothing another lab could see (no global state, no defaults of other libraries), so that
what a lab makes never depends on which labs shared its host; any other import is the lab's own.

What the harness changes in Matplotlib (the fonts figures fall back on, inline figures, no figures
for a preview) waits for the lab to import it (`when_imported`), in the host or in the lab.
"""
from __future__ import annotations

import ast
import importlib
import importlib.abc
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

# A top-level name a cell imports -> what the host imports for it (in that order).
PLOTS = ("matplotlib.pyplot", "PIL.Image", "sitegen.labs.labbackend")
WARM = {
    "numpy": ("numpy",),
    "pandas": ("pandas",),
    "sympy": ("sympy",),
    "matplotlib": PLOTS, "pylab": PLOTS, "seaborn": PLOTS,
    "IPython": ("IPython.core.interactiveshell",),
}


def modules_for(sources: Iterable[str], jupyter: bool = False) -> tuple[str, ...]:
    """What the host imports before forking a lab whose cells are `sources` (a notebook's lines that
    are IPython's own are skipped): WARM's modules for the libraries they import. `jupyter`: its
    cells run in IPython's shell."""
    names = {"IPython"} if jupyter else set()
    for source in sources:
        names |= _imported(source)
    return tuple(module for name, modules in WARM.items() if name in names for module in modules)


def modules_edited(root, edited) -> tuple[str, ...]:
    """What the host imports as it starts, before the build has worked out which labs run: what the
    edited scripts and notebooks import (a one-off build after an edit runs those)."""
    sources, jupyter = [], False
    for rel in edited:
        path = Path(root) / rel
        try:
            if rel.endswith(".ipynb"):
                cells = json.loads(path.read_bytes()).get("cells", [])
                sources += ["".join(cell.get("source", "")) for cell in cells if cell.get("cell_type") == "code"]
            elif rel.endswith((".py", ".md")):
                sources.append(path.read_text(encoding="utf-8"))
            else:
                continue
        except (OSError, ValueError, AttributeError, TypeError):
            continue                # (not readable as that: the build says what is wrong with it)
        jupyter = jupyter or not rel.endswith(".py")
    return modules_for(sources, jupyter)


def _imported(source: str) -> set[str]:
    """The top-level names `source` imports; a cell that is not Python as a whole (IPython's magics)
    is read line by line."""
    try:
        trees = [ast.parse(source)]
    except SyntaxError:
        trees = []
        for line in source.splitlines():
            line = line.strip()
            if line.startswith(("import ", "from ")):
                try:
                    trees.append(ast.parse(line.split(" import (")[0] + " import _" if "import (" in line else line))
                except SyntaxError:
                    continue
    found = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(alias.name.partition(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                found.add(node.module.partition(".")[0])
    return found


def warm(modules: Iterable[str]) -> None:
    """In the lab host: import these (WARM's), before forking the lab that needs them."""
    for name in modules:
        if name not in sys.modules:
            try:
                importlib.import_module(name)
            except ImportError:
                pass        # the lab reports what it misses


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs callbacks once a module is imported: its loader's exec_module, then theirs."""

    def __init__(self):
        self.waiting: dict[str, list[Callable]] = {}

    def find_spec(self, name, path, target=None):
        if name not in self.waiting:
            return None
        for finder in sys.meta_path:
            if finder is not self and (spec := getattr(finder, "find_spec", lambda *a: None)(name, path, target)):
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        load, callbacks = spec.loader.exec_module, self.waiting.pop(name)

        def exec_module(module):
            load(module)
            for callback in callbacks:
                callback(module)
        spec.loader.exec_module = exec_module      # (this spec's own loader: the next import finds another)
        return spec


_AFTER = _AfterImport()


def when_imported(name: str, callback: Callable) -> None:
    """Call `callback(module)` once module `name` is imported: now if it is."""
    if name in sys.modules:
        callback(sys.modules[name])
        return
    _AFTER.waiting.setdefault(name, []).append(callback)
    if _AFTER not in sys.meta_path:
        sys.meta_path.insert(0, _AFTER)
