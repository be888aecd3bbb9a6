"""A page's labels, and the references to them: numbered formulas, and sections by their titles.

A display formula with a label, `$$ ... $$ {#label}`, is numbered in the page's order: (1), (2), ...
A heading's anchor, `## Title {#label}`, is a label whose reference shows the title. A link without
text to a label, `[](#label)` (MyST's form; MyST's {eq}, {ref} and {numref} roles, its `(label)=`
targets and `$$ ... $$ (label)`, and Quarto's `@eq-label` and `{#eq-label}` are read as it:
dialects.py), shows the formula's number or the section's title; `[text %s](#label)` shows the text
with the number (or title) in place of %s. A label defined twice, or a reference without text to
no label of the page, is a problem at its line (check.py).
"""
from __future__ import annotations

import re
from typing import NamedTuple

LABELLED_MATH = re.compile(r"^\s*\$\$(?P<tex>.+?)\$\$\s*\{#(?P<label>[^}\s]+)\}\s*$")
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(?P<title>.+?)\s*\{#(?P<label>[^}\s]+)\}\s*$")
REFERENCE = re.compile(r"(?<![!\]])\[(?P<text>[^\]]*)\]\(#(?P<label>[^)\s]+)\)")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class Label(NamedTuple):
    kind: str           # "equation" or "section"
    number: int         # an equation's, from 1 in the page's order; 0 for a section
    title: str          # a section's heading (its Markdown)
    line: int           # where it is defined


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


def page_labels(blocks) -> tuple[dict[str, Label], list[tuple[int, str]]]:
    """The page's labels by name, and its problems as (line, message): a label defined twice."""
    labels: dict[str, Label] = {}
    problems = []
    count = 0
    for line, text in prose_lines(blocks):
        found = LABELLED_MATH.match(text) or HEADING.match(text)
        if found is None:
            continue
        name = found["label"]
        if name in labels:
            problems.append((line, f"the label {name!r} is defined twice (first at line {labels[name].line}): "
                                   "rename one"))
            continue
        if "tex" in found.groupdict():
            count += 1
            labels[name] = Label("equation", count, "", line)
        else:
            labels[name] = Label("section", 0, found["title"], line)
    return labels, problems


def shown(label: Label) -> str:
    """What a reference without text shows of its label."""
    return f"({label.number})" if label.kind == "equation" else label.title


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
        value = str(label.number) if label.kind == "equation" else label.title
        text = text.replace("%s", value) if "%s" in text else (text if text.strip() else shown(label))
        return f"[{text}](#{match['label']})"
    return REFERENCE.sub(fill, line) if "](#" in line else line
