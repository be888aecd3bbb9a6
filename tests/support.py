"""What the tests share: where things are, how to build a site, the generator's fixture site
(tests/sites_invalid/_base), and the tools some tests need. A plain module, imported by the tests
and both conftests (pytest loads every conftest.py as `conftest`, so tests never import one)."""
from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sitegen.commands.serve import free_port  # noqa: F401 - the tests' way to a free port
from sitegen.core.sources import SOURCES

REPO = Path(__file__).resolve().parents[1]
GENERATOR = REPO / "sitegen"
GOLDEN = Path(__file__).resolve().parent / "course" / "golden"     # the seed lab, as handed to us
TOOLS = REPO / "tools" / "node_modules"
EPOCH = "1790000000"   # fixed SOURCE_DATE_EPOCH for reproducible test builds
IN_CI = os.environ.get("CI") == "true"
NPM_TOOLS = "npm ci --prefix tools --ignore-scripts"


def require(present: bool, what: str, install: str) -> None:
    """Skip (or, in CI, fail) a test whose tool is missing, saying how to install it."""
    if present:
        return
    message = f"{what} is not installed: {install}"
    if IN_CI:
        pytest.fail(message + " (CI=true: .ci/run must install it)", pytrace=False)
    pytest.skip(message)


def copy_project(target: Path) -> Path:
    """A copy of the site's sources that a test may break."""
    target.mkdir(parents=True, exist_ok=True)
    for part in SOURCES:
        source = REPO / part
        if not source.exists():
            continue
        if source.is_dir():
            shutil.copytree(source, target / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target / part)
    return target


def run_build(root: Path, out: Path, cache: Path, *args: str, cwd: Path | None = None,
              timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH, **(env or {})}
    return subprocess.run([sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(out),
                           "--cache", str(cache), *args],
                          capture_output=True, text=True, env=env, timeout=timeout, cwd=cwd)


def build_command(root: Path, out: Path, cache: Path, *args: str) -> list[str]:
    return [sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(out), "--cache", str(cache),
            *args]


# -- the generator's own fixture site (tests/sites_invalid/_base) ----------------

CASES = Path(__file__).resolve().parent / "sites_invalid"
CASE_META = {"expected.txt", "args.txt", "edits.yaml"}


def lay(source: Path, target: Path) -> None:
    """Copy a case's files over the site, then make its edits (an edit of a theme file the site lacks
    edits a copy of it in the site: the course's own templates/page.html replaces the theme's)."""
    import yaml

    from sitegen.core.sources import source_path
    for path in sorted(source.rglob("*")):
        if path.is_file() and path.name not in CASE_META:
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)
    edits = source / "edits.yaml"
    for edit in yaml.safe_load(edits.read_text(encoding="utf-8")) if edits.exists() else []:
        file = target / edit["file"]
        text = source_path(target, edit["file"]).read_text(encoding="utf-8")
        file.parent.mkdir(parents=True, exist_ok=True)
        assert text.count(edit["replace"]) == 1, f"{edits}: {edit['replace']!r} must occur once in {edit['file']}"
        file.write_text(text.replace(edit["replace"], edit["with"]), encoding="utf-8")


def tiny_site(root: Path) -> Path:
    """The smallest valid site (one lab, two served), in the generator's theme."""
    lay(CASES / "_base", root)
    return root


def empty_course(root: Path, home: str = "从实验开始。") -> Path:
    """A course with nothing in it yet (the generator's theme): a site.yaml, a home page (saying `home`)
    and a 404 page."""
    (root / "content").mkdir(parents=True)
    (root / "site.yaml").write_text("site:\n  title: 试验课程\n  base_url: https://example.invalid\n", encoding="utf-8")
    (root / "content/index.md").write_text(f"---\ntitle: 首页\n---\n{home}\n", encoding="utf-8")
    (root / "content/404.md").write_text("---\ntitle: 找不到页面\n---\n回到[首页](/)。\n", encoding="utf-8")
    return root


def own_copy(root: Path, rel: str) -> Path:
    """The course's own copy of a theme file (templates/, static/), made as a teacher makes it: the
    theme's file copied into the course, where it replaces the theme's."""
    from sitegen.core.sources import THEME
    path = root / rel
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(THEME / rel, path)
    return path


def lab_prints_a_project_file(root: Path, rel: str, text: str, label: str) -> None:
    """The fixture lab's first cell also prints `label` and the project's file `rel` (written, holding
    `text`), which it opens by its path from the project's folder, as a teacher's lab may."""
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")
    edit(root / "compute/tiny.py", "print('x =', x)\n",
         f"print('x =', x)\nprint('{label}', (Path(__file__).parents[1] / '{rel}').read_text())\n")


def write_notebook(path: Path, title: str, *codes: str) -> Path:
    """A notebook as Jupyter saves one: a Markdown title, then these code cells, never run."""
    import json
    cells = [{"cell_type": "markdown", "id": "title", "metadata": {}, "source": f"# {title}"}] + [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None, "outputs": [], "source": code}
        for i, code in enumerate(codes)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5, "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}), encoding="utf-8")
    return path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} must occur once in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def holding(folder: Path, text: str) -> list[str]:
    """The files under `folder` that hold `text` (UTF-8), a zip's members read too (as `a.zip:member`)."""
    import zipfile
    needle, found = text.encode(), []
    for rel, data in tree_bytes(folder).items():
        if needle in data:
            found.append(rel)
        if rel.endswith(".zip"):
            with zipfile.ZipFile(folder / rel) as archive:
                found += [f"{rel}:{name}" for name in archive.namelist() if needle in archive.read(name)]
    return found


CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")   # a CI runner may name its own
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update"]


# -- the built site served by Cloudflare's own emulator ------------------------

def get(port: int, path: str):
    """GET without following redirects; the body is on `.body`."""
    import http.client
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    connection.request("GET", path)
    response = connection.getresponse()
    response.body = response.read()
    connection.close()
    return response


MARKS = {"browser": "browser", "framed": "browser", "served": "emulator", "emulator": "emulator",
         "vnu": "java"}   # fixture -> mark


def mark_by_fixtures(items) -> None:
    """Mark each test by the tools its fixtures need (and `slow`, as all of those are)."""
    for item in items:
        for mark in sorted({MARKS[f] for f in item.fixturenames if f in MARKS}):
            item.add_marker(mark)
            item.add_marker("slow")


def computed(result) -> set[str]:
    """The labs a build reports it computed."""
    line = result.stdout.strip().splitlines()[-1]
    return set(re.findall(r"([\w-]+) computed", line))


def coarse_mount(folder: Path) -> Path | None:
    """A loop-mounted ext4 with whole-second file times (128-byte inodes) at folder/coarse, or None
    where none can be mounted (root, mkfs.ext4 and a loop device are needed); unmount it with
    `umount -l`."""
    image, mount = folder / "coarse.img", folder / "coarse"
    mount.mkdir()
    if not (shutil.which("mkfs.ext4") and os.geteuid() == 0):
        return None
    for command in (["truncate", "-s", "256M", str(image)], ["mkfs.ext4", "-q", "-F", "-I", "128", str(image)],
                    ["mount", "-o", "loop", str(image), str(mount)]):
        if subprocess.run(command, capture_output=True).returncode != 0:
            return None
    return mount


READER = """# A lab that reads another's results: the generator's fixture for dependent labs.

# %% read
import json
from pathlib import Path
x = json.loads(Path('inputs/tiny/results.json').read_text())['x']
Path('out').mkdir(exist_ok=True)
(Path('out') / 'results.json').write_text(json.dumps({'doubled': [[2 * v for v in row] for row in x]}))
print('read', len(x), 'rows')
"""


def reading_site(root):
    """The tiny site, with a second lab that reads the first and a guide page with a formula."""
    tiny_site(root)
    (root / "compute/reader.py").write_text(READER, encoding="utf-8")
    (root / "content/reader.md").write_text("---\ntitle: 读取\nlab: reader\n---\n::: cell read\n\n加倍：{{ doubled[0][1] }}。\n",
                                            encoding="utf-8")
    (root / "content/guide.md").write_text("---\ntitle: 导读\n---\n公式 $x^2 + 1$ 与 [读取](reader.md)。\n",
                                           encoding="utf-8")
    with open(root / "site.yaml", "a", encoding="utf-8") as config:
        config.write("  - id: reader\n    title: 读取\n    script: compute/reader.py\n    inputs: [tiny]\n"
                     "    images: reader/images\n    downloads: reader/materials\n    page: reader.md\n")
    return root


def processes_mentioning(text: str) -> list[int]:
    """The processes whose command line holds `text`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            pass                                        # ended meanwhile
    return found


def generator_imports() -> dict[str, set[str]]:
    """module ("labs/labrun") -> the generator's modules it imports anywhere in its code."""
    graph = {}
    for path in sorted(GENERATOR.glob("*/*.py")):
        name = path.relative_to(GENERATOR).with_suffix("").as_posix()
        here, found = name.split("/")[:-1], set()
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.ImportFrom) and node.level:
                parts = [*here[:len(here) - node.level + 1], *(node.module.split(".") if node.module else [])]
                for alias in node.names:
                    module = "/".join([*parts, alias.name])
                    found.add(module if (GENERATOR / f"{module}.py").is_file() else "/".join(parts))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                found |= {"/".join(n.split(".")[1:3]) for n in names if n.startswith("sitegen.")}
        graph[name] = {m for m in found if m != name and not m.endswith("__init__")}
    return graph
