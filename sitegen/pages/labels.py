"""A page's labels, and the references to them: numbered formulas, figures and tables, and sections.

A display formula with a label, `$$ ... $$ {#label}`, is numbered in the page's order: (1), (2), ...;
an image on a line of its own with a label, `![alt](image "caption"){#label}`, is figure 1, 2, ...;
a caption line beside a table, `: caption {#label}` (Pandoc's), is table 1, 2, ...; a heading's
anchor, `## Title {#label}`, is a label whose reference shows the title. A link without text to a
label, `[](#label)` (MyST's form; MyST's roles, targets and directives and Quarto's @ references are
read as it: dialects.py), shows what the label's `shown` says; `[text %s](#label)` shows the text
with the number (or title) in place of %s. A label of another page is reached the same way: by its
name alone when one page of the site defines it, else as `[](chapter.md#label)` (References). A
label defined twice on a page, or a reference to a label that several pages define, is a problem at
its line; a reference to a label no page defines is a warning (check.py), shown as the label's name.

What a page shows of another page's labels is recorded where it is read (References.read), so that a
page, its check and its notebook are made again exactly when a label they show changed.
"""
from __future__ import annotations

import functools
import re
from typing import NamedTuple

from ..core.sources import PAGE_FILES
from .bookparts import TERM_LABEL, myst_reference, slugify, unlinked
from .markup import in_code
from .dialects import STATEMENTS

LABELLED_MATH = re.compile(r"^\s*\$\$(?P<tex>.+?)\$\$\s*\{#(?P<label>[^}\s]+)\}\s*$")
# A numbered figure: an image (or a lab's figure:NAME) on a line of its own, its caption its title.
LABELLED_FIGURE = re.compile(r'^\s*!\[(?P<alt>[^\]]*)\]\((?P<target>[^)\s]+)(?:\s+"(?P<caption>[^"]*)")?\)\s*'
                             r'\{#(?P<label>[^}\s]+)\}\s*$')
# A numbered table's caption, as Pandoc and Quarto write it: a line `: Caption {#label}` beside the table.
TABLE_CAPTION = re.compile(r"^\s*:\s+(?P<caption>\S.*?)\s*\{#(?P<label>[^}\s]+)\}\s*$")
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(?P<title>.+?)\s*\{#(?P<label>[^}\s]+)\}\s*$")
# A term of a glossary (a definition list's term, `: its definition` below it), or any other line given
# an anchor: a reference shows its text.
TERM = re.compile(r"^ {0,3}(?P<title>[^\s:>|].*?)\s*\{#(?P<label>[^}\s]+)\}\s*$")
# A reference: to a label of its own page, of the site, or of the page a source path names; or to that
# page itself, `[](chapter.md)`, which shows its title (as MyST's, and its {doc} role: dialects.py).
SOURCE = r"[^)\s#]*\.(?:" + "|".join(suffix[1:] for suffix in PAGE_FILES) + ")"      # a page's source file
REFERENCE = re.compile(rf"(?<![!\]])\[(?P<text>[^\]]*)\]\((?:(?P<page>{SOURCE})?#(?P<label>[^)\s]+)|(?P<document>{SOURCE}))\)")


class Label(NamedTuple):
    kind: str           # "equation", "figure", "table", "section", "term" or a statement's (a theorem, ...)
    number: int         # from 1 in the page's order, each kind its own; 0 for a section
    title: str          # a section's heading, a figure's or table's caption (Markdown)
    line: int           # where it is defined
    shown: str = ""     # what a reference without text shows: (1), 图 1, 表 1, or the section's title


def prose_lines(blocks):
    """(line, text) of each line of the page's prose outside code fences, in order."""
    for block in blocks:
        if block.kind != "prose":
            continue
        lines = block.text.split("\n")
        for offset, (line, code) in enumerate(zip(lines, in_code(lines))):
            if not code:
                yield block.line + offset, line


KINDS = ((LABELLED_MATH, "equation"), (LABELLED_FIGURE, "figure"), (TABLE_CAPTION, "table"), (HEADING, "section"),
         (TERM, "term"))
TITLED = ("section", "term", "page")        # a reference shows their title (the others: their number)


def page_labels(page, words: dict | None = None) -> tuple[dict[str, Label], list[tuple[int, str]]]:
    """The page's labels by name (what a reference shows in the vocabulary's `words`: figure_ref,
    table_ref), and its problems as (line, message): a label defined twice."""
    labels: dict[str, Label] = {}
    problems = []
    if page.title_label:            # its title's, when its first heading was its title (content.py)
        name, line = page.title_label
        labels[name] = Label("section", 0, page.title, line, page.title)
    blocks = page.blocks
    counts = {"equation": 0, "figure": 0, "table": 0, "exercise": 0, **{kind: 0 for kind in STATEMENTS}}
    for block in blocks:
        if block.kind == "exercise":            # numbered on its page (blocks.py), its label sphinx-exercise's
            counts["exercise"] += 1
            if name := block.options.get("label"):
                _define(labels, problems, name, Label("exercise", counts["exercise"], block.options.get("title", ""),
                                                      block.line, (words or {}).get("exercise", "{n}").format(n=counts["exercise"])))
            continue
        if block.kind in STATEMENTS:            # a theorem, a definition, ...: numbered per kind (blocks.py)
            counts[block.kind] += 1
            if name := block.options.get("label"):
                shown = (words or {}).get(f"statement_{block.kind}", "{n}").format(n=counts[block.kind])
                _define(labels, problems, name, Label(block.kind, counts[block.kind], block.options.get("title", ""),
                                                      block.line, shown))
            continue
        for line, text in prose_lines((block,)):
            _prose_label(line, text, labels, counts, problems, words)
    return labels, problems


def _prose_label(line: int, text: str, labels: dict, counts: dict, problems: list, words) -> None:
    """The label a line of prose defines, if any (see page_labels)."""
    kind, found = next(((kind, m) for pattern, kind in KINDS if (m := pattern.match(text))), (None, None))
    if found is None:
        return
    if kind in TITLED:              # (a reference links to it: its title's own links are their text)
        title = unlinked(found["title"])
        return _define(labels, problems, found["label"], Label(kind, 0, title, line, title))
    counts[kind] += 1
    number = counts[kind]
    shown = f"({number})" if kind == "equation" else (words or {}).get(f"{kind}_ref", "{n}").format(n=number)
    _define(labels, problems, found["label"], Label(kind, number, found.groupdict().get("caption") or "", line, shown))


def _define(labels: dict, problems: list, name: str, label: Label) -> None:
    if name in labels:
        problems.append((label.line, f"the label {name!r} is defined twice (first at line {labels[name].line}): "
                                     "rename one"))
    else:
        labels[name] = label


class Target(NamedTuple):
    """A label as a reference on any page shows it: where it is, and what it shows (no line: moving it
    on its page changes no other page)."""
    output: str         # the page that defines it
    kind: str
    number: int
    title: str
    shown: str


class SiteLabels(dict):
    """Every page's labels: name -> the Targets of the pages that define it, in the pages' order."""

    def seen(self, names) -> tuple:
        """What references to these names (a page's, its record's summary) find now."""
        return tuple((name, self.get(name, ())) for name in names)

    def kept(self, names) -> SiteLabels:
        """Only these names' labels (a name left out is found by none: as a label no page defines)."""
        return SiteLabels((name, self[name]) for name in names if name in self)


def page_label(output: str) -> str:
    """The name under which the site holds a page's title, as a label (one no label can have: a path)."""
    return "/" + output


def site_labels(pages, words: dict | None = None) -> SiteLabels:
    found = SiteLabels()
    for page in pages:
        found[page_label(page.output)] = (Target(page.output, "page", 0, page.title, page.title),)
        for name, label in page_labels(page, words)[0].items():
            found[name] = (*found.get(name, ()), Target(page.output, *label[:3], label.shown))
    return found


def face_labels(page) -> tuple:
    """A page's labels as other pages may show them (face.py): name, kind, number and title."""
    return tuple((name, *label[:3]) for name, label in page_labels(page)[0].items())


class References:
    """What one page's references show: its own labels, then the site's (`site`: SiteLabels; `output_of`:
    a page's source path, as the page links to it, -> where it is published, or None). The names looked
    up in the site are `read`, for the records of what was made of them (SiteLabels.seen)."""

    def __init__(self, output: str, own: dict[str, Label], site: SiteLabels | None = None, output_of=None,
                 blocks=()):
        self.output, self.own, self.site, self.output_of = output, own, site or SiteLabels(), output_of
        self.blocks = blocks            # the page's: the ids its headings get (anchors), read only if asked
        self.read: set[str] = set()

    @functools.cached_property
    def anchors(self) -> frozenset[str]:
        """The ids the page's headings get: a link with text to one stays on the page."""
        return heading_anchors(self.blocks)

    def find(self, page: str | None, name: str) -> Target | tuple[Target, ...]:
        """The label a reference names; else the (zero or several) labels it might mean. A page's own
        title is found by the name "" (`[](chapter.md)`)."""
        document = not name             # (a page by its source: this page itself too)
        if document:
            where = self.output_of(page) if page and self.output_of else None
            name = page_label(where) if where else ""
            page = None
        if not page and name in self.own:
            label = self.own[name]
            return Target(self.output, *label[:3], label.shown)
        self.read.add(name)
        targets = self.site.get(name, ())
        where = self.output_of(page) if page and self.output_of else None
        found = tuple(t for t in targets if (t.output == where if page else document or t.output != self.output))
        return found[0] if len(found) == 1 else found

    def names(self, blocks) -> list[str]:
        """The names the page's references look up in the site, sorted (what its records hold)."""
        for _, page, name in page_references(blocks, linked=True):
            self.find(page, name)
        return sorted(self.read)

    def fill(self, line: str) -> str:
        """A line with each reference given the text it shows and a link to its label (another page's
        by its root path: the page's links resolve it); one to no label, or to several, shows the
        label's name (check.py says why)."""
        def fill(match) -> str:
            # A link with text ({ref}`text <label>`) goes to the label on another page when this page has
            # no such label, nor a heading of that id; one to a MyST label no page defines is its text.
            if not _filled(match):
                if match["page"] or match["document"] or match["label"] in self.own:
                    return match[0]
                found = self.find(None, match["label"])
                if isinstance(found, Target) and (found.kind == "term" or match["label"] not in self.anchors):
                    return f"[{match['text']}](/{found.output}#{match['label']})"
                return match["text"] if myst_reference(match["label"]) or match["label"].startswith(TERM_LABEL) \
                    else match[0]                   # (none: check.py says so)
            page, label = match["page"] or match["document"], match["label"] or ""
            found = self.find(page, label)
            if not isinstance(found, Target):
                shown = label or page
                return match["text"].replace("%s", shown) if "%s" in match["text"] else shown
            text = match["text"]
            value = found.title if found.kind in TITLED else str(found.number)
            text = text.replace("%s", value) if "%s" in text else found.shown
            where = "" if found.output == self.output else f"/{found.output}"
            return f"[{text}]({where}#{label})" if label else f"[{text}]({where or '#'})"
        return REFERENCE.sub(fill, line) if "](" in line else line


def _filled(match) -> bool:
    """A reference the build fills in: without text, or with %s for the number; else a plain link."""
    return not match["text"].strip() or "%s" in match["text"]


HEADING_LINE = re.compile(r"^ {0,3}#{1,6}\s+(?P<title>.+?)(?:\s+#+)?\s*$")


def heading_anchors(blocks) -> frozenset[str]:
    """The ids the headings of a page's prose get (their text's slug, as Markdown's toc extension makes it)."""
    return frozenset(slugify(unlinked(found["title"])) for _, text in prose_lines(blocks)
                     if (found := HEADING_LINE.match(text)))


def page_references(blocks, linked: bool = False):
    """(line, the page part or None, label) of each reference the page's prose fills in, and with `linked`
    of each link with text to a label too (which may be another page's: References.fill)."""
    for line, text in prose_lines(blocks):
        for match in REFERENCE.finditer(text):
            if match["document"] and _filled(match):
                yield line, match["document"], ""
            elif match["label"] and (_filled(match) or ((linked or myst_reference(match["label"])
                                                          or match["label"].startswith(TERM_LABEL)) and not match["page"])):
                yield line, match["page"], match["label"]
