"""A notebook in content/ is a page and its own lab, as in Jupyter Book and Quarto.

`content/x/name.ipynb` is published as `x/name.html`. Its Markdown cells are the page's prose
(the site's syntax works there: values of its own names, `::: check`, exercises, math); its code
cells are a lab's cells, run through the labs' harness as Jupyter runs them (labipython.py), each
shown where it stands with everything it showed. The notebook stays the teacher's source: they
edit and save it in Jupyter, and the next build shows the change. Its outputs as saved are never
read; the build computes its own, and the download is the notebook with them.

A raw cell at the top holding YAML between `---` lines is its front matter (Quarto's convention):
the page's keys (title, description, toc, url, aliases, parent) and the lab's:

    data: [points.csv, img/cat.png]    files beside the notebook it reads, copied into the folder
                                       it runs in and published with its downloads
    allow_errors: true                 a cell that raises shows its error, as Jupyter does, and the
                                       rest runs; without it (or a cell's raises-exception tag)
                                       an error fails the build, naming the cell
    timeout: 1200                      seconds it may run

Lines in problems are the notebook file's own (`content/x.ipynb:57`), found by where each cell's
source lies in the JSON, so an editor opens the notebook at the line the problem names.
"""
from __future__ import annotations

import bisect
import hashlib
import json
import posixpath
import re
from pathlib import PurePosixPath
from typing import NamedTuple

from .cells import NAME, Cell
from .errors import BuildError, Collector, Problem
from .nbfile import parse_notebook
from .prose import LINK, is_external

SUFFIX = ".ipynb"
LAB_KEYS = {"data": list, "allow_errors": bool, "timeout": (int, float)}
FRONT_RAW = re.compile(r"^\s*---\s*$")
FENCE = re.compile(r"^\s*(```|~~~)\s*(?P<info>\S*)")
OUTPUT_FENCES = ("", "text", "txt", "output", "plaintext", "console")   # how a pasted output is fenced
IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<target>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)")
EMPHASIS_LINE = re.compile(r"^\s*(\*\*|__|\*|_)[^*_].*\1\s*$")


class NotebookCell(NamedTuple):
    kind: str                   # markdown, code or raw
    text: str
    number: int                 # 1-based, among all the notebook's cells
    lines: tuple[int, ...]      # the file's line of each line of its source
    name: str = ""              # code cells: its name on the page (#cell-NAME)
    tags: tuple[str, ...] = ()
    attachments: tuple = ()     # Markdown cells: (name, "data:" URI) of the images pasted into it


class NotebookSource(NamedTuple):
    rel: str                    # content/x/name.ipynb
    meta: dict                  # the page's front matter (title, lab, ...)
    meta_lines: dict            # front matter key -> the file's line
    cells: tuple[NotebookCell, ...]
    data: tuple[str, ...]       # files beside it that it reads, relative to its folder
    allow_errors: bool
    timeout: float | None

    @property
    def lab_id(self) -> str:
        return lab_id(self.rel)

    def code(self) -> bytes:
        """What its lab runs, and nothing else: its code cells and how they may fail."""
        return json.dumps([[c.name, c.text, list(c.tags)] for c in self.cells if c.kind == "code"]
                          + [self.allow_errors], ensure_ascii=False).encode()


def is_notebook(rel: str) -> bool:
    return rel.startswith("content/") and rel.endswith(SUFFIX)


def slug(name: str) -> str:
    """An id from a name: ASCII kept, lowercased; a name with none (线性回归) gets one from its hash."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or f"nb-{hashlib.sha256(name.encode()).hexdigest()[:6]}"


def lab_id(rel: str) -> str:
    """The lab of content/x/name.ipynb: x-name."""
    return slug(rel[len("content/"): -len(SUFFIX)])


def output_folder(rel: str) -> str:
    """Where its figures, downloads and notebook are published: x/name/ beside x/name.html (a name
    that is not plain ASCII, as "Widget List" or 线性回归, as its slug: widget-list)."""
    path = PurePosixPath(rel[len("content/"): -len(SUFFIX)])
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
    from .yamlfile import load_yaml
    notebook = parse_notebook(data, rel)
    text = data.decode("utf-8-sig")
    where = _source_lines(text)
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
        if kind == "code":
            name = cell_name(raw, metadata, f"cell-{number}", names)
            names.add(name)
        cells.append(NotebookCell(kind, source, number, lines, name, tags, _attachments(raw)))
    meta, meta_lines = {}, {}
    if cells and cells[0].kind == "raw" and FRONT_RAW.match(cells[0].text.split("\n", 1)[0]):
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
            meta_lines = {key: _line(front.lines, key_lines.get(key, 0) + 1) for key in meta}
        cells = cells[1:]
    lab = {key: meta.pop(key) for key in list(meta) if key in LAB_KEYS}
    for key, value in lab.items():
        if not isinstance(value, LAB_KEYS[key]) or (key == "timeout" and isinstance(value, bool)):
            problems.add(rel, meta_lines[key], f"front matter '{key}' must be "
                                               + {"data": "a list of files beside the notebook ([points.csv])",
                                                  "allow_errors": "true or false",
                                                  "timeout": "a number of seconds"}[key])
    data = tuple(str(d) for d in lab.get("data", []) if isinstance(lab.get("data"), list))
    for item in data:
        normal = PurePosixPath(item)
        if normal.is_absolute() or ".." in normal.parts or not item.strip():
            problems.add(rel, meta_lines["data"], f"data: {item!r} must be a file inside the notebook's folder, "
                                                  "named relative to it (points.csv, data/points.csv)")
    if "title" not in meta:
        title = str((notebook.get("metadata") or {}).get("title") or "")
        first = next((c for c in cells if c.kind == "markdown" and c.text.strip()), None)
        heading = re.match(r"#\s+(\S.*)", first.text.strip()) if first else None
        if heading and (not title or heading[1].strip() == title):
            title = heading[1].strip()
            rest = first.text.strip().split("\n", 1)[1] if "\n" in first.text.strip() else ""
            cells = [c._replace(text=rest, lines=c.lines[1:] or c.lines) if c is first else c for c in cells]
        meta["title"] = title or PurePosixPath(rel).stem
        meta_lines["title"] = 1
    problems.raise_if_any()
    if any(c.kind == "code" and c.text.strip() for c in cells):       # (a notebook of prose only has no lab)
        meta["lab"] = lab_id(rel)
    return NotebookSource(rel, meta, meta_lines, tuple(cells), data, bool(lab.get("allow_errors", False)),
                          lab.get("timeout") if isinstance(lab.get("timeout"), (int, float)) else None)


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


def _line(lines: tuple[int, ...], k: int) -> int:
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
    """Its code cells as the lab's (line: the file's line of the cell's first source line)."""
    return tuple(Cell(c.name, c.text, c.lines[0] if c.lines else 0, c.tags, c.number, source.allow_errors)
                 for c in source.cells if c.kind == "code" and c.text.strip())


def python_of(source: NotebookSource) -> bytes:
    """Its code cells that are plain Python, as one script: what the build reads its imports from."""
    import ast
    parts = []
    for cell in source.cells:
        if cell.kind == "code":
            try:
                ast.parse(cell.text)
                parts.append(cell.text)
            except SyntaxError:
                continue            # IPython syntax: its imports are found as it runs (labreads.py)
    return "\n".join(parts).encode()


# -- the page ---------------------------------------------------------------------------

def pasted_output(text: str) -> bool:
    """A Markdown cell that only pastes a code cell's output: fenced text, images, one emphasised line."""
    rest, fence, fenced = [], False, False
    for line in text.splitlines():
        if match := FENCE.match(line):
            if not fence and match["info"] not in OUTPUT_FENCES:
                return False                    # code shown as an example, not an output
            fence, fenced = not fence, True
        elif not fence and line.strip() and not IMAGE.fullmatch(line.strip()):
            rest.append(line)
    return (fenced or bool(IMAGE.search(text))) and (not rest or (len(rest) == 1 and bool(EMPHASIS_LINE.match(rest[0]))))



def page_text(source: NotebookSource, pages: frozenset = frozenset()) -> tuple[str, list[int], list]:
    """The page as the site's Markdown (front matter, prose, `::: cell` blocks, downloads), for each
    of its lines the notebook file's line it came from, and notes for the author. A link to a
    notebook that is not among the site's `pages` (content paths; a book's next chapter, left
    behind) is shown as its text, with a note."""
    lines, where, notes = ["---"], [1], []
    folder = PurePosixPath(source.rel[len("content/"):]).parent

    def unlinked(match, line: int) -> str:
        from urllib.parse import unquote
        target = match["target"].partition("#")[0]
        if not target.endswith(SUFFIX) or "://" in target:
            return match[0]
        if posixpath.normpath(str(folder / unquote(target))) in pages:
            return match[0]
        notes.append((line, f"links to {target}, which is no page of this site: shown as its text; add that "
                            "notebook to content/, or link the address it is published at"))
        return match["text"]
    for key, value in source.meta.items():
        lines.append(f"{key}: {json.dumps(value, ensure_ascii=False)}")
        where.append(source.meta_lines.get(key, 1))
    lines.append("---")
    where.append(1)
    has_downloads, after_code = False, False
    for cell in source.cells:
        if cell.kind == "markdown" and after_code and pasted_output(cell.text):
            notes.append((cell.lines[0] if cell.lines else 0, "this Markdown cell only pastes the output of the cell "
                          "above (saved text or images): not shown, as the page shows what the build computed; "
                          "delete it from the notebook"))
            continue
        after_code = cell.kind == "code" and bool(cell.text.strip())
        if cell.kind == "markdown" and cell.text.strip():
            body = cell.text.split("\n")
            numbers = [_line(cell.lines, k) for k in range(1, len(body) + 1)]
            for name, uri in cell.attachments:          # ![logo](attachment:logo.png), as Jupyter shows it
                body = [text.replace(f"attachment:{name}", uri) for text in body]
            body = [_own(text, n, notes) for text, n in zip(body, numbers)]
            lines += [LINK.sub(lambda m, n=n: unlinked(m, n), text) for text, n in zip(body, numbers)] + [""]
            where += numbers + [cell.lines[-1] if cell.lines else 0]
            has_downloads = has_downloads or any(line.strip() == "::: downloads" for line in body)
        elif cell.kind == "code" and cell.text.strip():
            lines += [f"::: cell {cell.name} figures=shown", ""]
            where += [cell.lines[0] if cell.lines else 0] * 2
    if not has_downloads and "lab" in source.meta:
        lines.append("::: downloads")
        where.append(where[-1])
    return "\n".join(lines) + "\n", where, notes


REMOTE_IMAGE = re.compile(r"<img\b[^>]*?\bsrc\s*=\s*[\"']?(?:https?:)?//[^>]*>", re.I)
EMPTY_LINK = re.compile(r"<a\b[^>]*>\s*</a>", re.I)
STYLE = re.compile(r"\s+style\s*=\s*(?:\"[^\"]*\"|'[^']*')", re.I)


def _own(text: str, line: int, notes: list) -> str:
    """A line of a Markdown cell from elsewhere as this site may publish it: an image from another site
    (a Colab or Binder badge) left out, and a style= attribute (which the site's Content-Security-Policy
    refuses) dropped, each with a note."""
    def remote(match) -> str:
        if not is_external(match["target"]) or match["target"].startswith(("data:image/", "attachment:")):
            return match[0]
        notes.append((line, f"the image {match['target']} is loaded from another site, which pages never do: "
                            "left out (save it beside the notebook to show it)"))
        return match["alt"]
    kept = IMAGE.sub(remote, text)
    if REMOTE_IMAGE.search(kept):
        notes.append((line, "an <img> loaded from another site (a badge?) is left out: pages load nothing from elsewhere"))
        kept = EMPTY_LINK.sub("", REMOTE_IMAGE.sub("", kept))       # (and the badge's link, left empty)
    if STYLE.search(kept):
        notes.append((line, "a style= attribute is dropped: the site's Content-Security-Policy refuses inline styles"))
        kept = STYLE.sub("", kept)
    return kept


def page_of(source: NotebookSource, output: str, memo=None, pages: frozenset = frozenset()):
    """The notebook's Page: its Markdown cells parsed as a page's body is, lines the file's own
    (`pages`: the site's, by content path, which its links to other notebooks may name)."""
    from .content import parse_page
    text, where, notes = page_text(source, pages)

    def line(number: int) -> int:
        return where[number - 1] if 0 < number <= len(where) else 0
    try:
        page = parse_page(text, source.rel, output, memo)
    except BuildError as exc:
        raise BuildError([Problem(p.path, line(p.line), p.message) if p.path == source.rel else p
                          for p in exc.problems]) from None
    import dataclasses
    return dataclasses.replace(page, blocks=tuple(b._replace(line=line(b.line)) for b in page.blocks),
                               meta_line=1, notes=tuple(notes))


def data_sources(source: NotebookSource) -> dict[str, str]:
    """Its data files: name in the lab's folder -> the project's path."""
    folder = PurePosixPath(source.rel).parent
    return {item: str(folder / item) for item in source.data}


def load(root, rel: str, hashes: dict[str, str] | None, memo=None) -> NotebookSource:
    """content/….ipynb read (as the build's snapshot holds it) and checked; remembered by its hash."""
    from .memo import Memo
    from .sources import read_bytes
    memo = memo or Memo(None)
    if hashes and rel in hashes and (found := memo.recall("notebook-source", (rel, hashes[rel]))) is not None:
        return found[0]
    data = read_bytes(root / rel, rel, hashes)
    return memo.remember("notebook-source", (rel, hashlib.sha256(data).hexdigest()), lambda: read(data, rel))


def notebooks(root, hashes: dict[str, str] | None) -> list[str]:
    """The notebook pages of the project: content/**.ipynb (among the snapshot's sources, if given)."""
    from .sources import source_files
    found = hashes if hashes is not None else source_files(root)
    return sorted((rel for rel in found if is_notebook(rel)), key=lambda rel: rel.split("/"))


def download_name(rel: str) -> str:
    """The download's file name: the notebook's own, where it is a plain ASCII name."""
    name = PurePosixPath(rel).name
    return name if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*\.ipynb", name) else f"{slug(PurePosixPath(rel).stem)}.ipynb"


def notebook_pages(root, hashes: dict[str, str], memo=None) -> list:
    """The Page of every notebook in content/ (content/x/y.ipynb is published as x/y.html)."""
    from .memo import Memo
    memo = memo or Memo(None)
    pages, problems = [], []
    known = frozenset(rel[len("content/"):] for rel in hashes if rel.startswith("content/") and rel.endswith((".md", SUFFIX)))
    try:
        requirements = (root / "requirements.txt").read_bytes()
    except OSError:
        requirements = b""
    site = hashlib.sha256("\0".join(sorted(known)).encode() + b"\0" + requirements).hexdigest()
    for rel in notebooks(root, hashes):
        output = page_output(rel)
        try:
            pages.append(memo.remember("notebook-page", (rel, hashes[rel], site),
                                       lambda: _page(root, rel, output, hashes, memo, known)))
        except BuildError as exc:
            problems.extend(exc.problems)
    if problems:
        raise BuildError(problems)
    return pages


def _page(root, rel: str, output: str, hashes, memo, known: frozenset):
    import dataclasses
    source = load(root, rel, hashes, memo)
    page = page_of(source, output, memo, known)
    return dataclasses.replace(page, digest=hashes[rel], notes=page.notes + tuple(_unlisted(root, source)))


def _unlisted(root, source: NotebookSource) -> list[tuple[int, str]]:
    """Notes for what its code imports that requirements.txt does not list (needs.py): at its line (a
    project without a requirements.txt is not one Pages builds: nothing to say)."""
    from .needs import unlisted
    notes, seen = [], set()
    if not (root / "requirements.txt").is_file():
        return notes
    for cell in source.cells:
        if cell.kind == "code":
            for line, module, dist in unlisted(root, root / source.rel, cell.text):
                if dist not in seen:
                    seen.add(dist)
                    notes.append((_line(cell.lines, line), f"imports {module}, which requirements.txt does not list: "
                                                           f"add `{dist}` to requirements.txt, or Cloudflare Pages' "
                                                           "build will not have it"))
    return notes


def lay_folder(root, rel: str, work) -> tuple:
    """The folder a notebook page's lab runs in, laid out in `work` as Jupyter's would be: the
    notebook's folder, with its neighbours (the files and folders beside it, and beside each folder
    above it up to content/) there as links, so that `open('points.csv')` and `../data/x.csv` read
    what they read in Jupyter; what the lab reads through them is recorded (labreads.py). Returns
    (the folder it runs in, the links laid, {folder laid: the project folder it stands for})."""
    import os
    from pathlib import Path
    from .sources import SKIPPED
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
