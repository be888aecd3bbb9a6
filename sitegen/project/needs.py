"""What a lab's code imports that the project's requirements.txt does not list.

Cloudflare Pages' builder installs requirements.txt and nothing else: a
notebook that imports pandas builds on the teacher's machine, where pandas
happens to be installed, and fails on Pages. So the modules a script imports
(absolute imports, at any depth of its code) are mapped to the distributions
that provide them here (core/installed.py), and each one that requirements.txt
does not name is said with the line to add. The standard library, the
project's own modules and what is not installed (the lab's run names that)
are left out.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from ..core.installed import providers

REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def listed(root: Path) -> set[str]:
    """The distributions requirements.txt names (canonical names; `-r` files followed)."""
    names: set[str] = set()

    def read(path: Path, depth: int = 0) -> None:
        try:
            lines = path.read_text(encoding="utf-8-sig").splitlines()
        except OSError:
            return
        for line in lines:
            line = line.split("#", 1)[0].strip()
            if line.startswith(("-r ", "--requirement ")) and depth < 5:
                read(path.parent / line.split(None, 1)[1], depth + 1)
            elif (match := REQUIREMENT.match(line)) and not line.startswith("-"):
                names.add(_canonical(match[1]))
    read(root / "requirements.txt")
    return names | _installed_with(names)


def _installed_with(names: set[str]) -> set[str]:
    """What pip installs with the distributions `names` (their requirements, theirs in turn), as far
    as they are installed here: the generator brings NumPy, Matplotlib and IPython, which a course that
    lists the generator need not list again."""
    from importlib import metadata
    found, todo = set(), list(names)
    while todo:
        try:
            requires = metadata.requires(todo.pop()) or []
        except metadata.PackageNotFoundError:
            continue
        for requirement in requires:
            if re.search(r"\bextra\s*==", requirement):
                continue                    # (an optional extra: not installed with it)
            if (match := REQUIREMENT.match(requirement)) and (name := _canonical(match[1])) not in found | names:
                found.add(name)
                todo.append(name)
    return found


def imported(source: str) -> list[tuple[str, int]]:
    """Top-level modules a script imports absolutely, with the line of the first import of each."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.setdefault(alias.name.split(".")[0], node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.setdefault(node.module.split(".")[0], node.lineno)
    return sorted(found.items(), key=lambda item: item[1])


def installed_imports(folder: Path, source: str) -> list[tuple[int, str, str]]:
    """(line, module, distribution) for each installed package a script in `folder` imports (the
    standard library and the project's own modules left out), in the order first imported."""
    found = []
    for module, line in imported(source):
        if module in sys.stdlib_module_names or module in ("sitegen", "__future__"):
            continue
        if (folder / f"{module}.py").exists() or (folder / module).is_dir():
            continue                            # the project's own
        if dist := _distribution(module):
            found.append((line, module, dist))
    return found


def _distribution(module: str) -> str | None:
    """The installed distribution that provides a top-level module, by the name its project gives it
    (PyYAML for yaml, as requirements.txt would write it); None if no installed one does."""
    dist = providers([module]).get(module)
    if dist is None:
        return None
    from importlib import metadata
    try:
        return metadata.distribution(dist).metadata["Name"]
    except metadata.PackageNotFoundError:
        return dist


def unlisted(root: Path, script: Path, source: str) -> list[tuple[int, str, str]]:
    """(line, module, distribution) for each installed package the script imports that
    requirements.txt does not list."""
    names = listed(root)
    return [(line, module, dist) for line, module, dist in installed_imports(script.parent, source)
            if _canonical(dist) not in names]


def needed(folder: Path, sources) -> list[str]:
    """The distributions a lab's code (its cells' `sources`) needs installed to run, in the order
    first imported: what its notebook download says a student installs."""
    found: list[str] = []
    for source in sources:
        for _, _, dist in installed_imports(folder, source):
            if dist not in found:
                found.append(dist)
    return found
