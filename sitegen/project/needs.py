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

from ..core.installed import project_name, providers

REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def canonical(name: str) -> str:
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
                names.add(canonical(match[1]))
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
            if (match := REQUIREMENT.match(requirement)) and (name := canonical(match[1])) not in found | names:
                found.add(name)
                todo.append(name)
    return found


# A cell's line that installs with pip as Colab's notebooks do (!pip, %pip, !python -m pip,
# !{sys.executable} -m pip): the build never runs it (labs/labipython.py).
PIP_LINE = re.compile(r"^\s*[!%]\s*(?:\S*pip3?|\S*python[\d.]*\s+-m\s+pip|\{sys\.executable\}\s+-m\s+pip)\s+install\b\s*(?P<args>.*)$")
PIP_VALUED = {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f",
              "--find-links", "-t", "--target"}


def pip_installs(source: str) -> list[tuple[int, list[str]]]:
    """(line, the distributions named) of each line of a cell that installs with pip."""
    found = []
    for number, line in enumerate(source.split("\n"), 1):
        if match := PIP_LINE.match(line):
            words, names = match["args"].split("#")[0].split(), []
            for k, word in enumerate(words):
                if word.startswith("-") or (k and words[k - 1] in PIP_VALUED):
                    continue
                if name := REQUIREMENT.match(word.strip("'\"")):
                    names.append(name[1])
            found.append((number, names))
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
        if module in sys.stdlib_module_names or module in ("sitegen", "__future__", "myst_nb"):   # (myst_nb: labs/glue.py)
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
    return project_name(dist) or dist


def unlisted(root: Path, script: Path, source: str) -> list[tuple[int, str, str]]:
    """(line, module, distribution) for each installed package the script imports that
    requirements.txt does not list."""
    names = listed(root)
    return [(line, module, dist) for line, module, dist in installed_imports(script.parent, source)
            if canonical(dist) not in names]


def needed(folder: Path, sources) -> list[str]:
    """The distributions a lab's code (its cells' `sources`) needs installed to run, in the order
    first imported: what its notebook download says a student installs."""
    found: list[str] = []
    for source in sources:
        for _, _, dist in installed_imports(folder, source):
            if dist not in found:
                found.append(dist)
    return found


# Modules whose distribution on PyPI has another name (what `pip install` needs), for the ones teaching
# notebooks import most; any other is installed under its module's name.
DISTRIBUTIONS = {"sklearn": "scikit-learn", "cv2": "opencv-python-headless", "PIL": "pillow", "yaml": "pyyaml",
                 "bs4": "beautifulsoup4", "skimage": "scikit-image", "Bio": "biopython", "dateutil": "python-dateutil",
                 "google.protobuf": "protobuf", "zmq": "pyzmq", "serial": "pyserial", "attr": "attrs"}


def not_installed(folder: Path, source: str) -> list[tuple[int, str, str]]:
    """(line, module, distribution to install) for each module a script imports at its top level that
    no installed distribution, the standard library or the project (`folder`) provides. An import
    inside a function, an `if` or a `try` is left out: code may well run without it (Colab's, an
    optional accelerator), and if it does not, its cell says so."""
    import importlib.util
    plain = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n"))
    try:
        tree = ast.parse(plain)                 # (IPython's magics and shell lines left out, lines kept)
    except SyntaxError:
        return []
    if "sys.path" in source:            # it finds its modules its own way
        return []
    found: dict[str, int] = {}
    for node in tree.body:
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
        for name in names:
            found.setdefault(name.split(".")[0], node.lineno)
    missing = []
    for module, line in found.items():
        if module in sys.stdlib_module_names or module in ("sitegen", "__future__", "myst_nb"):   # (myst_nb: labs/glue.py)
            continue
        if (folder / f"{module}.py").exists() or (folder / module).is_dir():
            continue
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            missing.append((line, module, DISTRIBUTIONS.get(module, module)))
    return missing


def missing_packages(root: Path, labs) -> list:
    """Every module the labs about to run (`labs`: (Lab, cells) pairs) import that is not installed, as
    Problems at their lines (a notebook's: with the cell's number, as Jupyter counts cells), then one
    that says the command that installs them all and the lines requirements.txt lacks: one build says
    all of it, not one package per failed build."""
    from ..core.errors import Problem
    problems, wanted = [], {}
    for lab, cells in labs:
        rel = lab.script.relative_to(root).as_posix()
        for cell in cells:
            for line, module, dist in not_installed(lab.script.parent, cell.source):
                where = f"{cell.label}, line {line}: " if cell.number else ""
                problems.append(Problem(rel, cell.first_line + line - 1,
                                        f"{where}imports {module}, which is not installed here"))
                wanted.setdefault(dist, None)
    if wanted:
        unlisted = [dist for dist in wanted if canonical(dist) not in listed(root)]
        problems.append(Problem("requirements.txt", 0, f"install what the labs import: pip install {' '.join(wanted)}"
                                + (f"; and add to requirements.txt, for Cloudflare Pages to install them too, the "
                                   f"lines: {', '.join(unlisted)}" if unlisted else "")))
    return problems
