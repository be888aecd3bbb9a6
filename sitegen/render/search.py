"""Full-text search built with the site: the readable text of every page, by section.

Each page's `data-search-body` element is read from the rendered HTML and cut
into sections at its headings; what is marked `data-search-ignore` (code
cells, their outputs, tensor tables, widgets, navigation, display
formulas) is left out. The result is one small `search.json` that
static/search.js loads on first use and matches by substring, which suits
Chinese (no word segmentation to get wrong: 意力 finds 注意力) as well as
English.
"""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser

from ..core.incremental import Phase
from ..core.memo import Memo, digest
from ..pages.prose import pretty_url
from ..core.stored import Stored, bytes_of, sha256_of

INDEX = "search.json"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
BLOCKS = {"p", "li", "div", "section", "td", "th", "pre", "blockquote", "figcaption", "dt", "dd", "tr"}
HEADINGS = {"h1", "h2", "h3"}
IGNORED = re.compile(r"<([a-zA-Z][\w-]*)\b[^>]*?\sdata-search-ignore\b[^>]*>")


def _without_ignored(html: str) -> str:
    """The HTML with every element marked data-search-ignore cut out, found by matching tags.

    Code cells and tables are most of a lab page; skipping them here is many
    times faster than parsing them only to drop their text.
    """
    kept, at = [], 0
    for start in IGNORED.finditer(html):
        if start.start() < at:
            continue                    # inside an element already cut
        tags, depth, end = re.compile(rf"<(/?){start[1]}\b[^>]*>"), 1, start.end()
        while depth and (tag := tags.search(html, end)):
            depth += -1 if tag[1] else 1
            end = tag.end()
        kept.append(html[at:start.start()])
        at = end
    kept.append(html[at:])
    return "".join(kept)


class _Sections(HTMLParser):
    """[id, heading, text] for each section of the search body, in order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sections: list[list[str]] = [["", "", ""]]
        self.body = 0          # depth inside the search body (0: outside)
        self.heading: list[str] | None = None    # text of the heading being read
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in VOID:
            if tag == "br" and self.body:
                self._text(" ")
            return
        if self.body:
            self.body += 1
        elif "data-search-body" in attrs:
            self.body = 1
            return
        if self.body and tag in HEADINGS and self.heading is None:
            self._close_section()
            self.sections.append([attrs.get("id") or "", "", ""])
            self.heading = []

    def handle_endtag(self, tag):
        if not self.body or tag in VOID:
            return
        self.body -= 1
        if tag in HEADINGS and self.heading is not None:
            self.sections[-1][1] = _squeeze("".join(self.heading))
            self.heading = None
        elif tag in BLOCKS:
            self._text(" ")

    def handle_data(self, data):
        if self.body:
            self._text(data)

    def _text(self, data: str) -> None:
        (self.heading if self.heading is not None else self.parts).append(data)

    def _close_section(self) -> None:
        self.sections[-1][2] = _squeeze("".join(self.parts))
        self.parts = []

    def result(self) -> list[list[str]]:
        self._close_section()
        return [s for s in self.sections if s[1] or s[2]]


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def page_sections(html: str) -> list[list[str]]:
    """The searchable sections of one rendered page: [heading id, heading, text]."""
    parser = _Sections()
    parser.feed(_without_ignored(html))
    parser.close()
    return parser.result()


def search_index(pages: dict[str, tuple[str, bytes | Stored]], memo: Memo | None = None,
                 offsets: dict | None = None) -> bytes:
    """search.json for these pages (output path -> (title, HTML)), in output order; a page's
    sections are remembered under its HTML's hash, as the JSON they are written as, so only
    changed pages are read, and the index is joined from the pieces without parsing them again
    (the same bytes as json.dumps of the whole, compact). `offsets`, if given, gets where each
    page's piece is in it (output -> (start, end)), for a build that patches one in (patch.py)."""
    memo = memo or Memo(None)
    pieces = [b'{"pages":[']
    at = len(pieces[0])
    with Phase(memo, "search", digest(INDEX_FORMAT)) as phase:
        for output, (title, html) in sorted(pages.items()):
            sha = sha256_of(html)
            record = phase.reuse(output, (sha, title))      # kept: the start of its JSON
            sections = memo.data(record.entry) if record is not None else None
            if sections is None:
                sections = page_sections_json(html, memo, sha)
                start = entry_start(output, title)
                phase.made(output, (sha, title), (INDEX_FORMAT, sha), summary=start)
            else:
                start = record.summary
            if sections != b"[]":       # (joined as bytes: on a large course the index is most of a build's bytes)
                pieces += (start, sections, b"},")
                if offsets is not None:
                    offsets[output] = (at, at + len(start) + len(sections) + 1)
                at += len(start) + len(sections) + 2
    if len(pieces) > 1:
        pieces[-1] = b"}"
    return b"".join(pieces) + b"]}"


def entry_start(output: str, title: str) -> bytes:
    """What a page's piece of search.json begins with, before its sections."""
    return b'{"url":' + _compact(pretty_url(output)) + b',"title":' + _compact(title) + b',"sections":'


def page_sections_json(html: bytes | Stored, memo: Memo, sha: str) -> bytes:
    """A page's sections as the JSON they are written as: remembered under its HTML's hash (`sha`),
    else read from it."""
    return memo.data("search", (INDEX_FORMAT, sha), lambda: _compact(page_sections(bytes_of(html).decode("utf-8"))))


INDEX_FORMAT = "compact-2"        # how a page's sections are remembered: change it when _compact changes


def _compact(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
