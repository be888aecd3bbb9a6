"""A notebook kept as text: a MyST Markdown notebook, as Jupyter Book courses keep their chapters, or a
Quarto document, as Quarto's.

`content/x/name.md` whose front matter names a kernel (`kernelspec:`) or jupytext's header
(`jupytext:`) is a notebook page, as `name.ipynb` would be: its ```` ```{code-cell} ```` blocks are
code cells that run, the Markdown between them its Markdown cells (a `+++` line splits one), a
cell's `:tags:` or `---` options its metadata. jupytext reads it (the same reader Jupyter and
Jupyter Book use).

`content/x/name.qmd` is a notebook page too, read here as Quarto reads one for Jupyter (jupytext's
reader of it runs Quarto's own program): its ```` ```{python} ```` chunks are code cells, their `#|`
lines the cell's options (cellshow.py), the Markdown between them a Markdown cell each; a chunk in
double braces (```` ```{{python}} ````) or without braces is code shown, not run. A chunk of another
language, or a document whose engine is not Jupyter's Python, is named: pages run Python.

This module finds where each cell's lines lie in the file, so that a problem names the file's own
line, and makes the notebook students download (`.ipynb`, with this build's outputs, render/notebook.py).
"""
from __future__ import annotations

import re
import warnings

from ..core.errors import BuildError, Problem
from .nbfile import runs_python

SUFFIX = ".md"
QUARTO = ".qmd"
TEXT = (SUFFIX, QUARTO)     # the suffixes of notebooks kept as text
HEADER_KEYS = ("jupytext", "kernelspec", "file_format", "jupyter", "engine")    # how the file is read, not the page's keys
# A Quarto chunk that runs: ```{python}, its options after the language (```{python filename="a.py"})
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATTRIBUTE = re.compile(r"""(?:^|[\s,])([\w.-]+)\s*=\s*("[^"]*"|'[^']*'|[^\s,]+)""")     # a chunk's key=value in braces
CHUNK = re.compile(r"^(?P<fence>`{3,})\s*\{(?P<language>[A-Za-z][\w-]*)(?P<options>[^{}]*)\}\s*$")
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
    """The notebook jupytext reads from the file, or Quarto's reading of it (nbformat 4, as a plain dict)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BuildError(Problem(rel, 0, f"not UTF-8 text ({exc.reason}): save it as UTF-8")) from None
    header = front_matter(text)
    if header is not None:              # (its YAML said wrong as a page's is, at its line: jupytext's error is not)
        from ..core.yamlfile import load_yaml
        loaded = load_yaml(header[0], rel, line_offset=header[1] - 1)
    if rel.endswith(QUARTO):
        return _quarto(text, rel, loaded if header is not None and isinstance(loaded, dict) else {})
    # MyST's notebook, as Jupyter Book reads it, unless the header names jupytext's plain Markdown format
    # (code in ```python fences); jupytext's own guess takes MyST only from a header that names .md too
    import jupytext                     # (a Quarto document needs none of it)
    plain = header is not None and re.search(r"^\s*format_name\s*:\s*['\"]?markdown\b", header[0], re.M)
    try:
        with warnings.catch_warnings():     # (its warnings, as "All code cells ... must have the same language",
            warnings.simplefilter("ignore")  # are not the author's to read on the terminal, raw: a cell's run says)
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


def _quarto(text: str, rel: str, header: dict) -> dict:
    """A Quarto document as the notebook Quarto runs: its chunks of Python the code cells, the Markdown
    around them Markdown cells (the front matter is the page's, read by nbsource.py)."""
    engine, kernel = str(header.get("engine") or "jupyter"), header.get("jupyter")     # (jupyter: python3, or
    if isinstance(kernel, dict):                                                    # its kernelspec's name)
        spec = kernel.get("kernelspec", kernel)
        kernel = spec.get("name") if isinstance(spec, dict) else spec
    kernel = str(kernel or "python3")
    if engine != "jupyter" or not runs_python("", kernel):
        said = f"its engine is {engine}" if engine != "jupyter" else f"its Jupyter kernel is {kernel}"
        raise BuildError(Problem(rel, 2, f"{said}: notebook pages run Python; say `jupyter: python3` in its front matter"))
    lines = text.split("\n")
    found = front_matter(text)
    at = 0 if found is None else found[0].count("\n") + 2         # (the closing ---'s index)
    cells, markdown, k = [], [], at + (found is not None)
    while k < len(lines):
        chunk, shown = CHUNK.match(lines[k]), FENCE.match(lines[k])       # (a fence shown holds no chunk)
        fence = chunk["fence"] if chunk else shown[1] if shown else ""
        end = next((e for e in range(k + 1, len(lines)) if re.fullmatch(rf" {{0,3}}{fence}{fence[0]}*\s*", lines[e])),
                   len(lines)) if fence else k
        if not chunk:
            markdown += lines[k:end + 1]
        elif chunk["language"].lower() not in ("python", "python3", "ipython", "ipython3"):
            raise BuildError(Problem(rel, k + 1, f"a chunk of {chunk['language']}: notebook pages run Python "
                                                 "(show code that does not run in a fence without braces: ```"
                                                 f"{chunk['language']})"))
        elif ATTRIBUTE.sub("", chunk["options"]).strip() not in ("", ".content-visible", ".content-hidden"):
            raise BuildError(Problem(rel, k + 1, f"the chunk's attributes {chunk['options'].strip()!r} are not "
                                                 "key=value pairs: write its options as `#| key: value` lines at its top"))
        else:                   # (its options in braces, key=value, are its `#|` lines' too)
            given = {key: value.strip(chr(34) + chr(39)) for key, value in ATTRIBUTE.findall(chunk["options"])}
            said = [f"#| {key}: {value}" for key, value in given.items() if key not in FORMATS]
            if not _on_the_web(chunk["options"], given):        # (it runs all the same, as Quarto runs it)
                said.append("#| include: false")
            if "".join(markdown).strip():
                cells.append({"cell_type": "markdown", "metadata": {}, "source": "\n".join(markdown).strip("\n")})
            markdown = []
            cells.append({"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                          "source": "\n".join(said + lines[k + 1:end])})
        k = end + 1
    if "".join(markdown).strip():
        cells.append({"cell_type": "markdown", "metadata": {}, "source": "\n".join(markdown).strip("\n")})
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}


FORMATS = ("when-format", "unless-format")        # a chunk's .content-visible or .content-hidden: for which formats


def _on_the_web(options: str, given: dict) -> bool:
    """Whether a chunk shows on a web page, as Quarto's HTML output shows it: `.content-visible` or
    `.content-hidden`, `when-format` or `unless-format` (this site's format is html)."""
    if ".content-visible" not in options and ".content-hidden" not in options:
        return True
    html = "html" in given.get("when-format", "html") and "html" not in given.get("unless-format", "")
    return html if ".content-visible" in options else not html


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
