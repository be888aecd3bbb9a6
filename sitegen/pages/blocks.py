"""The kinds of block a page may hold (`::: kind NAME key=value`), each declared once.

A kind says what it takes (how many names; its options and their allowed values, which
content.py checks as it reads the page), how check.py verifies it against the lab it shows, how
render.py turns it into HTML (through its partial, templates/partials/<kind>.html), and which
scripts of static/ a page holding it loads. A new kind is one entry in KINDS and one partial.
"""
from __future__ import annotations

import html
import json
from typing import Callable, NamedTuple, TYPE_CHECKING

from markupsafe import Markup

from ..labs.artifacts import artifacts_digest
from ..labs.labreads import archived_reads
from ..project.nbsource import runs_as_notebook
from ..project.cells import cell_options
from .dialects import BOXES, STATEMENTS
from .highlight import highlighted
from .prose import Unresolved, format_value, lookup, relative_url

if TYPE_CHECKING:
    from ..labs.artifacts import Artifacts
    from ..project.config import SiteConfig
    from .page import Block, Page
    from ..core.errors import Collector


class Checking(NamedTuple):
    """What a block's check may use, and where it reports."""
    cfg: SiteConfig
    problems: Collector

    def add(self, page: Page, block: Block, message: str) -> None:
        self.problems.add(page.source, block.line, message)


class Kind(NamedTuple):
    names: int                  # the names it takes: 1 for `::: cell NAME`
    options: dict               # option -> its allowed values, or None for any text
    check: Callable             # (checking, page, block, art): report what is wrong
    render: Callable            # (renderer, page, block, art) -> HTML
    scripts: Callable = lambda art: ()   # (art) -> what a page holding it loads from static/ (*.css: as a stylesheet)
    names_lab: bool = False     # its name is the lab it shows (else: the page's lab)
    needs_lab: bool = True      # False: it shows no lab's results (an exercise's frame)
    container: bool = False     # it opens a part of the page that `::: end` closes
    nests: bool = False         # (a container) it may stand inside another container
    within: str | None = None   # it may only stand inside this container kind
    last: bool = False          # nothing of its container may follow it

    def lab(self, page: Page, block: Block) -> str | None:
        return block.args[0] if self.names_lab else page.lab


# -- words as HTML ---------------------------------------------------------------

def code(text) -> Markup:
    return Markup("<code>{}</code>").format(text)


def word_html(word: str, **values) -> Markup:
    """A word of the vocabulary as HTML: its own text escaped, its {names} filled with values
    (escaped, unless they are Markup already)."""
    return Markup(html.escape(word)).format(**values)


def stamp(words: dict, provenance: dict) -> str:
    """The line above a cell's saved output: when it was computed (with what: the page's footer says; the
    site's words may say it here too, with {python}, {numpy} and {matplotlib})."""
    when = provenance["computed_at"].replace("T", " ").replace("Z", " UTC")
    return words["stamp"].format(when=when, python=provenance["python"], numpy=provenance["numpy"],
                                 matplotlib=provenance["matplotlib"])


# -- ::: cell NAME [output=shown|collapsed] ----------------------------------------

def _check_cell(checking: Checking, page: Page, block: Block, art: Artifacts) -> None:
    if block.args[0] not in art.outputs:
        checking.add(page, block, f"unknown cell '{block.args[0]}' (lab {art.lab.id} has: {', '.join(art.outputs)})")


def _render_cell(r, page: Page, block: Block, art: Artifacts) -> str:
    # (a notebook's cell: its number among its code cells, those that do not run too; a script's: its place)
    number, cell = next((c.number or n, c) for n, c in enumerate(art.cells, 1) if c.name == block.args[0])
    notebook = (Markup('<a href="{}" download>{}</a>').format(relative_url(page.output, art.lab.notebook),
                                                               art.lab.notebook.rsplit("/", 1)[-1])
                if art.lab.notebook else art.lab.title)
    # A notebook page's cell is named by its Jupyter id (a hex string to a reader): it is said by its number.
    jupyter_id = runs_as_notebook(art.lab.script)
    source_line = word_html(r.words["notebook_cell_source" if jupyter_id else "cell_source"], notebook=notebook,
                            number=number, name=code(cell.name))
    output = art.outputs[cell.name]
    shown = _rich_outputs(r, page, block, art, cell, number) if output.outputs else None
    code_shown = block.options.get("code", "shown")
    return r.render_template(
        "partials/cell.html", name=cell.name, source_line=source_line, code_shown=code_shown, show_code=r.words["show_code"],
        code=highlighted(r.memo, cell_options(cell.source)[1]) if code_shown != "hidden" else "",
        output_shown=block.options.get("output") != "hidden",
        label=r.words["code_cell"].format(name=number if jupyter_id else cell.name), stdout=output.stdout, value=output.value,
        error=output.error, value_label=r.words["cell_value"], error_label=r.words["cell_error"],
        stamp=stamp(r.words, art.provenance), show_output=r.words["show_output"], outputs=shown,
        collapsed=block.options.get("output") == "collapsed")


def _rich_outputs(r, page: Page, block: Block, art: Artifacts, cell, number: int) -> list[Markup]:
    """What a cell of a lab with display: jupyter showed, in order (outputs.py); its figures too,
    where the block says `figures=shown` (a notebook page), else the page places them itself."""
    from .outputs import latex_text, render_outputs
    from .prose import math_html
    count = iter(range(1, 1000))

    def figure(name: str) -> Markup:
        if block.options.get("figures") != "shown":
            return Markup("")
        alt = r.words["figure_undescribed"].format(cell=number, n=next(count))
        return Markup(r.figure_html(page, art, name, alt))

    def file(name: str, mime: str) -> Markup:
        if name in art.figures:
            return figure(name)
        if block.options.get("figures") != "shown":
            return Markup("")
        alt = r.words["figure_undescribed"].format(cell=number, n=next(count))
        return Markup('<img class="output-image" src="{}" alt="{}" loading="lazy">').format(
            relative_url(page.output, f"{art.lab.downloads}/{name}"), alt)

    def latex(text: str) -> Markup:
        if "$" in text and not text.strip().startswith(("$", "\\[", "\\(", "\\begin")):
            return markdown(text)       # (words with formulas in them, `Latex("The value $x$")`, as MathJax reads them)
        tex, display = latex_text(text)
        return Markup(f'<div class="math" tabindex="0">{math_html(tex, display, r.memo)}</div>')

    def markdown(text: str) -> Markup:
        return Markup(r.output_markdown(text))

    def local(src: str) -> str | None:
        """A file the lab wrote, as its HTML names it (animation.mp4): where it is published."""
        name = src.split("/")[-1]
        if "://" in src or src.startswith("/") or name not in art.hashes or name in art.figures:
            return None
        return relative_url(page.output, f"{art.lab.downloads}/{name}")
    return render_outputs(art.outputs[cell.name].outputs, figure, file, markdown, latex, r.words, local)


# -- ::: table PATH axes=a,b caption="..." [columns=PATH] ---------------------------

def table_axes(block: Block) -> list[str]:
    return [a for a in block.options.get("axes", "row,column").split(",") if a]


def _check_table(checking: Checking, page: Page, block: Block, art: Artifacts) -> None:
    path, results, known = block.args[0], art.results, checking.cfg.vocabulary.axes
    try:
        value = lookup(results, path)
    except Unresolved as exc:
        checking.add(page, block, f"table {path}: {exc}")
        return
    axes = table_axes(block)
    unknown = [a for a in axes if a not in known]
    if unknown:
        checking.add(page, block, f"table {path}: unknown axis {', '.join(unknown)} (expected: "
                                  f"{', '.join(sorted(known))}; name more under vocabulary.axes in site.yaml)")
    depth, probe = 0, value
    while isinstance(probe, list) and probe:
        depth, probe = depth + 1, probe[0]
    if depth not in (2, 3) or not isinstance(probe, (int, float)):
        checking.add(page, block, f"table {path}: needs a 2-D or 3-D array of numbers, found {depth}-D")
    elif len(axes) != depth:
        checking.add(page, block, f"table {path} is {depth}-D: give {depth} axes, "
                                  f"e.g. axes={','.join(['head', 'query', 'key'][-depth:])}")
    if "columns" in block.options and depth in (2, 3) and len(axes) == depth:
        try:
            labels = lookup(results, block.options["columns"])
        except Unresolved as exc:
            checking.add(page, block, f"table {path} columns: {exc}")
        else:
            width = len(value[0] if depth == 2 else value[0][0])
            if not (isinstance(labels, list) and len(labels) == width and all(isinstance(x, str) for x in labels)):
                checking.add(page, block, f"table {path}: columns={block.options['columns']} must be "
                                          f"a list of {width} names")
    if not block.options.get("caption"):
        checking.add(page, block, f"table {path} needs a caption=\"...\" saying what it shows")


def _render_table(r, page: Page, block: Block, art: Artifacts) -> str:
    results, axes, labels = art.results, table_axes(block), r.axes
    value = lookup(results, block.args[0])
    tables = []
    for index, matrix in [(None, value)] if len(axes) == 2 else list(enumerate(value)):
        caption = block.options["caption"]
        if index is not None:
            caption += " · " + labels[axes[0]].format(index)
        tables.append({
            "caption": caption,
            "corner": f"{labels[axes[-2]].format('').strip()} \\ {labels[axes[-1]].format('').strip()}",
            "columns": (lookup(results, block.options["columns"]) if "columns" in block.options
                        else [labels[axes[-1]].format(j) for j in range(len(matrix[0]))]),
            "rows": [(labels[axes[-2]].format(i), [format_value(x) for x in row]) for i, row in enumerate(matrix)]})
    return r.render_template("partials/table.html", path=block.args[0], tables=tables)


# -- ::: downloads -----------------------------------------------------------------

def _render_downloads(r, page: Page, block: Block, art: Artifacts) -> str:
    vocabulary, lab = r.cfg.vocabulary, art.lab
    items = []
    if lab.notebook:
        from ..project.needs import needed
        name = lab.notebook.rsplit("/", 1)[-1]
        sources = [cell.source for cell in art.cells]
        # (which package provides a module, once per code and set of installed distributions)
        from ..core.memo import installed_digest
        needs = r.memo.value("needs", (str(lab.script.parent), json.dumps(sources), installed_digest()),
                                lambda: needed(lab.script.parent, sources))
        items.append({"href": relative_url(page.output, lab.notebook), "name": name,
                      "note": vocabulary.download_note(lab, name, needs), "size": None})
        if archived_reads(art, r.cfg.root, r.snapshot):
            name = lab.archive.rsplit("/", 1)[-1]                         # (render/archive.py writes it)
            items.append({"href": relative_url(page.output, lab.archive), "name": name,
                          "note": vocabulary.download_note(lab, name), "size": None})
    withheld = r.withheld.get(lab.id, ())         # (what a student build leaves out: render.py)
    for name, size in art.sizes.items():
        if not name.endswith(".png") and name not in withheld:
            items.append({"href": relative_url(page.output, f"{lab.downloads}/{name}"), "name": name,
                          "note": vocabulary.download_note(lab, name), "size": size})
    return r.render_template("partials/downloads.html", items=items)


# -- ::: widget LAB [view=NAME] ------------------------------------------------------
# A lab's own interactive part: a script module it declares in site.yaml (widget: script, needs),
# which fills the section from the lab's results.json; `view` is the widget's to interpret.

def _check_widget(checking: Checking, page: Page, block: Block, art: Artifacts) -> None:
    if not art.lab.widget:
        checking.add(page, block, f"widget: lab {art.lab.id} declares none: add `widget: {{script: NAME.js, "
                                  "needs: [keys]}` to its entry in site.yaml")
        return
    missing = [key for key in art.lab.widget["needs"] if key not in art.results]
    if missing:
        checking.add(page, block, f"widget: lab {art.lab.id}'s results.json lacks {', '.join(missing)}, "
                                  f"which {art.lab.widget['script']} needs")


def _render_widget(r, page: Page, block: Block, art: Artifacts) -> str:
    name, view = art.lab.widget["script"].rsplit("/", 1)[-1].removesuffix(".js"), block.options.get("view", "")
    return r.render_template(
        "partials/widget.html", name=name, view=view, id="-".join(filter(None, (name, art.lab.id, view))),
        results=relative_url(page.output, f"{art.lab.downloads}/results.json"))


def _nothing_to_check(checking, page, block, art) -> None:
    pass


# -- ::: exercise [title="..."] ... ::: hint ... ::: solution ... ::: end -----------------
# An exercise is the prose between its markers. Its hints and its solution are folded by default;
# `--solutions` shows them all (an instructor's build), `--no-solutions` leaves solutions out of the
# site entirely (a student's build). A solution's text is never in the search index.

def position(page: Page, block: Block) -> int:
    """Where `block` stands among its page's blocks: found as itself, not as an equal (two `::: end`
    of a notebook written on one line are equal tuples)."""
    return next(index for index, other in enumerate(page.blocks) if other is block)


def closers(blocks) -> dict[int, Block]:
    """Index of each `::: end` -> the container it closes (the innermost open one: content.py checked
    that every container closes)."""
    found, opened = {}, []
    for index, block in enumerate(blocks):
        if block.kind == "end" and opened:
            found[index] = opened.pop()
        elif block.kind in KINDS and KINDS[block.kind].container:
            opened.append(block)
    return found


def _parts(page: Page, block: Block) -> tuple[int, str | None, int]:
    """Where `block` stands: the number of the exercise before it, the kind of the part open just
    before it (hint, solution or None), and how many hints that exercise had so far."""
    number, open_part, hints = 0, None, 0
    closing = closers(page.blocks)
    for index, other in enumerate(page.blocks):
        if other is block:
            return number, open_part, hints
        if other.kind == "exercise":
            number, open_part, hints = number + 1, None, 0
        elif other.kind in ("hint", "solution"):
            open_part, hints = other.kind, hints + (other.kind == "hint")
        elif other.kind == "end" and closing[index].kind == "exercise":
            open_part = None
    raise ValueError("block not on its page")


def hidden_blocks(page: Page, solutions: str) -> set[int]:
    """Indices of the page's blocks a build with `solutions` leaves out: with "omitted", what
    follows each `::: solution` up to its exercise's end (the marker itself closes the hint before),
    callouts inside it too."""
    hidden, inside = set(), False
    closing = closers(page.blocks)
    for index, block in enumerate(page.blocks):
        if block.kind == "end" and closing[index].kind == "exercise":
            inside = False
        if inside:
            hidden.add(index)
        if block.kind == "solution":
            inside = solutions == "omitted"
    return hidden


def _render_practice(r, page: Page, block: Block, art) -> str:
    number, open_part, hints = _parts(page, block)
    closes = open_part is not None and not (open_part == "solution" and r.solutions == "omitted")
    return r.render_template("partials/practice.html", part=block.kind, closes=closes,
                             number=number + (block.kind == "exercise"), hint=hints + 1,
                             title=r.inline_markdown(block.options.get("title", "")), label=block.options.get("label"), words=r.words,
                             solutions=r.solutions)


# -- ::: note|tip|important|warning|caution|margin [title="..."] [fold=open|closed] ... ::: end ------
# A callout: prose in a box that says its kind (the vocabulary's callout_<kind>) and its title;
# with fold= a reader folds it (closed: folded at first). MyST's admonitions, Quarto's callouts and
# GitHub's alerts are read as these (dialects.py). It may stand in an exercise, or in another callout.
# A margin note (MyST's {margin} and {sidebar}, Quarto's .column-margin and .aside) is one too: beside
# the text where the screen is wide enough, in it on a phone; so is a tab (sphinx-design's {tab-item},
# a heading in Quarto's .panel-tabset), its title the tab's label: a set of them, one after another.

def _render_callout(r, page: Page, block: Block, art) -> str:
    before = page.blocks[:position(page, block)]
    if block.kind in STATEMENTS:        # numbered per kind (labels.py names it so in references)
        number = 1 + sum(1 for other in before if other.kind == block.kind)
        return r.render_template("partials/callout.html", part="open", kind="statement", anchor=True, id=block.options.get("label")
                                 or f"{block.kind}-{number}", word=r.words[f"statement_{block.kind}"].format(n=number),
                                 title=r.inline_markdown(block.options.get("title", "")), fold=block.options.get("fold"))
    number = 1 + sum(1 for other in before if other.kind in BOXES)
    return r.render_template("partials/callout.html", part="open", kind=block.kind, anchor=False, id=f"callout-{number}",
                             word=r.words[f"callout_{block.kind}"], title=r.inline_markdown(block.options.get("title", "")),
                             fold=block.options.get("fold"))


# -- ::: list-table [header-rows=N] [title="..."] / ::: row / ::: entry ... ::: end ----------------
# A table whose cells hold blocks (code, lists, callouts), which a Markdown table's cannot: each cell is
# an `::: entry` in a `::: row`; the first header-rows rows are its header. MyST's {list-table} whose
# cells hold blocks is read as this (bookparts.list_table). On a phone it scrolls sideways, as tables do.

def _render_list_table(r, page: Page, block: Block, art) -> str:
    if block.kind == "list-table":
        return r.render_template("partials/list_table.html", part="open", title=block.options.get("title", ""),
                                 words=r.words)
    if block.kind == "row":
        return "<tr>"
    table, row = None, 0        # an entry: a header's cell in the table's first header-rows rows
    for other in page.blocks[:position(page, block)]:
        if other.kind == "list-table":
            table, row = other, 0
        row += other.kind == "row"
    header = table is not None and row <= int(table.options.get("header-rows", "0"))
    return '<th scope="col">' if header else "<td>"


def _render_end(r, page: Page, block: Block, art) -> str:
    opener = closers(page.blocks)[position(page, block)]
    if opener.kind == "exercise":
        return _render_practice(r, page, block, art)
    if opener.kind == "list-table":
        return r.render_template("partials/list_table.html", part="end")
    if opener.kind in ("row", "entry"):
        return "</tr>" if opener.kind == "row" else "</td>" if _render_list_table(r, page, opener, art) == "<td>" else "</th>"
    return r.render_template("partials/callout.html", part="end", fold=opener.options.get("fold"))


def practice_markdown(page: Page, block: Block, words: dict, solutions: str) -> str:
    """A practice marker or a callout's opening as Markdown (in the notebook download): the label it shows."""
    if block.kind in BOXES:
        return f"**{words['callout_' + block.kind]}** {block.options.get('title', '')}".rstrip()
    if block.kind in STATEMENTS:
        number = 1 + sum(1 for other in page.blocks[:position(page, block)] if other.kind == block.kind)
        return f"**{words['statement_' + block.kind].format(n=number)}** {block.options.get('title', '')}".rstrip()
    number, _, hints = _parts(page, block)
    if block.kind == "exercise":
        return f"**{words['exercise'].format(n=number + 1)}** {block.options.get('title', '')}".rstrip()
    if block.kind == "hint":
        return f"**{words['hint'].format(n=hints + 1)}**"
    if block.kind == "solution" and solutions != "omitted":
        return f"**{words['solution']}**"
    if block.kind == "check":
        return f"**{words['check']}** {block.options.get('prompt', '')}"
    return ""


# -- ::: check PATH tolerance=T prompt="..." -------------------------------------------
# A self-check: the reader types a number, the page says whether it is within T of the value
# at PATH in the lab's results.json, computed by this build; the value itself on request.

def _check_check(checking: Checking, page: Page, block: Block, art: Artifacts) -> None:
    path = block.args[0]
    try:
        value = lookup(art.results, path)
    except Unresolved as exc:
        checking.add(page, block, f"check {path}: {exc}")
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        checking.add(page, block, f"check {path}: the answer must be a number, not {type(value).__name__}")
    try:
        tolerance = float(block.options.get("tolerance", ""))
    except ValueError:
        tolerance = -1.0
    if not tolerance > 0:
        checking.add(page, block, f"check {path} needs tolerance=NUMBER > 0: how far from the computed value "
                                  "an answer may be and still count, e.g. tolerance=0.0005")
    if not block.options.get("prompt", "").strip():
        checking.add(page, block, f"check {path} needs prompt=\"...\": the question the reader answers")


def _render_check(r, page: Page, block: Block, art: Artifacts) -> str:
    value, tolerance = lookup(art.results, block.args[0]), block.options["tolerance"]
    number = 1 + sum(1 for other in page.blocks[:position(page, block)] if other.kind == "check")
    return r.render_template("partials/check.html", id=f"check-{number}", prompt=block.options["prompt"],
                             answer=repr(float(value)), tolerance=tolerance, shown=format_value(value),
                             words=r.words, reveal=r.solutions != "omitted")


# -- ::: materials ----------------------------------------------------------------
# The lecture's map, on its home page: the pages of site.yaml's `sequence:` in reading order, each
# with what it is (a lab with a notebook to rerun, a page of computed figures, or reading), the time it asks (its front matter `minutes:`, else its prose read at 400
# characters a minute), a thumbnail of its lab's first figure, and, from progress.js, whether this
# reader opened it and where they left off (kept in their browser only).

def _render_materials(r, page: Page, block: Block, art) -> str:
    return r.render_template("partials/materials.html", items=r.materials(page), words=r.words)


KINDS = {
    "cell": Kind(1, {"output": ("shown", "collapsed", "hidden"), "code": ("shown", "folded", "hidden"),
                     "figures": ("shown",)}, _check_cell, _render_cell),
    "table": Kind(1, {"axes": None, "caption": None, "columns": None}, _check_table, _render_table),
    "downloads": Kind(0, {}, _nothing_to_check, _render_downloads),
    "widget": Kind(1, {"view": None}, _check_widget, _render_widget,
                   scripts=lambda art: tuple(filter(None, (art.lab.widget["script"], art.lab.widget["style"])))
                   if art.lab.widget else (), names_lab=True),
    "exercise": Kind(0, {"title": None, "label": None}, _nothing_to_check, _render_practice, needs_lab=False, container=True),
    "hint": Kind(0, {}, _nothing_to_check, _render_practice, needs_lab=False, within="exercise"),
    "solution": Kind(0, {}, _nothing_to_check, _render_practice, needs_lab=False, within="exercise", last=True),
    "end": Kind(0, {}, _nothing_to_check, _render_end, needs_lab=False),
    **{kind: Kind(0, {"title": None, "fold": ("open", "closed")}, _nothing_to_check, _render_callout,
                  needs_lab=False, container=True, nests=True) for kind in BOXES},
    **{kind: Kind(0, {"title": None, "fold": ("open", "closed"), "label": None}, _nothing_to_check, _render_callout,
                  needs_lab=False, container=True, nests=True) for kind in STATEMENTS},
    "check": Kind(1, {"tolerance": None, "prompt": None}, _check_check, _render_check,
                  scripts=lambda art: ("check.js",)),
    "materials": Kind(0, {}, _nothing_to_check, _render_materials, needs_lab=False),
    "list-table": Kind(0, {"header-rows": tuple(map(str, range(10))), "title": None}, _nothing_to_check,
                       _render_list_table, needs_lab=False, container=True, nests=True),
    "row": Kind(0, {}, _nothing_to_check, _render_list_table, needs_lab=False, container=True, nests=True,
                within="list-table"),
    "entry": Kind(0, {}, _nothing_to_check, _render_list_table, needs_lab=False, container=True, nests=True,
                  within="row"),
}


def labs_shown(page: Page) -> frozenset[str] | None:
    """The labs whose results `page` shows: its own lab's and those its blocks name; None (every lab's)
    for a page with the lecture's map. What its check and its page are made of (labs_digest)."""
    if "materials" in page.kinds:
        return None
    shown = {page.lab} if page.lab else set()
    if any(kind in KINDS and KINDS[kind].names_lab for kind in page.kinds):
        shown |= {block.args[0] for block in page.blocks if block.kind in KINDS and KINDS[block.kind].names_lab}
    return frozenset(shown)


def labs_digest(page: Page, artifacts: dict[str, Artifacts]) -> str:
    """The results (by provenance) of the labs `page` shows, as one hash; "" for a page that shows none."""
    shown = labs_shown(page)
    if shown is None:
        return artifacts_digest(artifacts)
    return artifacts_digest({lab: artifacts[lab] for lab in shown if lab in artifacts}) if shown else ""
