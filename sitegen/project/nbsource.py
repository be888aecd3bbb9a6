"""A notebook page's source: the notebook in content/, read and checked, and the folder its lab runs in.

`content/x/name.ipynb` is a page (nbpage.py) and its own lab: its code cells, named by their
Jupyter ids, run through the labs' harness as Jupyter runs them (labipython.py). A raw cell at
the top holding YAML between `---` lines is its front matter (Quarto's convention): the page's
keys (title, description, toc, url, aliases, parent) and the lab's:

    data: [points.csv, img/cat.png]    files beside the notebook to publish with its downloads
    allow_errors: true                 a cell that raises shows its error, as Jupyter does, and the
                                       rest runs; without it (or a cell's raises-exception tag)
                                       an error fails the build, naming the cell
    timeout: 1200                      seconds it may run
    memory: 4096                       MiB it may allocate (default: half of the machine's memory)

Where each cell's source lies in the JSON is found as it is read, so that problems name the
notebook file's own lines (`content/x.ipynb:57`). The lab runs in a folder laid out as
Jupyter's working folder would be: the notebook's neighbours there, as links (lay_folder).
"""
from __future__ import annotations

import bisect
import json
import re
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from .cells import NAME, Cell, cell_options, runs
from ..core.errors import BuildError, Collector
from . import textnb
from .nbfile import parse_notebook
from ..core.stored import sha256_of

SUFFIX = ".ipynb"
LAB_KEYS = {"data": list, "allow_errors": bool, "timeout": (int, float), "memory": int}
FRONT_RAW = re.compile(r"^\s*---\s*$")


# Deepnote keeps a heading or a bullet as a text block whose source lacks the mark ("metadata":
# {"deepnote": {"type": "text-cell-h1"}}) and draws it as one: the mark is put back.
DEEPNOTE_MARKS = {"text-cell-h1": "# ", "text-cell-h2": "## ", "text-cell-h3": "### ", "text-cell-bullet": "- ",
                  "text-cell-todo": "- [ ] ", "text-cell-callout": "> "}


def deepnote_text(text: str, metadata: dict) -> str:
    """A Markdown cell's text as Deepnote shows it: with the mark its block type stands for."""
    deepnote = metadata.get("deepnote") if isinstance(metadata, dict) else None
    mark = DEEPNOTE_MARKS.get(deepnote.get("type") if isinstance(deepnote, dict) else None, "")
    if not mark or not text.strip() or text.lstrip().startswith(mark.strip()):
        return text
    return mark + text.lstrip()


class NotebookCell(NamedTuple):
    kind: str                   # markdown, code or raw
    text: str
    number: int                 # 1-based, among all the notebook's cells
    lines: tuple[int, ...]      # the file's line of each line of its source
    name: str = ""              # code cells: its name on the page (#cell-NAME)
    tags: tuple[str, ...] = ()
    attachments: tuple = ()     # Markdown cells: (name, "data:" URI) of the images pasted into it
    figure: tuple = ()          # code cells: myst-nb's figure options (its `mystnb: figure:` metadata): (name, caption)


class NotebookSource(NamedTuple):
    rel: str                    # content/x/name.ipynb
    meta: dict                  # the page's front matter (title, lab, ...)
    meta_lines: dict            # front matter key -> the file's line
    cells: tuple[NotebookCell, ...]
    data: tuple[str, ...]       # files beside it that it reads, relative to its folder
    allow_errors: bool
    timeout: float | None
    memory: int | None = None   # MiB its lab may allocate (None: the default)

    @property
    def lab_id(self) -> str:
        return lab_id(self.rel)

    def code(self) -> bytes:
        """What its lab runs, and nothing else: its code cells and how they may fail."""
        return json.dumps([[c.name, c.text, list(c.tags)] for c in self.cells if c.kind == "code"]
                          + [self.allow_errors], ensure_ascii=False).encode()


def is_notebook(rel: str) -> bool:
    """Whether content/… is a notebook by its name (.ipynb, Quarto's .qmd; an .md file may be one too:
    text_notebooks)."""
    return rel.startswith("content/") and rel.endswith((SUFFIX, textnb.QUARTO))


def runs_as_notebook(script) -> bool:
    """Whether a lab's script is a notebook page's notebook (.ipynb, or a MyST Markdown notebook:
    a script lab's script is Python)."""
    return str(script).endswith((SUFFIX, *textnb.TEXT))


def _stem(rel: str) -> str:
    """content/x/name.ipynb (or name.md): x/name."""
    return rel[len("content/"):].rsplit(".", 1)[0]


def slug(name: str) -> str:
    """An id from a name: ASCII kept, lowercased; a name with none (线性回归) gets one from its hash."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or f"nb-{sha256_of(name.encode())[:6]}"


def lab_id(rel: str) -> str:
    """The lab of content/x/name.ipynb: x-name."""
    return slug(_stem(rel))


def output_folder(rel: str) -> str:
    """Where its figures, downloads and notebook are published: x/name/ beside x/name.html (a name
    that is not plain ASCII, as "Widget List" or 线性回归, as its slug: widget-list)."""
    path = PurePosixPath(_stem(rel))
    name = path.name if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", path.name) else slug(path.name)
    return str(path.parent / name) if str(path.parent) != "." else name


def page_output(rel: str) -> str:
    """Where the page is published: beside its folder, x/name.html."""
    return output_folder(rel) + ".html"


# -- where each cell's source lies in the file -----------------------------------------

def _source_lines(text: str) -> list[list[int]]:
    """For each cell, the file's line of each line of its source (nbformat writes a source as a
    list, one line each; a source written as one string lies on one line). Read by skipping
    values with the C decoder, so a notebook of megabytes of outputs costs milliseconds."""
    decoder = json.JSONDecoder()
    starts = [m.start() for m in re.finditer("\n", text)]

    def line(position: int) -> int:
        return bisect.bisect_right(starts, position - 1) + 1
    space = re.compile(r"[ \t\n\r]*")

    def skip(i: int) -> int:
        return space.match(text, i).end()

    def members(i: int):
        """(key, position of its value) of the object at i; the caller moves past each value."""
        i = skip(i + 1)
        while text[i] != "}":
            key, i = json.decoder.scanstring(text, i + 1)
            i = skip(skip(i) + 1)
            i = yield key, i
            i = skip(i)
            if text[i] == ",":
                i = skip(i + 1)

    def elements(i: int):
        i = skip(i + 1)
        while text[i] != "]":
            i = yield i
            i = skip(i)
            if text[i] == ",":
                i = skip(i + 1)

    def walk(gen, handle):
        try:
            item = next(gen)
            while True:
                item = gen.send(handle(item))
        except StopIteration:
            pass

    found: list[list[int]] = []

    def value_end(i: int) -> int:
        return decoder.raw_decode(text, i)[1]

    def source(i: int) -> int:
        if text[i] != "[":
            found[-1] = [line(i)]
            return value_end(i)
        lines: list[int] = []

        def one(j: int) -> int:
            lines.append(line(j))
            return value_end(j)
        walk(elements(i), one)
        found[-1] = lines
        return value_end(i)

    def cell(i: int) -> int:
        found.append([line(i)])
        walk(members(i), lambda kv: source(kv[1]) if kv[0] == "source" else value_end(kv[1]))
        return value_end(i)

    def top(kv) -> int:
        key, i = kv
        if key == "cells" and text[i] == "[":
            walk(elements(i), cell)
        return value_end(i)
    try:
        walk(members(skip(0)), top)
    except (ValueError, IndexError):
        return []           # (read_notebook has said what is wrong with it)
    return found


# -- reading ----------------------------------------------------------------------------

def read(data: bytes, rel: str) -> NotebookSource:
    """A notebook page's source, checked: its front matter, cells and where each lies."""
    from ..core.yamlfile import load_yaml
    text_notebook = rel.endswith(textnb.TEXT)
    if text_notebook:           # a MyST Markdown notebook or Quarto's (textnb.py): its front matter is the file's own
        notebook = textnb.notebook_of(data, rel)
        where = textnb.cell_lines(data, notebook)
    else:
        notebook = parse_notebook(data, rel)
        where = _source_lines(data.decode("utf-8-sig"))
    problems = Collector()
    cells, names = [], set()
    raw_cells = notebook.get("cells") or []
    for number, raw in enumerate(raw_cells, 1):
        source = raw.get("source") or ""
        source = "".join(source) if isinstance(source, list) else source
        lines = tuple(where[number - 1]) if number <= len(where) else (0,)
        kind = raw.get("cell_type")
        metadata = raw.get("metadata") or {}
        tags = tuple(metadata.get("tags") or ())
        name = ""
        if kind == "markdown":
            source = deepnote_text(source, metadata)
        if kind == "code":
            name = cell_name(raw, metadata, f"cell-{number}", names)
            names.add(name)
        options = (metadata.get("mystnb") or {}).get("figure") if isinstance(metadata.get("mystnb"), dict) else None
        figure = (str(options.get("name") or ""), str(options.get("caption") or "")) if isinstance(options, dict) else ()
        cells.append(NotebookCell(kind, source, number, lines, name, tags, _attachments(raw), figure))
    meta, meta_lines = {}, {}
    if text_notebook:
        # (a Quarto document may start with its heading: Quarto needs no front matter to run it)
        yaml_text, first = textnb.front_matter(data.decode("utf-8-sig")) or ("", 1)
        loaded = load_yaml(yaml_text, rel, line_offset=first - 1) or {}        # (its lines are the file's)
        if not isinstance(loaded, dict):
            problems.add(rel, first, "front matter must be a mapping (key: value lines)")
            loaded = {}
        key_lines = getattr(loaded, "key_lines", {})
        meta = {key: value for key, value in loaded.items() if key not in textnb.HEADER_KEYS}
        meta_lines = {key: key_lines.get(key, 0) + 1 for key in meta}
    elif cells and cells[0].kind == "raw" and FRONT_RAW.match(cells[0].text.split("\n", 1)[0]):
        front = cells[0]
        body = front.text.split("\n")
        end = next((k for k in range(1, len(body)) if FRONT_RAW.match(body[k])), None)
        if end is None:
            problems.add(rel, front.lines[0], "the front matter (a raw cell at the top) opened with '---' is "
                                              "never closed: end it with a line '---'")
        else:
            offset = front.lines[min(1, len(front.lines) - 1)] - 1
            loaded = load_yaml("\n".join(body[1:end]), rel, line_offset=offset) or {}
            if not isinstance(loaded, dict):
                problems.add(rel, offset + 1, "front matter must be a mapping (key: value lines)")
                loaded = {}
            key_lines = getattr(loaded, "key_lines", {})
            meta = dict(loaded)
            meta_lines = {key: source_line(front.lines, key_lines.get(key, 0) + 1) for key in meta}
        cells = cells[1:]
    lab = {key: meta.pop(key) for key in list(meta) if key in LAB_KEYS}
    for key, value in lab.items():
        if not isinstance(value, LAB_KEYS[key]) or (key in ("timeout", "memory") and isinstance(value, bool)) \
                or (key == "memory" and not 64 <= value <= 2**20):
            problems.add(rel, meta_lines[key], f"front matter '{key}' must be "
                                               + {"data": "a list of files beside the notebook ([points.csv])",
                                                  "allow_errors": "true or false",
                                                  "timeout": "a number of seconds",
                                                  "memory": "a number of MiB between 64 and 1048576"}[key])
    data = tuple(str(d) for d in lab.get("data", []) if isinstance(lab.get("data"), list))
    for item in data:
        normal = PurePosixPath(item)
        if normal.is_absolute() or ".." in normal.parts or not item.strip():
            problems.add(rel, meta_lines["data"], f"data: {item!r} must be a file inside the notebook's folder, "
                                                  "named relative to it (points.csv, data/points.csv)")
    if "title" not in meta:
        title = str((notebook.get("metadata") or {}).get("title") or "")
        first = next((c for c in cells if c.kind == "markdown" and c.text.strip()), None)
        heading = TITLE.match(first.text.strip()) if first else None
        if heading and (not title or heading["title"].strip() == title):
            title = heading["title"].strip()
            if not heading["label"]:        # (a labelled one stays: the page takes its label with it, content.py)
                rest = first.text.strip().split("\n", 1)[1] if "\n" in first.text.strip() else ""
                cells = [c._replace(text=rest, lines=c.lines[1:] or c.lines) if c is first else c for c in cells]
        meta["title"] = title or PurePosixPath(rel).stem
        meta_lines["title"] = 1
    problems.raise_if_any()
    if any(c.kind == "code" and c.text.strip() and runs(c.text, c.tags) for c in cells):   # (one of prose only has no lab)
        meta["lab"] = lab_id(rel)
    return NotebookSource(rel, meta, meta_lines, tuple(cells), data, bool(lab.get("allow_errors", False)),
                          lab.get("timeout") if isinstance(lab.get("timeout"), (int, float)) else None,
                          lab.get("memory") if isinstance(lab.get("memory"), int) else None)


# A notebook's first heading as its title, and the title's label if it has one (Quarto's `# Title {#sec-x}`).
TITLE = re.compile(r"#[ \t]+(?P<title>[^\n]+?)(?:[ \t]*\{#(?P<label>[^}\s]+)\})?[ \t]*(?:\n|$)")


def _attachments(raw: dict) -> tuple:
    """A Markdown cell's pasted images as data: URIs (a page's images may be; nothing else of it)."""
    found = []
    for name, data in (raw.get("attachments") or {}).items():
        mime = next((m for m in data if m in ("image/png", "image/jpeg", "image/gif", "image/webp")), None)
        value = data.get(mime) if mime else None
        if isinstance(value, list):
            value = "".join(value)
        if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9+/=\s]*", value):
            found.append((name, f"data:{mime};base64," + re.sub(r"\s", "", value)))
    return tuple(found)


def source_line(lines: tuple[int, ...], k: int) -> int:
    """The file's line of line k (1-based) of a cell's source."""
    return lines[min(max(k, 1), len(lines)) - 1] if lines else 0


def cell_name(raw: dict, metadata: dict, fallback: str, taken: set) -> str:
    """A code cell's name (#cell-NAME on the page, its figures' names): its metadata name, else from its
    Jupyter id, stable while it is edited and cells are added around it; else `fallback`."""
    for candidate in (metadata.get("name"), raw.get("id")):
        if isinstance(candidate, str) and candidate:
            name = candidate if NAME.match(candidate) else "c" + re.sub(r"[^a-z0-9_-]+", "-", candidate.lower())
            if NAME.match(name) and name not in taken:
                return name
    return fallback


def cells_of(source: NotebookSource) -> tuple[Cell, ...]:
    """Its code cells as the lab's (line: the file's line of the cell's first source line; number: its
    number among the code cells, as the page counts them: "the 3rd code cell", said "code cell 3")."""
    code = [c for c in source.cells if c.kind == "code" and c.text.strip()]
    return tuple(Cell(c.name, c.text, c.lines[0] if c.lines else 0, c.tags, number,
                      source.allow_errors or ("error", "true") in cell_options(c.text)[0])      # (Quarto's, a cell's own)
                 for number, c in enumerate(code, 1) if runs(c.text, c.tags))


def python_of(source: NotebookSource) -> bytes:
    """Its code cells that are plain Python, as one script: what the build reads its imports from."""
    import ast
    parts = []
    for cell in source.cells:
        if cell.kind == "code" and runs(cell.text, cell.tags):
            try:
                ast.parse(cell.text)
                parts.append(cell.text)
            except SyntaxError:
                continue            # IPython syntax: its imports are found as it runs (labreads.py)
    return "\n".join(parts).encode()


def data_sources(source: NotebookSource) -> dict[str, str]:
    """Its data files: name in the lab's folder -> the project's path."""
    folder = PurePosixPath(source.rel).parent
    return {item: str(folder / item) for item in source.data}


def load(root, rel: str, snapshot: dict[str, str] | None, memo=None) -> NotebookSource:
    """content/….ipynb read (as the build's snapshot holds it) and checked; remembered by its hash."""
    from ..core.memo import Memo
    from ..core.sources import read_bytes
    memo = memo or Memo(None)
    if snapshot and rel in snapshot and (found := memo.value("notebook-source", (rel, snapshot[rel]))) is not None:
        return found
    data = read_bytes(root / rel, rel, snapshot)
    return memo.value("notebook-source", (rel, sha256_of(data)), lambda: read(data, rel))


def notebooks(root, snapshot: dict[str, str] | None, memo=None, known: frozenset | None = None) -> list[str]:
    """The notebook pages of the project: content/**.ipynb and the MyST Markdown notebooks among
    content/**.md (among the snapshot's sources, if given; `known`: those, if the caller knows them)."""
    from ..core.sources import source_files
    found = snapshot if snapshot is not None else source_files(root)
    texts = known if known is not None else text_notebooks(root, snapshot, memo)
    return sorted([rel for rel in found if is_notebook(rel)] + list(texts),
                  key=lambda rel: rel.split("/"))


def edits_notebook(root, edited) -> bool:
    """Whether any of the sources `edited` is a notebook page as it is now (or was an .ipynb)."""
    for rel in edited:
        if is_notebook(rel):
            return True
        if rel.startswith("content/") and rel.endswith(textnb.SUFFIX):
            try:
                if textnb.is_text_notebook((Path(root) / rel).read_bytes()):
                    return True
            except OSError:
                continue            # (deleted: a build finds what that means)
    return False


def text_notebooks(root, snapshot: dict[str, str] | None, memo=None) -> frozenset[str]:
    """Which content/**.md files are MyST Markdown notebooks (textnb.py): their front matter says so.
    With the snapshot and a memo, a file whose text the last build saw is not read again."""
    from ..core.incremental import Phase
    from ..core.sources import read_bytes, source_files
    found = snapshot if snapshot is not None else source_files(root)
    texts = [rel for rel in found if rel.startswith("content/") and rel.endswith(textnb.SUFFIX)]
    kinds = []
    with Phase(memo if snapshot is not None else None, "notebook-kind") as phase:
        for rel in texts:
            made = (snapshot[rel],) if snapshot is not None else ()
            record = phase.reuse(rel, made) if made else None
            if record is None:
                is_one = textnb.is_text_notebook(read_bytes(root / rel, rel, snapshot))
                record = phase.made(rel, made, ("notebook-kind", rel) + made, is_one) if made else None
                kinds.append((rel, is_one))
            else:
                kinds.append((rel, record.summary))
    return frozenset(rel for rel, is_one in kinds if is_one)


def download_name(rel: str) -> str:
    """The download's file name: the notebook's own, where it is a plain ASCII name."""
    name = PurePosixPath(rel).stem + SUFFIX             # (a MyST Markdown notebook's is an .ipynb too)
    return name if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*\.ipynb", name) else f"{slug(PurePosixPath(rel).stem)}.ipynb"


def lay_folder(root, rel: str, work) -> tuple:
    """The folder a notebook page's lab runs in, laid out in `work` as Jupyter's would be: the
    notebook's folder, with its neighbours (the files and folders beside it, and beside each folder
    above it up to content/) there as links, so that `open('points.csv')` and `../data/x.csv` read
    what they read in Jupyter; what the lab reads through them is recorded (labreads.py). Returns
    (the folder it runs in, the links laid, {folder laid: the project folder it stands for})."""
    import os
    from pathlib import Path
    from ..core.sources import SKIPPED
    parts = PurePosixPath(rel).parent.parts          # ("content", "x", ...)
    project, here, links, mirrors = Path(root), Path(work), [], {}
    for depth, part in enumerate(parts):
        project = project / part
        if depth:
            here = here / part
            here.mkdir(exist_ok=True)
        mirrors[str(here)] = str(project)
        below = parts[depth + 1] if depth + 1 < len(parts) else None
        for entry in sorted(os.scandir(project), key=lambda e: e.name):
            if entry.name in SKIPPED or entry.name == below or (here / entry.name).exists():
                continue
            os.symlink(entry.path, here / entry.name)
            links.append(here / entry.name)
    return here, links, mirrors


def in_notebook_terms(problems, root) -> list:
    """Problems as a notebook's author finds their place: a line of a notebook's JSON, which Jupyter
    never shows, also said as its cell (a code cell by its number on the page, another by its place
    among all cells) and the line in that cell; the path and the file's line stay, for an editor."""
    from ..core.errors import Problem
    cells: dict[str, list] = {}     # a notebook -> (cell type, whether it holds code, its lines) per cell
    found = []
    for problem in problems:
        if not (problem.path.endswith(SUFFIX) and problem.line) or "code cell " in problem.message \
                or problem.message.startswith("cell "):                  # (said so already)
            found.append(problem)
            continue
        if problem.path not in cells:
            try:
                data = (Path(root) / problem.path).read_bytes()
                raw = parse_notebook(data, problem.path).get("cells") or []
            except (OSError, BuildError):
                raw, data = [], b""
            text = [("".join(c.get("source") or "") if isinstance(c.get("source"), list) else str(c.get("source") or ""))
                    for c in raw]
            cells[problem.path] = list(zip([c.get("cell_type") for c in raw], [t.strip() != "" for t in text],
                                           _source_lines(data.decode("utf-8-sig")) if raw else []))
        where, code_number = "", 0
        for number, (kind, has_code, lines) in enumerate(cells[problem.path], 1):     # the last cell before it
            code_number += kind == "code" and has_code
            if lines and lines[0] <= problem.line:
                place = f"code cell {code_number}" if kind == "code" else f"cell {number} ({kind})"
                where = place + (f", line {lines.index(problem.line) + 1}" if problem.line in lines else "") + ": "
        found.append(Problem(problem.path, problem.line, where + problem.message))
    return found
