"""`python build.py import NOTEBOOK.ipynb... [--id ID] [--page PATH]`: a notebook becomes a lab.

For each notebook it writes the lab script (its code cells as named `# %% name` cells, in
jupytext's percent format, so the script opens as a notebook again), the page (its Markdown
cells in order, a `::: cell` where code was, the figures each cell draws under it), the images
its Markdown shows, and the lab's site.yaml entry with `display: jupyter`, so that every cell
shows what Jupyter shows. It then computes the labs once, to place their figures, and so that an
error is reported at once, naming the notebook's cell; if anything fails, nothing is left
written. The next `python build.py` finds them computed in the cache.

What notebooks hold is read as Jupyter means it: IPython syntax with a plain-Python meaning is
converted (`%matplotlib` dropped, `%time stmt` is `stmt`, `obj?` is `help(obj)`, `!pip`
becomes a note), any other is an error naming the cell; a cell whose stored output is an error
is meant to raise; stored outputs and Markdown cells that paste a cell's output are replaced
by what the build computes; links to notebooks imported together become links to their pages.
"""
from __future__ import annotations

import ast
import base64
import json
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..project.cells import RAISES
from ..core.errors import BuildError, Collector, Problem
from ..project.needs import PIP_LINE, unlisted
from ..project.nbfile import read_notebook
from ..pages.jupytermath import site_math
from ..pages.nbpage import IMAGE, pasted_output
from ..project.nbsource import cell_name, deepnote_text, slug
from ..pages.prose import is_external
from .scaffold import NewFiles, check_new_lab, lab_entry, page_path
from ..core.stored import sha256_of

LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)")
# IPython lines that mean nothing to a plain Python run: kept as comments.
INERT = re.compile(r"^%(matplotlib|config|load_ext|reload_ext|autoreload|precision)\b")
TIMED = re.compile(r"^%(time|timeit)\s+((-\w+\s+\S+\s+|-\w\s+)*)(?P<code>.+)$")
HELP = re.compile(r"^(\?\??(?P<before>[\w.]+)|(?P<after>[\w.]+)\?\??)\s*$")
CELL_MAGIC = re.compile(r"^%%(time|timeit|capture)\b")
TIMEIT_OPTIONS = re.compile(r"(?<!\S)-(?:[nr]\s*\d+|[qcto]|p\s*\d+)(?!\S)")


@dataclass
class Notebook:
    """One notebook, read and converted: what will be written for it."""
    path: Path
    lab_id: str
    page: str                    # path in content/, without .md
    title: str = ""
    cells: list = field(default_factory=list)      # ("markdown", text) or ("code", name, source, tags)
    alts: dict = field(default_factory=dict)       # code cell name -> alt texts of its pasted figures
    numbers: dict = field(default_factory=dict)    # code cell name -> its number in the notebook
    images: dict = field(default_factory=dict)     # path beside the page -> bytes
    again: bool = False                            # imported before: its lab is updated in place
    guessed: set = field(default_factory=set)      # cells tagged raises-exception for their saved error

    @property
    def script(self) -> str:
        return f"compute/{self.lab_id.replace('-', '_')}.py"

    @property
    def download(self) -> str:
        """The notebook download's file name: the notebook's own, where it is a plain ASCII name."""
        return self.path.name if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*\.ipynb", self.path.name) \
            else f"{self.lab_id}.ipynb"


def import_notebooks(root: Path, paths: list[Path], lab_id: str | None = None, page: str | None = None,
                     cache: Path | None = None) -> tuple[list[str], list[str]]:
    """Write the labs of `paths` (see the module's text), computed into `cache` (the build's by
    default); returns (files written, notes for the author)."""
    from ..project.config import load_config
    if len(paths) > 1 and (lab_id or page):
        raise BuildError(Problem(str(paths[0]), 0, "--id and --page name one notebook's lab: import "
                                                   "several notebooks without them (ids follow the file names)"))
    cfg = load_config(root)
    ids = [lab_id or slug(path.stem) for path in paths]
    for number, name in enumerate(ids):
        if name in ids[:number]:
            raise BuildError(Problem(str(paths[number]), 0, f"makes lab id {name!r}, as {paths[ids.index(name)]} "
                                                            "does: import one of them with --id"))
    for name in ids:
        if not cfg.lab(name):
            check_new_lab(cfg, name)
    books = [Notebook(path, name, page_path(page or name)) for path, name in zip(paths, ids)]
    for book in books:
        if cfg.lab(book.lab_id):
            _again(root, cfg.lab(book.lab_id), book)
    problems = Collector()
    pages = {book.path.resolve(): book for book in books}
    for book in books:
        try:
            _convert(book, read_notebook(book.path), pages, problems)
        except BuildError as exc:
            problems.problems.extend(exc.problems)
    problems.raise_if_any()

    files = NewFiles(root)
    try:
        for book in books:
            if book.again:          # imported before: its script is the notebook's again, its page is the teacher's
                files.replace(book.script, _script(book))
                for rel, data in book.images.items():
                    if not (root / "content" / rel).is_file() or (root / "content" / rel).read_bytes() != data:
                        files.replace(f"content/{rel}", data)
                continue
            files.create(book.script, _script(book))
            files.create(f"content/{book.page}.md", _page(book, {})[0])     # its figures once computed
            for rel, data in book.images.items():
                files.create(f"content/{rel}", data)
        files.add_labs([lab_entry(book.lab_id, book.title, book.script, f"{book.page}.md", book.download,
                                  display="jupyter") for book in books if not book.again])
        load_config(root)
        artifacts, notes = _computed(root, books, files, cache)
        undescribed = load_config(root).vocabulary.words["figure_undescribed"]
        for book in books:
            if book.again:
                notes += _page_against_cells(root, book)
                continue
            text, lines = _page(book, {name: out.figures for name, out in artifacts[book.lab_id].outputs.items()},
                                undescribed)
            (root / f"content/{book.page}.md").write_text(text, encoding="utf-8")
            notes += [f"content/{book.page}.md:{number}: say in its alt text what this figure shows"
                      for number in lines]
            notes += [f"{book.script}:{line}: imports {module}, which requirements.txt does not list: add "
                      f"`{dist}` to requirements.txt, or Cloudflare Pages' build will not have it"
                      for line, module, dist in unlisted(root, root / book.script, _script(book))]
    except BaseException:
        files.undo()
        raise
    return files.made + (["site.yaml"] if not all(book.again for book in books) else []), notes


# -- reading ---------------------------------------------------------------------

def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


# -- converting ------------------------------------------------------------------

def _convert(book: Notebook, data: dict, pages: dict, problems: Collector) -> None:
    where = str(book.path)
    book.title = str((data.get("metadata") or {}).get("title") or "")
    names: set[str] = set()
    last_code = None            # the code cell a pasted output would follow
    for number, cell in enumerate(data["cells"], 1):
        kind, text = cell.get("cell_type"), _text(cell.get("source"))
        metadata = cell.get("metadata") or {}
        if kind == "markdown":
            text = deepnote_text(text, metadata).strip()
            if not text:
                continue
            if last_code and pasted_output(text):
                book.alts.setdefault(last_code, []).extend(m["alt"] for m in IMAGE.finditer(text) if m["alt"])
                continue
            last_code = None
            first, _, rest = text.partition("\n")
            if not book.cells and re.fullmatch(r"#\s+\S.*", first):     # the notebook's heading: the page's
                book.title = book.title or first.lstrip("#").strip()
                if first.lstrip("#").strip() == book.title:
                    text = rest.strip()
            if text:                # (its math as Jupyter shows it, in the page's form)
                text = "\n".join(line for line, _ in site_math(text.split("\n")))
                book.cells.append(("markdown", _markdown(text, cell, number, book, pages, where, problems)))
        elif kind == "code":
            if not text.strip():
                continue
            name = cell_name(cell, metadata, f"cell-{sum(1 for c in book.cells if c[0] == 'code') + 1}", names)
            names.add(name)
            tags = [t for t in metadata.get("tags") or [] if isinstance(t, str)]
            if any(o.get("output_type") == "error" for o in cell.get("outputs") or []) and RAISES not in tags:
                tags.append(RAISES)             # its saved output was an error: meant, until it raises none
                book.guessed.add(name)
            book.cells.append(("code", name, _python(text, number, where, problems), tuple(tags)))
            book.numbers[name] = number
            last_code = name
    book.title = book.title or book.path.stem
    if not any(c[0] == "code" for c in book.cells):
        problems.add(where, 0, "has no code cells: a lab computes something")


def _markdown(text: str, cell: dict, number: int, book: Notebook, pages: dict, where: str,
              problems: Collector) -> str:
    folder = PurePosixPath(book.page).parent

    def image(match) -> str:
        target = match["target"]
        if target.startswith("attachment:"):
            name = target[len("attachment:"):]
            data = ((cell.get("attachments") or {}).get(name) or {})
            kind = next((k for k in data if k.startswith("image/")), None)
            if kind is None:
                problems.add(where, 0, f"cell {number}: attachment {name!r} is not in the notebook")
                return match[0]
            rel = f"images/{slug(PurePosixPath(name).stem)}.{kind.split('/')[1].replace('svg+xml', 'svg')}"
            try:
                book.images[str(folder / rel)] = base64.b64decode(_text(data[kind]))
            except ValueError:          # (binascii.Error is one)
                problems.add(where, 0, f"cell {number}: attachment {name!r} is not base64 data")
                return match[0]
            return f"![{match['alt']}]({rel}{match['title'] or ''})"
        if is_external(target):
            problems.add(where, 0, f"cell {number}: the image {target} is loaded from another site, and pages "
                                   "load nothing from elsewhere: save it beside the notebook and link it as "
                                   "images/NAME.png")
            return match[0]
        home = book.path.parent.resolve()
        source = (home / target.split("#")[0]).resolve()
        normal = posixpath.normpath(target)
        if home not in source.parents:      # /etc/hostname, ../secret.png, a link out: not the notebook's to publish
            problems.add(where, 0, f"cell {number}: the image {target} is outside the notebook's folder, and "
                                   "nothing from elsewhere on this machine is published: copy it into the "
                                   "notebook's folder (images/NAME.png) and link it from there")
            return match[0]
        if not source.is_file():
            problems.add(where, 0, f"cell {number}: the image {target} is not beside the notebook "
                                   f"(looked for {source})")
            return match[0]
        rel = normal
        book.images[str(folder / rel)] = source.read_bytes()
        return f"![{match['alt']}]({rel}{match['title'] or ''})"

    def link(match) -> str:
        target = match["target"]
        path, _, fragment = target.partition("#")
        if is_external(target) or not path.endswith(".ipynb"):
            return match[0]
        from urllib.parse import unquote
        other = pages.get((book.path.parent / unquote(path)).resolve())
        if other is None:
            import shlex
            problems.add(where, 0, f"cell {number}: links to {unquote(path)}, which is not imported with it: import "
                                   f"them together (python build.py import {shlex.quote(book.path.name)} "
                                   f"{shlex.quote(unquote(path))}), or link the page it was published as")
            return match[0]
        rel = posixpath.relpath(f"{other.page}.md", str(folder))
        return f"[{match['text']}]({rel}{'#' + fragment if fragment else ''}{match['title'] or ''})"

    return LINK.sub(link, IMAGE.sub(image, text))


def _python(source: str, number: int, where: str, problems: Collector) -> str:
    """A code cell in plain Python: IPython syntax converted where it has a Python meaning."""
    try:
        ast.parse(source)
        return source                   # plain Python already (most cells)
    except SyntaxError:
        pass
    lines = source.splitlines()
    if lines and (match := CELL_MAGIC.match(lines[0])) and match[1] == "timeit":
        setup = TIMEIT_OPTIONS.sub("", lines[0][len("%%timeit"):]).strip()
        return _timed("\n".join(lines[1:]), "%%timeit", setup)
    if lines and CELL_MAGIC.match(lines[0]):        # (never "# %%": that would start a cell of the script)
        lines[0] = f"# IPython only, the cell runs as it is: {lines[0]}"
    elif lines and lines[0].startswith("%%"):
        problems.add(where, 0, f"cell {number}: {lines[0].split()[0]} makes the cell something other than "
                               "Python; a lab's cells are Python: rewrite it in Python, or delete it, and import again")
    out = []
    for k, line in enumerate(lines, 1):
        indent, code = line[: len(line) - len(line.lstrip())], line.strip()
        # (`pass` in a block: a comment alone would leave `if ...:` with nothing in it)
        if INERT.match(code):
            line = f"{indent}{'pass  ' if indent else ''}# {code}  (IPython only: not needed here)"
        elif PIP_LINE.match(code):
            line = f"{indent}{'pass  ' if indent else ''}# {code}  (the build installs nothing: list the package " \
                   "in requirements.txt)"
        elif (match := TIMED.match(code)) and code.startswith("%timeit"):
            line = indent + _timed(match["code"], "%timeit")
        elif match:
            line = f"{indent}{match['code']}  # was %time: run once"
        elif match := HELP.match(code):
            line = f"{indent}help({match['before'] or match['after']})"
        elif code.startswith(("%", "!")) or re.match(r"^[\w.,\s]+=\s*[%!]", code):
            problems.add(where, 0, f"cell {number}, line {k}: `{code}` is IPython syntax with no plain-Python "
                                   "meaning (a magic or a shell command): write it in Python, or delete it, "
                                   "and import again")
        out.append(line)
    return "\n".join(out)


def _timed(code: str, magic: str, setup: str = "") -> str:
    """`%timeit` as plain Python: the statement timed in a namespace of its own (a copy of the
    notebook's), as IPython times it, so that what it assigns is not the notebook's; the time printed."""
    setup_part = f", setup={setup!r}" if setup else ""
    return (f"import timeit; print('%.3g s per loop' % (lambda n, s: s / n)(*timeit.Timer({code!r}{setup_part}, "
            f"globals=dict(globals())).autorange()))  # was {magic}")


# -- writing ---------------------------------------------------------------------



def _script(book: Notebook) -> str:
    """The lab script: jupytext's percent format, with its header, so it opens as a notebook."""
    header = ("# ---\n# jupyter:\n#   jupytext:\n#     text_representation:\n#       extension: .py\n"
              "#       format_name: percent\n#   kernelspec:\n#     display_name: Python 3\n"
              "#     language: python\n#     name: python3\n# ---\n")
    cells = []
    for cell in book.cells:
        if cell[0] == "code":
            _, name, source, tags = cell
            marker = f"# %% {name}" + (f" tags={json.dumps(list(tags))}" if tags else "")
            cells.append(f"{marker}\n{source}\n")
    body = "\n".join(cells)
    return header + f"{IMPORTED.format(lab=book.lab_id, name=book.path.name)}: its page is content/{book.page}.md\n" \
        + f"{AS_IMPORTED}{sha256_of(body.encode())}\n\n" + body


IMPORTED = "# Lab {lab}, imported from {name}"
AS_IMPORTED = "# As imported (python build.py import again overwrites the cells below only while this holds): "


def _again(root: Path, lab, book: Notebook) -> None:
    """A notebook imported before, imported again: its lab is updated in place, if its script is the
    one the import wrote for this notebook, unchanged since; else what would be overwritten is said."""
    rel = lab.script.relative_to(root).as_posix()
    text = lab.script.read_text(encoding="utf-8")
    lines = text.splitlines()
    header = IMPORTED.format(lab=lab.id, name=book.path.name)
    if not any(line.startswith(header + ":") for line in lines) or rel != book.script:
        raise BuildError(Problem("site.yaml", lab.line, f"lab {lab.id!r} exists already, and {rel} was not imported "
                                                        f"from {book.path.name}: import it with another --id"))
    mark = next((n for n, line in enumerate(lines) if line.startswith(AS_IMPORTED)), None)
    body = "\n".join(lines[mark + 2:]) + "\n" if mark is not None else ""
    if mark is None or sha256_of(body.encode()) != lines[mark][len(AS_IMPORTED):].strip():
        raise BuildError(Problem(rel, (mark or 0) + 3, f"changed since it was imported from {book.path.name}: "
                                                       "importing again would overwrite this line and every one "
                                                       "below it; carry your edits into the notebook (or delete "
                                                       f"{rel} to import anew), then import again (nothing was written)"))
    book.page, book.again = lab.page[: -len(".md")], True


def _computed(root: Path, books: list[Notebook], files: NewFiles, cache) -> tuple[dict, list[str]]:
    """The labs computed once. A cell tagged raises-exception only for the error its saved output
    showed, that raises none today (the error was fixed since, or a library changed), loses the tag
    and the labs run again, with a note: it was an output, not the cell's purpose."""
    from .pipeline import compute_only
    notes: list[str] = []
    while True:
        try:
            return compute_only(root, [book.lab_id for book in books], cache), notes
        except BuildError as exc:
            fixed = [(book, name) for problem in exc.problems for book in books for name in book.guessed
                     if problem.path == book.script and f"cell {name} is tagged {RAISES} but raised nothing" in problem.message]
            if not fixed:
                raise BuildError([_in_notebook(problem, books) for problem in exc.problems]) from None
            for book, name in fixed:
                book.guessed.discard(name)
                book.cells = [(c[0], c[1], c[2], tuple(t for t in c[3] if t != RAISES)) if c[0] == "code" and c[1] == name
                              else c for c in book.cells]
                files.replace(book.script, _script(book))
                notes.append(f"{book.path}: cell {book.numbers[name]}: its saved output is an error that it no "
                             "longer raises: shown as it runs now")


def _page_against_cells(root: Path, book: Notebook) -> list[str]:
    """What the page, kept as the teacher has it, should know of the lab's cells after an import again."""
    from ..pages.content import DIRECTIVE
    rel = f"content/{book.page}.md"
    shown = {}
    for number, line in enumerate((root / rel).read_text(encoding="utf-8").splitlines(), 1):
        match = DIRECTIVE.match(line)
        if match and match["kind"] == "cell" and match["rest"].split():
            shown[match["rest"].split()[0]] = number
    names = [cell[1] for cell in book.cells if cell[0] == "code"]
    return ([f"{rel}:{number}: `::: cell {name}` shows a cell the notebook no longer has: remove it"
             for name, number in shown.items() if name not in names]
            + [f"{rel}: the notebook has a new cell {name}: add `::: cell {name}` where it belongs"
               for name in names if name not in shown])


def _page(book: Notebook, figures: dict[str, tuple[str, ...]], undescribed: str = "") -> tuple[str, list[int]]:
    """The page: front matter, the Markdown cells, `::: cell` blocks, each with its figures; and
    the lines of the figures the notebook gave no words for (their alt text is `undescribed`)."""
    parts, lines = [f"---\ntitle: {json.dumps(book.title, ensure_ascii=False)}\nlab: {book.lab_id}\n---"], []
    for cell in book.cells:
        if cell[0] == "markdown":
            parts.append(cell[1])
            continue
        name = cell[1]
        parts.append(f"::: cell {name}")
        alts = book.alts.get(name, [])
        for k, figure in enumerate(figures.get(name, ())):
            if k >= len(alts):
                lines.append(sum(part.count("\n") + 2 for part in parts) + 1)
            alt = alts[k] if k < len(alts) else undescribed.format(cell=name, n=k + 1)
            parts.append(f"![{alt}](figure:{figure})")
    parts.append("::: downloads")
    return "\n\n".join(parts) + "\n", lines


def _in_notebook(problem: Problem, books: list[Notebook]) -> Problem:
    """A problem in a written lab script, said of the notebook's cell it came from."""
    from ..project.cells import parse_cells
    for book in books:
        if problem.path == book.script:
            cells = [c for c in parse_cells(_script(book), book.script) if c.first_line - 1 <= problem.line]
            where = ""
            if cells and problem.line:
                cell = cells[-1]
                where = f"cell {book.numbers[cell.name]}, line {max(problem.line - cell.first_line + 1, 1)}: "
            return Problem(str(book.path), 0, f"{where}{problem.message} (nothing was written)")
    return problem
