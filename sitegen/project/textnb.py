"""A notebook kept as text: a MyST Markdown notebook, as Jupyter Book courses keep their chapters.

`content/x/name.md` whose front matter names a kernel (`kernelspec:`) or jupytext's header
(`jupytext:`) is a notebook page, as `name.ipynb` would be: its ```` ```{code-cell} ```` blocks are
code cells that run, the Markdown between them its Markdown cells (a `+++` line splits one), a
cell's `:tags:` or `---` options its metadata. jupytext reads it (the same reader Jupyter and
Jupyter Book use); this module finds where each cell's lines lie in the file, so that a problem
names the file's own line, and makes the notebook students download (`.ipynb`, with this build's
outputs, render/notebook.py).
"""
from __future__ import annotations

import re

from ..core.errors import BuildError, Problem
from .nbfile import runs_python

SUFFIX = ".md"
HEADER_KEYS = ("jupytext", "kernelspec", "file_format")    # how the file is read, not the page's keys
HEADER = re.compile(r"^(?:jupytext|kernelspec)\s*:|^file_format\s*:\s*mystnb\s*$", re.M)
SEARCH = 400        # lines ahead a cell's next line is looked for


def front_matter(text: str) -> tuple[str, int] | None:
    """The YAML between a text's first `---` line and the next, and the line it starts at; None if none."""
    if not text.startswith("---"):
        return None
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return None
    end = next((k for k in range(1, len(lines)) if lines[k].strip() in ("---", "...")), None)
    return None if end is None else ("\n".join(lines[1:end]), 2)


def is_text_notebook(data: bytes) -> bool:
    """Whether a content/*.md file's front matter makes it a notebook (a kernel, or jupytext's header)."""
    found = front_matter(data[:65536].decode("utf-8-sig", "replace"))
    return found is not None and HEADER.search(found[0]) is not None


def notebook_of(data: bytes, rel: str) -> dict:
    """The notebook jupytext reads from the file (nbformat 4, as a plain dict)."""
    import jupytext
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BuildError(Problem(rel, 0, f"not UTF-8 text ({exc.reason}): save it as UTF-8")) from None
    header = front_matter(text)
    if header is not None:              # (its YAML said wrong as a page's is, at its line: jupytext's error is not)
        from ..core.yamlfile import load_yaml
        load_yaml(header[0], rel, line_offset=header[1] - 1)
    # MyST's notebook, as Jupyter Book reads it, unless the header names jupytext's plain Markdown format
    # (code in ```python fences); jupytext's own guess takes MyST only from a header that names .md too
    plain = header is not None and re.search(r"^\s*format_name\s*:\s*['\"]?markdown\b", header[0], re.M)
    try:
        notebook = jupytext.reads(text, fmt="md" if plain else "md:myst")
    except Exception as exc:        # jupytext's errors have no common class
        raise BuildError(Problem(rel, 1, f"jupytext cannot read it as a notebook ({' '.join(str(exc).split())[:200]}): "
                                         "check its front matter and its {code-cell} blocks")) from None
    notebook = _plain(notebook)
    for cell in notebook.get("cells") or []:
        cell.pop("id", None)        # (jupytext makes them up at random; a cell is named by its place instead)
    kernel = (notebook.get("metadata") or {}).get("kernelspec") or {}
    if isinstance(kernel, dict) and not runs_python(str(kernel.get("language") or "python"), str(kernel.get("name") or "")):
        raise BuildError(Problem(rel, 1, f"its kernel runs {kernel.get('language')} ({kernel.get('name')}): "
                                         "notebook pages run Python; name a Python kernel in its kernelspec"))
    return notebook


def _plain(value):
    """nbformat's NotebookNode, as the dicts and lists a notebook's JSON reads as."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def cell_lines(data: bytes, notebook: dict) -> list[list[int]]:
    """For each cell, the file's line of each line of its source: found in order, each after the last
    (a line jupytext rewrote, which is rare, takes the line after the one before it)."""
    text = data.decode("utf-8-sig").split("\n")
    found = front_matter("\n".join(text))
    at = 0 if found is None else found[0].count("\n") + 3      # (after the closing ---)
    result = []
    for cell in notebook.get("cells") or []:
        source = cell.get("source") or ""
        source = "".join(source) if isinstance(source, list) else source
        mine = []
        for piece in source.split("\n"):
            piece = piece.rstrip()
            k = next((k for k in range(at, min(len(text), at + SEARCH)) if text[k].rstrip() == piece), None)
            if k is None:
                mine.append(min(at + 1, len(text)))
            else:
                mine.append(k + 1)
                at = k + 1
        result.append(mine)
    return result


def as_ipynb(data: bytes, rel: str) -> bytes:
    """The notebook as an .ipynb file (what a student downloads, before this build's outputs go in)."""
    import json
    notebook = notebook_of(data, rel)
    metadata = {k: v for k, v in (notebook.get("metadata") or {}).items() if k not in HEADER_KEYS or k == "kernelspec"}
    return json.dumps({**notebook, "metadata": metadata}, ensure_ascii=False).encode()
