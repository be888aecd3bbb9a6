"""A notebook in content/ is a page, as in Jupyter Book and Quarto.

`content/x/name.ipynb` is published as `x/name.html` (nbsource.py reads it). Its Markdown cells are
the page's prose (the site's syntax works there: values of its own names, `::: check`, exercises,
math); each code cell stands where it was, as `::: cell NAME figures=shown`, showing everything it
showed. The notebook stays the teacher's source: they edit and save it in Jupyter, and the next
build shows the change. Its outputs as saved are never read; the build computes its own, and the
download is the notebook with them (notebook.py). What a notebook from elsewhere holds that a page
may not (images and styles from other sites, links to notebooks the site lacks, Markdown cells
that paste an output) is left out, each with a note for the author.
"""
from __future__ import annotations

import json
import posixpath
import re
from pathlib import PurePosixPath

from ..core.errors import BuildError, Problem
from ..project.nbsource import NotebookSource, load, notebooks, page_output, source_line
from .bookparts import outside_spans, without_style
from .markup import open_fence
from .cellshow import cell_figure, cell_visibility
from ..project.cells import cell_options, runs
from .jupytermath import site_math
from .prose import LINK, SOURCES, is_external
from ..core.stored import sha256_of

FENCE = re.compile(r"^\s*(```|~~~)\s*(?P<info>\S*)")
OUTPUT_FENCES = ("", "text", "txt", "output", "plaintext", "console")   # how a pasted output is fenced
IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<target>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)")
EMPHASIS_LINE = re.compile(r"^\s*(\*\*|__|\*|_)[^*_].*\1\s*$")


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



GAP = 1000      # at most so many blank lines stand for the lines between two cells (outputs may be long)


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
        if not target.endswith(SOURCES) or "://" in target:
            return match[0]
        if posixpath.normpath(str(folder / unquote(target))) in pages:
            return match[0]
        notes.append((line, f"links to {target}, which is no page of this site: shown as its text; add that "
                            "page or notebook to content/, or link the address it is published at"))
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
        if cell.kind == "markdown" and REMOVED & set(cell.tags):     # (Jupyter Book's: its text left out)
            continue
        if cell.kind == "markdown" and cell.text.strip():
            numbers = [source_line(cell.lines, k) for k in range(1, cell.text.count("\n") + 2)]
            rewritten = site_math(cell.text.split("\n"))          # Jupyter's math, in this site's form
            body, numbers = [text for text, _ in rewritten], [numbers[k] for _, k in rewritten]
            for name, uri in cell.attachments:          # ![logo](attachment:logo.png), as Jupyter shows it
                body = [text.replace(f"attachment:{name}", uri) for text in body]
            body = [_own(text, n, notes) for text, n in zip(body, numbers)]
            if closer := _open_fence(body):      # (Jupyter renders each cell alone: a fence ends with its cell,
                end = max(k for k, text in enumerate(body) if text.strip()) + 1      # its last blank lines none of it)
                body, numbers = body[:end] + [closer] + body[end:], numbers[:end] + [numbers[end - 1]] + numbers[end:]
            # Blank lines up to the cell's first line: a page's problems are found at a block's first line
            # plus how far into it (check.py), so a block's lines must follow the file's (nbformat writes
            # a cell's source one line a file line; between cells lie their JSON's other lines).
            if 0 < where[-1] < numbers[0] <= where[-1] + GAP:
                lines += [""] * (numbers[0] - where[-1] - 1)
                where += list(range(where[-1] + 1, numbers[0]))
            lines += [outside_spans(LINK, lambda m, n=n: unlinked(m, n), text) for text, n in zip(body, numbers)] + [""]
            where += numbers + [numbers[-1] + 1]
            has_downloads = has_downloads or any(line.strip() == "::: downloads" for line in body)
        elif cell.kind == "code" and cell.text.strip():
            shown = cell_visibility(cell.tags, cell.text, cell.lines[0] if cell.lines else 0, notes)
            if not runs(cell.text, cell.tags):          # its code as code, if it shows it: nothing ran
                if shown is not None and shown.get("code") != "hidden":
                    code = cell.text.rstrip().split("\n")
                    skipped = len(code) - len(cell_options(cell.text.rstrip())[1].split("\n"))      # (its #| lines)
                    code = code[skipped:] or [""]
                    fence = "`" * max([3] + [len(run) + 1 for line in code for run in re.findall(r"`{3,}", line)])
                    lines += [f"{fence}python", *code, fence, ""]
                    where += [source_line(cell.lines, skipped + k) for k in range(len(code) + 3)]
                continue
            figure = cell_figure(cell.figure, cell.text) if shown is not None and shown.get("output") != "hidden" else None
            if shown is not None:           # (a cell that shows nothing runs all the same)
                options = "".join(f" {key}={value}" for key, value in sorted(shown.items()))
                lines += [f"::: cell {cell.name}{'' if figure else ' figures=shown'}{options}", ""]
                where += [cell.lines[0] if cell.lines else 0] * 2
            if figure:                      # its figure numbered, with its caption (labels.py)
                label, caption, alt = (part.replace('"', "'").replace("]", ")") for part in figure)
                lines += [f'![{alt or cell.name}](figure:{cell.name}-1.png "{caption}")' + (f" {{#{label}}}" if label else ""), ""]
                where += [cell.lines[0] if cell.lines else 0] * 2
    if not has_downloads and "lab" in source.meta:
        lines.append("::: downloads")
        where.append(where[-1])
    return "\n".join(lines) + "\n", where, notes


REMOVED = {"remove-cell", "remove-input"}       # a Markdown cell's tags that leave it out of the page, as Jupyter Book does
REMOTE_IMAGE = re.compile(r"<img\b[^>]*?\bsrc\s*=\s*[\"']?(?:https?:)?//[^>]*>", re.I)
EMPTY_LINK = re.compile(r"<a\b[^>]*>\s*</a>", re.I)


def _open_fence(lines: list[str]) -> str | None:
    """The line that closes a code fence a Markdown cell leaves open (indented as its opener's content), or None."""
    left = open_fence(lines)
    return left[1] if left is not None else None


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
    return without_style(kept, line, notes)


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
                               meta_line=1, notes=tuple(sorted([*notes, *((line(n), message) for n, message in page.notes)])))


def notebook_pages(root, snapshot: dict[str, str], memo=None) -> list:
    """The Page of every notebook in content/ (content/x/y.ipynb is published as x/y.html)."""
    from ..core.memo import Memo
    memo = memo or Memo(None)
    pages, problems = [], []
    found = notebooks(root, snapshot, memo)
    if not found:
        return []
    known = frozenset(rel[len("content/"):] for rel in snapshot if rel.startswith("content/") and rel.endswith(SOURCES))
    # (what its notes say follows from what requirements.txt lists, the files it includes followed, and
    # from which installed distribution provides each module its code imports)
    from ..core.memo import installed_digest
    from ..project.needs import listed
    requirements = sorted(listed(root)) if (root / "requirements.txt").is_file() else None
    site = sha256_of(json.dumps([sorted(known), requirements, installed_digest()]).encode())
    for rel in found:
        output = page_output(rel)
        try:
            pages.append(memo.value("notebook-page", (rel, snapshot[rel], site),
                                       lambda: _page(root, rel, output, snapshot, memo, known)))
        except BuildError as exc:
            problems.extend(exc.problems)
    if problems:
        raise BuildError(problems)
    return pages


def _page(root, rel: str, output: str, snapshot, memo, known: frozenset):
    import dataclasses
    source = load(root, rel, snapshot, memo)
    page = page_of(source, output, memo, known)
    return dataclasses.replace(page, digest=snapshot[rel], notes=page.notes + tuple(_unlisted(root, source)))


def _unlisted(root, source: NotebookSource) -> list[tuple[int, str]]:
    """Notes for what its code imports that requirements.txt does not list (needs.py): at its line (a
    project without a requirements.txt is not one Pages builds: nothing to say)."""
    from ..project.needs import canonical, listed, pip_installs, unlisted
    notes, seen = [], set()
    if not (root / "requirements.txt").is_file():
        return notes
    names = listed(root)
    for cell in source.cells:
        if cell.kind == "code":
            for line, installs in pip_installs(cell.text):        # (skipped as it runs: labipython.py)
                if missing := [name for name in installs if canonical(name) not in names]:
                    notes.append((source_line(cell.lines, line), f"installs {', '.join(missing)} with pip, which the "
                                  "build never does (it skips the line), and requirements.txt does not list "
                                  f"{'it' if len(missing) == 1 else 'them'}: add `{missing[0]}` to requirements.txt"))
            for line, module, dist in unlisted(root, root / source.rel, cell.text):
                if dist not in seen:
                    seen.add(dist)
                    notes.append((source_line(cell.lines, line), f"imports {module}, which requirements.txt does not list: "
                                                           f"add `{dist}` to requirements.txt, or Cloudflare Pages' "
                                                           "build will not have it"))
    return notes
