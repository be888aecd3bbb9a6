"""Another tool's settings of a book, found in content/: Jupyter Book's _toc.yml and _config.yml, Quarto's
_quarto.yml.

A teacher who brings a book brings these with its pages. This site reads none of them (a course's
settings are site.yaml's, one place): each is said in a warning that gives the lines of site.yaml
which say here what it says there: the order of its pages (`sequence:`), its title, its BibTeX files,
its language. Its pages themselves are read as they are (dialects.py, textnb.py).
"""
from __future__ import annotations

import json
import posixpath

from ..core.errors import BuildError, Problem
from ..core.sources import PAGE_FILES, read_text
from ..core.yamlfile import load_yaml

BOOKS = {"_toc.yml": "Jupyter Book's table of contents", "_config.yml": "Jupyter Book's settings",
         "_quarto.yml": "Quarto's settings"}
PAGES = PAGE_FILES


def book_notes(root, snapshot: dict[str, str], memo=None) -> list[Problem]:
    """A warning for each book's settings file in content/, with what site.yaml says in its stead."""
    notes = []
    for rel in sorted(rel for rel in snapshot if rel.startswith("content/") and posixpath.basename(rel) in BOOKS):
        try:
            data = load_yaml(read_text(root / rel, rel, snapshot), rel, memo=memo)     # (remembered: no YAML parse per build)
        except BuildError as exc:
            notes += exc.problems
            continue
        said = _said(rel, data if isinstance(data, dict) else {}, snapshot)
        notes.append(Problem(rel, 1, f"{BOOKS[posixpath.basename(rel)]}, which this site does not read (its settings are "
                                     f"site.yaml's): " + ("; ".join(said) if said else "nothing of it has a meaning here")
                                     + "; delete it, or keep it outside content/ for that tool"))
    return notes


def _said(rel: str, data: dict, snapshot: dict[str, str]) -> list[str]:
    """What of the file's settings site.yaml says, each as the line(s) that would say it there."""
    folder = posixpath.dirname(rel)
    said = []
    order = [page for page in (_page(folder, entry, snapshot) for entry in _entries(data)) if page]
    if order:
        said.append(f"its order of pages is `sequence: [{', '.join(dict.fromkeys(order))}]`")
    book = next((data[key] for key in ("book", "website") if isinstance(data.get(key), dict)), data)
    title = book.get("title")
    if isinstance(title, str) and title:
        said.append(f"its title is `site: title: {json.dumps(title, ensure_ascii=False)}`")
    files = data.get("bibtex_bibfiles") or data.get("bibliography") or []
    files = [files] if isinstance(files, str) else [f for f in files if isinstance(f, str)] if isinstance(files, list) else []
    if files:
        named = [posixpath.relpath(posixpath.normpath(posixpath.join(folder, f)), "content") for f in files]
        said.append(f"its BibTeX files are `site: bibliography: [{', '.join(named)}]`")
    language = data.get("language") or data.get("lang")
    if isinstance(language, str) and language:
        said.append(f"its language is `site: language: {language}`")
    parse = data.get("parse") if isinstance(data.get("parse"), dict) else {}
    if isinstance(parse.get("myst_substitutions"), dict) and parse["myst_substitutions"]:
        said.append(f"its substitutions ({', '.join(sorted(map(str, parse['myst_substitutions'])))}) are said in the front "
                    "matter of each page that uses them (`substitutions:`)")
    execute = data.get("execute") if isinstance(data.get("execute"), dict) else {}
    if execute.get("allow_errors") or execute.get("error"):
        said.append("a notebook whose errors are shown says `allow_errors: true` in its own front matter")
    return said


def _entries(value):
    """The pages a table of contents names, in its order: Jupyter Book's `root` and each `file`, Quarto's
    book `chapters` and website sidebar `contents` (a page's path, or `href`)."""
    if isinstance(value, str):
        if value.endswith(PAGES):
            yield value
    elif isinstance(value, list):
        for item in value:
            yield from _entries(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key in ("root", "file", "href", "section") and isinstance(item, str):
                yield item
            elif key in ("chapters", "parts", "sections", "entries", "contents", "appendices", "book", "website",
                         "sidebar", "subtrees"):
                yield from _entries(item)


def _page(folder: str, entry: str, snapshot: dict[str, str]) -> str:
    """The page's path in content/ that a table of contents' entry names (its suffix may be left out)."""
    path = posixpath.normpath(posixpath.join(folder, entry.lstrip("/")))
    for candidate in (path, *(path + suffix for suffix in PAGES)):
        if candidate in snapshot and candidate.endswith(PAGES):
            return candidate[len("content/"):]
    return ""
