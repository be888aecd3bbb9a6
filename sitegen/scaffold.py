"""`python build.py new lab ID` and `new page PATH`: starting files that build at once.

The starters are data (sitegen/starters/), commented for the teacher. Nothing existing is
overwritten; site.yaml gets the lab's entry appended to its `labs:` list, as text, so its
comments and order stay, and is read back: if it no longer loads, it is restored.
"""
from __future__ import annotations

import re
from pathlib import Path

from .config import SLUG, load_config
from .errors import BuildError, Problem

STARTERS = Path(__file__).with_name("starters")
PAGE_PATH = re.compile(r"^(?:[a-z0-9][a-z0-9_-]*/)*[a-z0-9][a-z0-9_-]*$")


def _fill(starter: str, **values: str) -> str:
    text = (STARTERS / starter).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace(f"__{key.upper()}__", value)
    return text


def _create(root: Path, rel: str, text: str) -> None:
    path = root / rel
    if path.exists():
        raise BuildError(Problem(rel, 0, "exists already: choose another name (nothing was written)"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def new_page(root: Path, path: str) -> list[str]:
    """content/PATH.md, a page with a title and one section."""
    path = path.removeprefix("content/").removesuffix(".md")
    if not PAGE_PATH.match(path):
        raise BuildError(Problem(path, 0, "a page path is lowercase ASCII names joined by /, e.g. notes/week1"))
    rel = f"content/{path}.md"
    _create(root, rel, _fill("page.md", title=path.rsplit("/", 1)[-1]))
    return [rel]


def _with_lab_entry(text: str, entry: str) -> str:
    """site.yaml's text with `entry` added at the end of its top-level `labs:` list (or a new one)."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if re.match(r"^labs:\s*(#.*)?$", line)), None)
    if start is None:
        return text.rstrip("\n") + "\n\nlabs:\n" + entry
    end = start + 1
    for i in range(start + 1, len(lines)):
        if lines[i].strip() and not lines[i].lstrip().startswith("#") and not lines[i][0].isspace():
            break                                   # the next top-level key
        if lines[i].strip() and not lines[i].lstrip().startswith("#"):
            end = i + 1
    lines[end:end] = ["\n" if lines[end - 1].strip() else "", entry]
    return "".join(lines)


def new_lab(root: Path, lab_id: str, page: str | None = None) -> list[str]:
    """compute/ID.py, its page, and its entry in site.yaml."""
    if not SLUG.match(lab_id):
        raise BuildError(Problem("site.yaml", 0, f"a lab id is lowercase ASCII letters, digits and '-', not {lab_id!r}"))
    cfg = load_config(root)
    if cfg.lab(lab_id):
        raise BuildError(Problem("site.yaml", cfg.lab(lab_id).line, f"lab {lab_id!r} exists already"))
    page = (page or lab_id).removeprefix("content/").removesuffix(".md")
    if not PAGE_PATH.match(page):
        raise BuildError(Problem(page, 0, "a page path is lowercase ASCII names joined by /, e.g. labs/week1"))
    module = lab_id.replace("-", "_")
    script, page_rel = f"compute/{module}.py", f"content/{page}.md"
    for rel in (script, page_rel):
        if (root / rel).exists():
            raise BuildError(Problem(rel, 0, "exists already: choose another id or --page (nothing was written)"))
    entry = (f"  - id: {lab_id}\n    title: {lab_id}\n    script: {script}\n    images: {lab_id}/images\n"
             f"    downloads: {lab_id}/materials\n    notebook: {lab_id}/materials/{lab_id}.ipynb\n"
             f"    page: {page}.md\n    timeout: 600\n")
    config = root / "site.yaml"
    before = config.read_text(encoding="utf-8")
    made: list[str] = []
    config.write_text(_with_lab_entry(before, entry), encoding="utf-8")
    try:
        for rel, text in ((script, _fill("lab.py", id=lab_id, page=f"{page}.md", script=script)),
                          (page_rel, _fill("lab.md", id=lab_id, title=lab_id))):
            _create(root, rel, text)
            made.append(rel)
        load_config(root)
    except BaseException:
        config.write_text(before, encoding="utf-8")     # as it was, and only what this made is removed
        for rel in made:
            (root / rel).unlink()
        raise
    return [script, page_rel, "site.yaml"]
