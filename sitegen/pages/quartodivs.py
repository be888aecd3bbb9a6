"""Quarto's divs (Pandoc's `::: {.class key="value"}`) beyond its callouts, read as Quarto's HTML output
shows them (dialects.py reads the rest): where one ends, whether it shows on a web page (a slide's steps,
content for another format), and a tab set's tabs.
"""
from __future__ import annotations

import re
import shlex

from .bookparts import COLONS, directive
from .markup import in_code

# Quarto's divs that mark a slide's steps and layout (reveal.js's), and its columns: on a web page here,
# their content (a page is one column, as a phone shows Quarto's columns).
SLIDES = {"fragment", "incremental", "nonincremental", "r-fit-text", "r-stretch", "r-stack", "r-hstack", "r-vstack",
          "columns", "column"}


def attributes(text: str) -> dict[str, str]:
    """key="value" pairs of a Quarto div's attributes."""
    try:
        words = shlex.split(text)
    except ValueError:
        return {}
    return dict(word.split("=", 1) for word in words if "=" in word)


# Pandoc's attributes, `{#id .class key=value}`: each word of one (`-` is `.unnumbered`), and the braces.
ATTRIBUTE = re.compile(r"""#[\w:.-]+|\.[\w-]+|[\w-]+=(?:"[^"]*"|'[^']*'|[^\s"'}]+)|-""")
PANDOC_ATTRS = re.compile(r"\{\s*(?P<attrs>(?:(?:" + ATTRIBUTE.pattern + r")\s*)+)\}")
# What a heading's or an image's attributes may say that a web page here shows as it is (the site numbers
# no section and sizes an image to its column): left out without a word.
UNSAID = {"unnumbered", "unlisted", "-", "width", "height", "fig-align", "fig-alt", "style", "scale", "align"}


def pandoc_attributes(text: str) -> tuple[str, list[str]]:
    """The id of Pandoc's attributes `text` (inside the braces) and their other words, but those that need
    no word (UNSAID)."""
    words = ATTRIBUTE.findall(text)
    ident = next((word[1:] for word in words if word.startswith("#")), "")
    return ident, [word for word in words if not word.startswith("#")
                   and word.lstrip(".").split("=", 1)[0] not in UNSAID]


def div_lines(out: list[str], index: int):
    """The lines after a div opened at `index`: each, whether it is code, and how deep it stands in the divs
    opened inside it (-1: the fence that closes it)."""
    depth = 0
    for line, code in zip(out[index + 1:], in_code(out[index + 1:])):
        colons = COLONS.match(line) if not code else None
        opens = bool(colons) and bool(colons["rest"].strip())
        depth -= bool(colons) and not opens         # (a closing fence closes the innermost div)
        yield line, code, depth
        depth += opens


def div_end(out: list[str], index: int) -> int:
    """The index of the fence that closes the div opened at `index` (len(out): none does)."""
    return next((k for k, (_, _, depth) in enumerate(div_lines(out, index), index + 1) if depth < 0), len(out))


def shown_here(classes: set[str], attrs: dict) -> bool | None:
    """Whether a Quarto div of these classes shows on a web page, as Quarto's HTML output shows it: a
    slide's markup (a fragment, incremental lists) is its content; `.content-visible` and `.content-hidden`
    with `when-format` or `unless-format` say for which formats (this site's is html), without them for every
    format; None for any other
    div (said, and its content shown), a profile's too (this site builds none)."""
    if classes and classes <= SLIDES:
        return True
    visible = "content-visible" in classes
    if (visible or "content-hidden" in classes) and not attrs:      # (for every format: Quarto's own reading)
        return visible
    if not (visible or "content-hidden" in classes) or set(attrs) - {"when-format", "unless-format"}:
        return None
    html = "html" in attrs.get("when-format", "html") and "html" not in attrs.get("unless-format", "")
    return html if visible else not html


def tabset(out: list[str], index: int, number: int, notes: list) -> bool:
    """Quarto's `::: {.panel-tabset}` opened at `index`: each heading of the first level in it, up to its
    closing fence, opens this site's tab (the one before it ended); False if it holds no heading."""
    headings = []
    for k, (line, code, depth) in enumerate(div_lines(out, index), index + 1):
        if depth < 0:
            break
        if not code and depth == 0 and (heading := re.match(r"^ {0,3}(#{1,6})\s+(.+?)\s*#*\s*$", line)):
            headings.append((k, len(heading[1]), heading[2]))
    level = min((found[1] for found in headings), default=0)
    tabs = [(k, title) for k, at, title in headings if at == level]
    for count, (k, title) in enumerate(tabs):
        out[k] = ("::: end\n" if count else "") + directive("tab", title, None, number, notes)
    return bool(tabs)
