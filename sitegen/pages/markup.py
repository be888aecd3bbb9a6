"""Markdown as the site reads it, and which of a page's lines are code: CommonMark with GitHub's
extensions, by markdown-it-py and mdit-py-plugins (the parser MyST-Parser and MyST-NB are built on).

`reader` is the one grammar: the render (render/markdown.py) adds how each token is written, and
`in_code` asks the same parser which lines are code, so that what is read before the render (values,
formulas, links, directives) and what the render shows as code are decided once, the same way: a
fence (in a list item or a quote too), an indented block of code, a fence left open to its
container's end. Within a line, `code_spans` pairs backticks as CommonMark does.
"""
from __future__ import annotations

import functools
import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

DIRECTIVE = re.compile(r"\{([^}]*)\}")      # a fence's info that names a MyST directive: ```{note}
LIST_ITEM = re.compile(r"^ *(?:[*+-]|\d{1,9}[.)])(?: +|$)")      # a list item's marker, and the spaces after it


def reader() -> MarkdownIt:
    """markdown-it-py as the site reads Markdown (a new one: the render adds its rules to it): CommonMark,
    GitHub's tables and strikethrough, footnotes, definition lists, task lists, bare URLs, and Pandoc's
    attributes on images and spans (`{#name}`), with raw HTML."""
    from mdit_py_plugins.attrs import attrs_plugin
    from mdit_py_plugins.deflist import deflist_plugin
    from mdit_py_plugins.footnote import footnote_plugin
    from mdit_py_plugins.gfm_autolink import gfm_autolink_plugin
    from mdit_py_plugins.tasklists import tasklists_plugin
    # (nesting as deep as markdown-it's default preset reads: the commonmark preset's 20 stops the page at a
    # list nested ten deep, without a word)
    md = MarkdownIt("commonmark", {"html": True, "maxNesting": 100})
    md.enable(["table", "strikethrough"])
    md.use(footnote_plugin).use(deflist_plugin).use(tasklists_plugin).use(gfm_autolink_plugin)
    md.use(attrs_plugin, spans=True, allowed=["id", "class", "width", "height"])
    return md


@functools.cache
def _blocks() -> MarkdownIt:
    """The reader for blocks alone (what is code needs no inline parse)."""
    md = reader()
    md.core.ruler.enableOnly(["normalize", "block"])
    return md


def code_blocks(lines, code_directives: frozenset | set | None = None) -> list[tuple[int, int]]:
    """Where `lines` hold code, as CommonMark reads it: (first, end) of each fenced block (its fences included)
    and each indented one, in order. With `code_directives` (the MyST directives that hold code), any other
    directive's fence (```{note}) holds markup, as MyST reads it: what it holds is code only in a block of
    code inside it."""
    directives = frozenset(code_directives) if code_directives is not None else None
    return list(_code_blocks("\n".join(lines), directives)) if lines else []


def in_code(lines, code_directives: frozenset | set | None = None) -> list[bool]:
    """Whether each of `lines` is code (code_blocks)."""
    code = [False] * len(lines)
    for first, end in code_blocks(lines, code_directives):
        code[first:end] = [True] * (end - first)
    return code


@functools.lru_cache(maxsize=256)
def _code_blocks(text: str, code_directives: frozenset | None) -> tuple[tuple[int, int], ...]:
    found: list[tuple[int, int]] = []
    _blocks_of(_blocks().parse(text), found, 0, code_directives)
    return tuple(found)


def _blocks_of(tokens: list[Token], found: list, offset: int, code_directives: frozenset | None) -> None:
    for token in tokens:
        if token.type not in ("fence", "code_block") or token.map is None:
            continue
        first, end = offset + token.map[0], offset + token.map[1]
        name = DIRECTIVE.match(token.info.strip()) if token.type == "fence" else None
        if name and code_directives is not None and name[1].strip().lower() not in code_directives:
            _blocks_of(_blocks().parse(token.content), found, first + 1, code_directives)     # (its markup, read again)
            continue
        found.append((first, end))


def open_fence(lines: list[str], code_directives: frozenset | set | None = None) -> tuple[int, str] | None:
    """The last code fence that `lines` leave open to their end (CommonMark runs it there): the index of its
    opening line, and the line that would close it where it stands (its fence, at its indent); or None."""
    left = None
    for first, end in code_blocks(lines, code_directives):
        opener = lines[first].lstrip(" >")
        while item := LIST_ITEM.match(opener):      # (a list item's first line: `- ```md`, `* - ```md`)
            opener = opener[item.end():]
        fence = re.match(r"(`{3,}|~{3,})", opener)
        if fence is None or any(line.strip() for line in lines[end:]):     # (closed by its container)
            continue
        closing = re.compile(rf"^[ >]*{re.escape(fence[1][0])}{{{len(fence[1])},}}\s*$")
        if end - 1 == first or not closing.match(lines[end - 1]):
            left = (first, " " * lines[first].index(fence[1]) + fence[1])
    return left


TICKS = re.compile(r"`+")
ROLE_NAME = re.compile(r"\{[a-z][\w:-]*\}$")


def code_spans(line: str) -> list[tuple[int, int]]:
    """Where `line`'s code spans lie, as CommonMark pairs backtick runs (from the left, a run closes on the
    next run as long on its line; one never closed is a backtick as written): what they hold shows as
    written. A span right after a role's {name} is the role's text, markup."""
    runs = [(found.start(), found.end()) for found in TICKS.finditer(line)]
    spans, k = [], 0
    while k < len(runs):
        start, end = runs[k]
        close = next((j for j in range(k + 1, len(runs)) if runs[j][1] - runs[j][0] == end - start
                      and "\n" not in line[end:runs[j][0]]), None)
        if close is None:
            k += 1
            continue
        if not ROLE_NAME.search(line, 0, start):
            spans.append((start, runs[close][1]))
        k = close + 1
    return spans
