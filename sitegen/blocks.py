"""The kinds of block a page may hold (`::: kind NAME key=value`), each declared once.

A kind says what it takes (how many names; its options and their allowed values, which
content.py checks as it reads the page), how check.py verifies it against the lab it shows, how
render.py turns it into HTML (through its partial, templates/partials/<kind>.html), and which
scripts of static/ a page holding it loads. A new kind is one entry in KINDS and one partial.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from markupsafe import Markup

from .highlight import highlighted
from .prose import Unresolved, format_value, lookup, relative_url

if TYPE_CHECKING:
    from .artifacts import Artifacts
    from .config import SiteConfig
    from .content import Block, Page
    from .errors import Collector


@dataclass(frozen=True)
class Checking:
    """What a block's check may use, and where it reports."""
    cfg: SiteConfig
    problems: Collector

    def add(self, page: Page, block: Block, message: str) -> None:
        self.problems.add(page.source, block.line, message)


@dataclass(frozen=True)
class Kind:
    names: int                  # the names it takes: 1 for `::: cell NAME`
    options: dict               # option -> its allowed values, or None for any text
    check: Callable             # (checking, page, block, art): report what is wrong
    render: Callable            # (renderer, page, block, art) -> HTML
    scripts: Callable = lambda art: ()   # (art) -> what a page holding it loads from static/
    names_lab: bool = False     # its name is the lab it shows (else: the page's lab)

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
    """The line above a cell's saved output: when and with what it was computed."""
    when = provenance["computed_at"].replace("T", " ").replace("Z", " UTC")
    return words["stamp"].format(when=when, python=provenance["python"], numpy=provenance["numpy"],
                                 matplotlib=provenance["matplotlib"])


# -- ::: cell NAME [output=shown|collapsed] ----------------------------------------

def _check_cell(checking: Checking, page: Page, block: Block, art: Artifacts) -> None:
    if block.args[0] not in art.outputs:
        checking.add(page, block, f"unknown cell '{block.args[0]}' (lab {art.lab.id} has: {', '.join(art.outputs)})")


def _render_cell(r, page: Page, block: Block, art: Artifacts) -> str:
    number, cell = next((n, c) for n, c in enumerate(art.cells, 1) if c.name == block.args[0])
    notebook = (Markup('<a href="{}" download>{}</a>').format(relative_url(page.output, art.lab.notebook),
                                                               art.lab.notebook.rsplit("/", 1)[-1])
                if art.lab.notebook else art.lab.title)
    source_line = word_html(r.words["cell_source"], notebook=notebook, number=number, name=code(cell.name))
    output = art.outputs[cell.name]
    return r.render_template(
        "partials/cell.html", name=cell.name, code=highlighted(r.memo, cell.source), source_line=source_line,
        label=r.words["code_cell"].format(name=cell.name), stdout=output.stdout, value=output.value,
        error=output.error, value_label=r.words["cell_value"], error_label=r.words["cell_error"],
        stamp=stamp(r.words, art.provenance), show_output=r.words["show_output"],
        collapsed=block.options.get("output") == "collapsed")


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
        name = lab.notebook.rsplit("/", 1)[-1]
        items.append({"href": relative_url(page.output, lab.notebook), "name": name,
                      "note": vocabulary.download_note(lab, name), "size": None})
    for name, path in art.files.items():
        if not name.endswith(".png"):
            items.append({"href": relative_url(page.output, f"{lab.downloads}/{name}"), "name": name,
                          "note": vocabulary.download_note(lab, name), "size": path.stat().st_size})
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


KINDS = {
    "cell": Kind(1, {"output": ("shown", "collapsed")}, _check_cell, _render_cell),
    "table": Kind(1, {"axes": None, "caption": None, "columns": None}, _check_table, _render_table),
    "downloads": Kind(0, {}, _nothing_to_check, _render_downloads),
    "widget": Kind(1, {"view": None}, _check_widget, _render_widget,
                   scripts=lambda art: (art.lab.widget["script"],) if art.lab.widget else (), names_lab=True),
}
