"""Markdown and Jinja as the build sets them up: the converters every page goes through.

Markdown gets its extensions as objects (by name it would look through every
installed package first), headings keep Chinese in their ids, and Markdown's
own external links get rel="noopener". Jinja reads templates/ as the author's
files, fails on anything undefined, and keeps its compiled templates as
bytecode in the memo; a template error is reported at its template and line.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

import jinja2
import markdown
import markdown.treeprocessors

from ..pages.bookparts import slugify
from ..pages.prose import is_external
from ..core.sources import decode, read_bytes, source_path

TOC_CONFIG = {"permalink": "#", "permalink_class": "heading-anchor"}


class _ExternalLinks(markdown.treeprocessors.Treeprocessor):
    """Markdown's own external links get rel="noopener" (raw HTML is the author's to mark)."""

    def run(self, root):
        for link in root.iter("a"):
            if is_external(link.get("href", "")):
                link.set("rel", "noopener")


class _AlignedCells(markdown.treeprocessors.Treeprocessor):
    """A table's column alignment (`|:-:|`) as a class, not the style= attribute Markdown writes,
    which the site's Content-Security-Policy forbids."""

    def run(self, root):
        for cell in (element for element in root.iter() if element.tag in ("th", "td")):
            align = ALIGN.fullmatch(cell.get("style", ""))
            if align:
                del cell.attrib["style"]
                cell.set("class", f"{cell.get('class', '')} align-{align[1]}".strip())


ALIGN = re.compile(r"text-align:\s*(left|right|center);?")


class ExternalLinks(markdown.Extension):
    def extendMarkdown(self, md):
        md.treeprocessors.register(_ExternalLinks(md), "external-links", 1)
        md.treeprocessors.register(_AlignedCells(md), "aligned-cells", 2)


class _TemplateFiles(jinja2.BaseLoader):
    """templates/ as the author's files (or the theme's: sources.source_path), as the build's `snapshot` (set for each build) saw
    them: read and checked against it (sources.read_bytes), and up to date while the snapshot's hash
    is the one read, whatever the file's time says (a copy that keeps times, `cp -p`, `rsync -a`, is
    still an edit). A byte-order mark is dropped; text that is not UTF-8 is reported naming the
    template and line."""

    def __init__(self, root: Path):
        self.root = root
        self.snapshot: dict[str, str] = {}

    def get_source(self, environment, template):
        rel = "templates/" + "/".join(jinja2.loaders.split_template_path(template))
        sha = self.snapshot.get(rel)
        if sha is None:
            raise jinja2.TemplateNotFound(template)
        path = source_path(self.root, rel)
        return decode(read_bytes(path, rel, self.snapshot), rel), str(path), lambda: self.snapshot.get(rel) == sha

    def list_templates(self):
        return sorted(rel[len("templates/"):] for rel in self.snapshot if rel.startswith("templates/"))


def template_environment(root: Path, memo_folder: Path | None, snapshot: dict[str, str]) -> jinja2.Environment:
    """The templates as the build's `snapshot` has them, compiled once per process (and as
    bytecode in the memo) and again when their text changed."""
    if memo_folder:                 # (each build: the memo may have been dropped since, by hand or by the build)
        (memo_folder / "jinja").mkdir(parents=True, exist_ok=True)
    env = _environment(root, memo_folder)
    env.loader.snapshot = snapshot
    return env


@functools.lru_cache(maxsize=None)
def _environment(root: Path, memo_folder: Path | None) -> jinja2.Environment:
    return jinja2.Environment(
        loader=_TemplateFiles(root), autoescape=True,
        bytecode_cache=jinja2.FileSystemBytecodeCache(str(memo_folder / "jinja")) if memo_folder else None,
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def markdown_converter(words: dict) -> markdown.Markdown:
    """A converter (reset before each page). Extensions are given as objects: named ones would have
    Markdown look through every installed package's entry points first (10-20 ms per build)."""
    from markdown.extensions import attr_list, codehilite, def_list, fenced_code, footnotes, sane_lists, tables, toc
    return markdown.Markdown(extensions=[
        tables.TableExtension(), attr_list.AttrListExtension(), fenced_code.FencedCodeExtension(),
        sane_lists.SaneListExtension(), def_list.DefListExtension(),     # (a glossary: a term and its definition)
        # Footnotes, as MyST, Pandoc (Quarto) and GitHub write them: `[^name]` and `[^name]: text` anywhere on
        # the page (it is one conversion), numbered in the order they are referred to, listed at its end.
        footnotes.FootnoteExtension(SEPARATOR="-", USE_DEFINITION_ORDER=False, BACKLINK_TITLE=words["footnote_back"].replace("%", "%%").replace("{n}", "%d")),
        toc.TocExtension(**TOC_CONFIG, slugify=slugify, permalink_title=words["heading_link"]),
        codehilite.CodeHiliteExtension(css_class="highlight", guess_lang=False), ExternalLinks()])


def template_line(exc, fallback) -> tuple[str, int]:
    """Where in templates/ a rendering error happened (the template and line), else `fallback`."""
    import traceback
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename and "/templates/" in frame.filename:
            return frame.filename.split("/templates/", 1)[1], frame.lineno
    return fallback, 0
