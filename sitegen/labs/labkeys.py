"""A lab's cache keys: what its artifacts follow from, hashed, never a time.

The source key is what the author wrote (the script, the project modules it
imports, how its cells are shown); a frozen lab is reused while it holds. The
lab key adds how the lab is run (the harness's code), the versions it runs
with and the fonts its figures fall back on: a computed lab is reused while it
holds. Neither holds the labs a lab reads: what it was given of them is checked
by its bytes once they are final (compute.py), so an edit to a lab that leaves
its results as they were runs none of its readers. What
a script imports is remembered under its hash, so an unchanged script is
never parsed again.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.stored import sha256_of
from ..project.figurefonts import locate
from ..core.memo import GENERATOR, Memo, environment
from ..project.nbsource import runs_as_notebook

if TYPE_CHECKING:
    from ..project.config import Lab, SiteConfig

# How a lab is run and what is kept of it: the labs package and every generator module it imports
# (found from their imports, not listed): a change to any of them may change a byte of its artifacts.
HARNESS = "labs"


def _statements(tree: ast.AST):
    """Every statement, nested ones included: imports are statements, so expressions
    (most of a lab's tree) need no visit: ten times faster than ast.walk."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(reversed(getattr(node, field, ())))


def _imported_names(data: bytes, memo: Memo) -> list[str]:
    """The modules a script's source imports (absolute imports, with `from` names), remembered
    under the source's hash: an unchanged script is not parsed again."""
    def parse() -> bytes:
        try:
            tree = ast.parse(data)
        except SyntaxError:
            return b"[]"        # the run reports it with file:line
        names = []
        for node in _statements(tree):
            if isinstance(node, ast.Import):
                names += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        return json.dumps(names).encode()
    return json.loads(memo.data("imports", (sys.version, sha256_of(data)), parse))


def find_module(base: str, name: str) -> list[Path]:
    """The project module `import name` may find from folder `base`, if any (real path)."""
    rel = name.replace(".", os.sep)
    return [Path(os.path.realpath(candidate)) for candidate in
            (os.path.join(base, rel + ".py"), os.path.join(base, rel, "__init__.py")) if os.path.isfile(candidate)]


def _local_imports(script: Path, root: Path, seen: set[Path], memo: Memo, found: dict | None = None) -> None:
    """Add to `seen` the script and every project module it imports, recursively. `found`
    remembers, for this build, where each imported name was looked for and what was there."""
    if script in seen:
        return
    seen.add(script)
    found = {} if found is None else found
    for name in _imported_names(_code(script, root, memo, python=True), memo):
        for base in (str(script.parent), str(root)):
            if (base, name) not in found:
                found[base, name] = find_module(base, name)
            for module in found[base, name]:
                _local_imports(module, root, seen, memo, found)


def source_key(cfg: SiteConfig, lab: Lab, memo: Memo | None = None, found: dict | None = None) -> str:
    """What the author wrote that a lab's artifacts follow from: its script, the project modules it
    imports, how its cells are shown (`display`); not the labs it reads, whose results it is checked
    against by their bytes. A frozen lab is reused while this holds. `found`: a dict shared by one
    build's calls (see _local_imports)."""
    files: set[Path] = set()
    _local_imports(lab.script, cfg.root, files, memo or Memo(None), found)
    digest = hashlib.sha256()
    if lab.display != "script":
        digest.update(f"display={lab.display}\0".encode())
    for path in sorted(files):
        digest.update(str(path.relative_to(cfg.root)).encode() + b"\0" + _code(path, cfg.root, memo) + b"\0")
    for name, rel in lab.data:                  # files copied into its folder before it runs
        digest.update(f"data={name}\0".encode() + (cfg.root / rel).read_bytes() + b"\0")
    return digest.hexdigest()


def _code(path: Path, root: Path, memo: Memo | None, python: bool = False) -> bytes:
    """What of a lab's file its artifacts follow from: a script's bytes, or a notebook page's code
    cells (its prose and saved outputs are not the lab's); with `python`, the code to find imports in."""
    if not runs_as_notebook(path):
        return path.read_bytes()
    from ..project.nbsource import load, python_of
    source = load(root, str(path.relative_to(root)), None, memo)
    return python_of(source) if python else source.code()


def lab_key(cfg: SiteConfig, lab: Lab, env: dict | None = None, source: str | None = None) -> str:
    """The cache key: the lab's own source key, the harness and the versions it runs with. Not the
    keys of the labs it reads: what it read of them is checked by its bytes (compute._made_from)."""
    digest = hashlib.sha256((source or source_key(cfg, lab)).encode())
    digest.update(harness_digest().encode())             # how labs are run
    digest.update(json.dumps(env or environment(), sort_keys=True).encode())
    return digest.hexdigest()


def harness_digest() -> str:
    """The harness's code, hashed: what labs are run by."""
    return _harness(GENERATOR)


@functools.lru_cache(maxsize=None)
def _harness(folder: Path) -> str:
    """The harness's files (`folder`: the generator's package), hashed once per process (the code that
    runs is the code imported)."""
    digest = hashlib.sha256()
    for rel in harness_files(folder):
        digest.update(rel.encode() + b"\0" + (folder / rel).read_bytes() + b"\0")
    return digest.hexdigest()


# A relative import, nested or not: its dots, its module, and what it imports (in parentheses or not).
# Read from the text, not parsed (a tenth of the time): a match inside a string can only add a file.
RELATIVE_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.+)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.M)


def harness_files(folder: Path) -> list[str]:
    """The modules of the labs package and every generator module they import, at any depth (relative
    imports, nested ones included), as paths inside `folder`."""
    found, todo = set(), sorted(f"{HARNESS}/{p.name}" for p in (folder / HARNESS).glob("*.py"))
    while todo:
        rel = todo.pop()
        if rel in found or not (folder / rel).is_file():
            continue
        found.add(rel)
        package = rel.split("/")[:-1]
        for dots, module, names in RELATIVE_IMPORT.findall((folder / rel).read_text(encoding="utf-8")):
            parts = [*package[:len(package) - len(dots) + 1], *(module.split(".") if module else [])]
            todo += ["/".join(parts) + ".py", *("/".join([*parts, name.split()[0]]) + ".py"
                                               for name in re.sub(r"#[^\n]*", "", names).strip("()").split(",")
                                               if name.strip())]
    return sorted(found)


def font_files(cfg: SiteConfig, memo: Memo) -> dict:
    """The fonts figures fall back on, by content (hashed once per file state, not every build)."""
    if not cfg.figure_fonts:
        return {}
    fonts = {}
    for spec in cfg.figure_fonts:
        path = locate(spec)
        stat = path.stat()
        fonts[spec] = memo.data("font-sha256", (str(path), stat.st_size, stat.st_mtime_ns),
                               lambda: sha256_of(path.read_bytes()).encode()).decode()
    return {"figure_fonts": fonts}
