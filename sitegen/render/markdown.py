"""Markdown as Jupyter, MyST and Quarto authors write it: CommonMark with GitHub's extensions, read by
markdown-it-py (the parser MyST-Parser and MyST-NB are built on) and mdit-py-plugins.

A page's prose (its blocks already stand in as placeholders: render.py) and a cell's displayed
Markdown are one parse each, rendered to HTML with what the site needs of it:

- GitHub's tables (their columns' alignment as classes, not the style= the site's policy forbids),
  strikethrough, bare URLs as links, task lists; footnotes as MyST, Quarto and GitHub write them
  (`[^name]`), numbered in the order they are referred to and listed at the end; definition lists;
- headings with ids that keep Chinese (bookparts.slugify, unique on the page), a heading's own
  `{#id}` (Pandoc's and Quarto's) taken as its id, and a link to each heading after its text;
- fenced code highlighted by Pygments in the language it names; external links rel="noopener";
- raw HTML kept (the HTML check reads the page as a browser does: publish/htmlcheck.py), but for what
  the site's policy refuses (an inline <style>, an <iframe> of another site...): that is shown as its
  source, of a class the check says as a warning (never the page lost for it).

It replaces Python-Markdown, which reads a dialect none of those authors writes (a list right after a
line of text, a list nested by two spaces, a fence in a list item are not CommonMark's there).
"""
from __future__ import annotations

import functools
import html
import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..pages.bookparts import slugify
from ..pages.markup import reader
from ..pages.prose import is_external
from .htmlread import REFUSED, refused

HEADING_ID = re.compile(r"\s*\{#(?P<id>[^\s}]+)(?P<rest>[^}]*)\}\s*$")      # `## Title {#sec-x}`
ALIGN = re.compile(r"text-align:\s*(left|right|center);?")


class Markdown:
    """One converter: `convert(text)` gives the HTML, and `toc` the headings it made (id, name, level);
    with the site's `base_url`, raw HTML the site refuses shown as its source."""

    def __init__(self, words: dict, base_url: str | None = None):
        self.words, self.toc, self.base_url = words, [], base_url
        self.md = _parser(words.get("heading_link", ""), words.get("footnote_back", ""))

    def reset(self) -> Markdown:
        self.toc = []
        return self

    def convert(self, text: str) -> str:
        env: dict = {}
        tokens = self.md.parse(text, env)
        _own_ids(tokens)
        self.toc = _headings(tokens, self.words.get("heading_link", ""))
        _links_and_tables(tokens)
        if self.base_url is not None:        # (a page's prose; a cell's output is reduced instead: outputs.safe_html)
            _refused_as_source(tokens, self.base_url)
        return self.md.renderer.render(tokens, self.md.options, env)


@functools.lru_cache(maxsize=8)
def _parser(heading_link: str, footnote_back: str) -> MarkdownIt:
    """markdown-it-py as the site reads Markdown (pages/markup.py: the one grammar, which what is read before
    the render asks too), with how the site writes its tokens (made once a process for each words' pair)."""
    md = reader()
    _footnotes_as_the_site_shows_them(md, footnote_back)
    md.add_render_rule("fence", lambda self, tokens, idx, *_: _highlight(tokens[idx].content, tokens[idx].info))
    md.add_render_rule("s_open", lambda *_: "<del>")        # (GitHub's and Jupyter's ~~strike~~)
    md.add_render_rule("s_close", lambda *_: "</del>")
    return md


def _own_ids(tokens: list[Token]) -> None:
    """A heading's or a glossary term's own id, written after its text as Pandoc and Quarto write it:
    `## Title {#sec-x .class}`, `Term {#term-x}`."""
    for index, token in enumerate(tokens):
        if token.type not in ("heading_open", "dt_open") or index + 1 >= len(tokens):
            continue
        inline = tokens[index + 1]
        explicit = HEADING_ID.search(inline.content) if inline.type == "inline" else None
        if explicit and inline.children and inline.children[-1].type == "text":
            inline.children[-1].content = HEADING_ID.sub("", inline.children[-1].content)
            inline.content = HEADING_ID.sub("", inline.content)
            token.attrSet("id", explicit["id"])
            for name in re.findall(r"\.([\w-]+)", explicit["rest"]):
                token.attrJoin("class", name)


def _headings(tokens: list[Token], heading_link: str) -> list[dict]:
    """Each heading's id (its own: _own_ids, else its text slugified, unique on the page) and a link to
    it after its text; the headings, in order."""
    found, used = [], set()
    for index, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        inline = tokens[index + 1]
        text = "".join(child.content for child in inline.children or () if child.type in ("text", "code_inline"))
        ident = str(token.attrGet("id") or "") or _unique(slugify(text) or "section", used)
        used.add(ident)
        token.attrSet("id", ident)
        link = Token("html_inline", "", 0)
        link.content = (f'<a class="heading-anchor" href="#{html.escape(ident)}" '
                        f'title="{html.escape(heading_link)}">#</a>')
        inline.children = [*(inline.children or ()), link]
        found.append({"id": ident, "name": html.escape(text.strip()), "level": int(token.tag[1])})
    return found


def _unique(ident: str, used: set) -> str:
    """An id not on the page yet (`x`, then `x_1`, `x_2`...: as Python-Markdown's toc made them)."""
    if ident not in used:
        return ident
    number = 1
    while f"{ident}_{number}" in used:
        number += 1
    return f"{ident}_{number}"


def _links_and_tables(tokens: list[Token]) -> None:
    """External links rel="noopener"; a table cell's alignment as a class."""
    for token in tokens:
        if token.type in ("th_open", "td_open") and (align := ALIGN.fullmatch(token.attrGet("style") or "")):
            del token.attrs["style"]
            token.attrJoin("class", f"align-{align[1]}")
        for child in token.children or ():
            if child.type == "link_open" and is_external(str(child.attrGet("href") or "")):
                child.attrSet("rel", "noopener")


def _refused_as_source(tokens: list[Token], base_url: str) -> None:
    """Raw HTML the site's policy refuses (htmlread.refused), as its source: a block's in <pre>, in a
    sentence in <code> (with the end tag that closes it there, which would close nothing), of the class
    the check says as a warning."""
    for token in (t for t in tokens if t.type == "html_block"):
        if refused(token.content, base_url) is not None:
            token.content = f'<pre class="{REFUSED}">{html.escape(token.content.rstrip())}</pre>\n'
    for inline in (t for t in tokens if t.children):
        opened: list[str] = []          # the tags refused in this line, whose end tags follow
        for child in (c for c in inline.children if c.type == "html_inline"):
            end = re.fullmatch(r"</\s*([A-Za-z][\w:-]*)\s*>", child.content.strip())
            if end and end[1].lower() in opened:
                opened.remove(end[1].lower())
            elif refused(child.content, base_url) is None:
                continue
            elif start := re.match(r"<([A-Za-z][\w:-]*)", child.content):
                opened.append(start[1].lower())
            child.content = f'<code class="{REFUSED}">{html.escape(child.content)}</code>'


def _highlight(code: str, info: str) -> str:
    """Fenced code in the language its info string names, as Pygments writes it (plain text for none
    it knows)."""
    from pygments import highlight
    from pygments.lexers import TextLexer, get_lexer_by_name
    from pygments.util import ClassNotFound
    try:        # (a fence's leading blank lines are its code's: CommonMark keeps them, as Pygments must)
        lexer = get_lexer_by_name(info.split()[0].strip("{}"), stripnl=False) if info.strip() else TextLexer(stripnl=False)
    except ClassNotFound:
        lexer = TextLexer(stripnl=False)
    return highlight(code, lexer, _formatter())


@functools.cache
def _formatter():
    from pygments.formatters import HtmlFormatter
    return HtmlFormatter(cssclass="highlight", wrapcode=True)


def _footnotes_as_the_site_shows_them(md: MarkdownIt, back: str) -> None:
    """Footnotes' markup as the theme styles it: a numbered reference, and the list at the page's end,
    each with a link back to where it was referred to."""
    def label(token: Token) -> str:
        return str(token.meta.get("label") or token.meta["id"] + 1)

    def ref(self, tokens, idx, options, env):
        token = tokens[idx]
        sub = token.meta.get("subId", 0)
        name = label(token)
        return (f'<sup id="fnref{"" if not sub else sub + 1}-{html.escape(name)}"><a class="footnote-ref" '
                f'href="#fn-{html.escape(name)}">{token.meta["id"] + 1}</a></sup>')

    def anchor(self, tokens, idx, options, env):
        token = tokens[idx]
        sub, name = token.meta.get("subId", 0), label(token)
        title = html.escape(back.replace("{n}", str(token.meta["id"] + 1)))
        return (f'&#160;<a class="footnote-backref" href="#fnref{"" if not sub else sub + 1}-{html.escape(name)}" '
                f'title="{title}">&#8617;</a>')

    md.add_render_rule("footnote_ref", ref)
    md.add_render_rule("footnote_anchor", anchor)
    md.add_render_rule("footnote_block_open", lambda *_: '<div class="footnote">\n<hr>\n<ol>\n')
    md.add_render_rule("footnote_block_close", lambda *_: "</ol>\n</div>\n")
    md.add_render_rule("footnote_open", lambda self, tokens, idx, *_: f'<li id="fn-{html.escape(label(tokens[idx]))}">\n')
    md.add_render_rule("footnote_close", lambda *_: "</li>\n")
