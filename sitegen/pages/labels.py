"""A page's labels, and the references to them: numbered formulas, figures and tables, and sections.

A display formula with a label, `$$ ... $$ {#label}`, is numbered in the page's order: (1), (2), ...;
an image on a line of its own with a label, `![alt](image "caption"){#label}`, is figure 1, 2, ...;
a caption line beside a table, `: caption {#label}` (Pandoc's), is table 1, 2, ...; a heading's
anchor, `## Title {#label}`, is a label whose reference shows the title. A link without text to a
label, `[](#label)` (MyST's form; MyST's roles, targets and directives and Quarto's @ references are
read as it: dialects.py), shows what the label's `shown` says; `[text %s](#label)` shows the text
with the number (or title) in place of %s. A label defined twice, or a reference without text to
no label of the page, is a problem at its line (check.py).
"""
from __future__ import annotations

import re
from typing import NamedTuple

from .dialects import STATEMENTS

LABELLED_MATH = re.compile(r"^\s*\$\$(?P<tex>.+?)\$\$\s*\{#(?P<label>[^}\s]+)\}\s*$")
# A numbered figure: an image (or a lab's figure:NAME) on a line of its own, its caption its title.
LABELLED_FIGURE = re.compile(r'^\s*!\[(?P<alt>[^\]]*)\]\((?P<target>[^)\s]+)(?:\s+"(?P<caption>[^"]*)")?\)\s*'
                             r'\{#(?P<label>[^}\s]+)\}\s*$')
# A numbered table's caption, as Pandoc and Quarto write it: a line `: Caption {#label}` beside the table.
TABLE_CAPTION = re.compile(r"^\s*:\s+(?P<caption>\S.*?)\s*\{#(?P<label>[^}\s]+)\}\s*$")
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(?P<title>.+?)\s*\{#(?P<label>[^}\s]+)\}\s*$")
REFERENCE = re.compile(r"(?<![!\]])\[(?P<text>[^\]]*)\]\(#(?P<label>[^)\s]+)\)")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class Label(NamedTuple):
    kind: str           # "equation", "figure", "table" or "section"
    number: int         # from 1 in the page's order, each kind its own; 0 for a section
    title: str          # a section's heading, a figure's or table's caption (Markdown)
    line: int           # where it is defined
    shown: str = ""     # what a reference without text shows: (1), 图 1, 表 1, or the section's title


def prose_lines(blocks):
    """(line, text) of each line of the page's prose outside code fences, in order."""
    for block in blocks:
        if block.kind != "prose":
            continue
        fence = None
        for offset, line in enumerate(block.text.split("\n")):
            if found := FENCE.match(line):
                fence = None if fence and found[1].startswith(fence) else (fence or found[1][:3])
                continue
            if fence is None:
                yield block.line + offset, line


KINDS = ((LABELLED_MATH, "equation"), (LABELLED_FIGURE, "figure"), (TABLE_CAPTION, "table"), (HEADING, "section"))


def page_labels(blocks, words: dict | None = None) -> tuple[dict[str, Label], list[tuple[int, str]]]:
    """The page's labels by name (what a reference shows in the vocabulary's `words`: figure_ref,
    table_ref), and its problems as (line, message): a label defined twice."""
    labels: dict[str, Label] = {}
    problems = []
    counts = {"equation": 0, "figure": 0, "table": 0, **{kind: 0 for kind in STATEMENTS}}
    for block in blocks:
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
    if kind == "section":
        return _define(labels, problems, found["label"], Label(kind, 0, found["title"], line, found["title"]))
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


def unknown_references(text: str, labels: dict[str, Label]) -> list[str]:
    """The labels that a line's references without text (or with %s) name and the page lacks."""
    return [m["label"] for m in REFERENCE.finditer(text)
            if (not m["text"].strip() or "%s" in m["text"]) and m["label"] not in labels]


def fill_references(line: str, labels: dict[str, Label]) -> str:
    """A line with each reference to a label given the text it shows."""
    def fill(match) -> str:
        label = labels.get(match["label"])
        if label is None:
            return match[0]
        text = match["text"]
        value = label.title if label.kind == "section" else str(label.number)
        text = text.replace("%s", value) if "%s" in text else (text if text.strip() else label.shown)
        return f"[{text}](#{match['label']})"
    return REFERENCE.sub(fill, line) if "](#" in line else line
